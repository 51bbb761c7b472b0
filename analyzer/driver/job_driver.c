/* The job driver: see job_driver.h. */
#include "job_driver.h"

#include "diagnose/diagnose.h"

int ovl_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, ovl_job_progress_fn progress,
                    void *progress_ctx, ovl_job *job, ovl_err *err) {
  int rc = ovl_measure_job(ctx, args, nargs, progress, progress_ctx, job, err);
  if (rc) return rc;
  rc = ovl_diagnose_job(job, err);
  if (rc) ovl_job_free(job);
  return rc;
}
