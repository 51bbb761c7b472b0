/*
** The alpha-beta gradient-bucketing model that `ovl simulate` prints, `ovl whatif` replays
** and the project is built from. A model library (pure functions, no I/O): the simulator
** (simulate/), the what-if replays and the diagnosis (analyze/) are its users.
**
** A backward pass of L layers runs layer after layer; each takes `layer_compute_ns` and
** produces `layer_bytes` of gradients. Consecutive layers form buckets of `bucket_layers`
** (the last may be smaller). A bucket's all-reduce costs alpha + bytes/beta and starts when
** its last layer is done and the single network channel is free.
**   no-overlap time = total compute + all communication
**   overlapped time = max(end of compute, end of the last all-reduce)
**   hidden          = 1 - (overlapped - total compute) / total communication
**
** The general pieces are exposed for replays of real traces:
**   ovl_bm_form_buckets  groups gradients, in the order they become ready, the way PyTorch DDP
**                        does: add each gradient to the open bucket and close it once its size
**                        reaches the cap (a gradient is never split); the first bucket may
**                        have its own cap;
**   ovl_bm_schedule      runs buckets on one channel: a bucket starts when it is launched and
**                        the channel is free, and holds the channel for alpha + bytes/beta.
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

/* alpha + bytes/beta in ns. */
double ovl_bm_cost_ns(double alpha_ns, double beta_bytes_per_s, double bytes);

/* One gradient that becomes ready (a parameter, or a layer of the model). */
typedef struct ovl_bm_grad {
  double ready_ns, bytes;
} ovl_bm_grad;

/* A bucket of a replay: filled by ovl_bm_form_buckets (first, count, bytes, ready_ns) and
** ovl_bm_schedule (start_ns, end_ns, from launch_ns). */
typedef struct ovl_bm_bucket {
  size_t first, count;     /* gradients [first, first + count) */
  double bytes;
  double ready_ns;         /* when its last gradient is ready */
  double launch_ns;        /* when it is handed to the channel (>= ready_ns) */
  double start_ns, end_ns;
} ovl_bm_bucket;

/* Forms buckets from n gradients already in ready order. first_cap applies to the first
** bucket (<= 0: the first bucket uses cap too); cap <= 0 puts everything in one bucket.
** out needs room for n buckets; returns the number formed. launch_ns is set to ready_ns. */
size_t ovl_bm_form_buckets(const ovl_bm_grad *g, size_t n, double first_cap, double cap, ovl_bm_bucket *out);
/* Runs buckets in array order on one channel free from channel_free_ns; returns the end of
** the last one (channel_free_ns when n = 0). */
double ovl_bm_schedule(ovl_bm_bucket *b, size_t n, double alpha_ns, double beta_bytes_per_s, double channel_free_ns);

#endif
