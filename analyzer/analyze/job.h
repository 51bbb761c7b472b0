/*
** A job: every trace named on a command line, analysed into one list of ranks ordered by
** rank, then device, then file. This is what `ovl report` (and every other command that
** analyses traces) works from. Warnings (skipped bad rows) are collected, not printed.
*/
#ifndef OVL_JOB_H
#define OVL_JOB_H

#include "analysis.h"

typedef struct ovl_job {
  ovl_rank_result *ranks;
  size_t nranks;
  ovl_finding *findings;     /* job-level findings */
  size_t nfindings;
  char **warnings;           /* "<file>: warning: ..." lines */
  size_t nwarnings;
} ovl_job;

/* Called after each trace is analysed (for progress displays); may be NULL. */
typedef void (*ovl_job_progress_fn)(void *ctx, size_t done, size_t total, const char *path);

/* Expands the TRACE arguments (files and directories), resolves each format, analyses every
** trace and sorts the ranks. On failure nothing is kept and *err names the bad file. */
int ovl_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, ovl_job_progress_fn progress,
                    void *progress_ctx, ovl_job *job, ovl_err *err);
void ovl_job_free(ovl_job *job);

#endif
