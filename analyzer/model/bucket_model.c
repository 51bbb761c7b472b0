/* The alpha-beta bucketing model: see bucket_model.h. */
#include "bucket_model.h"

#include <math.h>
#include <stdlib.h>

double ovl_bm_cost_ns(double alpha_ns, double beta_bytes_per_s, double bytes) {
  return alpha_ns + bytes / beta_bytes_per_s * 1e9;
}

size_t ovl_bm_form_buckets(const ovl_bm_grad *g, size_t n, double first_cap, double cap, ovl_bm_bucket *out) {
  size_t nb = 0;
  ovl_bm_bucket *open = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!open) {
      open = &out[nb++];
      *open = (ovl_bm_bucket){i, 0, 0, 0, 0, 0, 0};
    }
    open->count++;
    open->bytes += g[i].bytes;
    if (g[i].ready_ns > open->ready_ns || open->count == 1) open->ready_ns = g[i].ready_ns;
    double limit = (nb == 1 && first_cap > 0) ? first_cap : cap;
    if (limit > 0 && open->bytes >= limit) open = NULL;
  }
  for (size_t b = 0; b < nb; b++) out[b].launch_ns = out[b].ready_ns;
  return nb;
}

double ovl_bm_schedule(ovl_bm_bucket *b, size_t n, double alpha_ns, double beta_bytes_per_s, double channel_free_ns) {
  double free_at = channel_free_ns;
  for (size_t i = 0; i < n; i++) {
    b[i].start_ns = b[i].launch_ns > free_at ? b[i].launch_ns : free_at;
    b[i].end_ns = b[i].start_ns + ovl_bm_cost_ns(alpha_ns, beta_bytes_per_s, b[i].bytes);
    free_at = b[i].end_ns;
  }
  return free_at;
}

int ovl_sim_run(const ovl_sim_params *p, int bucket_layers, ovl_sim_result *out) {
  if (p->layers < 1 || bucket_layers < 1 || p->layer_bytes < 0 || p->layer_compute_ns < 0 || p->alpha_ns < 0 ||
      !(p->beta_bytes_per_s > 0))
    return -1;
  size_t nl = (size_t)p->layers;
  ovl_bm_grad *g = malloc(nl * sizeof *g);
  ovl_bm_bucket *bb = malloc(nl * sizeof *bb);
  if (!g || !bb) {
    free(g);
    free(bb);
    return -1;
  }
  for (size_t l = 0; l < nl; l++) g[l] = (ovl_bm_grad){(double)(l + 1) * p->layer_compute_ns, p->layer_bytes};
  /* Buckets of exactly bucket_layers layers: form with a cap just under that many layers'
  ** bytes would be fragile with rounding, so group by count. */
  size_t nb = 0;
  for (size_t first = 0; first < nl; first += (size_t)bucket_layers) {
    size_t count = nl - first < (size_t)bucket_layers ? nl - first : (size_t)bucket_layers;
    bb[nb] = (ovl_bm_bucket){first, count, (double)count * p->layer_bytes, g[first + count - 1].ready_ns, 0, 0, 0};
    bb[nb].launch_ns = bb[nb].ready_ns;
    nb++;
  }
  double channel_free = ovl_bm_schedule(bb, nb, p->alpha_ns, p->beta_bytes_per_s, 0);
  ovl_sim_bucket *b = calloc(nb, sizeof *b);
  if (!b) {
    free(g);
    free(bb);
    return -1;
  }
  double comm = 0;
  for (size_t i = 0; i < nb; i++) {
    b[i] = (ovl_sim_bucket){(int)bb[i].first, (int)bb[i].count, bb[i].bytes, bb[i].ready_ns, bb[i].start_ns, bb[i].end_ns};
    comm += bb[i].end_ns - bb[i].start_ns;
  }
  free(g);
  free(bb);
  out->bucket_layers = bucket_layers;
  out->nbuckets = (int)nb;
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
