/* Job analysis: see job.h. */
#include "job.h"

#include "../base/vec.h"
#include "../load/trace_files.h"
#include "../load/trace_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_rank(const void *pa, const void *pb) {
  const ovl_rank_result *a = pa, *b = pb;
  if ((a->rank == OVL_NONE) != (b->rank == OVL_NONE)) return a->rank == OVL_NONE ? 1 : -1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  return strcmp(a->trace_path, b->trace_path);
}

static int add_warning(ovl_job *job, const char *text) {
  char **grown = realloc(job->warnings, (job->nwarnings + 1) * sizeof *grown);
  if (!grown) return -1;
  job->warnings = grown;
  if (!(job->warnings[job->nwarnings] = strdup(text))) return -1;
  job->nwarnings++;
  return 0;
}

static int warn_bad_rows(ovl_job *job, const char *path, const ovl_bad_rows *bad) {
  static const char *const names[] = {"kernels", "memops", "collectives", "collective_launches", "nvtx", "api"};
  const long counts[] = {bad->kernels, bad->memops, bad->collectives, bad->launches, bad->nvtx, bad->api};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    if (counts[i] <= 0) continue;
    char line[1024];
    snprintf(line, sizeof line, "%s: warning: skipped %ld %s row%s with NULL fields or end < start", path,
             counts[i], names[i], counts[i] == 1 ? "" : "s");
    if (add_warning(job, line)) return -1;
  }
  return 0;
}

/* Analyses one ovl trace of a source and appends its ranks to the job. */
static int analyse_converted(const ovl_analysis_ctx *ctx, const ovl_trace_source *src, const char *ovl_path,
                             ovl_job *job, ovl_err *err) {
  ovl_rank_result *got = NULL;
  size_t ngot = 0;
  int rc = ovl_analyze_file(ctx, ovl_path, &got, &ngot, err);
  if (rc) ovl_trace_source_explain(src, err);
  if (!rc) {
    ovl_rank_result *grown = realloc(job->ranks, (job->nranks + ngot) * sizeof *grown);
    if (!grown) {
      rc = ovl_oom(err, "results");
    } else {
      job->ranks = grown;
      for (size_t k = 0; k < ngot; k++) {
        /* Results of a converted trace name the file the user gave. */
        char *name = strdup(src->path);
        if (name) {
          free(got[k].trace_path);
          got[k].trace_path = name;
        }
        job->ranks[job->nranks++] = got[k];
      }
      if (ngot && warn_bad_rows(job, src->path, &got[0].bad)) rc = ovl_oom(err, "warnings");
      ngot = 0;
    }
  }
  for (size_t k = 0; k < ngot; k++) ovl_rank_result_free(&got[k]);
  free(got);
  return rc;
}

/* Analyses one file (each process of it) and appends its ranks to the job. */
static int analyse_one(const ovl_analysis_ctx *ctx, const char *path, ovl_job *job, ovl_err *err) {
  ovl_trace_source src;
  int rc = ovl_trace_source_open_with(path, &ctx->opt.import, &src, err);
  for (size_t p = 0; !rc && p < src.n_ovl_paths; p++) rc = analyse_converted(ctx, &src, src.ovl_paths[p], job, err);
  ovl_trace_source_close(&src);
  return rc;
}

int ovl_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, ovl_job_progress_fn progress,
                    void *progress_ctx, ovl_job *job, ovl_err *err) {
  memset(job, 0, sizeof *job);
  ovl_file_list files = {0};
  int rc = ovl_expand_trace_args(args, nargs, &files, err);
  for (size_t i = 0; !rc && i < files.len; i++) {
    rc = analyse_one(ctx, files.paths[i], job, err);
    if (!rc && progress) progress(progress_ctx, i + 1, files.len, files.paths[i]);
  }
  ovl_file_list_free(&files);
  if (rc) {
    ovl_job_free(job);
    return rc;
  }
  ovl_qsort(job->ranks, job->nranks, sizeof *job->ranks, cmp_rank);
  return OVL_OK;
}

void ovl_job_free(ovl_job *job) {
  for (size_t i = 0; i < job->nranks; i++) ovl_rank_result_free(&job->ranks[i]);
  free(job->ranks);
  ovl_free_findings(job->findings, job->nfindings);
  for (size_t i = 0; i < job->nwarnings; i++) free(job->warnings[i]);
  free(job->warnings);
  memset(job, 0, sizeof *job);
}
