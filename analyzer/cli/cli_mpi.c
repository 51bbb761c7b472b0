/* --mpi and --mpi-local of the analysing verbs: see cli_mpi.h. */
#include "cli_mpi.h"

#include "cli.h"
#include "output_plan.h"

#include "../mpi/mpi_job.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
  int requested, local;
  int follower_ctx;            /* follower_ctx_store holds this process's options */
} mpi_cli;

/* A process that is not the root keeps its options (the step work it reads for the root uses
** them) past its verb, until ovl_cli_mpi_end. */
static ovl_analysis_ctx follower_ctx_store;

/* The command line as main received it: option parsers may reorder argv (getopt permutes). */
static char **whole_argv;

void ovl_cli_mpi_keep_argv(int argc, char **argv) {
  free(whole_argv);
  whole_argv = malloc(((size_t)argc + 1) * sizeof *whole_argv);
  if (!whole_argv) return;  /* the hand-off then says it cannot start */
  memcpy(whole_argv, argv, (size_t)argc * sizeof *argv);
  whole_argv[argc] = NULL;
}

/* Replaces this process with `name` from this program's folder, same arguments and
** environment (mpirun's included): nothing is printed or opened yet. Returns only on failure. */
static int hand_off_to(const char *name) {
  ovl_err err;
  ovl_err_clear(&err);
  char self[PATH_MAX], path[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 || !whole_argv) {
    ovl_fail(&err, OVL_EINTERNAL, "--mpi: cannot find this program's folder to start %s", name);
    return ovl_cli_fail(&err);
  }
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  snprintf(path, sizeof path, "%s/%s", slash ? self : ".", name);
  fflush(NULL);
  execv(path, whole_argv);
  ovl_fail(&err, OVL_EINTERNAL, "--mpi: cannot start %s: %s (the MPI analysis is that program, installed beside ovl)",
           path, strerror(errno));
  return ovl_cli_fail(&err);
}

void ovl_cli_mpi_request(int local) {
  mpi_cli.requested = 1;
  mpi_cli.local |= local;
}

int ovl_cli_mpi_requested(void) { return mpi_cli.requested; }

int ovl_cli_mpi_job_run(const ovl_analysis_options *opt, const char *const *outputs, size_t noutputs,
                        char *const *args, size_t nargs, ovl_cli_job *out) {
  memset(out, 0, sizeof *out);
  if (ovl_mpi_sibling()) return hand_off_to(ovl_mpi_sibling());
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
