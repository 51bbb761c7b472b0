/*
** The job driver: what every command that analyses traces calls. It measures the job (every
** trace, then across ranks: job/job.h) and then runs the diagnosis over the finished results
** (diagnose/diagnose.h). The order is the data flow: load -> measure -> job -> diagnose; the
** measurement never calls the diagnosis, and the diagnosis reads only finished results.
*/
#ifndef OVL_JOB_DRIVER_H
#define OVL_JOB_DRIVER_H

#include "job/job.h"

/* Measures the traces named by args (ovl_measure_job: files, directories, any format) and
** diagnoses the job. On failure nothing is kept (job zeroed) and *err names the problem;
** free a job with ovl_job_free. progress may be NULL. */
int ovl_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, ovl_job_progress_fn progress,
                    void *progress_ctx, ovl_job *job, ovl_err *err);

#endif
