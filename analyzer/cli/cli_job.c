/* Shared job analysis and output for the verbs: see cli_job.h. */
#include "cli_job.h"

#include "cli.h"

#include <errno.h>
#include <string.h>

void ovl_cli_job_opts_init(ovl_cli_job_opts *o) {
  memset(o, 0, sizeof *o);
  o->pretty = 1;
}

int ovl_cli_job_option(int c, const char *arg, ovl_cli_job_opts *o) {
  switch (c) {
    case OVL_OPT_JSON: o->json = 1; return 1;
    case OVL_OPT_COMPACT: o->pretty = 0; return 1;
    case 'o': o->output = arg; return 1;
    case OVL_OPT_COMM_PATTERN: o->analysis.comm_pattern = arg; return 1;
    case OVL_OPT_STEP_PATTERN: o->analysis.step_pattern = arg; return 1;
    case OVL_OPT_HTA_COMPAT: o->analysis.import.hta_compat = 1; return 1;
    case OVL_OPT_DIM: o->analysis.dim_overrides = arg; return 1;
    default: return 0;
  }
}

int ovl_cli_job_run(const ovl_analysis_options *opt, char *const *args, size_t nargs, ovl_cli_job *out) {
  ovl_err err;
  ovl_err_clear(&err);
  ovl_analysis_options o = *opt;
  o.launch_dims = 1;
  int rc = ovl_analysis_ctx_init(&out->ctx, &o, &err);
  if (rc) return ovl_cli_fail(&err);
  rc = ovl_analyze_job(&out->ctx, args, nargs, ovl_cli_progress, NULL, &out->job, &err);
  if (rc) {
    ovl_analysis_ctx_free(&out->ctx);
    return ovl_cli_fail(&err);
  }
  ovl_cli_print_warnings(&out->job);
  return 0;
}

void ovl_cli_job_free(ovl_cli_job *j) {
  ovl_job_free(&j->job);
  ovl_analysis_ctx_free(&j->ctx);
}

int ovl_cli_write_output(const ovl_cli_job_opts *o, ovl_cli_writer write, void *ctx) {
  const char *path = o->output;
  ovl_err err;
  ovl_err_clear(&err);
  FILE *out = stdout;
  if (path && !(out = fopen(path, "w"))) {
    ovl_fail(&err, OVL_EUSER, "%s: cannot write: %s", path, strerror(errno));
    return ovl_cli_fail(&err);
  }
  write(out, o, ctx);
  int rc = (fflush(out) != 0 || ferror(out)) ? ovl_fail(&err, OVL_EUSER, "%s: write failed", path ? path : "stdout") : 0;
  if (out != stdout && fclose(out) != 0 && !rc) rc = ovl_fail(&err, OVL_EUSER, "%s: write failed", path);
  return rc ? ovl_cli_fail(&err) : 0;
}
