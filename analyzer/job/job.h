/*
** A job: every trace named on a command line, measured into one list of ranks ordered by
** rank, then device, then file, and related across ranks (cross-rank matching, parallelism
** dimensions). This is what `ovl report` (and every other command that analyses traces) works
** from. The job layer measures; it judges nothing: findings are added afterwards by the
** diagnosis (diagnose/), which the job driver (driver/job_driver.h) runs over the finished job.
** Warnings (skipped bad rows) are collected, not printed.
*/
#ifndef OVL_JOB_H
#define OVL_JOB_H

#include "../analyze/analysis.h"
#include "../load/trace_source.h"
#include "host_only.h"

/* The ranks of one job seen together (job_cross_rank.c, docs/report.md "Across ranks"). */
typedef struct ovl_job_cross {
  int present;             /* at least two ranks share a communicator */
  size_t *members;         /* indices into ovl_job.ranks, in rank order */
  size_t nmembers;
  size_t njobs;            /* groups of ranks sharing communicators (1: one job) */
  size_t matched, unmatched, point_to_point;
  int has_mismatch;
  char mismatch[1024];     /* the first diverging collective, described */
  int64_t skew_p50, skew_p99;
  int64_t residual_p50, residual_p99;  /* clock alignment: |end - median end| of symmetric collectives */
  size_t alignment_samples;
  int64_t decisive_margin; /* arrival gaps below it are not counted as lateness */
  /* the member the others waited for most (largest wait_caused_ns > 0), index into ranks, or
  ** SIZE_MAX: the one fact every output about "who was late" draws from, straggler or not */
  size_t most_waited_for;
  /* the job's overlap, over its members: all communication, and transfer time only */
  int64_t t_comm, t_exposed;
  int64_t t_transfer, t_exposed_transfer, t_wait;
} ovl_job_cross;

/* The traces of one job, when the traces given are not all one job (job_partition.c). */
typedef struct ovl_job_part {
  size_t *ranks;           /* indices into ovl_job.ranks, in rank order */
  size_t nranks;
  int64_t world_size;      /* OVL_NONE when no trace says */
} ovl_job_part;

typedef struct ovl_job {
  ovl_rank_result *ranks;
  size_t nranks;
  /* One source per TRACE file, in file order, opened (foreign formats imported, with the
  ** job's import options) once and kept until ovl_job_free: every consumer of the job
  ** (export) reads each rank's ovl_path from here instead of importing again. */
  ovl_trace_source *sources;
  size_t nsources;
  ovl_job_cross cross;
  ovl_pgroup *pgroups;       /* its process groups and their parallelism dimension (job_dims.c) */
  size_t npgroups;
  ovl_finding *findings;     /* job-level findings */
  size_t nfindings;
  char **warnings;           /* "<file>: warning: ..." lines */
  size_t nwarnings;
  ovl_host_only *no_gpu;     /* traces without GPU work, beside the ranks (host_only.h) */
  size_t nno_gpu;
  /* The traces given, split into jobs (job_partition.c): one part unless the traces show they
  ** come from different jobs (a rank number in two processes, different world sizes);
  ** ranks[i].job is the part of rank i. why_parts says what showed it ("" with one part). */
  ovl_job_part *parts;
  size_t nparts;
  char why_parts[512];
} ovl_job;

/* Traces are analysed by up to this many threads (one per CPU). */
#define OVL_JOB_MAX_WORKERS 16

/* Called after each trace is analysed (for progress displays), from the worker that
** analysed it, one call at a time; may be NULL. */
typedef void (*ovl_job_progress_fn)(void *ctx, size_t done, size_t total, const char *path);

/* One TRACE file measured: its ranks (each named after the file, its ovl_path the process's
** ovl trace), its source (kept open: its conversions live until the job ends), its processes
** without GPU work, or why it failed (rc, err). done: it was measured (a pool stops handing
** out files after a failure). */
typedef struct ovl_measured_file {
  ovl_rank_result *ranks;
  size_t nranks;
  ovl_trace_source src;
  ovl_host_only *no_gpu;
  size_t nno_gpu;
  int opened, done, rc;
  ovl_err err;
} ovl_measured_file;

/* Measures the file at path into *out (zeroed by the caller): every traced process it holds. */
void ovl_measure_file(const ovl_analysis_ctx *ctx, const char *path, ovl_measured_file *out);
/* Measures paths[0..n) into out[0..n) (zeroed by the caller) with up to max_workers threads (0:
** one per CPU), at most OVL_JOB_MAX_WORKERS; after the first failure no file is started. */
void ovl_measure_files(const ovl_analysis_ctx *ctx, char *const *paths, size_t n, size_t max_workers,
                       ovl_job_progress_fn progress, void *progress_ctx, ovl_measured_file *out);
/* Called on the measuring thread as soon as file i is measured without error (files in any
** order, several at once with workers): a caller that needs less than the whole results can
** reduce them there, so that the files' full results never all coexist. It fails the file by
** setting f->rc and f->err. */
typedef void (*ovl_measured_fn)(void *ctx, size_t i, ovl_measured_file *f);
/* ovl_measure_files, calling measured (when not NULL) for each file measured without error. */
void ovl_measure_files_then(const ovl_analysis_ctx *ctx, char *const *paths, size_t n, size_t max_workers,
                            ovl_job_progress_fn progress, void *progress_ctx, ovl_measured_file *out,
                            ovl_measured_fn measured, void *measured_ctx);
/* The job of measured files, in file order: their ranks, sources and warnings move into it
** (every file is left empty), skipped_warning (NULL or "": none) is added after the files'
** warnings, then the ranks are sorted and related (partition, dimensions, cross-rank, pipeline
** stages). The first failed file (in file order) fails the job. On failure nothing is kept
** (job zeroed) and *err says why. */
int ovl_job_assemble(const ovl_analysis_ctx *ctx, ovl_measured_file *files, size_t n, const char *skipped_warning,
                     ovl_job *job, ovl_err *err);
/* The same, for ranks measured elsewhere: remote answers for the ranks whose exposed pieces
** stayed with the process that measured them (remote_pieces.h); NULL: none did. */
struct ovl_remote_pieces;
int ovl_job_assemble_remote(const ovl_analysis_ctx *ctx, ovl_measured_file *files, size_t n,
                            const char *skipped_warning, const struct ovl_remote_pieces *remote, ovl_job *job,
                            ovl_err *err);
void ovl_measured_file_free(ovl_measured_file *f);

/* Expands the TRACE arguments (files and directories), resolves each format, measures every
** trace, sorts the ranks and runs the job stages (dimensions, cross-rank, pipeline stages). A
** trace without GPU work goes to no_gpu; when no trace has GPU work the job fails, the error
** naming the first such file, its host side and why it has no GPU data. On failure nothing is
** kept (job zeroed) and *err names the bad file. Each file is opened (a foreign one imported)
** once, with ctx's import options. No findings: see ovl_analyze_job (driver/job_driver.h). */
int ovl_measure_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, ovl_job_progress_fn progress,
                    void *progress_ctx, ovl_job *job, ovl_err *err);
void ovl_job_free(ovl_job *job);

/* Splits the ranks into the jobs their traces come from (ranks[].job, parts, why_parts):
** ranks of one process, then ranks sharing a communicator, then the rest, are one job unless
** that would give one job a rank number in two processes or two world sizes. A warning line
** names the jobs when there is more than one. Called by ovl_measure_job before the job
** stages (which relate ranks within one part only). On error (no memory): *err set. */
int ovl_job_partition(ovl_job *job, ovl_err *err);
/* "job 2: ranks 0-7 of 8 (<first file> and others)": part k of the job, into buf. */
void ovl_job_parts_describe(const ovl_job *job, size_t k, char *buf, size_t len);

/* Groups the job's ranks by shared communicators, matches their collectives, aligns their
** clocks (setting each member's clock_offset), splits collective time into waiting and
** transfer, finds stragglers (the statistics; the straggler finding is the diagnosis') and
** fills job->cross and the matched collectives' cross parts; then drops the collectives'
** exposed pieces (its input only; read through remote for the ranks it holds, NULL: none).
** Called by ovl_measure_job. */
int ovl_job_cross_rank(ovl_job *job, const struct ovl_remote_pieces *remote, ovl_err *err);

#endif
