/*
** `ovl diff BEFORE AFTER`: what changed between two runs (docs/diff.md). Pure functions over two
** profiles (run_profile.h); every per-step quantity is compared as a distribution (spread.h),
** so a change is flagged only when it exceeds the step-to-step spread.
**
**   job and ranks  per step: step time, compute, communication and exposed time (the job's
**                  value of a step: the mean over the ranks that have it), and the overlap
**                  efficiency of the whole run (1 - exposed/communication, as the report);
**                  ranks are paired by rank number, or one with one when each side has one;
**   collectives    matched by communicator, operation and index within the step (run_profile.h);
**                  communicators are paired by id, the rest by order of first use; per matched
**                  call: calls per step, duration and exposed time; per communicator and
**                  operation: calls, bytes, time and exposed time per step;
**   kernels        by name and class: count and time per step, new and vanished names (traces
**                  only: a saved report has no kernels);
**   bucket order   gradient buckets in firing order against readiness, and their layout (number
**                  and size per step);
**   findings       by code: appeared, disappeared, persisting (ranks, steps, recoverable time).
*/
#ifndef OVL_DIFF_H
#define OVL_DIFF_H

#include "run_profile.h"
#include "spread.h"

typedef enum ovl_metric {
  OVL_M_STEP_TIME,
  OVL_M_COMPUTE,
  OVL_M_COMM,
  OVL_M_EXPOSED,
  OVL_M_EFFICIENCY,
  OVL_M_COUNT
} ovl_metric;

/* "step_time", "compute", "comm", "exposed", "efficiency". */
const char *ovl_metric_name(ovl_metric m);
/* What a person reads: "step time", "compute", "communication", "exposed communication",
** "overlap efficiency". */
const char *ovl_metric_title(ovl_metric m);

/* The metrics of one side over some of its ranks: per-step distributions, and the whole run's
** efficiency. */
typedef struct ovl_side_metrics {
  ovl_dist d[OVL_M_COUNT];
  double efficiency;       /* 1 - sum exposed / sum comm over the ranks' totals; NAN: no comm */
  int64_t exposed_total;   /* sum of the ranks' exposed time */
  size_t steps;            /* steps of the job's step series */
} ovl_side_metrics;

/* Metrics of profile p over ranks idx[0..n) (all ranks when idx is NULL). */
int ovl_side_metrics_of(const ovl_profile *p, const size_t *idx, size_t n, ovl_side_metrics *out);

typedef struct ovl_metrics_diff {
  ovl_side_metrics before, after;
  ovl_change c[OVL_M_COUNT];   /* efficiency: from/to are the whole runs' */
} ovl_metrics_diff;

void ovl_metrics_compare(const ovl_side_metrics *b, const ovl_side_metrics *a, ovl_metrics_diff *out);

typedef enum ovl_diff_status {
  OVL_DS_SAME,             /* on both sides, no significant change */
  OVL_DS_CHANGED,          /* on both sides, a significant change */
  OVL_DS_NEW,              /* only after (findings: appeared) */
  OVL_DS_VANISHED          /* only before (findings: disappeared) */
} ovl_diff_status;

const char *ovl_diff_status_name(ovl_diff_status s);

typedef struct ovl_rank_pair {
  long before, after;      /* rank indices in the profiles; -1 when on one side only */
  ovl_metrics_diff m;
} ovl_rank_pair;

typedef struct ovl_comm_pair {
  int64_t before, after;   /* communicator ids (OVL_NONE: calls without a known communicator) */
  int has_before, has_after;  /* 0: the run has no such communicator */
  int by_id;               /* paired by equal ids (else by order of first use) */
} ovl_comm_pair;

typedef struct ovl_coll_diff {
  size_t comm;             /* into ovl_diff.comms */
  ovl_op op;
  long index;              /* -1: the row sums every call of (comm, op) in a step */
  ovl_diff_status status;
  ovl_change calls;        /* calls per step: the means compared, the spread of the ranks' steps */
  ovl_change duration;     /* per call, or per step for a sum row */
  ovl_change exposed;
  ovl_change bytes;        /* medians; for a sum row bytes per step */
  long bucket_before, bucket_after;  /* gradient bucket of the call, -1 unknown */
} ovl_coll_diff;

typedef struct ovl_kernel_diff {
  char *name;
  int comm;
  ovl_diff_status status;
  ovl_change time;         /* per step */
  double count_before, count_after;  /* per step */
} ovl_kernel_diff;

typedef struct ovl_finding_side {
  long ranks, steps;       /* ranks with it (a job-level finding counts none); steps with it */
  int64_t recoverable;     /* summed over ranks (rank-level summaries, else step findings) */
  const char *message;     /* the largest one's, borrowed from the profile */
  const char *confidence;  /* its confidence ("high", "medium", "low"; "" unknown), borrowed */
  const char *evidence;    /* what it rests on ("" unknown), borrowed */
} ovl_finding_side;

typedef struct ovl_finding_diff {
  char code[32];
  ovl_diff_status status;  /* NEW: appeared, VANISHED: disappeared, SAME/CHANGED: persists
                           ** (changed: its recoverable time beyond the floors of spread.h, its
                           ** steps, or its confidence) */
  ovl_finding_side before, after;
} ovl_finding_diff;

/* Gradient buckets of one side: a representative step (the first misordered one, else the
** first with gradient collectives) and counts over every step. */
#define OVL_DIFF_MAX_BUCKETS 256
typedef struct ovl_bucket_side {
  long steps, grad_steps, misordered_steps;
  double buckets_per_step;   /* median over steps with gradient collectives */
  double bytes_per_bucket;   /* median over their buckets; NAN unknown */
  long fired[OVL_DIFF_MAX_BUCKETS], ready[OVL_DIFF_MAX_BUCKETS];  /* bucket numbers (firing, readiness order) */
  size_t nfired, nready;     /* nready 0: readiness unknown */
  int numbered;              /* fired holds bucket numbers (else positions: no bucket ranges) */
  int64_t rank;              /* whose step it is */
  long step;                 /* -1: none */
} ovl_bucket_side;

typedef struct ovl_bucket_diff {
  ovl_bucket_side before, after;
  int order_changed;         /* misordered on one side and not the other, or the same number of
                             ** buckets fired in another order */
  int layout_changed;        /* another number of buckets per step, or another size */
} ovl_bucket_diff;

typedef struct ovl_diff {
  const ovl_profile *before, *after;
  ovl_metrics_diff job;
  ovl_rank_pair *ranks;
  size_t nranks;
  int ranks_by_number;       /* paired by rank number (else one with one) */
  ovl_comm_pair *comms;
  size_t ncomms;
  ovl_coll_diff *colls;      /* sum rows (index -1) first, then calls; most significant first */
  size_t ncolls;
  int kernels_compared;      /* both sides are traces */
  ovl_kernel_diff *kernels;  /* most significant first */
  size_t nkernels;
  ovl_finding_diff *findings;  /* appeared, disappeared, then persisting; largest first */
  size_t nfindings;
  ovl_bucket_diff buckets;
} ovl_diff;

/* Compares before with after (both borrowed until ovl_diff_free). On error (out of memory)
** *err is set and out holds nothing. */
int ovl_diff_compute(const ovl_profile *before, const ovl_profile *after, ovl_diff *out, ovl_err *err);
void ovl_diff_free(ovl_diff *d);

/* The parts (diff_ranks.c, diff_colls.c, diff_kernels.c, diff_findings.c, diff_buckets.c). */
int ovl_diff_ranks(ovl_diff *d);
int ovl_diff_colls(ovl_diff *d);
int ovl_diff_kernels(ovl_diff *d);
int ovl_diff_findings(ovl_diff *d);
void ovl_diff_buckets(ovl_diff *d);

/* Where a row goes in "most significant first": the higher tier first (e.g. significant
** changes before the rest), then the larger size (e.g. |delta|). */
typedef struct ovl_order_key {
  int tier;
  double size;
} ovl_order_key;

/* A change's key: tier 1 when significant, size |delta|. */
ovl_order_key ovl_change_key(const ovl_change *c);
/* Negative when a goes before b, positive after, 0 when tied. */
int ovl_order_key_cmp(ovl_order_key a, ovl_order_key b);

#endif
