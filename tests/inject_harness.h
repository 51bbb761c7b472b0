/*
** Running tests/inject_app under libovl.so and finding its trace. CMake bakes in the paths:
** OVL_TEST_LIBOVL (libovl.so), OVL_TEST_APP (inject_app), OVL_TEST_OVL (the ovl binary) and
** OVL_TEST_PRELOAD_FIRST (in the gcc sanitized build: the ASan runtime, which must be loaded
** before the sanitized libovl.so; "" otherwise).
*/
#ifndef OVL_TEST_INJECT_HARNESS_H
#define OVL_TEST_INJECT_HARNESS_H

#include "run_cmd.h"

#include <stdint.h>
#include <sys/types.h>

/* A new, empty directory path unique to this test process (the directory is not created). */
const char *ih_fresh_dir(const char *tag);
/* Runs `env [LD_PRELOAD=libovl.so] OVL_OUTPUT=dir <env> inject_app <args>`; preload = 0 runs
** the app without libovl. */
cmd_result ih_run_app(int preload, const char *dir, const char *env, const char *args);
/* Number of *.sqlite files in dir (0 when dir does not exist). */
int ih_count_traces(const char *dir);
/* Path of the first *.sqlite file in dir, or NULL. The string lives until the next call. */
const char *ih_trace_in(const char *dir);
/* inject_app running in the background, its stdout on a pipe (`out`, closed by the caller). */
typedef struct ih_app {
  pid_t pid;  /* -1 when it could not start */
  int out;
} ih_app;
/* Starts `inject_app argv...` (argv NULL-terminated, at most 7) with OVL_OUTPUT=dir,
** OVL_FLUSH_MS=flush_ms, under libovl.so when preload, and no leak scan at exit (the runs
** are killed or timed). */
ih_app ih_start_app(int preload, const char *dir, int flush_ms, const char *const *argv);
/* Waits (30 s at most) for the app's first output; 1 when it begins with "ready". */
int ih_app_ready(const ih_app *a);
/* CLOCK_MONOTONIC in ns: libovl's capture clock, comparable with the trace's host times. */
int64_t ih_now_ns(void);
/* The LD_PRELOAD value that loads libovl.so (after the ASan runtime where needed). */
const char *ih_preload(void);

#endif
