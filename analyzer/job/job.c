/* Job measurement: see job.h. */
#include "job.h"

#include "job_dims.h"

#include "base/progress.h"
#include "base/vec.h"
#include "load/trace_files.h"
#include "load/trace_source.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Rows the reader skipped. In the user's own ovl trace they are the file's; in a conversion
** (an imported Kineto or Nsight Systems trace) the user wrote none of them: the importer
** wrote what its own reader refuses, a fault of ovl, said as such. */
static int warn_bad_rows(ovl_job *job, const ovl_trace_source *src, const ovl_bad_rows *bad) {
  static const char *const names[] = {"kernels", "memops", "collectives", "collective_launches", "nvtx", "api",
                                      "strings", "collective_channels"};
  const long counts[] = {bad->kernels, bad->memops, bad->collectives, bad->launches, bad->nvtx, bad->api,
                         bad->strings, bad->channels};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    if (counts[i] <= 0) continue;
    char line[1024];
    if (src->format != OVL_FORMAT_OVL_SQLITE)
      snprintf(line, sizeof line, "%s: warning: ovl's import of it wrote %ld %s row%s that its reader then skipped "
                                  "(a fault of ovl, not of the file: please report it)",
               src->path, counts[i], names[i], counts[i] == 1 ? "" : "s");
    else
      snprintf(line, sizeof line, "%s: warning: skipped %ld %s row%s with missing, malformed or out-of-range values",
               src->path, counts[i], names[i], counts[i] == 1 ? "" : "s");
    if (add_warning(job, line)) return -1;
  }
  return 0;
}

/* Traces of several jobs given together: said once, naming the jobs (the report repeats it). */
static int warn_parts(ovl_job *job) {
  char line[2048];
  int n = snprintf(line, sizeof line, "warning: these traces come from %zu different jobs (%s), analysed apart:",
                   job->nparts, job->why_parts);
  for (size_t k = 0; k < job->nparts && n > 0 && (size_t)n < sizeof line - 2; k++) {
    char part[768];
    ovl_job_parts_describe(job, k, part, sizeof part);
    n += snprintf(line + n, sizeof line - (size_t)n, "%s %s", k ? ";" : "", part);
  }
  return add_warning(job, line);
}

/* A process whose trace has no GPU work is kept aside (host_only.h) instead of failing the
** job: returns 1 when that is what the failure was (fr->rc cleared). */
static int keep_without_gpu(const char *ovl_path, const char *user_path, ovl_measured_file *fr) {
  ovl_host_only h;
  int is = 0;
  ovl_err err = {0};
  if (ovl_host_only_read(ovl_path, user_path, &h, &is, &err) || !is) return 0;
  ovl_host_only *grown = realloc(fr->no_gpu, (fr->nno_gpu + 1) * sizeof *grown);
  if (!grown) {
    ovl_host_only_free(&h);
    return 0;
  }
  fr->no_gpu = grown;
  fr->no_gpu[fr->nno_gpu++] = h;
  fr->rc = OVL_OK;
  return 1;
}

/* The analysis of an opened source: every traced process it holds (an Nsight Systems export
** may hold several, one ovl trace each), its ranks named after the file the user gave and
** pointing at their process's ovl trace. */
static void analyse_source(const ovl_analysis_ctx *ctx, ovl_measured_file *fr) {
  ovl_trace_source *src = &fr->src;
  fr->opened = 1;
  for (size_t p = 0; !fr->rc && p < src->n_ovl_paths; p++) {
    ovl_rank_result *got = NULL;
    size_t ngot = 0;
    fr->rc = ovl_analyze_file(ctx, src->ovl_paths[p], &got, &ngot, &fr->err);
    if (fr->rc == OVL_EUSER && keep_without_gpu(src->ovl_paths[p], src->path, fr)) continue;
    if (fr->rc) {
      ovl_trace_source_explain(src, &fr->err);
      break;
    }
    ovl_rank_result *grown = realloc(fr->ranks, (fr->nranks + ngot) * sizeof *grown);
    if (!grown) fr->rc = ovl_oom(&fr->err, "results");
    for (size_t k = 0; k < ngot; k++) {
      char *name = fr->rc ? NULL : strdup(src->path);
      if (!name) {
        if (!fr->rc) fr->rc = ovl_oom(&fr->err, "results");
        ovl_rank_result_free(&got[k]);
        continue;
      }
      /* the analysis names the ovl trace it read: that is the rank's ovl_path */
      got[k].ovl_path = got[k].trace_path;
      got[k].trace_path = name;
      grown[fr->nranks++] = got[k];
    }
    if (grown) fr->ranks = grown;
    free(got);
  }
}

void ovl_measure_file(const ovl_analysis_ctx *ctx, const char *path, ovl_measured_file *fr) {
  ovl_progress_file(path);  /* progress names the user's file, never a conversion */
  fr->rc = ovl_trace_source_open_with(path, &ctx->opt.import, &fr->src, &fr->err);
  if (!fr->rc) analyse_source(ctx, fr);
  ovl_progress_file(NULL);
}

/* A pool of workers takes files in order; each file is analysed independently (per-file
** memory is bounded, and the files of a large job are independent until the cross-rank
** stage). Progress is reported in completion order. */
typedef struct pool {
  const ovl_analysis_ctx *ctx;
  char *const *paths;
  size_t npaths;
  ovl_measured_file *results;
  size_t next, done;
  int failed;              /* stop handing out files after the first failure */
  pthread_mutex_t lock;
  ovl_job_progress_fn progress;
  void *progress_ctx;
  ovl_measured_fn measured;  /* NULL, or called on the worker for each file measured well */
  void *measured_ctx;
} pool;

static void *worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    size_t i = p->next;
    int stop = p->failed || i >= p->npaths;
    if (!stop) p->next++;
    pthread_mutex_unlock(&p->lock);
    if (stop) break;
    ovl_measure_file(p->ctx, p->paths[i], &p->results[i]);
    if (!p->results[i].rc && p->measured) p->measured(p->measured_ctx, i, &p->results[i]);
    pthread_mutex_lock(&p->lock);
    p->results[i].done = 1;
    if (p->results[i].rc) p->failed = 1;
    else if (p->progress) p->progress(p->progress_ctx, ++p->done, p->npaths, p->paths[i]);
    pthread_mutex_unlock(&p->lock);
  }
  return NULL;
}

static size_t worker_count(size_t files, size_t max_workers) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = cpus > 0 ? (size_t)cpus : 1;
  if (max_workers && n > max_workers) n = max_workers;
  if (n > OVL_JOB_MAX_WORKERS) n = OVL_JOB_MAX_WORKERS;
  return n < files ? n : (files ? files : 1);
}

/* Moves the files' ranks into the job in file order; the first failure (in file order) wins.
** Every file is left empty. */
static int merge_results(ovl_job *job, ovl_measured_file *results, size_t n, ovl_err *err) {
  int rc = OVL_OK;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    if (!rc && results[i].done && results[i].rc) {
      rc = results[i].rc;
      *err = results[i].err;
    }
    total += results[i].nranks;
  }
  if (!rc && total && !(job->ranks = malloc(total * sizeof *job->ranks))) rc = ovl_oom(err, "results");
  if (!rc && !(job->sources = calloc(n ? n : 1, sizeof *job->sources))) rc = ovl_oom(err, "results");
  size_t no_gpu = 0;
  for (size_t i = 0; i < n; i++) no_gpu += results[i].nno_gpu;
  if (!rc && no_gpu && !(job->no_gpu = calloc(no_gpu, sizeof *job->no_gpu))) rc = ovl_oom(err, "results");
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < results[i].nno_gpu; k++) {
      if (!rc) job->no_gpu[job->nno_gpu++] = results[i].no_gpu[k];
      else ovl_host_only_free(&results[i].no_gpu[k]);
    }
    free(results[i].no_gpu);
  }
  /* Nothing with GPU work: the job fails on the first such trace, saying what it holds. */
  if (!rc && total == 0 && job->nno_gpu) {
    ovl_host_only_describe(&job->no_gpu[0], err->msg, sizeof err->msg);
    err->code = rc = OVL_EUSER;
  }
  for (size_t i = 0; i < n; i++) {
    ovl_measured_file *fr = &results[i];
    if (!rc && fr->nranks) {
      memcpy(job->ranks + job->nranks, fr->ranks, fr->nranks * sizeof *fr->ranks);
      job->nranks += fr->nranks;
      if (warn_bad_rows(job, &fr->src, &fr->ranks[0].bad)) rc = ovl_oom(err, "warnings");
      if (!rc && fr->src.skipped > 0) {
        char line[1024];
        snprintf(line, sizeof line, "%s: warning: skipped %ld event%s without usable times (missing or out of range)",
                 fr->src.path, fr->src.skipped, fr->src.skipped == 1 ? "" : "s");
        if (add_warning(job, line)) rc = ovl_oom(err, "warnings");
      }
    } else {
      for (size_t k = 0; k < fr->nranks; k++) ovl_rank_result_free(&fr->ranks[k]);
    }
    if (!rc && fr->opened) job->sources[job->nsources++] = fr->src;
    else if (fr->opened) ovl_trace_source_close(&fr->src);
    free(fr->ranks);
    memset(fr, 0, sizeof *fr);  /* all moved into the job or freed */
  }
  return rc;
}

void ovl_measure_files(const ovl_analysis_ctx *ctx, char *const *paths, size_t n, size_t max_workers,
                       ovl_job_progress_fn progress, void *progress_ctx, ovl_measured_file *out) {
  ovl_measure_files_then(ctx, paths, n, max_workers, progress, progress_ctx, out, NULL, NULL);
}

void ovl_measure_files_then(const ovl_analysis_ctx *ctx, char *const *paths, size_t n, size_t max_workers,
                            ovl_job_progress_fn progress, void *progress_ctx, ovl_measured_file *out,
                            ovl_measured_fn measured, void *measured_ctx) {
  pool p = {ctx, paths, n, out, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER, progress, progress_ctx, measured, measured_ctx};
  size_t nworkers = worker_count(n, max_workers);
  pthread_t threads[OVL_JOB_MAX_WORKERS];
  size_t started = 0;
  for (size_t i = 1; i < nworkers; i++)
    if (pthread_create(&threads[started], NULL, worker, &p) == 0) started++;
  worker(&p);  /* the calling thread works too */
  for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
  pthread_mutex_destroy(&p.lock);
}

int ovl_job_assemble(const ovl_analysis_ctx *ctx, ovl_measured_file *files, size_t n, const char *skipped_warning,
                     ovl_job *job, ovl_err *err) {
  return ovl_job_assemble_remote(ctx, files, n, skipped_warning, NULL, job, err);
}

int ovl_job_assemble_remote(const ovl_analysis_ctx *ctx, ovl_measured_file *files, size_t n,
                            const char *skipped_warning, const ovl_remote_pieces *remote, ovl_job *job,
                            ovl_err *err) {
  memset(job, 0, sizeof *job);
  job->cross.most_waited_for = SIZE_MAX;
  int rc = merge_results(job, files, n, err);
  if (!rc && skipped_warning && skipped_warning[0] && add_warning(job, skipped_warning)) rc = ovl_oom(err, "warnings");
  if (rc) {
    ovl_job_free(job);
    return rc;
  }
  ovl_qsort(job->ranks, job->nranks, sizeof *job->ranks, cmp_rank);
  rc = ovl_job_partition(job, err);
  if (!rc && job->nparts > 1 && warn_parts(job)) rc = ovl_oom(err, "warnings");
  if (!rc) rc = ovl_job_dims_classify(job, ctx->opt.dim_overrides, remote, err);
  if (!rc) rc = ovl_job_cross_rank(job, remote, err);
  if (!rc) rc = ovl_job_dims_finish(job, err);
  if (rc) ovl_job_free(job);
  return rc;
}

int ovl_measure_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, ovl_job_progress_fn progress,
                    void *progress_ctx, ovl_job *job, ovl_err *err) {
  memset(job, 0, sizeof *job);
  ovl_file_list files = {0};
  int rc = ovl_expand_trace_args(args, nargs, &files, err);
  ovl_measured_file *results = NULL;
  if (!rc && !(results = calloc(files.len ? files.len : 1, sizeof *results))) rc = ovl_oom(err, "results");
  char skipped[2048] = "";
  if (!rc) {
    ovl_measure_files(ctx, files.paths, files.len, 0, progress, progress_ctx, results);
    if (files.nskipped || files.nnot_traces) ovl_file_list_skipped_text(&files, skipped, sizeof skipped);
    rc = ovl_job_assemble(ctx, results, files.len, skipped, job, err);
  }
  free(results);
  ovl_file_list_free(&files);
  return rc;
}

void ovl_measured_file_free(ovl_measured_file *f) {
  for (size_t k = 0; k < f->nranks; k++) ovl_rank_result_free(&f->ranks[k]);
  free(f->ranks);
  for (size_t k = 0; k < f->nno_gpu; k++) ovl_host_only_free(&f->no_gpu[k]);
  free(f->no_gpu);
  if (f->opened) ovl_trace_source_close(&f->src);
  memset(f, 0, sizeof *f);
}

void ovl_job_free(ovl_job *job) {
  for (size_t i = 0; i < job->nranks; i++) ovl_rank_result_free(&job->ranks[i]);
  free(job->ranks);
  ovl_free_findings(job->findings, job->nfindings);
  free(job->cross.members);
  for (size_t i = 0; i < job->npgroups; i++) free(job->pgroups[i].members);
  free(job->pgroups);
  for (size_t i = 0; i < job->nwarnings; i++) free(job->warnings[i]);
  free(job->warnings);
  for (size_t i = 0; i < job->nsources; i++) ovl_trace_source_close(&job->sources[i]);
  free(job->sources);
  for (size_t i = 0; i < job->nno_gpu; i++) ovl_host_only_free(&job->no_gpu[i]);
  free(job->no_gpu);
  for (size_t i = 0; i < job->nparts; i++) free(job->parts[i].ranks);
  free(job->parts);
  memset(job, 0, sizeof *job);
}
