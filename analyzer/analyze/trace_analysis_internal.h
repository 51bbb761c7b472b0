/*
** State shared by the two halves of the analysis of one trace: trace_analysis.c (loading,
** step planning, the streaming pass) and analysis_results.c (turning that state into
** ovl_rank_result). Not part of the analyzer's interface.
*/
#ifndef OVL_TRACE_ANALYSIS_INTERNAL_H
#define OVL_TRACE_ANALYSIS_INTERNAL_H

#include "base/i64map.h"
#include "base/vec.h"
#include "analysis.h"
#include "host_markers.h"
#include "kernel_stats.h"
#include "step_windows.h"
#include "sweep.h"
#include "work_stream.h"

/* What the pass learns about each collective (rows first, then ones inferred from kernels).
** One per collective: 40 bytes (what is rare, a copy after it, is kept apart; the stream of
** its first GPU work goes into its row when the row names none: ovl_coll_row.stream; the
** group and the correlation of its first GPU work, which only the pass reads, in the run's
** group_of and corr_of). */
typedef struct ovl_coll_track {
  int64_t gpu_start, gpu_end;  /* hull of its GPU work; OVL_NONE when none was seen */
  int64_t compute_before;      /* end of the last compute kernel that started before it */
  int64_t compute_after;       /* start of the first compute kernel at or after its end */
  int32_t step;                /* periodic plans: its step; NVTX steps projected by correlation:
                               ** its launch's (ovl_launch_step), set as the pass ends; else -1 */
  uint16_t device;             /* of its first GPU work: index in ovl_run.device_ids, or
                               ** OVL_TRACK_NO_DEVICE */
  uint8_t closes_step;         /* periodic plans: it is the last of its step */
  uint8_t has_d2h;             /* a device-to-host copy right after it is in the run's copies */
} ovl_coll_track;

#define OVL_TRACK_NO_DEVICE UINT16_MAX
#define OVL_TRACK_DEVICES_MAX (OVL_TRACK_NO_DEVICE - 1)  /* distinct devices a run can tell apart */

/* A device-to-host copy right after a collective (few have one). */
typedef struct ovl_coll_copy {
  int32_t coll;
  int64_t start, end, bytes;
} ovl_coll_copy;

/* A collectives row as the analysis keeps it: load/trace_reader.h's ovl_coll_rec less its
** texts and the fields no stage reads (count, peer, host end), 80 bytes a collective where
** the reader's record takes 152 (converted in place as the rows are taken over). The
** operation is kept as its ovl_op (the hash of its name as the trace gives it, what the step inference
** compares, in ovl_run.op_hash; the group, which only the pass reads, in ovl_run.group_of),
** the data type and reduction interned (coll_types.h), rank and rank count in 32 bits (the
** reader keeps them in 0..INT32_MAX; -1: unknown); NCCL's algorithm and protocol, which few
** rows name, in the run's nccl_names. */
typedef struct ovl_coll_row {
  int64_t id, comm, seq, bytes, device;
  int64_t stream;              /* the row's, else (stream_of_work) its first GPU work's */
  int64_t host_start, tid;
  int32_t rank32, nranks32;    /* -1: unknown (OVL_NONE) */
  uint32_t types;              /* dtype and redop (coll_types.h) */
  uint8_t op;                  /* ovl_op */
  uint8_t has_nccl_names;      /* its algorithm and protocol are in the run's nccl_names */
  uint8_t stream_of_work;      /* stream was OVL_NONE in the row: the pass set it (reset undoes it) */
} ovl_coll_row;

static inline int64_t ovl_coll_row_rank(const ovl_coll_row *c) { return c->rank32 < 0 ? OVL_NONE : c->rank32; }
static inline int64_t ovl_coll_row_nranks(const ovl_coll_row *c) { return c->nranks32 < 0 ? OVL_NONE : c->nranks32; }

/* NCCL's own account of a row that gives one (profiler plugin). */
typedef struct ovl_coll_nccl_names {
  size_t coll;
  char algorithm[16], protocol[8];
} ovl_coll_nccl_names;

/* A compute kernel name that looks like communication: its runs and time. */
typedef struct ovl_lookalike_stat {
  int64_t name;                /* strings.id */
  long runs;
  int64_t total_ns;
} ovl_lookalike_stat;

#define OVL_LOOKALIKES_KEPT 16

typedef struct ovl_device_pass {
  int64_t device;
  ovl_step_method method;
  ovl_step_windows windows;
  ovl_sweep sweep;
  int after_last;              /* work launched after the last NVTX step has begun */
  size_t launch_hint;          /* where ovl_launch_step_near looks first (any value is safe) */
  long n_kernels, n_comm_kernels, n_memops, n_comm_memops;
  long n_moe_kernels;          /* kernels whose name says they do mixture-of-experts work */
  int64_t max_compute_end;     /* of the compute kernels seen so far (they started earlier) */
  int32_t copy_candidate;      /* last collective that a device-to-host copy may follow, or -1 */
  OVL_VEC(int32_t) awaiting;   /* collectives whose next compute kernel is not known yet */
  ovl_kstats kstats;           /* per kernel signature: duration against overlap */
  OVL_VEC(ovl_lookalike_stat) lookalikes;  /* compute kernels named like communication */
  ovl_stream_stat *streams;
  size_t nstreams;
} ovl_device_pass;

typedef struct ovl_periodic_plan {
  int64_t device;
  size_t nsteps, period;
} ovl_periodic_plan;

typedef struct ovl_run {
  const ovl_analysis_ctx *ctx;
  ovl_trace *t;
  /* collectives: [0, nrows) from the table, then inferred ones */
  ovl_coll_row *recs;
  OVL_VEC(ovl_coll_nccl_names) nccl_names;  /* of the rows that have them, by row */
  ovl_coll_track *track;
  /* What only the pass reads of a collective, given back as it ends (end_pass), and kept only
  ** where it tells something (8 bytes a collective each, 21 MB over 1.37 M collectives): each
  ** row's group (which calls one piece of work executes), NULL when no row names one; the
  ** correlation of each collective's first GPU work (OVL_NONE: none seen), corr_of[c -
  ** corr_first] for collectives c >= corr_first: the inferred ones only (corr_first = nrows,
  ** for their launches), or every one when NVTX steps are projected by correlation (0). */
  int64_t *group_of;
  int64_t *corr_of;
  size_t corr_first;
  int pass_over;               /* end_pass has run: no more collectives */
  uint64_t *op_hash;           /* ovl_hash_str(OVL_HASH_SEED, the op's name), what the step plan
                               ** compares: NULL once the steps are planned (ovl_analyze_file) */
  int64_t *device_ids;         /* the devices the tracking names (ovl_coll_track.device) */
  size_t ndevice_ids;
  int tracking_failed;         /* 0, or why a device got no index: OVL_EINTERNAL (no memory),
                               ** OVL_EUSER (too many) */
  ovl_coll_state cstate;       /* the sweep's: allocated for the final pass only */
  OVL_VEC(ovl_coll_copy) copies;  /* one per collective with has_d2h, in pass order */
  size_t ncolls, nrows, coll_cap, npresynth, next_synth;
  ovl_work_stream ws;          /* the classified GPU work: links, classes */
  ovl_host_markers hm;
  ovl_step_method method;      /* NVTX, or PERIODIC meaning "periodic where found, else whole" */
  ovl_periodic_plan *periodic;
  size_t nperiodic;
  ovl_device_pass *devs;
  size_t ndevs;
  int launch_dims;             /* read kernel grid sizes (asked for, and the trace has them) */
  void *observed;              /* the observer's state for this file (ctx->opt.observer), or NULL */
} ovl_run;

int ovl_run_reserve_colls(ovl_run *r, size_t n, ovl_err *err);
/* Builds one result per device from a finished pass. */
int ovl_build_results(ovl_run *r, ovl_rank_result **ranks, size_t *nranks, ovl_err *err);

#endif
