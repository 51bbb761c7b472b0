/*
** A run's profile: what `ovl diff` compares of one side, taken either from an analysed job
** (traces: everything, kernels included) or from a saved `ovl report --json` (everything the
** report holds: steps, collectives, findings; no kernels). Plain data, owned by the profile;
** times are integer ns, unknown integers OVL_NONE.
**
** A collective is identified within its step by its communicator, its operation and `index`,
** its place among the calls of that communicator and operation in the step's firing order:
** the key `ovl diff` matches calls of two runs by.
*/
#ifndef OVL_RUN_PROFILE_H
#define OVL_RUN_PROFILE_H

#include "job/job.h"
#include "base/nccl_ops.h"
#include "base/status.h"
#include "stats/stats.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_prof_coll {
  int64_t comm;            /* communicator id as the input has it; OVL_NONE unknown */
  ovl_op op;
  long index;              /* among the calls of (comm, op) in its step, from 0 */
  int64_t bytes;           /* OVL_NONE unknown */
  int64_t duration;        /* GPU end - GPU start */
  int64_t exposed;
  long bucket;             /* -1 unknown */
  int gradient;            /* it reduces a gradient bucket */
  int ready_order;         /* gradient collectives: place in readiness order; -1 unknown */
} ovl_prof_coll;

typedef struct ovl_prof_step {
  long index;
  int64_t duration, compute, comm, exposed;
  int misordered;          /* gradient collectives fired against their readiness */
  ovl_prof_coll *colls;    /* in firing order */
  size_t ncolls;
} ovl_prof_step;

typedef struct ovl_prof_finding {
  char code[32];
  long step;               /* its step, or -1 for a rank- or job-level finding */
  long steps_affected;     /* rank-level summaries of step findings: how many; else 0 */
  int64_t recoverable;
  char *message;
  char confidence[8];      /* "high", "medium", "low" (the diagnosis' judgement), "" unknown */
  char evidence[96];       /* what it rests on, in a few words; "" unknown */
} ovl_prof_finding;

typedef struct ovl_prof_kernel {
  char *name;
  int comm;                /* communication kernel (else compute) */
  long count;
  int64_t total;
  int64_t *step_ns;        /* time per step of its rank, or NULL when not known */
} ovl_prof_kernel;

typedef struct ovl_prof_rank {
  int64_t rank, device;    /* rank OVL_NONE when unknown */
  char *trace;
  int64_t compute, comm, exposed;  /* the rank's totals */
  ovl_prof_step *steps;
  size_t nsteps;
  ovl_prof_finding *findings;  /* the rank's own (step -1) and its steps' */
  size_t nfindings;
  ovl_prof_kernel *kernels;
  size_t nkernels;
} ovl_prof_rank;

typedef struct ovl_profile {
  char *label;             /* the input as the user named it */
  int from_report;         /* a saved report: kernels unknown */
  ovl_prof_rank *ranks;
  size_t nranks;
  ovl_prof_finding *findings;  /* job-level */
  size_t nfindings;
} ovl_profile;

/* The profile of an analysed job; kernels (ovl_stats_collect with OVL_STATS_KERNELS |
** OVL_STATS_PER_STEP over the same job) may be NULL. On error: *err set, out holds nothing. */
int ovl_profile_from_job(const ovl_job *job, const ovl_stats *kernels, const char *label, ovl_profile *out,
                         ovl_err *err);

/* 1 when the file at path is a saved `ovl report --json` (a JSON object, maybe gzip-compressed,
** whose first key is "ovl_report_version"), else 0; the file is only peeked at. */
int ovl_is_saved_report(const char *path);
/* Reads a saved report. Fails with "<path>: ..." on unreadable or malformed JSON, a report
** version newer than 1, or a report without ranks. On error out holds nothing. */
int ovl_profile_from_report(const char *path, ovl_profile *out, ovl_err *err);

void ovl_profile_free(ovl_profile *p);

/* Sets each collective's index (its place among the calls of its communicator and operation)
** from the order of st->colls. Returns 0, or -1 when memory runs out. */
int ovl_prof_step_index_colls(ovl_prof_step *st);

#endif
