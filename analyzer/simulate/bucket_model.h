/*
** The alpha-beta gradient-bucketing model that `ovl simulate` prints and the project is
** built from.
**
** A backward pass of L layers runs layer after layer; each takes `layer_compute_ns` and
** produces `layer_bytes` of gradients. Consecutive layers form buckets of `bucket_layers`
** (the last may be smaller). A bucket's all-reduce costs alpha + bytes/beta and starts when
** its last layer is done and the single network channel is free.
**   no-overlap time = total compute + all communication
**   overlapped time = max(end of compute, end of the last all-reduce)
**   hidden          = 1 - (overlapped - total compute) / total communication
*/
#ifndef OVL_BUCKET_MODEL_H
#define OVL_BUCKET_MODEL_H

#include <stddef.h>

typedef struct ovl_sim_params {
  int layers;
  double layer_bytes;
  double layer_compute_ns;
  double alpha_ns;
  double beta_bytes_per_s;
} ovl_sim_params;

typedef struct ovl_sim_bucket {
  int first_layer, nlayers;
  double bytes;
  double ready_ns, start_ns, end_ns;   /* from the start of the backward pass */
} ovl_sim_bucket;

typedef struct ovl_sim_result {
  int bucket_layers, nbuckets;
  double compute_ns, comm_ns, no_overlap_ns, overlap_ns;
  double hidden;   /* NAN when there is no communication */
  double speedup;  /* no_overlap / overlap */
  ovl_sim_bucket *buckets;
} ovl_sim_result;

/* Schedules one bucket size. Returns 0, or -1 on bad parameters or no memory. */
int ovl_sim_run(const ovl_sim_params *p, int bucket_layers, ovl_sim_result *out);
void ovl_sim_result_free(ovl_sim_result *r);

#endif
