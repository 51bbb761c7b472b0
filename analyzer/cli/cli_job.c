/* Shared job analysis and output for the verbs: see cli_job.h. */
#include "cli_job.h"

#include "cli.h"
#include "cli_mpi.h"
#include "output_plan.h"

#include "base/safe_output.h"
#include "base/text_clean.h"
#include "base/units.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ovl_cli_job_opts_init(ovl_cli_job_opts *o) {
  memset(o, 0, sizeof *o);
  o->pretty = 1;
}

int ovl_cli_job_option(int c, const char *arg, ovl_cli_job_opts *o) {
  switch (c) {
    case OVL_OPT_JSON: o->json = 1; return 1;
    case OVL_OPT_COMPACT: o->pretty = 0; return 1;
    case 'o':
      if (o->output) {
        ovl_cli_usage(o->verb ? o->verb : "ovl", "-o given twice ('%s', then '%s'): give one output", o->output, arg);
        return -1;
      }
      o->output = arg;
      return 1;
    case OVL_OPT_FORCE: ovl_output_plan_force(1); return 1;
    case OVL_OPT_COMM_PATTERN: o->analysis.comm_pattern = arg; return 1;
    case OVL_OPT_STEP_PATTERN: o->analysis.step_pattern = arg; return 1;
    case OVL_OPT_HTA_COMPAT: o->analysis.import.hta_compat = 1; return 1;
    case OVL_OPT_DIM: o->analysis.dim_overrides = arg; return 1;
    case OVL_OPT_MPI: ovl_cli_mpi_request(0); return 1;
    case OVL_OPT_MPI_LOCAL: ovl_cli_mpi_request(1); return 1;
    default: return 0;
  }
}

int ovl_cli_job_run(const ovl_analysis_options *opt, const char *const *outputs, size_t noutputs, char *const *args,
                    size_t nargs, ovl_cli_job *out) {
  if (ovl_cli_mpi_requested()) return ovl_cli_mpi_job_run(opt, outputs, noutputs, args, nargs, out);
  int status = ovl_cli_plan_outputs(outputs, noutputs, args, nargs);
  if (status) return status;
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

int ovl_cli_write_file(const char *path, ovl_cli_emitter emit, void *ctx) {
  ovl_err err;
  ovl_err_clear(&err);
  ovl_safe_out so;
  int rc = ovl_safe_out_begin(&so, path, &err);
  if (rc) return ovl_cli_fail(&err);
  int fd = dup(so.fd);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    if (fd >= 0) close(fd);
    ovl_safe_out_abort(&so);
    ovl_fail(&err, OVL_EUSER, "%s: cannot write: %s", path, strerror(errno));
    return ovl_cli_fail(&err);
  }
  rc = emit(out, ctx, &err);
  errno = 0;
  if (!rc && (fflush(out) != 0 || ferror(out)))
    rc = ovl_fail(&err, OVL_EUSER, "%s: write failed: %s", path, strerror(errno));
  if (fclose(out) != 0 && !rc) rc = ovl_fail(&err, OVL_EUSER, "%s: write failed: %s", path, strerror(errno));
  if (rc) ovl_safe_out_abort(&so);
  else rc = ovl_safe_out_commit(&so, &err);
  if (rc) return ovl_cli_fail(&err);
  ovl_cli_wrote(path, NULL);
  return 0;
}

void ovl_cli_wrote(const char *path, const char *what) {
  struct stat sb;
  char size[32] = "", clean[4096];
  if (stat(path, &sb) == 0) ovl_format_bytes((double)sb.st_size, size, sizeof size);
  ovl_text_clean_into(path, clean, sizeof clean);
  ovl_cli_progress_clear();
  fprintf(stderr, "ovl: wrote %s%s%s%s%s%s\n", clean, size[0] ? " (" : "", size, size[0] ? ")" : "", what ? ": " : "",
          what ? what : "");
}

typedef struct writer_call {
  ovl_cli_writer write;
  const ovl_cli_job_opts *o;
  void *ctx;
} writer_call;

static int emit_with_writer(FILE *out, void *ctx, ovl_err *err) {
  const writer_call *w = ctx;
  return w->write(out, w->o, w->ctx) ? ovl_oom(err, "the report") : OVL_OK;
}

int ovl_cli_write_output(const ovl_cli_job_opts *o, ovl_cli_writer write, void *ctx) {
  if (!o->output) {
    int incomplete = write(stdout, o, ctx);
    ovl_err err;
    ovl_err_clear(&err);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      ovl_fail(&err, OVL_EUSER, "stdout: write failed: %s", strerror(errno));
      return ovl_cli_fail(&err);
    }
    if (incomplete) {
      ovl_oom(&err, "stdout: the report");
      return ovl_cli_fail(&err);
    }
    return 0;
  }
  writer_call w = {write, o, ctx};
  return ovl_cli_write_file(o->output, emit_with_writer, &w);
}
