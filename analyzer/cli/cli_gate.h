/*
** `--fail-if CONDITION` of `ovl report` and `ovl diff` (compare/gate.h, docs/diff.md "CI gate"):
** conditions parsed with the options (a bad one is a usage error before anything is read),
** judged once the output is written; each failed condition is one line on stderr,
**   ovl: <verb>: --fail-if '<condition>' failed: <what was measured>
** and the command exits OVL_GATE_FAILED_STATUS (3).
*/
#ifndef OVL_CLI_GATE_H
#define OVL_CLI_GATE_H

#include "../compare/gate.h"
#include "../report/diff_text.h"

#define OVL_CLI_GATE_MAX 32

typedef struct ovl_cli_gate {
  ovl_gate_cond conds[OVL_CLI_GATE_MAX];
  size_t n;
} ovl_cli_gate;

/* Adds a condition (allow_change: diff's signed values). Returns 0, or prints the usage error
** and returns 1. */
int ovl_cli_gate_add(ovl_cli_gate *g, const char *verb, const char *text, int allow_change);

/* Judges the conditions on an analysed job. Returns 0 when none fails, OVL_GATE_FAILED_STATUS
** when one does (each named on stderr), or prints the error and returns 2 (out of memory). */
int ovl_cli_gate_job(const ovl_cli_gate *g, const char *verb, const ovl_job *job);

/* Judges the conditions on a diff into lines[0..g->n) (for the JSON), without printing. Returns
** 0, or -1 when memory runs out. */
int ovl_cli_gate_judge_diff(const ovl_cli_gate *g, const ovl_diff *d, ovl_diff_gate_line *lines);
/* Prints the failed lines and returns the exit status they make (0 or OVL_GATE_FAILED_STATUS);
** conditions that hold only within the noise are said to pass, with why. */
int ovl_cli_gate_finish(const char *verb, const ovl_diff_gate_line *lines, size_t n);

#endif
