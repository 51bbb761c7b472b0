/*
** Writes a bucketing schedule of the model as an ovl trace, so that the analyzer can be
** checked end to end without a GPU: per step, one compute kernel per layer on the compute
** stream, and per bucket one AllReduce collective row (host launch = when the bucket became
** ready) with its NCCL kernel on the communication stream; api rows for every launch, NVTX
** `step` ranges, `grad_ready` marks per layer and `bucket <k>` ranges (contract section 3).
** Steps follow each other back to back, separated by the host's step bookkeeping.
*/
#ifndef OVL_SIM_TRACE_H
#define OVL_SIM_TRACE_H

#include "../base/status.h"
#include "bucket_model.h"

typedef struct ovl_sim_trace_options {
  int steps;
  int nranks;        /* communicator size written into the collective rows */
  const char *cmdline;
} ovl_sim_trace_options;

/* The GPU streams the emitted trace uses. */
#define OVL_SIM_COMPUTE_STREAM 7
#define OVL_SIM_COMM_STREAM 13
/* Host time between the start of a step range and the first GPU work, and after the last. */
#define OVL_SIM_STEP_LEAD_NS 20000
#define OVL_SIM_STEP_TAIL_NS 10000

int ovl_sim_emit_trace(const char *path, const ovl_sim_params *p, const ovl_sim_result *schedule,
                       const ovl_sim_trace_options *opt, ovl_err *err);

#endif
