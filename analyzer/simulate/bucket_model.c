/* The alpha-beta bucketing model: see bucket_model.h. */
#include "bucket_model.h"

#include <math.h>
#include <stdlib.h>

int ovl_sim_run(const ovl_sim_params *p, int bucket_layers, ovl_sim_result *out) {
  if (p->layers < 1 || bucket_layers < 1 || p->layer_bytes < 0 || p->layer_compute_ns < 0 || p->alpha_ns < 0 ||
      !(p->beta_bytes_per_s > 0))
    return -1;
  int nb = (p->layers + bucket_layers - 1) / bucket_layers;
  ovl_sim_bucket *b = calloc((size_t)nb, sizeof *b);
  if (!b) return -1;
  double channel_free = 0, comm = 0;
  for (int i = 0; i < nb; i++) {
    b[i].first_layer = i * bucket_layers;
    b[i].nlayers = p->layers - b[i].first_layer < bucket_layers ? p->layers - b[i].first_layer : bucket_layers;
    b[i].bytes = b[i].nlayers * p->layer_bytes;
    b[i].ready_ns = (b[i].first_layer + b[i].nlayers) * p->layer_compute_ns;
    b[i].start_ns = b[i].ready_ns > channel_free ? b[i].ready_ns : channel_free;
    double cost = p->alpha_ns + b[i].bytes / p->beta_bytes_per_s * 1e9;
    b[i].end_ns = b[i].start_ns + cost;
    channel_free = b[i].end_ns;
    comm += cost;
  }
  out->bucket_layers = bucket_layers;
  out->nbuckets = nb;
  out->buckets = b;
  out->compute_ns = p->layers * p->layer_compute_ns;
  out->comm_ns = comm;
  out->no_overlap_ns = out->compute_ns + comm;
  out->overlap_ns = channel_free > out->compute_ns ? channel_free : out->compute_ns;
  out->hidden = comm > 0 ? 1.0 - (out->overlap_ns - out->compute_ns) / comm : NAN;
  out->speedup = out->overlap_ns > 0 ? out->no_overlap_ns / out->overlap_ns : NAN;
  return 0;
}

void ovl_sim_result_free(ovl_sim_result *r) {
  free(r->buckets);
  r->buckets = NULL;
}
