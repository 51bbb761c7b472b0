/* `--html FILE` of `ovl report` and `ovl run`: the job's page (report_html.h), with the bucket
** valley replayed by whatif over OVL_HTML_VALLEY_CAPS. */
#include "cli.h"
#include "cli_job.h"

#include "../analyze/whatif.h"
#include "../mpi/mpi_job.h"
#include "../report/report_html.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

static int emit_page(FILE *out, void *ctx, ovl_err *err) { return ovl_report_html(out, ctx, err); }

int ovl_cli_write_html(ovl_cli_job *j, const char *path, const char *title, double alpha_ns, double beta) {
  return ovl_cli_write_html_with(j, path, title, alpha_ns, beta, NULL, NULL);
}

int ovl_cli_write_html_with(ovl_cli_job *j, const char *path, const char *title, double alpha_ns, double beta,
                            const ovl_html_extra *extra, const char *heading) {
  if (!j) {  /* the extra section alone */
    ovl_html_inputs in = {.title = title, .extra = extra, .heading = heading};
    return ovl_cli_write_file(path, emit_page, &in);
  }
  double caps[64];
  size_t ncaps = 0;
  for (const char *p = OVL_HTML_VALLEY_CAPS; *p && ncaps < 64;) {
    char *end;
    caps[ncaps++] = strtod(p, &end) * MIB;
    p = *end == ',' ? end + 1 : end;
  }
  ovl_whatif_options wopt = {caps, ncaps, MIB, alpha_ns, beta};  /* as `ovl whatif` by default */
  ovl_whatif_result w;
  ovl_err werr;
  ovl_err_clear(&werr);
  int have_whatif = ovl_whatif_run(j->job.ranks, j->job.nranks, &wopt, &w, &werr) == OVL_OK;
  ovl_html_inputs in = {.job = &j->job, .ctx = &j->ctx, .whatif = have_whatif ? &w : NULL, .whatif_error = werr.msg,
                        .title = title, .read_step = ovl_mpi_active() ? ovl_mpi_step_work_read_many : NULL, .extra = extra,
                        .heading = heading};
  int status = ovl_cli_write_file(path, emit_page, &in);
  if (have_whatif) ovl_whatif_result_free(&w);
  return status;
}
