/*
** Writes schedules of the model (sim_scenario.h) as an ovl trace, so that the analyzer can
** be checked end to end without a GPU: per step, one compute kernel per layer on the compute
** stream, and per bucket one AllReduce collective row (host launch = when DDP would launch
** it) with its NCCL kernel on the communication stream; api rows for every launch, NVTX
** `step` ranges, `grad_ready` marks per layer (at the end of its kernel) and `bucket <k>`
** ranges around each launch (contract section 3). Faults add what they add: a Float32
** all-reduce on the compute stream, an Int32 all-reduce and its device-to-host copy.
** Host and GPU share one clock. Steps follow each other back to back, separated by the
** host's step bookkeeping.
*/
#ifndef OVL_SIM_TRACE_H
#define OVL_SIM_TRACE_H

#include "base/status.h"
#include "../model/bucket_model.h"
#include "sim_scenario.h"

typedef struct ovl_sim_trace_options {
  int steps;
  int nranks;        /* communicator size written into the collective rows */
  const char *cmdline;
  const ovl_sim_faults *faults;  /* NULL: a healthy schedule */
} ovl_sim_trace_options;

/* The GPU streams the emitted trace uses. */
#define OVL_SIM_COMPUTE_STREAM 7
#define OVL_SIM_COMM_STREAM 13
/* Host time between the start of a step range and the first GPU work, and after the last. */
#define OVL_SIM_STEP_LEAD_NS 20000
#define OVL_SIM_STEP_TAIL_NS 10000
/* Host time of the first step range. */
#define OVL_SIM_TRACE_ORIGIN_NS 1000000

/* Writes opt->steps steps of bucket_layers-layer buckets. */
int ovl_sim_emit_trace(const char *path, const ovl_sim_params *p, int bucket_layers, const ovl_sim_trace_options *opt,
                       ovl_err *err);

#endif
