/* --mpi and --mpi-local of the analysing verbs: see cli_mpi.h. */
#include "cli_mpi.h"

#include "cli.h"
#include "output_plan.h"

#include "../mpi/mpi_job.h"

#include <string.h>

static struct {
  int requested, local;
  int follower_ctx;            /* follower_ctx_store holds this process's options */
} mpi_cli;

/* A process that is not the root keeps its options (the step work it reads for the root uses
** them) past its verb, until ovl_cli_mpi_end. */
static ovl_analysis_ctx follower_ctx_store;

void ovl_cli_mpi_request(int local) {
  mpi_cli.requested = 1;
  mpi_cli.local |= local;
}

int ovl_cli_mpi_requested(void) { return mpi_cli.requested; }

int ovl_cli_mpi_job_run(const ovl_analysis_options *opt, const char *const *outputs, size_t noutputs,
                        char *const *args, size_t nargs, ovl_cli_job *out) {
  memset(out, 0, sizeof *out);
  ovl_err err;
  ovl_err_clear(&err);
  int root = 1;
  int rc = ovl_mpi_begin(&root, &err);
  if (rc) return ovl_cli_fail(&err);
  /* The root plans the outputs (it alone writes) and says what is wrong; every process stops. */
  int status = root ? ovl_cli_plan_outputs(outputs, noutputs, args, nargs) : 0;
  if (ovl_mpi_agree_status(status, &err)) return root ? status : OVL_CLI_MPI_FOLLOWER;
  ovl_analysis_options o = *opt;
  o.launch_dims = 1;
  ovl_analysis_ctx *ctx = root ? &out->ctx : &follower_ctx_store;
  rc = ovl_analysis_ctx_init(ctx, &o, &err);
  if ((rc = ovl_mpi_agree_status(rc, &err)) != OVL_OK) {
    if (root) return ovl_cli_fail(&err);
    return OVL_CLI_MPI_FOLLOWER;
  }
  mpi_cli.follower_ctx = !root;
  rc = ovl_mpi_analyze_job(ctx, args, nargs, mpi_cli.local, ovl_cli_progress, NULL, &out->job, &root, &err);
  if (!root) return OVL_CLI_MPI_FOLLOWER;
  if (rc) {
    ovl_analysis_ctx_free(ctx);
    return ovl_cli_fail(&err);
  }
  ovl_cli_print_warnings(&out->job);
  return 0;
}

int ovl_cli_mpi_end(int status) {
  if (!ovl_mpi_active()) return status;
  status = ovl_mpi_end(status);
  if (mpi_cli.follower_ctx) ovl_analysis_ctx_free(&follower_ctx_store);
  mpi_cli.follower_ctx = 0;
  return status;
}
