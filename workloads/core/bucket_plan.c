/* Bucket planning for the data-parallel modes: see bucket_plan.h. */
#include "bucket_plan.h"

#include <stdlib.h>
#include <string.h>

const char *const ovl_mode_names[OVL_MODE_COUNT] = {"single",     "naive",      "interleaved",
                                                            "bucketed",   "misordered", "zero3"};

int ovl_mode_lookup(const char *text, ovl_mode *mode, ovl_err *err) {
  for (int i = 0; i < OVL_MODE_COUNT; i++) {
    if (strcmp(text, ovl_mode_names[i]) == 0) {
      *mode = (ovl_mode)i;
      return OVL_OK;
    }
  }
  return ovl_fail(err, OVL_EUSER, "mode '%s': expected single, naive, interleaved, bucketed, misordered or zero3", text);
}

int ovl_plan_ready_pos(const ovl_plan *plan, int p) { return plan->nparams - 1 - p; }

/* Starts bucket plan->nbuckets with no members. */
static ovl_bucket *open_bucket(ovl_plan *plan, int nmembers_so_far) {
  ovl_bucket *b = &plan->buckets[plan->nbuckets++];
  memset(b, 0, sizeof *b);
  b->first_member = nmembers_so_far;
  b->ready_pos = -1;
  return b;
}

/* Assigns the parameters, visited in `walk` order, to buckets: one per parameter when
** caps is NULL, else by the size rule with caps[0] for bucket 0 and caps[1] after; per_layer:
** one bucket per layer (closed at its weight, the layer's last gradient to be ready). */
static void assign(ovl_plan *plan, const int *walk, const int64_t *caps, int per_layer) {
  ovl_bucket *b = NULL;
  for (int i = 0; i < plan->nparams; i++) {
    int p = walk[i];
    if (!b) b = open_bucket(plan, i);
    plan->members[i] = p;
    plan->bucket_of[p] = plan->nbuckets - 1;
    b->nmembers++;
    b->floats += plan->params[p].count;
    b->bytes += plan->params[p].count * (int64_t)sizeof(float);
    int pos = ovl_plan_ready_pos(plan, p);
    if (pos > b->ready_pos) b->ready_pos = pos;
    int64_t cap = caps ? caps[plan->nbuckets > 1] : 0;
    if (per_layer ? !plan->params[p].is_bias : (!caps || b->bytes >= cap)) b = NULL;
  }
}

int ovl_plan_build(const ovl_model *m, const ovl_plan_options *opt, ovl_plan *plan, ovl_err *err) {
  memset(plan, 0, sizeof *plan);
  int bucketed = opt->mode == OVL_MODE_BUCKETED || opt->mode == OVL_MODE_MISORDERED;
  if ((unsigned)opt->mode >= OVL_MODE_COUNT) return ovl_fail(err, OVL_EUSER, "plan: unknown mode");
  if (bucketed && (opt->first_cap_bytes <= 0 || opt->cap_bytes <= 0))
    return ovl_fail(err, OVL_EUSER, "plan: bucket caps must be positive");
  if (opt->find_unused && !bucketed)
    return ovl_fail(err, OVL_EUSER, "plan: find_unused applies to the bucketed and misordered modes only, not %s",
                    ovl_mode_names[opt->mode]);
  plan->opt = *opt;
  plan->model = *m;
  int n = plan->nparams = ovl_model_nparams(m);
  plan->params = calloc((size_t)n, sizeof *plan->params);
  plan->ready_order = calloc((size_t)n, sizeof *plan->ready_order);
  plan->bucket_of = calloc((size_t)n, sizeof *plan->bucket_of);
  plan->buckets = calloc((size_t)n, sizeof *plan->buckets);
  plan->members = calloc((size_t)n, sizeof *plan->members);
  plan->segments = calloc((size_t)n, sizeof *plan->segments);
  plan->launch_order = calloc((size_t)n, sizeof *plan->launch_order);
  int *registration = calloc((size_t)n, sizeof *registration);
  if (!plan->params || !plan->ready_order || !plan->bucket_of || !plan->buckets || !plan->members ||
      !plan->segments || !plan->launch_order || !registration) {
    free(registration);
    ovl_plan_free(plan);
    return ovl_oom(err, "bucket plan");
  }
  ovl_model_params(m, plan->params);
  for (int i = 0; i < n; i++) {
    registration[i] = i;
    plan->ready_order[i] = n - 1 - i;
    plan->bucket_of[i] = -1;
  }

  int64_t caps[2] = {opt->first_cap_bytes, opt->cap_bytes};
  switch (opt->mode) {
    case OVL_MODE_SINGLE: break;
    case OVL_MODE_NAIVE:
    case OVL_MODE_INTERLEAVED: assign(plan, plan->ready_order, NULL, 0); break;
    case OVL_MODE_BUCKETED: assign(plan, plan->ready_order, caps, 0); break;
    case OVL_MODE_MISORDERED: assign(plan, registration, caps, 0); break;
    case OVL_MODE_ZERO3: assign(plan, plan->ready_order, NULL, 1); break;
    case OVL_MODE_COUNT: break;
  }
  free(registration);

  /* Replay the backward pass: after each gradient, launch every bucket that is complete and
  ** whose predecessors are launched (naive: nothing before the last gradient). */
  int next = 0;
  for (int pos = 0; pos < n; pos++) {
    if (opt->mode == OVL_MODE_NAIVE && pos < n - 1) continue;
    while (next < plan->nbuckets && plan->buckets[next].ready_pos <= pos) {
      plan->buckets[next].launch_pos = pos;
      plan->launch_order[next] = next;
      next++;
    }
  }

  plan->packed = bucketed;
  int64_t base = 0;
  for (int k = 0; k < plan->nbuckets; k++) {
    ovl_bucket *b = &plan->buckets[k];
    b->base = bucketed ? base : 0;
    int64_t offset = 0;
    for (int i = b->first_member; i < b->first_member + b->nmembers; i++) {
      const ovl_param *p = &plan->params[plan->members[i]];
      plan->segments[i].bucket_offset = offset;
      plan->segments[i].flat_offset = p->offset;
      plan->segments[i].count = p->count;
      offset += p->count;
    }
    if (bucketed) base += b->floats;
  }
  plan->bucket_floats = base;
  plan->used_map_bytes = opt->find_unused ? 4 * (int64_t)n : 0;
  return OVL_OK;
}

void ovl_plan_free(ovl_plan *plan) {
  free(plan->params);
  free(plan->ready_order);
  free(plan->bucket_of);
  free(plan->buckets);
  free(plan->members);
  free(plan->segments);
  free(plan->launch_order);
  memset(plan, 0, sizeof *plan);
}
