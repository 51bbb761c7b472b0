/* The all-gathers of --mode zero3: see zero3_plan.h. */
#include "zero3_plan.h"

#include <assert.h>
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

void ovl_z3_shard_layout(const ovl_model *m, int nranks, int rank, ovl_z3_shard *out) {
  assert(nranks >= 1 && rank >= 0 && rank < nranks);
  int64_t flat = 0, local = 0, staged = 0;
  for (int l = 0; l < m->nlayers; l++) {
    ovl_z3_shard *s = &out[l];
    s->layer_offset = flat;
    s->floats = ovl_z3_layer_floats(m, l);
    s->padded = ovl_z3_padded_floats(m, l, nranks);
    s->shard_floats = s->padded / nranks;
    s->begin = (int64_t)rank * s->shard_floats;
    int64_t left = s->floats - s->begin;
    s->valid = left <= 0 ? 0 : left < s->shard_floats ? left : s->shard_floats;
    s->local_offset = local;
    s->padded_offset = staged;
    flat += s->floats;
    local += s->shard_floats;
    staged += s->padded;
  }
}

int64_t ovl_z3_local_floats(const ovl_model *m, int nranks) {
  int64_t n = 0;
  for (int l = 0; l < m->nlayers; l++) n += ovl_z3_padded_floats(m, l, nranks) / nranks;
  return n;
}

int64_t ovl_z3_staging_floats(const ovl_model *m, int nranks) {
  int64_t n = 0;
  for (int l = 0; l < m->nlayers; l++) n += ovl_z3_padded_floats(m, l, nranks);
  return n;
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
