/*
** Across ranks: one job, many traces. Pure functions over each rank's collective calls.
**
** Matching: a collective call of a rank is identified by (communicator id, sequence
** number), which capture and import make equal on every rank of a communicator. Calls
** with the same key form an instance; an instance is matched when every rank that uses
** the communicator took part and all agree on operation and size. A disagreement is how
** DDP ordering bugs hang jobs: the first one is reported. Point-to-point calls (Send,
** Recv) are numbered per rank and are not matched.
**
** Clocks: ranks on different hosts have different clocks. Each rank's offset (added to its
** local times gives job time; the lowest rank's clock is the job clock) starts from
** meta.realtime_offset_ns and is refined from the collectives themselves: every rank
** leaves a symmetric collective (AllReduce, AllGather, ReduceScatter, AlltoAll) within
** microseconds, so offsets are the median disagreement of end times, iterated.
**
** Per instance: arrival skew (latest aligned GPU start - earliest), the rank that arrived
** last, and for every rank the split of its kernel time into waiting for peers (its start
** -> last arrival) and transfer (last arrival -> end).
**
** Lateness: how often each rank arrived last (by a margin above the clock noise), how often
** chance would have it, the one-sided binomial p-value of that count, and the waiting it caused
** the others. Whether that makes it a straggler is the diagnosis' judgement
** (diagnose/thresholds.h), not this module's.
*/
#ifndef OVL_CROSS_RANK_H
#define OVL_CROSS_RANK_H

#include "base/nccl_ops.h"

#include <stddef.h>
#include <stdint.h>

/* One rank's view of one collective call; times on that rank's clock. */
typedef struct ovl_xr_call {
  int64_t comm, seq;
  ovl_op op;
  int64_t bytes, nranks;
  int64_t host_launch;          /* OVL_NONE when unknown */
  int64_t gpu_start, gpu_end;
  long step;                    /* the rank's step index, -1 when none */
} ovl_xr_call;

/* A rank's calls are an array (calls), or, when calls is NULL, read one at a time: read(ctx, j,
** out) writes call j. The second form lets a caller whose calls live in its own records hand
** them over without a copy of every call (the stage reads each call a few times). */
typedef struct ovl_xr_rank_input {
  int64_t rank;                 /* the rank's number in the job */
  int64_t realtime_offset;      /* meta.realtime_offset_ns, OVL_NONE when unknown */
  const ovl_xr_call *calls;
  void (*read)(const void *ctx, size_t j, ovl_xr_call *out);
  const void *ctx;
  size_t ncalls;                /* fewer than 2^32 */
  size_t nsteps;
} ovl_xr_rank_input;

typedef struct ovl_xr_rank_result {
  int64_t rank;
  int64_t clock_offset;         /* add to the rank's local times to get job time */
  long times_last;              /* decisive instances in which it arrived last */
  long decisive;                /* decisive instances it took part in */
  double expected_last;         /* decisive instances it would arrive last at by chance */
  double p_value;               /* chance of arriving last that often */
  int64_t wait_ns, transfer_ns; /* over its matched calls */
  int64_t wait_caused_ns;       /* others' waiting in instances where it came last */
  int64_t delay_ns;             /* sum of (its arrival - the second-last arrival) when last:
                                ** what the job would gain if it had kept pace */
  int64_t late_gpu_ns;          /* median GPU-start lateness vs the others when last */
  int64_t late_host_ns;         /* median host-launch lateness vs the others when last, OVL_NONE unknown */
} ovl_xr_rank_result;

/* Per call of each input rank (same order as the input): the split of its GPU time, the
** transfer being the rest of it (gpu_end - gpu_start - wait_ns: not stored, as a job holds one
** of these per call of every rank; whether it arrived last is a bit apart: ovl_xr_arrived_last). */
typedef struct ovl_xr_call_result {
  int64_t wait_ns;         /* OVL_NONE when the call was not matched */
} ovl_xr_call_result;

typedef struct ovl_xr_mismatch {
  int64_t comm, seq;
  size_t rank_a, rank_b;        /* input indices */
  ovl_op op_a, op_b;
  int64_t bytes_a, bytes_b;
} ovl_xr_mismatch;

typedef struct ovl_xr_result {
  size_t nranks;
  ovl_xr_rank_result *ranks;    /* input order */
  ovl_xr_call_result **calls;   /* calls[i][j]: rank i, call j */
  unsigned char **last;         /* last[i]: bit j (byte j / 8, bit j % 8) set when rank i's call j arrived last */
  size_t matched, unmatched, point_to_point;
  int has_mismatch;
  ovl_xr_mismatch first_mismatch;
  int64_t skew_p50, skew_p99;   /* over matched instances, job clock */
  int64_t residual_p50, residual_p99; /* |aligned end - instance median end| after alignment */
  size_t alignment_samples;     /* instances used to align clocks */
  int64_t decisive_margin;      /* arrival gaps below this are clock noise, not lateness */
} ovl_xr_result;

/* On error: -1 (out of memory), *out empty. */
int ovl_cross_rank(const ovl_xr_rank_input *ranks, size_t n, ovl_xr_result *out);
/* Whether call j of input rank i arrived last (beyond clock noise or not: the instance's last). */
static inline int ovl_xr_arrived_last(const ovl_xr_result *r, size_t i, size_t j) { return r->last[i][j / 8] >> (j % 8) & 1; }
void ovl_xr_result_free(ovl_xr_result *r);

/* P(X >= k) for X ~ Binomial(n, p). */
double ovl_binomial_tail(long n, long k, double p);

#endif
