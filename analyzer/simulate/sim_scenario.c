/* One step of the model as a GPU schedule, with faults: see sim_scenario.h. */
#include "sim_scenario.h"

#include <stdlib.h>
#include <string.h>

double ovl_sim_d2h_ns(double bytes) { return 5000.0 + bytes / 10.0; }

/* Is an all-reduce on the channel at t? Sets *next to when that answer may change. */
static int channel_busy(const ovl_sim_coll *b, size_t launched, double t, double *next) {
  *next = -1;
  int busy = 0;
  for (size_t i = 0; i < launched; i++) {
    if (t >= b[i].start_ns && t < b[i].end_ns) {
      busy = 1;
      if (*next < 0 || b[i].end_ns < *next) *next = b[i].end_ns;
    } else if (b[i].start_ns > t && (*next < 0 || b[i].start_ns < *next)) {
      *next = b[i].start_ns;
    }
  }
  return busy;
}

/* End of `work` ns of compute started at t, slowed by `slowdown` while the channel is busy. */
static double run_compute(const ovl_sim_coll *b, size_t launched, double t, double work, double slowdown) {
  if (slowdown <= 1.0) return t + work;
  while (work > 0) {
    double next;
    double rate = channel_busy(b, launched, t, &next) ? 1.0 / slowdown : 1.0;
    if (next < 0 || t + work / rate <= next) return t + work / rate;
    work -= (next - t) * rate;
    t = next;
  }
  return t;
}

/* Launches, in bucket order, every bucket that is ready and whose predecessors are launched,
** not before not_before; the host spends OVL_SIM_LAUNCH_NS on each launch. */
static void launch_ready(ovl_sim_step *s, const ovl_sim_params *p, size_t *launched, const int *ready_known,
                         double not_before, double *channel_free) {
  while (*launched < s->nbuckets && ready_known[*launched]) {
    ovl_sim_coll *c = &s->buckets[*launched];
    double prev = *launched ? s->buckets[*launched - 1].launch_ns + OVL_SIM_LAUNCH_NS : not_before;
    c->launch_ns = c->ready_ns > prev ? c->ready_ns : prev;
    c->start_ns = c->launch_ns > *channel_free ? c->launch_ns : *channel_free;
    c->end_ns = c->start_ns + ovl_bm_cost_ns(p->alpha_ns, p->beta_bytes_per_s, c->bytes);
    *channel_free = c->end_ns;
    (*launched)++;
  }
}

int ovl_sim_build_step(const ovl_sim_params *p, int bucket_layers, const ovl_sim_faults *f, int single_bucket,
                       ovl_sim_step *out) {
  static const ovl_sim_faults none = {0, 0, 0, 0, 0, 0};
  if (!f) f = &none;
  memset(out, 0, sizeof *out);
  if (p->layers < 1 || bucket_layers < 1 || p->layer_bytes < 0 || p->layer_compute_ns < 0 || p->alpha_ns < 0 ||
      !(p->beta_bytes_per_s > 0) || f->blocking_bytes < 0)
    return -1;
  size_t nl = (size_t)p->layers;
  size_t per = single_bucket ? nl : (size_t)bucket_layers;
  size_t nb = (nl + per - 1) / per;
  out->nlayers = nl;
  out->nbuckets = nb;
  out->layers = calloc(nl, sizeof *out->layers);
  out->buckets = calloc(nb, sizeof *out->buckets);
  int *ready_known = calloc(nb, sizeof *ready_known);
  if (!out->layers || !out->buckets || !ready_known) {
    free(ready_known);
    ovl_sim_step_free(out);
    return -1;
  }
  int reversed = f->misordered && !single_bucket;
  for (size_t g = 0; g < nb; g++) {
    size_t k = reversed ? nb - 1 - g : g;  /* number of the bucket holding group g */
    ovl_sim_coll *c = &out->buckets[k];
    c->bucket = (int)k;
    c->first_layer = (int)(g * per);
    c->nlayers = (int)(nl - g * per < per ? nl - g * per : per);
    c->bytes = c->nlayers * p->layer_bytes;
  }
  size_t launched = 0;
  double t = 0, channel_free = 0;
  for (size_t l = 0; l < nl; l++) {
    if (f->blocking_bytes > 0 && l == nl / 2) {
      out->has_blocking = 1;
      out->blocking = (ovl_sim_coll){-1, 0, 0, f->blocking_bytes, t, t, t, 0};
      t += ovl_bm_cost_ns(p->alpha_ns, p->beta_bytes_per_s, f->blocking_bytes);
      out->blocking.end_ns = t;
    }
    size_t g = l / per;
    size_t k = reversed ? nb - 1 - g : g;
    ovl_sim_layer *ly = &out->layers[l];
    ly->start_ns = t;
    ly->end_ns = run_compute(out->buckets, launched, t, p->layer_compute_ns, f->overlap_slowdown);
    ly->bytes = p->layer_bytes;
    ly->bucket = (int)k;
    t = ly->end_ns;
    if (l + 1 == nl || (l + 1) % per == 0) {
      out->buckets[k].ready_ns = t;
      ready_known[k] = 1;
      if (!f->late_launch) launch_ready(out, p, &launched, ready_known, 0, &channel_free);
    }
  }
  out->backward_end_ns = t;
  if (f->late_launch) launch_ready(out, p, &launched, ready_known, t, &channel_free);
  double end = t > channel_free ? t : channel_free;
  if (f->find_unused) {
    double bytes = 4.0 * OVL_SIM_PARAMS_PER_LAYER * (double)nl;
    double launch = out->buckets[nb - 1].launch_ns + OVL_SIM_LAUNCH_NS;
    ovl_sim_coll *u = &out->unused;
    *u = (ovl_sim_coll){-1, 0, 0, bytes, launch, launch, channel_free > launch ? channel_free : launch, 0};
    u->end_ns = u->start_ns + ovl_bm_cost_ns(p->alpha_ns, p->beta_bytes_per_s, bytes);
    out->has_unused = 1;
    out->d2h_start_ns = u->end_ns;
    out->d2h_end_ns = u->end_ns + ovl_sim_d2h_ns(bytes);
    end = out->d2h_end_ns > end ? out->d2h_end_ns : end;
  }
  out->end_ns = end;
  free(ready_known);
  return 0;
}

void ovl_sim_step_free(ovl_sim_step *s) {
  free(s->layers);
  free(s->buckets);
  s->layers = NULL;
  s->buckets = NULL;
  s->nlayers = s->nbuckets = 0;
}
