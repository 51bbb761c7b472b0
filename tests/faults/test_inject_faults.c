/*
** Capture faults not covered by test_inject_nccl/hostile, with the stub NCCL and no GPU
** (tests/faults/fault_app.c): each run is made with and without libovl.so, and the program's
** stdout and exit status must be the same.
**   vfork + exec            the child exec's; the parent's calls are captured
**   exit() from a thread    the exit status stays; the calls made before it are in the trace
**   SIGKILL mid-run         the committed rows survive: the trace opens, `ovl report` runs
**   OVL_OUTPUT a file       one warning, the file untouched, nothing captured
**   OVL_OUTPUT read-only    (/proc) one warning, nothing captured
**   real libnccl.so.2       dlopen'ed (RTLD_LOCAL) through a library linked against it, as
**                           PyTorch loads NCCL, on a machine with no GPU: output, status and
**                           time unchanged (+1 s at most beside the program alone, best of
**                           three tries; the test runs alone), and with OVL_LOG=debug a line
**                           saying why no GPU work was captured; where a GPU is, this part
**                           skips, saying so (`test_inject_faults real-nccl` runs it alone)
**   a CUDA program, no GPU  fails as it does alone; with OVL_LOG=debug libovl says it
**                           captured nothing
*/
#include "check.h"
#include "gpu_probe.h"
#include "inject_harness.h"
#include "load/trace_reader.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static long collectives_in(const char *dir) {
  const char *path = ih_trace_in(dir);
  if (!path) return -1;
  ovl_trace *t = NULL;
  ovl_err err = {0};
  if (ovl_trace_open(path, &t, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  ovl_coll_rec *c = NULL;
  size_t n = 0;
  long got = ovl_trace_read_collectives(t, &c, &n, &err) ? -1 : (long)n;
  free(c);
  ovl_trace_close(t);
  return got;
}

/* Runs args with and without libovl; the same stdout and status. Returns the run with it. */
static cmd_result same_both_ways(const char *dir, const char *env, const char *args, int expect_status) {
  cmd_result plain = ih_run_app(0, dir, NULL, args);
  cmd_result with = ih_run_app(1, dir, env, args);
  CHECK_I64(plain.status, expect_status);
  CHECK_I64(with.status, plain.status);
  CHECK(strcmp(plain.out, with.out) == 0);
  cmd_free(&plain);
  return with;
}

static void vfork_exec(void) {
  const char *dir = ih_fresh_dir("vfork");
  cmd_result r = same_both_ways(dir, NULL, "vfork", 0);
  CHECK(strstr(r.out, "child: exec'd\nparent: done\n") != NULL);
  CHECK_I64(ih_count_traces(dir), 1);  /* the exec'd echo uses no NCCL: no trace of its own */
  CHECK_I64(collectives_in(dir), 20);
  cmd_free(&r);
}

static void exit_from_thread(void) {
  const char *dir = ih_fresh_dir("thread-exit");
  cmd_result r = same_both_ways(dir, NULL, "thread-exit", 5);
  CHECK_I64(collectives_in(dir), 50);
  cmd_free(&r);
}

static void sigkill_mid_run(void) {
  const char *dir = ih_fresh_dir("kill");
  ih_app app = ih_start_app(1, dir, 50, (const char *const[]){"loop", NULL});
  CHECK(app.pid > 0);
  if (app.pid <= 0) return;
  pid_t pid = app.pid;
  CHECK(ih_app_ready(&app));
  nanosleep(&(struct timespec){0, 500000000}, NULL);  /* calls and several flushes */
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  close(app.out);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  long n = collectives_in(dir);
  printf("SIGKILL after 0.5 s of calls: %ld collectives rows survive\n", n);
  CHECK(n > 10);
  /* The killed trace is read like any other: report says what it holds (no GPU work, no
  ** GPU here) in one line, or reports; it never crashes. */
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' report '%s'", OVL_TEST_OVL, ih_trace_in(dir));
  cmd_result r = run_cmd(cmd);
  CHECK(r.status == 0 || (r.status == 1 && count_lines(r.err) == 1 && strncmp(r.err, "ovl: ", 5) == 0));
  CHECK(r.status == 0 || strstr(r.err, "no GPU activity") != NULL);
  cmd_free(&r);
}

static void output_not_a_directory(const char *what, const char *output, const char *keep) {
  cmd_result r = same_both_ways(output, NULL, "vfork", 0);
  CHECK(count_lines(r.err) == 1 && strncmp(r.err, "ovl: ", 5) == 0);
  if (count_lines(r.err) != 1) fprintf(stderr, "%s: %s\n", what, r.err);
  cmd_free(&r);
  if (keep) {
    FILE *f = fopen(output, "rb");
    char buf[64] = "";
    CHECK(f && fgets(buf, sizeof buf, f) && strcmp(buf, keep) == 0);
    if (f) fclose(f);
  }
}

/* Time bounds (+1 s beside the same program alone, measured in the same try) hold in the
** best of TRIES tries: a loaded machine may delay one run, not every one by chance. */
#define TRIES 3

static void real_nccl_without_gpu(void) {
  char why[128];
  if (gpu_present(why, sizeof why)) {  /* then NCCL runs for real: test_gpu_capture covers it */
    printf("SKIP part: real libnccl.so.2 without a GPU: this machine has %s\n", why);
    return;
  }
  const char *dir = ih_fresh_dir("real-nccl");
  char args[1024];
  snprintf(args, sizeof args, "dlopen '%s'", OVL_TEST_REAL_NCCL_USER);
  int in_time = 0;
  for (int try = 0; try < TRIES && !in_time; try++) {
    double t0 = now_s();
    cmd_result plain = ih_run_app(0, dir, NULL, args);
    double t1 = now_s();
    cmd_result with = ih_run_app(1, dir, "OVL_LOG=debug", args);
    double t2 = now_s();
    printf("real libnccl.so.2, no GPU: %.3f s alone, %.3f s with libovl\n", t1 - t0, t2 - t1);
    CHECK_I64(plain.status, 0);
    CHECK_I64(with.status, plain.status);
    CHECK(strcmp(plain.out, with.out) == 0);
    CHECK(strstr(plain.out, "ncclGetVersion: ok") != NULL);
    in_time = t2 - t1 < t1 - t0 + 1.0;
    CHECK(strstr(with.err, "ovl: no GPU work captured: CUPTI not attached") != NULL);
    if (!strstr(with.err, "no GPU work captured")) fprintf(stderr, "libovl said: %s\n", with.err);
    cmd_free(&plain);
    cmd_free(&with);
  }
  CHECK(in_time);
}

/* A CUDA program (tests/gpu/gpu_workload.c) where there is no GPU or driver: it fails the
** same way with libovl, which says (OVL_LOG=debug) that it captured nothing. Where a GPU is
** present the program runs and test_gpu_capture covers it. */
static void cuda_program_without_gpu(void) {
  const char *dir = ih_fresh_dir("cuda-no-gpu");
  char plain_cmd[2048], with_cmd[4096];
  snprintf(plain_cmd, sizeof plain_cmd, "'%s'", OVL_TEST_GPU_WORKLOAD);
  snprintf(with_cmd, sizeof with_cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' OVL_LOG=debug '%s'", ih_preload(), dir,
           OVL_TEST_GPU_WORKLOAD);
  int in_time = 0;
  for (int try = 0; try < TRIES && !in_time; try++) {
    double t0 = now_s();
    cmd_result plain = run_cmd(plain_cmd);
    double t1 = now_s();
    if (plain.status == 0) {
      printf("SKIP part: a GPU is present (the CUDA program ran): test_gpu_capture covers it\n");
      cmd_free(&plain);
      return;
    }
    cmd_result with = run_cmd(with_cmd);
    double t2 = now_s();
    printf("CUDA program, no GPU: exit %d, %.3f s alone, %.3f s with libovl\n", plain.status, t1 - t0, t2 - t1);
    CHECK_I64(with.status, plain.status);
    CHECK(strcmp(plain.out, with.out) == 0);
    CHECK(strstr(with.err, plain.err) != NULL);  /* its own message, unchanged */
    CHECK(strstr(with.err, "ovl: nothing captured:") != NULL);
    in_time = t2 - t1 < t1 - t0 + 1.0;
    CHECK_I64(ih_count_traces(dir), 0);
    cmd_free(&plain);
    cmd_free(&with);
  }
  CHECK(in_time);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "real-nccl") == 0) {  /* that part alone (test_inject_faults_gpu_skip) */
    real_nccl_without_gpu();
    return check_summary();
  }
  vfork_exec();
  exit_from_thread();
  sigkill_mid_run();
  const char *file = ih_fresh_dir("output-file");
  FILE *f = fopen(file, "wb");
  if (!f || fputs("keep me\n", f) == EOF || fclose(f) != 0) return 2;
  output_not_a_directory("OVL_OUTPUT a file", file, "keep me\n");
  remove(file);
  output_not_a_directory("OVL_OUTPUT read-only", "/proc", NULL);
  real_nccl_without_gpu();
  cuda_program_without_gpu();
  return check_summary();
}
