/* Reference alpha-beta model for tests: see model_reference.h. */
#include "model_reference.h"

double ref_cost(const ovl_sim_params *p, double bytes) { return p->alpha_ns + bytes / p->beta_bytes_per_s * 1e9; }

double ref_ddp_overlap(const ovl_sim_params *p, double first_cap, double cap) {
  double free_at = 0, bytes = 0;
  int first = 1;
  for (int l = 0; l < p->layers; l++) {
    bytes += p->layer_bytes;
    double ready = (l + 1) * p->layer_compute_ns;
    double limit = first && first_cap > 0 ? first_cap : cap;
    if (bytes >= limit || l + 1 == p->layers) {
      double start = ready > free_at ? ready : free_at;
      free_at = start + ref_cost(p, bytes);
      bytes = 0;
      first = 0;
    }
  }
  double compute = p->layers * p->layer_compute_ns;
  return free_at > compute ? free_at : compute;
}
