/*
** One training step of the alpha-beta model as a concrete GPU schedule, healthy or with one
** of the faults ovl diagnoses, for `ovl simulate --emit-trace` and the scenario tests.
**
** Layers run back to back on the compute stream in backward order (layer 0 is the first
** whose gradient is ready); consecutive layers form buckets as in ovl_sim_run. A bucket is
** launched when it is ready and, as PyTorch DDP does, only after every lower-numbered bucket
** was launched (launches take OVL_SIM_LAUNCH_NS of host time each); it runs on the single network channel (alpha + bytes/beta) once launched and
** the channel is free. Faults:
**   misordered         bucket numbers run against readiness (bucket 0 holds the layers ready
**                      last), so nothing launches before backward ends, then all go in a burst;
**   late_launch        every bucket is launched only when backward has ended;
**   find_unused        DDP's find_unused_parameters=True: after the last bucket, an int32
**                      all-reduce of 4 bytes per parameter tensor (two per layer) on the
**                      channel, then a blocking device-to-host copy of it;
**   blocking_bytes     a stray all-reduce of that size on the compute stream after layer L/2
**                      (a loss all-reduce for logging): compute waits alpha + bytes/beta;
**   overlap_slowdown   compute runs this many times slower while an all-reduce is on the
**                      channel (1: not at all);
**   first_step_single_bucket  (used by the trace writer) step 0 reduces everything in one
**                      bucket, as DDP's first iteration before its bucket rebuild.
** Times are ns from the start of the step's backward pass.
*/
#ifndef OVL_SIM_SCENARIO_H
#define OVL_SIM_SCENARIO_H

#include "../model/bucket_model.h"

#include <stddef.h>

typedef struct ovl_sim_faults {
  int misordered;
  int late_launch;
  int find_unused;
  int first_step_single_bucket;
  double blocking_bytes;     /* 0: none */
  double overlap_slowdown;   /* <= 1: none */
} ovl_sim_faults;

typedef struct ovl_sim_layer {
  double start_ns, end_ns, bytes;
  int bucket;                /* number of the bucket holding its gradient */
} ovl_sim_layer;

typedef struct ovl_sim_coll {
  int bucket;                /* bucket number; -1 for collectives outside buckets */
  int first_layer, nlayers;  /* buckets: layers [first_layer, first_layer + nlayers) */
  double bytes;
  double ready_ns, launch_ns, start_ns, end_ns;
} ovl_sim_coll;

typedef struct ovl_sim_step {
  size_t nlayers;
  ovl_sim_layer *layers;
  size_t nbuckets;
  ovl_sim_coll *buckets;     /* in bucket-number order, which is firing order */
  int has_blocking, has_unused;
  ovl_sim_coll blocking;     /* on the compute stream */
  ovl_sim_coll unused;       /* int32 used-parameter map */
  double d2h_start_ns, d2h_end_ns;
  double backward_end_ns;    /* end of the last layer */
  double end_ns;             /* end of the last GPU work of the step */
} ovl_sim_step;

/* Host time between consecutive collective launches (the launch call itself, inside its
** `bucket <k>` range, takes half of it): launches in a burst follow each other at this spacing. */
#define OVL_SIM_LAUNCH_NS 2000.0

/* Parameter tensors per layer (weight and bias) for the find_unused map: 4 bytes each. */
#define OVL_SIM_PARAMS_PER_LAYER 2

/* Duration of the device-to-host copy of n bytes (PCIe: 5 us + n / 10 GB/s). */
double ovl_sim_d2h_ns(double bytes);

/* Builds one step; single_bucket puts every layer in one bucket. Returns 0, or -1 on bad
** parameters or no memory. */
int ovl_sim_build_step(const ovl_sim_params *p, int bucket_layers, const ovl_sim_faults *f, int single_bucket,
                       ovl_sim_step *out);
void ovl_sim_step_free(ovl_sim_step *s);

#endif
