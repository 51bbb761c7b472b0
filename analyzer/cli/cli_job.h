/*
** What the verbs that analyse traces (report, fit, whatif) share: analysing the TRACE
** arguments into a job, and writing the result to standard output or -o FILE.
*/
#ifndef OVL_CLI_JOB_H
#define OVL_CLI_JOB_H

#include "../analyze/job.h"

#include <stdio.h>

typedef struct ovl_cli_job {
  ovl_analysis_ctx ctx;
  ovl_job job;
} ovl_cli_job;

/* Analyses args[0..nargs) with opt (kernel launch dimensions are always read: the diagnosis
** compares kernels by name and grid). Prints warnings; on failure prints the error and returns
** the exit status (nothing to free), else 0. */
int ovl_cli_job_run(const ovl_analysis_options *opt, char *const *args, size_t nargs, ovl_cli_job *out);
void ovl_cli_job_free(ovl_cli_job *j);

/* Writes through write(out, ctx) to `path` (NULL: standard output). Returns the exit status,
** having printed any error. */
int ovl_cli_write_output(const char *path, void (*write)(FILE *out, void *ctx), void *ctx);

#endif
