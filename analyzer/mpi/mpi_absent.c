/*
** mpi_job.h in an ovl built without MPI (cmake/FindOvlMpi.cmake found none usable): --mpi
** fails saying why, and nothing else changes. Compiled with OVL_MPI_SIBLING (the name of the
** program beside it that has MPI), it is `ovl`'s: the CLI hands --mpi to that program before
** any of these calls (cli_mpi.c), so they are never reached there.
*/
#include "mpi_job.h"

#include <string.h>

#ifndef OVL_MPI_WHY
#define OVL_MPI_WHY "no MPI found"
#endif

#ifdef OVL_MPI_SIBLING
const char *ovl_mpi_missing(void) { return NULL; }
const char *ovl_mpi_sibling(void) { return OVL_MPI_SIBLING; }
#else
const char *ovl_mpi_missing(void) { return OVL_MPI_WHY; }
const char *ovl_mpi_sibling(void) { return NULL; }
#endif

int ovl_mpi_begin(int *is_root, ovl_err *err) {
  *is_root = 1;
  return ovl_fail(err, OVL_EUSER, "--mpi: this ovl was built without MPI (%s); on Debian: apt-get install "
                                  "libopenmpi-dev openmpi-bin, then build again", OVL_MPI_WHY);
}

int ovl_mpi_agree_status(int rc, ovl_err *err) {
  (void)err;
  return rc;
}

int ovl_mpi_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, int local,
                        ovl_job_progress_fn progress, void *progress_ctx, ovl_job *job, int *is_root, ovl_err *err) {
  (void)ctx, (void)args, (void)nargs, (void)local, (void)progress, (void)progress_ctx;
  memset(job, 0, sizeof *job);
  return ovl_mpi_begin(is_root, err);
}

int ovl_mpi_serve(void) { return OVL_EINTERNAL; }
int ovl_mpi_end(int status) { return status; }
int ovl_mpi_active(void) { return 0; }

int ovl_mpi_step_work_read_many(const ovl_analysis_ctx *ctx, const ovl_rank_result *r,
                                const ovl_step_result *const *steps, const int64_t *merge_ns, size_t n,
                                ovl_step_work *out, ovl_err *err) {
  return ovl_step_work_read_many(ctx, r, steps, merge_ns, n, out, err);
}
