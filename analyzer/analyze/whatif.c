/* Bucket-size replays: see whatif.h. */
#include "whatif.h"

#include "base/units.h"
#include "base/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ovl_replay_tail(const ovl_bm_grad *g, size_t n, double backward_end, double first_cap, double cap,
                       double alpha_ns, double beta, ovl_bm_bucket *scratch, size_t *nbuckets) {
  size_t nb = ovl_bm_form_buckets(g, n, first_cap, cap, scratch);
  if (nbuckets) *nbuckets = nb;
  double end = ovl_bm_schedule(scratch, nb, alpha_ns, beta, -INFINITY);
  return nb && end > backward_end ? end - backward_end : 0;
}

double ovl_observed_tail(const ovl_step_result *st) {
  if (st->ngrad == 0 || st->backward_end == OVL_NONE || st->grad_end == OVL_NONE) return -1;
  return st->grad_end > st->backward_end ? (double)(st->grad_end - st->backward_end) : 0;
}

typedef struct replay_item {
  double ready, cost;
  size_t order;
} replay_item;

static int cmp_replay_ready(const void *pa, const void *pb) {
  const replay_item *a = pa, *b = pb;
  if (a->ready != b->ready) return a->ready < b->ready ? -1 : 1;
  return (a->order > b->order) - (a->order < b->order);
}

double ovl_replay_observed_tail(const ovl_step_result *st, const double *ready, int in_ready_order, int measured,
                                double alpha_ns, double beta) {
  if (st->ngrad == 0 || st->backward_end == OVL_NONE) return -1;
  replay_item *v = malloc((size_t)st->ngrad * sizeof *v);
  if (!v) return -1;
  size_t k = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->diag.role != OVL_ROLE_GRADIENT) continue;
    double cost = measured ? (double)(ovl_coll_gpu_end(c) - c->gpu_start)
                           : ovl_bm_cost_ns(alpha_ns, beta, c->bytes != OVL_NONE ? (double)c->bytes : 0);
    v[k] = (replay_item){ready[k], cost, k};
    k++;
  }
  if (in_ready_order) ovl_qsort(v, k, sizeof *v, cmp_replay_ready);
  double launch = -INFINITY, free_at = -INFINITY;
  for (size_t i = 0; i < k; i++) {
    launch = v[i].ready > launch ? v[i].ready : launch;
    double start = launch > free_at ? launch : free_at;
    free_at = start + v[i].cost;
  }
  free(v);
  double end_bwd = (double)st->backward_end;
  return free_at > end_bwd ? free_at - end_bwd : 0;
}

/* ---------------------------------------------------------------------------------- */
/* The job-level replay                                                                */
/* ---------------------------------------------------------------------------------- */

/* Per step index: the slowest rank's step, summed exposure and the number of rank-steps. */
typedef struct step_acc {
  double step_ns;
  int seen;
} step_acc;

typedef struct acc_set {
  step_acc *by_step;     /* nsteps_max entries per series */
  double exposed_sum, buckets_sum;
  size_t rank_steps;
} acc_set;

static void acc_add(acc_set *a, size_t step, double step_ns, double exposed, double buckets) {
  step_acc *s = &a->by_step[step];
  if (!s->seen || step_ns > s->step_ns) s->step_ns = step_ns;
  s->seen = 1;
  a->exposed_sum += exposed;
  a->buckets_sum += buckets;
  a->rank_steps++;
}

static int cmp_double_asc(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* The step time is the median over the steps (a first step that warms up, 2.7x the others in
** an H200 trace, moved the mean by 25% and with it every candidate); exposure and buckets are
** means over the rank-steps. Returns -1 when out of memory. */
static int acc_means(const acc_set *a, size_t nsteps, double *step_ns, double *exposed, double *buckets) {
  double *v = malloc((nsteps ? nsteps : 1) * sizeof *v);
  if (!v) return -1;
  size_t n = 0;
  for (size_t s = 0; s < nsteps; s++)
    if (a->by_step[s].seen) v[n++] = a->by_step[s].step_ns;
  qsort(v, n, sizeof *v, cmp_double_asc);
  *step_ns = n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  free(v);
  *exposed = a->rank_steps ? a->exposed_sum / (double)a->rank_steps : NAN;
  if (buckets) *buckets = a->rank_steps ? a->buckets_sum / (double)a->rank_steps : NAN;
  return 0;
}

/* Chooses alpha and beta: given, or fitted on the gradient collectives of the (comm, op)
** that carries the most gradient bytes. */
static int choose_cost(const ovl_rank_result *ranks, size_t nranks, const ovl_whatif_options *opt,
                       ovl_whatif_result *out, ovl_err *err) {
  out->alpha_given = !isnan(opt->alpha_ns);
  out->beta_given = !isnan(opt->beta);
  out->alpha_ns = opt->alpha_ns;
  out->beta = opt->beta;
  ovl_comm_fit *fits = NULL;
  size_t nfits = 0;
  int rc = ovl_fit_ranks(ranks, nranks, 1, &fits, &nfits, err);
  if (rc) return rc;
  size_t best = 0;
  for (size_t i = 1; i < nfits; i++)
    if (fits[i].total_bytes > fits[best].total_bytes) best = i;
  if (nfits) out->fit = fits[best];
  free(fits);
  if (out->alpha_given && out->beta_given) return OVL_OK;
  if (nfits == 0)
    return ovl_fail(err, OVL_EUSER, "no gradient collective with a known size to fit alpha and beta on: give --alpha and --beta");
  if (!out->alpha_given && !out->beta_given) {
    /* Sizes that do not vary give the effective bandwidth only: alpha is taken as 0, as the
    ** diagnosis' bucket findings take it, and said (small buckets then look cheaper than they
    ** are; --alpha gives the answer a firm footing). */
    out->alpha_assumed = !out->fit.fit.separable;
    out->alpha_ns = out->alpha_assumed ? 0 : out->fit.fit.alpha_ns;
    out->beta = out->fit.fit.beta_bytes_per_s;
    if (!(out->beta > 0))
      return ovl_fail(err, OVL_EUSER, "the gradient collectives give no usable bandwidth: give --alpha and --beta");
    return OVL_OK;
  }
  ovl_ab_sample *s = NULL;
  size_t n = 0;
  rc = ovl_fit_samples_of(ranks, nranks, out->fit.comm, out->fit.op, 1, &s, &n, err);
  if (rc) return rc;
  int bad = out->alpha_given ? ovl_ab_fit_beta(s, n, out->alpha_ns, &out->beta)
                             : ovl_ab_fit_alpha(s, n, out->beta, &out->alpha_ns);
  free(s);
  if (bad) return ovl_oom(err, "whatif");
  if (!(out->beta > 0) || isnan(out->alpha_ns))
    return ovl_fail(err, OVL_EUSER, "cannot fit %s with the given %s: every collective is faster than that",
                    out->alpha_given ? "beta" : "alpha", out->alpha_given ? "--alpha" : "--beta");
  return OVL_OK;
}

int ovl_whatif_run(const ovl_rank_result *ranks, size_t nranks, const ovl_whatif_options *opt, ovl_whatif_result *out,
                   ovl_err *err) {
  memset(out, 0, sizeof *out);
  out->best = 0;
  int rc = choose_cost(ranks, nranks, opt, out, err);
  if (rc) return rc;
  size_t max_steps = 0;
  for (size_t r = 0; r < nranks; r++) max_steps = ranks[r].nsteps > max_steps ? ranks[r].nsteps : max_steps;
  size_t nseries = opt->ncaps + 2;  /* current, model, candidates */
  acc_set *acc = calloc(nseries, sizeof *acc);
  out->cands = calloc(opt->ncaps ? opt->ncaps : 1, sizeof *out->cands);
  out->ncands = opt->ncaps;
  if (!acc || !out->cands) rc = ovl_oom(err, "whatif");
  for (size_t i = 0; !rc && i < nseries; i++)
    if (!(acc[i].by_step = calloc(max_steps ? max_steps : 1, sizeof *acc[i].by_step))) rc = ovl_oom(err, "whatif");
  size_t *ranks_used = calloc(nranks ? nranks : 1, sizeof *ranks_used);
  if (!ranks_used) rc = ovl_oom(err, "whatif");
  for (size_t ri = 0; !rc && ri < nranks; ri++) {
    const ovl_rank_result *r = &ranks[ri];
    ovl_step_marks sm;
    if (ovl_step_marks_build(r, &sm)) {
      rc = ovl_oom(err, "whatif");
      break;
    }
    for (size_t si = 0; !rc && si < r->nsteps; si++) {
      const ovl_step_result *st = &r->steps[si];
      if (si == 0 && r->first_step_differs) {
        out->skipped_first_step = 1;
        continue;
      }
      double obs_tail = ovl_observed_tail(st);
      /* A tail longer than its step (damaged times: a step ending before its collectives)
      ** would replay to a negative step time: such a step cannot be replayed. */
      if (obs_tail < 0 || obs_tail > (double)st->end - (double)st->start) continue;
      const ovl_grad_mark *m = sm.marks + sm.offset[si];
      size_t nm = sm.offset[si + 1] - sm.offset[si];
      ovl_bm_grad *g = NULL;
      size_t ng = 0;
      int approx = 0, approx_ready = 0;
      double *ready = malloc((size_t)st->ngrad * sizeof *ready);
      ovl_bm_bucket *scratch = NULL;
      if (!ready) rc = ovl_oom(err, "whatif");
      else if (ovl_step_readiness(st, m, nm, &g, &ng, &approx) || ovl_bucket_ready_times(st, m, nm, ready, &approx_ready)) {
        free(ready);
        free(g);
        continue;  /* no usable curve: this step cannot be replayed */
      }
      if (!rc && !(scratch = malloc((ng ? ng : 1) * sizeof *scratch))) rc = ovl_oom(err, "whatif");
      if (!rc) {
        double step_ns = (double)(st->end - st->start), exposed = (double)st->totals.exposed;
        double model_tail = ovl_replay_observed_tail(st, ready, 0, 0, out->alpha_ns, out->beta);
        acc_add(&acc[0], si, step_ns, exposed, st->ngrad);
        acc_add(&acc[1], si, step_ns - obs_tail + model_tail, fmax(0, exposed - obs_tail + model_tail), st->ngrad);
        for (size_t c = 0; c < opt->ncaps; c++) {
          size_t nb = 0;
          double tail = ovl_replay_tail(g, ng, (double)st->backward_end, opt->first_cap, opt->caps[c], out->alpha_ns,
                                        out->beta, scratch, &nb);
          acc_add(&acc[2 + c], si, step_ns - obs_tail + tail, fmax(0, exposed - obs_tail + tail), (double)nb);
        }
        out->approximated |= approx | approx_ready;
        ranks_used[ri] = 1;
      }
      free(scratch);
      free(ready);
      free(g);
    }
    ovl_step_marks_free(&sm);
  }
  if (!rc && acc[0].rank_steps == 0)
    rc = ovl_fail(err, OVL_EUSER,
                  "no step to replay: no step has gradient collectives of known size after backward compute");
  if (!rc) {
    for (size_t ri = 0; ri < nranks; ri++) out->ranks += ranks_used[ri];
    for (size_t s = 0; s < max_steps; s++) out->steps += acc[0].by_step[s].seen;
    int oom = acc_means(&acc[0], max_steps, &out->current_step_ns, &out->current_exposed_ns, NULL);
    oom |= acc_means(&acc[1], max_steps, &out->model_step_ns, &out->model_exposed_ns, NULL);
    for (size_t c = 0; c < opt->ncaps; c++) {
      ovl_whatif_candidate *cd = &out->cands[c];
      cd->cap_bytes = opt->caps[c];
      oom |= acc_means(&acc[2 + c], max_steps, &cd->step_ns, &cd->exposed_ns, &cd->buckets);
      if (cd->step_ns < out->cands[out->best].step_ns) out->best = c;
    }
    if (oom) rc = ovl_oom(err, "whatif");
    out->gain_ns = opt->ncaps ? out->model_step_ns - out->cands[out->best].step_ns : 0;
    int fitted = !out->alpha_given || !out->beta_given;
    out->fit_weak = fitted && out->fit.fit.separable && !(out->fit.fit.r2 >= OVL_WHATIF_WEAK_R2);
  }
  for (size_t i = 0; acc && i < nseries; i++) free(acc[i].by_step);
  free(acc);
  free(ranks_used);
  if (rc) ovl_whatif_result_free(out);
  return rc;
}

void ovl_whatif_result_free(ovl_whatif_result *r) {
  free(r->cands);
  r->cands = NULL;
  r->ncands = 0;
}
