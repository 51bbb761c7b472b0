/* `--fail-if` for the verbs: see cli_gate.h. */
#include "cli_gate.h"

#include "cli.h"

#include <stdio.h>
#include <string.h>

int ovl_cli_gate_add(ovl_cli_gate *g, const char *verb, const char *text, int allow_change) {
  if (g->n == OVL_CLI_GATE_MAX) return ovl_cli_usage(verb, "at most %d --fail-if conditions", OVL_CLI_GATE_MAX);
  ovl_err err;
  ovl_err_clear(&err);
  if (ovl_gate_parse(text, allow_change, &g->conds[g->n], &err)) return ovl_cli_usage(verb, "%s", err.msg);
  g->n++;
  return 0;
}

int ovl_cli_gate_finish(const char *verb, const ovl_diff_gate_line *lines, size_t n) {
  int status = 0;
  for (size_t i = 0; i < n; i++) {
    const ovl_diff_gate_line *l = &lines[i];
    if (l->result.failed) {
      fprintf(stderr, "ovl: %s: --fail-if '%s' failed: %s\n", verb, l->cond->text, l->result.why);
      status = OVL_GATE_FAILED_STATUS;
    } else if (l->result.holds) {
      fprintf(stderr, "ovl: %s: --fail-if '%s' passed: %s\n", verb, l->cond->text, l->result.why);
    }
  }
  return status;
}

int ovl_cli_gate_job(const ovl_cli_gate *g, const char *verb, const ovl_job *job) {
  if (g->n == 0) return 0;
  ovl_err err;
  ovl_err_clear(&err);
  ovl_profile p;
  ovl_gate_values v;
  if (ovl_profile_from_job(job, NULL, "", &p, &err)) return ovl_cli_fail(&err);
  int rc = ovl_gate_values_of(&p, &v);
  ovl_profile_free(&p);
  if (rc) {
    ovl_oom(&err, "--fail-if");
    return ovl_cli_fail(&err);
  }
  ovl_diff_gate_line lines[OVL_CLI_GATE_MAX];
  for (size_t i = 0; i < g->n; i++) {
    lines[i].cond = &g->conds[i];
    ovl_gate_check_run(&g->conds[i], &v, &lines[i].result);
  }
  return ovl_cli_gate_finish(verb, lines, g->n);
}

int ovl_cli_gate_judge_diff(const ovl_cli_gate *g, const ovl_diff *d, ovl_diff_gate_line *lines) {
  if (g->n == 0) return 0;
  ovl_gate_values b, a;
  if (ovl_gate_values_of(d->before, &b) || ovl_gate_values_of(d->after, &a)) return -1;
  for (size_t i = 0; i < g->n; i++) {
    lines[i].cond = &g->conds[i];
    ovl_gate_check_diff(&g->conds[i], d, &b, &a, &lines[i].result);
  }
  return 0;
}
