/*
** `ovl stats`: the summaries Nsight Systems users know from `nsys stats`, per rank (device) of
** an analysed job: GPU kernels by name, NCCL collectives by operation and size bucket, NVTX
** ranges by name, memory operations by kind.
**
** Work is classified as the report classifies it (analyze/work_stream.h, one pass per trace
** file over the conversion the job already made), so each table adds up to the report:
**   kernels: the counts of a rank sum to its `kernels` (class communication: `comm_kernels`),
**     the times of class compute to the sum of its streams' compute_ns, of class
**     communication to their comm_ns (plus the comm_ns of communication memops);
**   memops: the counts sum to `memops`, class memory times to the streams' memory_ns;
**   nccl: every collective of the report (its steps' and those outside every step), each
**     counted once with its bytes and its GPU time (end of its last GPU work - start of its
**     first);
**   nvtx: every NVTX range and mark of the trace file, given to the first rank of that file
**     (NVTX is host-side: a process driving two devices has one set).
** Memory grows with the number of distinct names (and with names x steps when per-step
** totals are asked for), never with the number of kernels.
*/
#ifndef OVL_STATS_H
#define OVL_STATS_H

#include "analyze/classify.h"
#include "job/job.h"
#include "base/nccl_ops.h"
#include "base/status.h"

#include <stddef.h>
#include <stdint.h>

/* Durations of a group of intervals. min and max are meaningful only when count > 0. */
typedef struct ovl_stat_span {
  long count;
  int64_t total, min, max;
} ovl_stat_span;

void ovl_stat_span_add(ovl_stat_span *s, int64_t duration);
/* Folds b into a. */
void ovl_stat_span_merge(ovl_stat_span *a, const ovl_stat_span *b);

typedef struct ovl_kernel_stat {
  char *name;              /* cleaned text; "(unnamed)" when the trace has none */
  ovl_work_class cls;      /* compute or communication (a name may appear in both: two rows) */
  ovl_stat_span t;
  int64_t *step_ns;        /* with per-step totals: its time in each step of its rank (by the
                           ** kernel's start), else NULL */
} ovl_kernel_stat;

typedef struct ovl_memop_stat {
  char kind[8];            /* HtoD DtoH DtoD PtoP HtoH memset, "?" when unknown */
  ovl_work_class cls;      /* memory, or communication when linked to a collective */
  ovl_stat_span t;
  int64_t bytes;           /* sum of known sizes */
} ovl_memop_stat;

/* NCCL size buckets (per-rank send size), by upper bound; the last is open. */
#define OVL_STATS_SIZE_BUCKETS 7
/* The bucket of a size; OVL_STATS_SIZE_BUCKETS - 1 ("unknown") for OVL_NONE. */
int ovl_stats_size_bucket(int64_t bytes);
/* "<1KiB", "1KiB-64KiB", ..., ">=128MiB", "unknown". */
const char *ovl_stats_size_bucket_name(int bucket);

typedef struct ovl_nccl_stat {
  ovl_op op;
  int size_bucket;
  ovl_stat_span t;         /* GPU time of each call */
  int64_t bytes;           /* sum of known sizes */
  double bus_bytes;        /* sum over calls with a known bus bandwidth of busbw x time */
  int64_t bus_time;        /* the time of those calls */
} ovl_nccl_stat;

/* Bus bandwidth of a row in GB/s (bytes moved at the nccl-tests bus factor per ns); NAN when
** no call of it has a known bandwidth. */
double ovl_nccl_stat_busbw(const ovl_nccl_stat *s);

typedef struct ovl_nvtx_stat {
  char *domain;            /* "" for the default domain */
  char *name;
  int is_mark;             /* marks have no duration: only count is meaningful */
  ovl_stat_span t;
} ovl_nvtx_stat;

typedef struct ovl_rank_stats {
  size_t rank_index;       /* into the job's ranks */
  ovl_kernel_stat *kernels;
  size_t nkernels;
  ovl_memop_stat *memops;
  size_t nmemops;
  ovl_nccl_stat *nccl;
  size_t nnccl;
  ovl_nvtx_stat *nvtx;
  size_t nnvtx;
  int64_t kernel_ns;       /* sum of every kernel's duration (the kernels' share is of this) */
  size_t nsteps;           /* entries of each kernel's step_ns */
} ovl_rank_stats;

typedef struct ovl_stats {
  ovl_rank_stats *ranks;   /* one per rank of the job, in its order */
  size_t nranks;
} ovl_stats;

/* Which tables to gather (a bit set); per_step asks for each kernel's step_ns. */
enum {
  OVL_STATS_KERNELS = 1,
  OVL_STATS_MEMOPS = 2,
  OVL_STATS_NCCL = 4,
  OVL_STATS_NVTX = 8,
  OVL_STATS_PER_STEP = 16
};

/* Gathers the tables `what` asks for over every rank of job (analysed with ctx: its classifier
** decides what is communication). Rows are sorted: kernels and memops by total time, largest
** first; nccl by operation then size; nvtx by total time. On error: *err names the trace, out
** holds nothing to free. */
int ovl_stats_collect(const ovl_analysis_ctx *ctx, const ovl_job *job, unsigned what, ovl_stats *out, ovl_err *err);
void ovl_stats_free(ovl_stats *s);

/* The rows of every rank combined into one (rank_index of ranks[0]; step_ns dropped): the job's
** kernels, copies, collectives and NVTX ranges. On error: OVL_EINTERNAL, out holds nothing. */
int ovl_stats_merge(const ovl_stats *in, ovl_stats *out, ovl_err *err);

/* Sorts a rank's rows in the order ovl_stats_collect gives them. */
void ovl_stats_sort(ovl_rank_stats *r);

/* Internal passes (stats_gpu.c, stats_nccl.c, stats_nvtx.c), each filling its rows of the ranks
** of one job. */
int ovl_stats_gpu(const ovl_analysis_ctx *ctx, const ovl_job *job, unsigned what, ovl_stats *s, ovl_err *err);
int ovl_stats_nccl(const ovl_job *job, ovl_stats *s, ovl_err *err);
int ovl_stats_nvtx(const ovl_job *job, ovl_stats *s, ovl_err *err);

#endif
