/*
** The `ovl` command line: one file per verb (cmd_<verb>.c), a table of verbs (verbs.c)
** and these shared helpers. Every verb returns the process exit status: 0 on success,
** 1 for a user error (bad input, bad flag), 2 for an internal error; errors are one line
** on stderr, "ovl: <file or flag>: <what is wrong>".
*/
#ifndef OVL_CLI_H
#define OVL_CLI_H

#include "base/status.h"

#include <stddef.h>

/* What a TRACE argument may be, for every analysing verb's help (one wording: each verb
** reads every format through the same loader). */
#define OVL_CLI_TRACE_HELP                                                                      \
  "TRACE: an ovl SQLite trace, a PyTorch profiler (Kineto) .json/.json.gz trace, an Nsight\n" \
  "Systems SQLite export, or a directory of them.\n"

typedef struct ovl_verb {
  const char *name;
  int (*run)(int argc, char **argv);  /* argv[0] is the verb */
  const char *summary;
} ovl_verb;

extern const ovl_verb ovl_verbs[];
extern const size_t ovl_nverbs;

/* Prints "ovl: <err->msg>" and returns err->code (2 when unset). */
int ovl_cli_fail(const ovl_err *err);
/* Prints "ovl: <verb>: <message> (see 'ovl <verb> --help')" and returns 1. */
int ovl_cli_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports the option getopt_long rejected, c being what it returned ('?' or ':', the option
** string starting with ':'): "option '--top' needs a value", "option '--all' takes no value",
** "option '--nosuch' is unknown", "option '-x' is unknown". Returns 1. */
int ovl_cli_bad_option(const char *verb, int c, char **argv);
struct ovl_pm_params;
/* `ovl simulate --strategy` (cmd_simulate_strategy.c): prints the answers (JSON with json) and
** with emit writes one trace per rank into that directory. Returns the exit status. */
int ovl_simulate_strategy(const struct ovl_pm_params *p, const char *emit, long steps, int json);
struct ovl_job;
/* Progress on stderr (cli_progress.c; docs/cli.md "Progress"): installs the sink of
** base/progress.h as OVL_PROGRESS and the terminal allow; once per command. */
void ovl_cli_progress_install(void);
/* Clears the progress line, before anything else is printed on stderr. */
void ovl_cli_progress_clear(void);
/* Progress for ovl_analyze_job: how many of the traces are analysed, with the rest. */
void ovl_cli_progress(void *ctx, size_t done, size_t total, const char *path);
/* Prints a job's warnings on stderr, each prefixed "ovl: ". */
void ovl_cli_print_warnings(const struct ovl_job *job);
/* Sets *slot to value for the option flag, which names one output: given twice, prints
** "<flag> given twice" and returns 1 (the second must not silently replace the first). */
int ovl_cli_once(const char *verb, const char *flag, const char **slot, const char *value);
/* Parses an integer in [min, max] given to `flag`. Returns 0, or prints the error and returns 1. */
int ovl_cli_int(const char *verb, const char *flag, const char *text, long min, long max, long *out);

#endif
