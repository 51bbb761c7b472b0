/* The alpha-beta model beyond DDP: see parallel_model.h. */
#include "parallel_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const strategy_names[OVL_PM_STRATEGIES] = {"ddp", "zero1", "zero2", "zero3", "tp", "pp", "moe"};

const char *ovl_pm_strategy_name(ovl_pm_strategy s) {
  return (unsigned)s < OVL_PM_STRATEGIES ? strategy_names[s] : "?";
}

int ovl_pm_strategy_parse(const char *name, ovl_pm_strategy *s) {
  for (int i = 0; i < OVL_PM_STRATEGIES; i++)
    if (strcmp(name, strategy_names[i]) == 0) return *s = (ovl_pm_strategy)i, 0;
  return -1;
}

void ovl_pm_defaults(ovl_pm_strategy s, ovl_pm_params *p) {
  memset(p, 0, sizeof *p);
  p->strategy = s;
  p->layers = 8;
  p->layer_bytes = 25e6;
  p->layer_compute_ns = 1e6;
  p->alpha_ns = 200e3;
  p->beta_bytes_per_s = 12e9;
  p->act_bytes = 4e6;
  p->dp = s == OVL_PM_TP ? 1 : 2;
  p->tp = s == OVL_PM_TP ? 2 : 1;
  p->stages = 4;
  p->microbatches = 8;
  p->experts = 4;
  p->hot_factor = 1.5;
  p->bucket_layers = 2;
  p->prefetch = 1;
  p->slow_stage = -1;
}

int ovl_pm_nranks(const ovl_pm_params *p) {
  switch (p->strategy) {
    case OVL_PM_PP: return p->stages;
    case OVL_PM_MOE: return p->experts;
    default: return p->dp * p->tp;
  }
}

double ovl_pm_cost(const ovl_pm_params *p, const char *op, double bytes) {
  double wire = (strcmp(op, "AllGather") == 0 || strcmp(op, "ReduceScatter") == 0) ? bytes / 2 : bytes;
  return p->alpha_ns + wire / p->beta_bytes_per_s * 1e9;
}

/* ---------------------------------------------------------------------------------- */
/* Building                                                                            */
/* ---------------------------------------------------------------------------------- */

static ovl_pm_event *push(ovl_pm_rank *r) {
  if (r->nev == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 64;
    ovl_pm_event *v = realloc(r->ev, cap * sizeof *v);
    if (!v) return NULL;
    r->ev = v;
    r->cap = cap;
  }
  ovl_pm_event *e = &r->ev[r->nev++];
  memset(e, 0, sizeof *e);
  e->group = -1;
  e->peer = -1;
  return e;
}

static int compute(ovl_pm_rank *r, const char *kernel, double start, double dur) {
  ovl_pm_event *e = push(r);
  if (!e) return -1;
  e->kernel = kernel;
  e->stream = OVL_PM_COMPUTE_STREAM;
  e->issue_ns = e->start_ns = start;
  e->end_ns = start + dur;
  return 0;
}

static ovl_pm_event *coll(ovl_pm_rank *r, const char *op, const char *kernel, int group, int stream, double issue,
                          double start, double end, double bytes) {
  ovl_pm_event *e = push(r);
  if (!e) return NULL;
  e->op = op;
  e->kernel = kernel;
  e->group = group;
  e->stream = stream;
  e->issue_ns = issue;
  e->start_ns = start;
  e->end_ns = end;
  e->bytes = bytes;
  return e;
}

#define K_AR "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
#define K_AG "ncclDevKernel_AllGather_RING_LL"
#define K_RS "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"
#define K_P2P "ncclDevKernel_SendRecv"
#define K_FWD "ovl_sim_forward"
#define K_BWD "ovl_sim_backward"
#define K_OPT "ovl_sim_optimizer"
#define K_EXPERT "ovl_sim_expert"

static double max2(double a, double b) { return a > b ? a : b; }

/* The data-parallel channel: collectives go out in issue order, one at a time. */
typedef struct channel {
  double free;
} channel;

static int dp_coll(const ovl_pm_params *p, ovl_pm_rank *r, channel *ch, const char *op, int group, double issue,
                   double bytes, double *end) {
  double start = max2(issue, ch->free);
  ch->free = start + ovl_pm_cost(p, op, bytes);
  const char *k = strcmp(op, "AllGather") == 0 ? K_AG : strcmp(op, "ReduceScatter") == 0 ? K_RS : K_AR;
  int stream = strcmp(op, "AllGather") == 0 ? OVL_PM_GATHER_STREAM : OVL_PM_DP_STREAM;
  if (end) *end = ch->free;
  return coll(r, op, k, group, stream, issue, start, ch->free, bytes) ? 0 : -1;
}

/* One layer's forward (backward: twice the compute) starting at t: with tensor parallelism
** two halves each followed by a TP all-reduce on the compute stream. Returns its end. */
static int layer_body(const ovl_pm_params *p, ovl_pm_rank *r, int tp_group, int backward, double t, double *end) {
  double c = p->layer_compute_ns * (backward ? 2 : 1);
  const char *k = backward ? K_BWD : K_FWD;
  if (p->tp <= 1) {
    *end = t + c;
    return compute(r, k, t, c);
  }
  double ar = ovl_pm_cost(p, "AllReduce", p->act_bytes);
  for (int half = 0; half < 2; half++) {
    if (compute(r, k, t, c / 2)) return -1;
    t += c / 2;
    if (!coll(r, "AllReduce", K_AR, tp_group, OVL_PM_COMPUTE_STREAM, t, t, t + ar, p->act_bytes)) return -1;
    t += ar;
  }
  *end = t;
  return 0;
}

/* ddp, zero1/2/3 and tp (dp = 1) on one rank; every rank's schedule is the same. */
static int build_data_parallel(const ovl_pm_params *p, ovl_pm_rank *r, int dp_group, int tp_group) {
  const int L = p->layers, zero3 = p->strategy == OVL_PM_ZERO3, grads = p->strategy != OVL_PM_TP && p->dp > 1;
  const double S = p->layer_bytes;
  channel ch = {0};
  double t = 0, *gather_end = calloc((size_t)L, sizeof *gather_end);
  if (!gather_end) return -1;
  int rc = 0;
  /* forward */
  if (zero3 && grads) rc = dp_coll(p, r, &ch, "AllGather", dp_group, 0, S, &gather_end[0]);
  for (int i = 0; !rc && i < L; i++) {
    double start = zero3 && grads ? max2(t, gather_end[i]) : t;
    if (zero3 && grads && p->prefetch && i + 1 < L) rc = dp_coll(p, r, &ch, "AllGather", dp_group, start, S, &gather_end[i + 1]);
    if (!rc) rc = layer_body(p, r, tp_group, 0, start, &t);
    if (!rc && zero3 && grads && !p->prefetch && i + 1 < L)
      rc = dp_coll(p, r, &ch, "AllGather", dp_group, t, S, &gather_end[i + 1]);
  }
  /* backward, last layer first */
  if (!rc && zero3 && grads) rc = dp_coll(p, r, &ch, "AllGather", dp_group, t, S, &gather_end[L - 1]);
  int in_bucket = 0;
  for (int i = L - 1; !rc && i >= 0; i--) {
    double start = zero3 && grads ? max2(t, gather_end[i]) : t;
    if (zero3 && grads && p->prefetch && i > 0) rc = dp_coll(p, r, &ch, "AllGather", dp_group, start, S, &gather_end[i - 1]);
    if (!rc) rc = layer_body(p, r, tp_group, 1, start, &t);
    if (!rc && zero3 && grads && !p->prefetch && i > 0)
      rc = dp_coll(p, r, &ch, "AllGather", dp_group, t, S, &gather_end[i - 1]);
    if (rc || !grads) continue;
    if (zero3) {
      rc = dp_coll(p, r, &ch, "ReduceScatter", dp_group, t, S, NULL);
    } else if (++in_bucket == p->bucket_layers || i == 0) {
      rc = dp_coll(p, r, &ch, p->strategy == OVL_PM_ZERO2 ? "ReduceScatter" : "AllReduce", dp_group, t,
                   in_bucket * S, NULL);
      in_bucket = 0;
    }
  }
  /* ZeRO-1/2: the optimizer updates this rank's shard once its gradients are reduced, then the
  ** updated parameters are gathered (the next forward needs them) */
  if (!rc && grads && (p->strategy == OVL_PM_ZERO1 || p->strategy == OVL_PM_ZERO2)) {
    double start = max2(t, ch.free);
    rc = compute(r, K_OPT, start, p->layer_compute_ns);
    t = start + p->layer_compute_ns;
    if (!rc) rc = dp_coll(p, r, &ch, "AllGather", dp_group, t, L * S, NULL);
  }
  free(gather_end);
  return rc;
}

/* GPipe: every micro-batch forward through the stages, then every backward back. */
static int build_pipeline(const ovl_pm_params *p, ovl_pm_job *job) {
  const int P = p->stages, M = p->microbatches;
  const double f = p->layer_compute_ns * p->layers / P, hop = ovl_pm_cost(p, "Send", p->act_bytes);
  double *freet = calloc((size_t)P, sizeof *freet), *done = calloc((size_t)P, sizeof *done);
  if (!freet || !done) {
    free(freet);
    free(done);
    return -1;
  }
  int rc = 0;
  for (int phase = 0; !rc && phase < 2; phase++) {
    for (int j = 0; !rc && j < M; j++)
      for (int s = 0; !rc && s < P; s++) {
        int k = phase ? P - 1 - s : s;        /* this stage */
        const double c = (phase ? 2 * f : f) * (k == p->slow_stage ? p->hot_factor : 1.0);
        int from = phase ? k + 1 : k - 1;     /* the stage it receives from */
        double start = freet[k];
        if (s > 0) {
          double posted = freet[k], ready = done[from], tx = max2(posted, ready);
          int grp = p->pair_comms ? (k < from ? k : from) : 0;  /* pair groups: by the lower stage */
          ovl_pm_event *rv = coll(&job->ranks[k], "Recv", K_P2P, grp, OVL_PM_RECV_STREAM, posted, posted, tx + hop,
                                  p->act_bytes);
          ovl_pm_event *sd = rv ? coll(&job->ranks[from], "Send", K_P2P, grp, OVL_PM_SEND_STREAM, ready, ready,
                                       tx + hop, p->act_bytes) : NULL;
          if (!sd) {
            rc = -1;
            break;
          }
          const ovl_pm_group *gg = &job->groups[grp];
          for (int i = 0; i < gg->nmembers; i++) {  /* peers as positions in the group */
            if (gg->members[i] == from) rv->peer = i;
            if (gg->members[i] == k) sd->peer = i;
          }
          start = tx + hop;
        }
        rc = compute(&job->ranks[k], phase ? K_BWD : K_FWD, start, c);
        done[k] = freet[k] = start + c;
      }
  }
  free(freet);
  free(done);
  double P1 = P - 1;
  job->model_bubble = P1 / (M + P1);
  return rc;
}

/* Every rank's layers in lockstep: attention, dispatch all-to-all, experts, combine all-to-all
** (backward: the reverse). Rank 0 holds the hot expert. */
static int build_moe(const ovl_pm_params *p, ovl_pm_job *job) {
  const int E = p->experts;
  const double F = p->layer_compute_ns, a2a = ovl_pm_cost(p, "AlltoAll", p->act_bytes);
  double t[64] = {0};
  int rc = 0;
  for (int phase = 0; !rc && phase < 2; phase++)
    for (int l = 0; !rc && l < p->layers; l++)
      for (int part = 0; !rc && part < 4; part++) {
        /* forward: attention, a2a, experts, a2a; backward: a2a, experts, a2a, attention */
        int is_a2a = phase ? (part == 0 || part == 2) : (part == 1 || part == 3);
        if (!is_a2a) {
          int expert = phase ? part == 1 : part == 2;
          for (int r = 0; !rc && r < E; r++) {
            double c = (phase ? F : F / 2) * (expert && r == 0 ? p->hot_factor : 1.0);
            rc = compute(&job->ranks[r], expert ? K_EXPERT : (phase ? K_BWD : K_FWD), t[r], c);
            t[r] += c;
          }
          continue;
        }
        double last = 0;
        for (int r = 0; r < E; r++) last = max2(last, t[r]);
        for (int r = 0; !rc && r < E; r++) {
          if (!coll(&job->ranks[r], "AlltoAll", K_P2P, 0, OVL_PM_COMPUTE_STREAM, t[r], t[r], last + a2a, p->act_bytes))
            rc = -1;
          t[r] = last + a2a;
        }
      }
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Answers                                                                             */
/* ---------------------------------------------------------------------------------- */

typedef struct iv {
  double s, e;
} iv;

static int cmp_iv(const void *pa, const void *pb) {
  const iv *a = pa, *b = pb;
  return (a->s > b->s) - (a->s < b->s);
}

/* Sorts and merges v[0..n) in place; returns the merged count. */
static size_t merge(iv *v, size_t n) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, cmp_iv);
  size_t k = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i].s <= v[k].e) {
      if (v[i].e > v[k].e) v[k].e = v[i].e;
    } else {
      v[++k] = v[i];
    }
  }
  return k + 1;
}

static double length(const iv *v, size_t n) {
  double t = 0;
  for (size_t i = 0; i < n; i++) t += v[i].e - v[i].s;
  return t;
}

/* Length of [s, e) not covered by the merged intervals c[0..nc). */
static double uncovered(double s, double e, const iv *c, size_t nc) {
  double covered = 0;
  for (size_t i = 0; i < nc; i++) {
    double lo = max2(s, c[i].s), hi = c[i].e < e ? c[i].e : e;
    if (hi > lo) covered += hi - lo;
  }
  return (e - s) - covered;
}

static int answers(ovl_pm_job *job) {
  for (int ri = 0; ri < job->nranks; ri++) {
    ovl_pm_rank *r = &job->ranks[ri];
    iv *cmp = malloc((r->nev + 1) * sizeof *cmp), *dim = malloc((r->nev + 1) * sizeof *dim);
    if (!cmp || !dim) {
      free(cmp);
      free(dim);
      return -1;
    }
    size_t nc = 0;
    r->end_ns = 0;
    for (size_t i = 0; i < r->nev; i++) {
      if (!r->ev[i].op) cmp[nc++] = (iv){r->ev[i].start_ns, r->ev[i].end_ns};
      r->end_ns = max2(r->end_ns, r->ev[i].end_ns);
    }
    nc = merge(cmp, nc);
    r->compute_ns = length(cmp, nc);
    for (size_t i = 0; i < r->nev; i++) {
      ovl_pm_event *e = &r->ev[i];
      if (!e->op) continue;
      e->exposed_ns = uncovered(e->start_ns, e->end_ns, cmp, nc);
      if (job->groups[e->group].dim == OVL_PM_DIM_DP && strcmp(e->op, "AllGather") == 0)
        r->gather_exposed_ns += e->exposed_ns;
      if (job->groups[e->group].dim == OVL_PM_DIM_DP && strcmp(e->op, "ReduceScatter") == 0)
        r->reduce_scatter_exposed_ns += e->exposed_ns;
    }
    for (int d = 1; d < OVL_PM_DIMS; d++) {
      size_t nd = 0;
      for (size_t i = 0; i < r->nev; i++)
        if (r->ev[i].op && job->groups[r->ev[i].group].dim == d) dim[nd++] = (iv){r->ev[i].start_ns, r->ev[i].end_ns};
      nd = merge(dim, nd);
      r->comm_ns[d] = length(dim, nd);
      r->exposed_ns[d] = 0;
      for (size_t i = 0; i < nd; i++) r->exposed_ns[d] += uncovered(dim[i].s, dim[i].e, cmp, nc);
    }
    free(cmp);
    free(dim);
    if (r->end_ns > job->step_ns) job->step_ns = r->end_ns;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------- */

static int add_group(ovl_pm_job *job, int dim, int first, int stride, int n) {
  ovl_pm_group *g = &job->groups[job->ngroups++];
  g->dim = dim;
  g->nmembers = n;
  for (int i = 0; i < n; i++) g->members[i] = first + i * stride;
  return job->ngroups - 1;
}

int ovl_pm_build(const ovl_pm_params *p, ovl_pm_job *job) {
  memset(job, 0, sizeof *job);
  job->p = *p;
  int n = ovl_pm_nranks(p);
  if (p->layers < 1 || !(p->layer_compute_ns > 0) || !(p->beta_bytes_per_s > 0) || p->alpha_ns < 0 || n < 1 ||
      n > 64 || p->dp < 1 || p->tp < 1 || p->bucket_layers < 1 || p->microbatches < 1 || p->stages < 1 ||
      !(p->hot_factor >= 1.0) || (p->strategy == OVL_PM_PP && p->stages < 2) ||
      (p->strategy == OVL_PM_MOE && p->experts < 2) || (p->strategy == OVL_PM_TP && p->tp < 2) ||
      p->slow_stage >= p->stages)
    return -1;
  job->nranks = n;
  job->ranks = calloc((size_t)n, sizeof *job->ranks);
  job->groups = calloc((size_t)(n + 2), sizeof *job->groups);
  if (!job->ranks || !job->groups) {
    ovl_pm_free(job);
    return -1;
  }
  int rc = 0;
  if (p->strategy == OVL_PM_PP) {
    if (p->pair_comms)
      for (int k = 0; k + 1 < n; k++) add_group(job, OVL_PM_DIM_PP, k, 1, 2);
    else
      add_group(job, OVL_PM_DIM_PP, 0, 1, n);
    rc = build_pipeline(p, job);
  } else if (p->strategy == OVL_PM_MOE) {
    add_group(job, OVL_PM_DIM_EP, 0, 1, n);
    rc = build_moe(p, job);
  } else {
    /* rank = d * tp + t: TP groups are consecutive ranks, DP groups tp apart */
    int dp_groups = p->dp > 1 && p->strategy != OVL_PM_TP ? p->tp : 0, tp_groups = p->tp > 1 ? p->dp : 0;
    for (int t = 0; t < dp_groups; t++) add_group(job, OVL_PM_DIM_DP, t, p->tp, p->dp);
    for (int d = 0; d < tp_groups; d++) add_group(job, OVL_PM_DIM_TP, d * p->tp, 1, p->tp);
    for (int r = 0; !rc && r < n; r++) {
      int d = r / p->tp, t = r % p->tp;
      rc = build_data_parallel(p, &job->ranks[r], dp_groups ? t : -1, tp_groups ? dp_groups + d : -1);
    }
  }
  if (!rc) rc = answers(job);
  if (rc) ovl_pm_free(job);
  return rc;
}

void ovl_pm_free(ovl_pm_job *job) {
  if (job->ranks)
    for (int i = 0; i < job->nranks; i++) free(job->ranks[i].ev);
  free(job->ranks);
  free(job->groups);
  memset(job, 0, sizeof *job);
}
