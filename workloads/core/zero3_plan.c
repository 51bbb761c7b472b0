/* The all-gathers of --mode zero3: see zero3_plan.h. */
#include "zero3_plan.h"

#include <stdio.h>

int ovl_z3_gathers(const ovl_model *m, ovl_z3_gather *out) {
  int L = m->nlayers, n = 0;
  out[n++] = (ovl_z3_gather){0, 0, OVL_Z3_STEP_START, -1};
  for (int l = 0; l + 1 < L; l++) out[n++] = (ovl_z3_gather){l + 1, 0, OVL_Z3_FORWARD_OF, l};
  out[n++] = (ovl_z3_gather){L - 1, 1, OVL_Z3_LOSS, -1};
  for (int l = L - 1; l > 0; l--) out[n++] = (ovl_z3_gather){l - 1, 1, OVL_Z3_BACKWARD_OF, l};
  return n;
}

int64_t ovl_z3_layer_floats(const ovl_model *m, int layer) {
  return (int64_t)m->width[layer + 1] * (m->width[layer] + 1);
}

int64_t ovl_z3_padded_floats(const ovl_model *m, int layer, int nranks) {
  int64_t f = ovl_z3_layer_floats(m, layer);
  return nranks > 0 ? (f + nranks - 1) / nranks * nranks : f;
}

const char *ovl_z3_trigger_text(const ovl_z3_gather *g, char *buf, int size) {
  switch (g->trigger) {
    case OVL_Z3_STEP_START: snprintf(buf, (size_t)size, "step start"); break;
    case OVL_Z3_LOSS: snprintf(buf, (size_t)size, "loss"); break;
    case OVL_Z3_FORWARD_OF: snprintf(buf, (size_t)size, "forward fc%d", g->with); break;
    case OVL_Z3_BACKWARD_OF: snprintf(buf, (size_t)size, "backward fc%d", g->with); break;
  }
  return buf;
}
