/*
** Per-step findings: the gradient schedule (readiness_stall, single_bucket, late_firing, then
** exposed_tail or latency_bound, first that applies), find_unused_parameters and
** blocking_collective. Thresholds in thresholds.h; docs/findings.md explains each.
*/
#include "diagnose_internal.h"

#include "base/nccl_ops.h"
#include "base/vec.h"
#include "analyze/whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const where = "ovl whatif --bucket-mb 1,5,25,100 TRACE";

/* What the step findings share: the gradient collectives in firing order and their ready times. */
typedef struct step_view {
  ovl_diag *d;
  ovl_step_result *st;
  double step_ns, obs_tail;
  const ovl_grad_mark *marks;
  size_t nmarks;
  ovl_coll_result **grad;  /* ngrad, firing order */
  double *ready;           /* ngrad; valid when ready_ok */
  int ready_ok, ready_approx;
} step_view;

static double rel(const step_view *v, int64_t t) { return (double)(t - v->st->start); }

static void label(const ovl_coll_result *c, char *buf, size_t len) { ovl_coll_bucket_label(c, buf, len); }

static int significant(const step_view *v, double recoverable, double share) {
  return recoverable >= OVL_DIAG_MIN_NS && recoverable >= share * v->step_ns;
}

/* ---------------------------------------------------------------------------------- */
/* Bucket sizes                                                                        */
/* ---------------------------------------------------------------------------------- */

typedef struct size_sweep {
  int ok;
  double model_tail;       /* the observed buckets replayed with alpha-beta */
  double best_tail, best_cap;
  size_t best_buckets;
  double median_bytes;     /* of the observed gradient collectives */
} size_sweep;

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static int sweep_sizes(const step_view *v, size_sweep *out) {
  memset(out, 0, sizeof *out);
  ovl_diag *d = v->d;
  if (!d->have_cost || !v->ready_ok) return OVL_OK;
  ovl_bm_grad *g = NULL;
  size_t ng = 0;
  int approx = 0;
  if (ovl_step_readiness(v->st, v->marks, v->nmarks, &g, &ng, &approx)) return OVL_OK;
  ovl_bm_bucket *scratch = malloc((ng ? ng : 1) * sizeof *scratch);
  double *bytes = malloc((size_t)v->st->ngrad * sizeof *bytes);
  if (!scratch || !bytes) {
    free(g);
    free(scratch);
    free(bytes);
    return ovl_oom(d->err, "diagnosis");
  }
  static const double caps[] = OVL_DIAG_CAPS_MIB;
  out->best_tail = INFINITY;
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    size_t nb = 0;
    double tail = ovl_replay_tail(g, ng, (double)v->st->backward_end, OVL_DIAG_FIRST_CAP_MIB * 1048576.0,
                                  caps[i] * 1048576.0, d->alpha_ns, d->beta, scratch, &nb);
    if (tail < out->best_tail) {
      out->best_tail = tail;
      out->best_cap = caps[i];
      out->best_buckets = nb;
    }
  }
  out->model_tail = ovl_replay_observed_tail(v->st, v->ready, 0, 0, d->alpha_ns, d->beta);
  size_t nb = 0;
  for (int i = 0; i < v->st->ngrad; i++)
    if (v->grad[i]->bytes != OVL_NONE) bytes[nb++] = (double)v->grad[i]->bytes;
  ovl_qsort(bytes, nb, sizeof *bytes, cmp_double);
  out->median_bytes = nb ? bytes[nb / 2] : NAN;
  out->ok = out->model_tail >= 0 && nb > 0;
  free(g);
  free(scratch);
  free(bytes);
  return OVL_OK;
}

/* A bucket-size finding rests on the alpha-beta model; with alpha unknown (sizes that did not
** vary) the model is a guess. */
static int bucket_finding(ovl_diag *d, ovl_step_result *st, const char *code, double recoverable, int64_t at,
                          ovl_msg *m) {
  if (d->alpha_assumed)
    return ovl_step_finding_rests_on(d, st, code, recoverable, at, m, OVL_CONF_LOW,
                                     "collective sizes and kernel times; the model's alpha unknown, taken as 0");
  return ovl_step_finding(d, st, code, recoverable, at, m);
}

/* The bucket-size suggestion: the best cap, its tail, the gain, the model, and whatif. */
static void suggest_cap(const ovl_diag *d, const size_sweep *sz, double recoverable, ovl_msg *m) {
  char t1[32], t2[32], t3[32];
  ovl_msg_printf(m, "bucket_cap_mb=%g (first bucket %d MiB, %zu buckets) would end %s after backward instead of %s "
                    "(-%s per step)",
                 sz->best_cap, OVL_DIAG_FIRST_CAP_MIB, sz->best_buckets, ovl_ns_str(sz->best_tail, t1),
                 ovl_ns_str(sz->model_tail, t2), ovl_ns_str(recoverable, t3));
  if (d->alpha_assumed)
    ovl_msg_printf(m, " (model: alpha unknown because the gradient collectives all have about one size, taken as 0; "
                      "beta %.2f GB/s effective)", d->beta / 1e9);
  else
    ovl_msg_printf(m, " (model: alpha %s, beta %.2f GB/s, fitted on %zu collectives, r2 %.2f)",
                   ovl_ns_str(d->alpha_ns, t1), d->beta / 1e9, d->fit.fit.samples, d->fit.fit.r2);
  ovl_msg_printf(m, ". Compare sizes with: %s.", where);
}

/* ---------------------------------------------------------------------------------- */
/* The gradient schedule                                                               */
/* ---------------------------------------------------------------------------------- */

/* readiness_stall: buckets ready early waited behind one fired earlier that was ready later. */
static int readiness_stall(step_view *v, int *fired) {
  ovl_step_result *st = v->st;
  if (!st->misordered) return OVL_OK;
  double min_stall = fmax(OVL_STALL_MIN_NS, OVL_DIAG_MIN_SHARE * v->step_ns);
  double total = 0;
  int nstalled = 0;
  int *blocker = malloc((size_t)st->ngrad * sizeof *blocker);
  if (!blocker) return ovl_oom(v->d->err, "diagnosis");
  int main_blocker = -1, latest = -1;  /* latest: the earlier-fired collective ready last */
  for (int j = 0; j < st->ngrad; j++) {
    const ovl_coll_result *c = v->grad[j];
    blocker[j] = -1;
    int64_t stall = ovl_coll_stall(c), ready = ovl_coll_ready(c);
    int64_t latest_ready = latest >= 0 ? ovl_coll_ready(v->grad[latest]) : OVL_NONE;
    int stalled = stall != OVL_NONE && ready != OVL_NONE && (double)stall >= min_stall;
    if (stalled && latest >= 0 && latest_ready > ready) blocker[j] = latest;
    if (ready != OVL_NONE && (latest < 0 || ready > latest_ready)) latest = j;
    if (blocker[j] < 0) continue;
    nstalled++;
    total += (double)stall;
    if (main_blocker < 0 || ovl_coll_ready(v->grad[blocker[j]]) > ovl_coll_ready(v->grad[main_blocker]))
      main_blocker = blocker[j];
  }
  double tail = v->ready_ok ? ovl_replay_observed_tail(st, v->ready, 1, 1, 0, 1) : -1;
  double recoverable = tail >= 0 ? v->obs_tail - tail : 0;
  if (nstalled == 0 || !significant(v, recoverable, OVL_DIAG_MIN_SHARE)) {
    free(blocker);
    return OVL_OK;
  }
  const ovl_coll_result *b = v->grad[main_blocker];
  char t1[32], t2[32], t3[32], t4[32], lb[24];
  ovl_msg m = {0};
  label(b, lb, sizeof lb);
  ovl_msg_printf(&m, "buckets are launched strictly in index order (as DDP does), and bucket %s became ready only at %s "
                     "into the step, so ", lb, ovl_ns_str(rel(v, ovl_coll_ready(b)), t1));
  int listed = 0;
  double first_ready = INFINITY, burst = -INFINITY;
  for (int j = 0; j < st->ngrad; j++) {
    if (blocker[j] < 0) continue;
    const ovl_coll_result *c = v->grad[j];
    int64_t ready = ovl_coll_ready(c), launch = ovl_coll_host_launch(c);
    if ((double)ready < first_ready) first_ready = (double)ready;
    if (launch != OVL_NONE && (double)launch > burst) burst = (double)launch;
    if (listed < 8) {
      label(c, lb, sizeof lb);
      ovl_msg_printf(&m, "%s%s", listed ? ", " : "bucket(s) ", lb);
    } else if (listed == 8) {
      ovl_msg_printf(&m, " and %d more", nstalled - 8);
    }
    listed++;
  }
  ovl_msg_printf(&m, ", ready from %s, waited for it and went out in a burst until %s; total readiness stall %s. "
                     "Expected firing order (by readiness):",
                 ovl_ns_str(first_ready - (double)st->start, t1), ovl_ns_str(burst - (double)st->start, t2),
                 ovl_ns_str(total, t3));
  int shown = 0;
  for (int pos = 0; pos < st->ngrad && shown < 24; pos++)
    for (int j = 0; j < st->ngrad; j++)
      if (v->grad[j]->diag.ready_order == pos) {
        label(v->grad[j], lb, sizeof lb);
        ovl_msg_printf(&m, " %s", lb);
        shown++;
      }
  ovl_msg_printf(&m, "%s; observed:", shown < st->ngrad ? " ..." : "");
  for (int j = 0; j < st->ngrad && j < 24; j++) {
    label(v->grad[j], lb, sizeof lb);
    ovl_msg_printf(&m, " %s", lb);
  }
  ovl_msg_printf(&m, "%s. Launched as they become ready, the buckets would end %s after backward instead of %s. "
                     "Fix: define the modules in the order forward uses them (DDP fills buckets in reverse order of "
                     "model.parameters()), or let DDP rebuild its buckets in gradient-ready order after the first "
                     "step: drop find_unused_parameters=True, or pass static_graph=True.",
                 st->ngrad > 24 ? " ..." : "", ovl_ns_str(tail, t3), ovl_ns_str(v->obs_tail, t4));
  free(blocker);
  *fired = 1;
  int64_t at = ovl_coll_host_launch(b) != OVL_NONE ? ovl_coll_host_launch(b) : b->gpu_start;
  return ovl_step_finding(v->d, st, "readiness_stall", recoverable, at, &m);
}

/* single_bucket: one gradient collective, launched after backward, carries every gradient. */
static int single_bucket(step_view *v, const size_sweep *sz, int *fired) {
  ovl_step_result *st = v->st;
  if (st->ngrad != 1 || v->grad[0]->gpu_start < st->backward_end) return OVL_OK;
  const ovl_coll_result *c = v->grad[0];
  double marked = 0;
  for (size_t i = 0; i < v->nmarks; i++) marked += v->marks[i].bytes > 0 ? (double)v->marks[i].bytes : 0;
  if (marked > 0 && c->bytes != OVL_NONE && (double)c->bytes < OVL_SINGLE_BUCKET_MARKED_SHARE * marked)
    return OVL_OK;  /* other buckets exist */
  if (!sz->ok) return OVL_OK;
  double recoverable = sz->model_tail - sz->best_tail;
  if (!significant(v, recoverable, OVL_DIAG_MIN_SHARE)) return OVL_OK;
  char t1[32], t2[32], t3[32];
  ovl_msg m = {0};
  ovl_msg_printf(&m, "all %s of gradients are reduced in one %s launched after backward (at %s into the step), so "
                     "none of it overlaps compute: %s after the last backward kernel. This is DDP's first iteration "
                     "(before it rebuilds its buckets), static_graph's first iteration, a bucket_cap_mb larger than "
                     "the model, or a compiled backward without bucketing. With ",
                 c->bytes != OVL_NONE ? ovl_bytes_str((double)c->bytes, t1) : "?", ovl_op_name(c->op),
                 ovl_ns_str(rel(v, c->gpu_start), t2), ovl_ns_str(v->obs_tail, t3));
  suggest_cap(v->d, sz, recoverable, &m);
  *fired = 1;
  return bucket_finding(v->d, st, "single_bucket", recoverable, c->gpu_start, &m);
}

/* late_firing: (nearly) all gradient bytes start after the last backward kernel. */
static int cmp_gpu_start(const void *pa, const void *pb) {
  const ovl_coll_result *a = *(const ovl_coll_result *const *)pa, *b = *(const ovl_coll_result *const *)pb;
  return (a->gpu_start > b->gpu_start) - (a->gpu_start < b->gpu_start);
}

static int late_firing(step_view *v, int *fired) {
  ovl_step_result *st = v->st;
  if (st->ngrad < 2) return OVL_OK;
  double late = 0, all = 0;
  int nlate = 0, bytes_known = st->grad_bytes != OVL_NONE;
  /* In GPU start order: a collective that starts after backward ends was fired late unless it
  ** only queued behind communication that had started in time (interleaved all-reduces of 1 ms
  ** each, launched during backward, run past it one after another: that is their latency,
  ** latency_bound's case, and no gradient hook would start them sooner). */
  const ovl_coll_result **by_start = malloc((size_t)st->ngrad * sizeof *by_start);
  if (!by_start) return ovl_oom(v->d->err, "diagnosis");
  for (int i = 0; i < st->ngrad; i++) by_start[i] = v->grad[i];
  ovl_qsort(by_start, (size_t)st->ngrad, sizeof *by_start, cmp_gpu_start);
  int previous_late = 0;
  int64_t previous_end = OVL_NONE;
  for (int i = 0; i < st->ngrad; i++) {
    const ovl_coll_result *c = by_start[i];
    double w = (bytes_known && c->bytes != OVL_NONE) ? (double)c->bytes : 1.0;
    all += w;
    int queued = previous_end != OVL_NONE && c->gpu_start - previous_end <= OVL_QUEUED_GAP_NS;
    int is_late = c->gpu_start >= st->backward_end && (!queued || previous_late);
    if (is_late) {
      late += w;
      nlate++;
    }
    previous_late = is_late;
    if (previous_end == OVL_NONE || ovl_coll_gpu_end(c) > previous_end) previous_end = ovl_coll_gpu_end(c);
  }
  free(by_start);
  if (!(all > 0) || late < OVL_LATE_BYTES_SHARE * all || !v->ready_ok) return OVL_OK;
  double tail = ovl_replay_observed_tail(st, v->ready, 1, 1, 0, 1);
  double recoverable = v->obs_tail - tail;
  if (tail < 0 || !significant(v, recoverable, OVL_DIAG_MIN_SHARE)) return OVL_OK;
  double first_ready = INFINITY;
  for (int i = 0; i < st->ngrad; i++) first_ready = fmin(first_ready, v->ready[i]);
  char t1[32], t2[32], t3[32], t4[32];
  ovl_msg m = {0};
  ovl_msg_printf(&m, "gradient communication starts only after backward compute has ended: %d of %d gradient "
                     "collectives (%.0f%% of the %s) start after the last backward kernel ends at %s into the step, "
                     "so they overlap nothing and run %s past it. ",
                 nlate, st->ngrad, 100.0 * late / all, bytes_known ? "bytes" : "collectives",
                 ovl_ns_str(rel(v, st->backward_end), t1), ovl_ns_str(v->obs_tail, t2));
  ovl_msg_printf(&m, "Gradients were ready from %s into the step (%s); launched as each bucket becomes ready they "
                     "would end %s after backward. Launch each bucket's all-reduce from a gradient hook as soon as "
                     "its gradients are ready (DDP does; an all-reduce after loss.backward(), or a compiled backward "
                     "without DDP's hooks, cannot overlap).",
                 ovl_ns_str(first_ready - (double)st->start, t3),
                 v->ready_approx ? "approximated from the backward compute: the trace has no grad_ready marks"
                                 : "grad_ready marks",
                 ovl_ns_str(tail, t4));
  *fired = 1;
  if (v->ready_approx)
    return ovl_step_finding_rests_on(v->d, st, "late_firing", recoverable, st->backward_end, &m, OVL_CONF_MEDIUM,
                                     "kernel times; readiness approximated (no grad_ready marks)");
  return ovl_step_finding(v->d, st, "late_firing", recoverable, st->backward_end, &m);
}

/* exposed_tail: most exposure is the last bucket(s) after backward; smaller buckets help. */
static int exposed_tail(step_view *v, const size_sweep *sz) {
  ovl_step_result *st = v->st;
  if (st->ngrad < 2 || !sz->ok || !(sz->best_cap * 1048576.0 < sz->median_bytes)) return OVL_OK;
  if (v->obs_tail < OVL_TAIL_MIN_SHARE * v->step_ns || v->obs_tail < OVL_TAIL_EXPOSED_SHARE * (double)st->totals.exposed)
    return OVL_OK;
  double recoverable = sz->model_tail - sz->best_tail;
  if (!significant(v, recoverable, OVL_TAIL_GAIN_SHARE)) return OVL_OK;
  int ntail = 0;
  double tail_bytes = 0;
  for (int i = 0; i < st->ngrad; i++)
    if (ovl_coll_gpu_end(v->grad[i]) > st->backward_end) {
      ntail++;
      tail_bytes += v->grad[i]->bytes != OVL_NONE ? (double)v->grad[i]->bytes : 0;
    }
  char t1[32], t2[32], t3[32];
  ovl_msg m = {0};
  ovl_msg_printf(&m, "most exposed communication is the tail after backward: the last %d gradient collective(s) "
                     "(%s) run %s past the last backward kernel (%.0f%% of the step's exposed communication), because "
                     "the gradients that become ready last go out in buckets of about %s. Smaller buckets send them "
                     "in smaller pieces: ",
                 ntail, ovl_bytes_str(tail_bytes, t1), ovl_ns_str(v->obs_tail, t2),
                 st->totals.exposed > 0 ? 100.0 * v->obs_tail / (double)st->totals.exposed : 100.0,
                 ovl_bytes_str(sz->median_bytes, t3));
  suggest_cap(v->d, sz, recoverable, &m);
  return bucket_finding(v->d, st, "exposed_tail", recoverable, st->backward_end, &m);
}

/* latency_bound: many small collectives dominated by alpha; larger buckets help. */
static int latency_bound(step_view *v, const size_sweep *sz) {
  ovl_diag *d = v->d;
  ovl_step_result *st = v->st;
  if (st->ngrad < OVL_LATENCY_MIN_COLLS || !sz->ok || d->alpha_assumed || !(sz->best_cap * 1048576.0 > sz->median_bytes))
    return OVL_OK;
  double transfer = sz->median_bytes / d->beta * 1e9;
  double efficiency = transfer / (d->alpha_ns + transfer);
  if (efficiency >= OVL_LATENCY_MAX_EFFICIENCY) return OVL_OK;
  double recoverable = sz->model_tail - sz->best_tail;
  if (!significant(v, recoverable, OVL_LATENCY_GAIN_SHARE)) return OVL_OK;
  double *bw = malloc((size_t)st->ngrad * sizeof *bw);
  if (!bw) return ovl_oom(d->err, "diagnosis");
  size_t nbw = 0;
  for (int i = 0; i < st->ngrad; i++) {
    double b = ovl_coll_busbw(v->grad[i]);
    if (!isnan(b)) bw[nbw++] = b;
  }
  ovl_qsort(bw, nbw, sizeof *bw, cmp_double);
  double median_busbw = nbw ? bw[nbw / 2] : NAN;
  free(bw);
  double peak_busbw = d->beta / 1e9 * ovl_busbw_factor(v->grad[0]->op, ovl_coll_nranks(v->grad[0]));
  char t1[32];
  ovl_msg m = {0};
  ovl_msg_printf(&m, "%d gradient collectives of median size %s each pay the latency alpha for little data: only "
                     "%.0f%% of their time moves bytes",
                 st->ngrad, ovl_bytes_str(sz->median_bytes, t1), 100.0 * efficiency);
  if (!isnan(median_busbw))
    ovl_msg_printf(&m, " (median busbw %.2f GB/s of the %.2f GB/s that beta allows)", median_busbw, peak_busbw);
  ovl_msg_printf(&m, ". Larger buckets pay alpha less often: ");
  suggest_cap(d, sz, recoverable, &m);
  return bucket_finding(d, st, "latency_bound", recoverable, v->grad[0]->gpu_start, &m);
}

/* ---------------------------------------------------------------------------------- */
/* Named culprits                                                                      */
/* ---------------------------------------------------------------------------------- */

static int find_unused(step_view *v) {
  ovl_step_result *st = v->st;
  int last_grad = -1;
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT) last_grad = st->colls[i].order;
  if (last_grad < 0) return OVL_OK;  /* the map follows the gradient buckets */
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    const ovl_coll_extra *x = ovl_coll_extra_of(c);
    /* A map known by its kernel alone has no size; the copy of its result to the host has. */
    int64_t bytes = c->bytes != OVL_NONE ? c->bytes : x->d2h_start != OVL_NONE ? x->d2h_bytes : OVL_NONE;
    if (c->diag.role != OVL_ROLE_UNUSED_MAP || c->order < last_grad || bytes == OVL_NONE || bytes < 0 ||
        bytes > OVL_UNUSED_MAP_MAX_BYTES)
      continue;
    double copy = x->d2h_start != OVL_NONE ? (double)(x->d2h_end - x->d2h_start) : 0;
    double recoverable = (double)ovl_coll_exposed(c) + copy;
    if (!significant(v, recoverable, 0)) continue;
    char t1[32], t2[32], t3[32], t4[32];
    ovl_msg m = {0};
    ovl_msg_printf(&m, "the signature of DDP's find_unused_parameters=True: an %s all-reduce of %s (a used-parameter "
                       "map of %lld parameter tensors) follows the last gradient bucket at %s into the step (%s, %s "
                       "exposed)",
                   ovl_coll_dtype(c)[0] ? ovl_coll_dtype(c) : "integer", ovl_bytes_str((double)bytes, t1), (long long)(bytes / 4),
                   ovl_ns_str(rel(v, c->gpu_start), t2), ovl_ns_str((double)(ovl_coll_gpu_end(c) - c->gpu_start), t3),
                   ovl_ns_str((double)ovl_coll_exposed(c), t4));
    if (copy > 0) ovl_msg_printf(&m, ", and its result is copied to the host (%s, blocking)", ovl_ns_str(copy, t1));
    ovl_msg_printf(&m, "; it costs %s per step on the GPU, plus a walk of the autograd graph after every forward on "
                       "the host. If every parameter gets a gradient in every step, drop find_unused_parameters=True "
                       "(it also keeps DDP from rebuilding its buckets in gradient-ready order); if some parameters "
                       "are unused, consider static_graph=True.",
                   ovl_ns_str(recoverable, t2));
    int rc = ovl_step_finding(v->d, st, "find_unused_parameters", recoverable, c->gpu_start, &m);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* A non-gradient collective that compute waits for: fully exposed, with compute before it in
** the step and compute resuming right after it ends, before the gradient phase. */
static int compute_waits_for(const step_view *v, const ovl_coll_result *c) {
  const ovl_step_result *st = v->st;
  int64_t end = ovl_coll_gpu_end(c), dur = end - c->gpu_start, exposed = ovl_coll_exposed(c);
  if (c->diag.role != OVL_ROLE_OTHER || dur <= 0 || (double)exposed < OVL_BLOCKING_EXPOSED_SHARE * (double)dur) return 0;
  int64_t before = ovl_coll_compute_before(c), after = ovl_coll_compute_after(c);
  if (before == OVL_NONE || before < st->start || after == OVL_NONE) return 0;
  double gap = (double)(after - end);
  if (gap > fmax(OVL_BLOCKING_RESUME_NS, OVL_BLOCKING_RESUME_SHARE * (double)dur) || after >= st->end) return 0;
  return st->backward_end == OVL_NONE || c->gpu_start < st->backward_end;
}

static const char *article(const char *word) { return strchr("AEIOU", word[0]) ? "an" : "a"; }

static void describe_blocking(const step_view *v, const ovl_coll_result *c, int on_stream, ovl_msg *m) {
  char t1[32], t2[32], t3[32], size[32];
  if (c->bytes != OVL_NONE) ovl_bytes_str((double)c->bytes, size);
  else snprintf(size, sizeof size, "unknown size");
  ovl_msg_printf(m, "%s%s %s of %s%s%s", on_stream ? "" : "compute waits for ", article(ovl_op_name(c->op)),
                 ovl_op_name(c->op), size, ovl_coll_dtype(c)[0] ? " " : "", ovl_coll_dtype(c));
  if (on_stream)
    ovl_msg_printf(m, " runs on stream %lld, a compute stream, at %s into the step: compute on that stream waits for "
                      "it (%s exposed)",
                   (long long)ovl_coll_stream(c), ovl_ns_str(rel(v, c->gpu_start), t1),
                   ovl_ns_str((double)ovl_coll_exposed(c), t2));
  else
    ovl_msg_printf(m, " at %s into the step (stream %lld): nothing computes while it runs (%s exposed) and compute "
                      "resumes %s after it ends",
                   ovl_ns_str(rel(v, c->gpu_start), t1), (long long)ovl_coll_stream(c),
                   ovl_ns_str((double)ovl_coll_exposed(c), t2),
                   ovl_ns_str((double)(ovl_coll_compute_after(c) - ovl_coll_gpu_end(c)), t3));
}

static const char blocking_advice[] =
    ". If the value is not needed right away (a loss or metric for logging), make the call asynchronous "
    "(async_op=True, wait only where the value is used), run it on a communication stream, or reduce it every N "
    "steps; if it fetches what the next compute needs (an AllGather of parameters), issue it earlier so that it "
    "overlaps the compute before it.";

/* On a compute stream a collective blocks compute by construction; elsewhere compute is only
** seen to wait for it (nothing computes while it runs, compute resumes right after). */
static int blocking_finding(step_view *v, const ovl_coll_result *c, double recoverable, int64_t at, ovl_msg *m) {
  if (c->diag.role == OVL_ROLE_BLOCKING) return ovl_step_finding(v->d, v->st, "blocking_collective", recoverable, at, m);
  return ovl_step_finding_rests_on(v->d, v->st, "blocking_collective", recoverable, at, m, OVL_CONF_MEDIUM,
                                   "compute seen to wait: nothing computes while it runs, compute resumes right after");
}

/* Does compute wait for this collective, enough to say so? */
static int blocks(const step_view *v, const ovl_coll_result *c) {
  int on_stream = c->diag.role == OVL_ROLE_BLOCKING;
  if (!on_stream && !compute_waits_for(v, c)) return 0;
  return significant(v, (double)ovl_coll_exposed(c), on_stream ? 0 : OVL_DIAG_MIN_SHARE_WAIT);
}

/* blocking_collective: one finding per collective compute waits for, or one for all of them
** when a step has more than OVL_BLOCKING_MAX_NAMED (e.g. every gradient reduced on the compute stream). */
static int blocking(step_view *v) {
  ovl_step_result *st = v->st;
  size_t count = 0;
  double total = 0;
  const ovl_coll_result *first = NULL, *worst = NULL;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (!blocks(v, c)) continue;
    count++;
    total += (double)ovl_coll_exposed(c);
    if (!first) first = c;
    if (!worst || ovl_coll_exposed(c) > ovl_coll_exposed(worst)) worst = c;
  }
  if (count > OVL_BLOCKING_MAX_NAMED) {
    char t1[32];
    ovl_msg m = {0};
    ovl_msg_printf(&m, "%zu collectives block compute in this step, %s exposed in all; the largest: ", count,
                   ovl_ns_str(total, t1));
    describe_blocking(v, worst, worst->diag.role == OVL_ROLE_BLOCKING, &m);
    ovl_msg_printf(&m, "%s", blocking_advice);
    return blocking_finding(v, worst, total, first->gpu_start, &m);
  }
  for (size_t i = 0; count && i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (!blocks(v, c)) continue;
    ovl_msg m = {0};
    describe_blocking(v, c, c->diag.role == OVL_ROLE_BLOCKING, &m);
    ovl_msg_printf(&m, "%s", blocking_advice);
    int rc = blocking_finding(v, c, (double)ovl_coll_exposed(c), c->gpu_start, &m);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Large exposure that nothing above explains                                          */
/* ---------------------------------------------------------------------------------- */

/* Exposed collectives of a step grouped by operation and stream. */
typedef struct exposed_group {
  ovl_op op;
  int64_t stream;
  long n, unsized;
  int64_t exposed, first_start, last_end;
  double overlapped;       /* duration minus exposed, summed */
  double duration;
} exposed_group;

static int cmp_group(const void *pa, const void *pb) {
  const exposed_group *a = pa, *b = pb;
  return (a->exposed < b->exposed) - (a->exposed > b->exposed);
}

/* The rank's fit of its gradient collectives as exposed_communication's text says it
** (ovl_finding.text_fit): one that explains their time, one that explains none of it (its r2 in
** text_r2), none. */
enum { FIT_EXPLAINS = 0, FIT_USELESS, FIT_NONE };

/* Why the findings above did not fire, from what they need (docs/findings.md). */
static void why_none(const ovl_step_result *st, const ovl_finding *f, ovl_msg *m) {
  int nlate = 0, unsized = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->diag.role != OVL_ROLE_GRADIENT) continue;
    nlate += st->backward_end != OVL_NONE && c->gpu_start >= st->backward_end;
    unsized += c->bytes == OVL_NONE;
  }
  ovl_msg_printf(m, " No specific finding applies:");
  if (st->ngrad == 0) {
    ovl_msg_printf(m, " no collective is a gradient reduction (no AllReduce or ReduceScatter larger than %d bytes, "
                      "no bucket ranges), so the gradient-schedule findings do not apply;",
                   OVL_SCALAR_BYTES);
  } else {
    if (unsized) ovl_msg_printf(m, " the sizes of %d gradient collective(s) are unknown (the trace records no NCCL "
                                   "arguments), so the bucket-size model (single_bucket, exposed_tail, latency_bound) "
                                   "cannot run;", unsized);
    else if (f->text_fit == FIT_USELESS)
      ovl_msg_printf(m, " the alpha-beta fit of the gradient collectives explains none of their time (r2 = %.2f), so "
                        "the bucket-size model has no evidence to judge them;", f->text_r2);
    else if (f->text_fit == FIT_NONE) ovl_msg_printf(m, " no alpha-beta fit of the gradient collectives exists;");
    if (nlate * 10 < st->ngrad * 9)
      ovl_msg_printf(m, " %d of %d gradient collectives start before backward ends (not late_firing);",
                     st->ngrad - nlate, st->ngrad);
    if (!st->misordered) ovl_msg_printf(m, " their firing order is not known to differ from their readiness (no "
                                          "readiness_stall);");
  }
  ovl_msg_printf(m, " none ran on a compute stream or was seen to stall compute alone (no blocking_collective).");
}

static int cmp_double_desc(const void *pa, const void *pb) { return -cmp_double(pa, pb); }

/* The step's communication takes at least its compute: at least the difference stays exposed.
** Whether moving data or waiting for peers takes that time decides what helps, and one rank's
** trace cannot tell them apart: with the job's cross-rank split the message says which; without
** it, it says that it cannot, and advises nothing that needs the answer (a faster interconnect). */
static void comm_bound(const ovl_step_result *st, ovl_msg *m) {
  char t1[32], t2[32], t3[32];
  ovl_msg_printf(m, " The step is communication-bound: its communication takes %s against %s of compute, so at "
                    "least %s stays exposed whatever the schedule.",
                 ovl_ns_str((double)st->totals.comm, t1), ovl_ns_str((double)st->totals.compute, t2),
                 ovl_ns_str((double)(st->totals.comm - st->totals.compute), t3));
  double wait = 0, transfer = 0, *bw = malloc((st->ncolls ? st->ncolls : 1) * sizeof *bw);
  size_t nbw = 0;
  int crossed = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->cross && c->cross->wait_ns != OVL_NONE) {
      crossed = 1;
      wait += (double)c->cross->wait_ns;
      transfer += (double)ovl_coll_transfer_ns(c);
    }
    double b = !isnan(ovl_coll_transfer_busbw(c)) ? ovl_coll_transfer_busbw(c) : ovl_coll_busbw(c);
    if (bw && !isnan(b) && c->bytes != OVL_NONE && c->bytes >= OVL_BUSBW_MIN_BYTES) bw[nbw++] = b;
  }
  if (bw) ovl_qsort(bw, nbw, sizeof *bw, cmp_double_desc);
  char busbw[96] = "";
  _Static_assert(OVL_BUSBW_MIN_BYTES == 1 << 20, "the message names the size");
  if (nbw) snprintf(busbw, sizeof busbw, " (median busbw %.2f GB/s at 1 MiB or more)", bw[nbw / 2]);
  free(bw);
  if (crossed && wait >= transfer)
    ovl_msg_printf(m, " Across ranks, most of it (%s of %s) is waiting for the other ranks to arrive, not moving "
                      "data: a late peer, not the link, holds the step (the job section names the rank the others waited for most).",
                   ovl_ns_str(wait, t1), ovl_ns_str(wait + transfer, t2));
  else if (crossed)
    ovl_msg_printf(m, " Across ranks, moving data takes most of it (%s of %s)%s: send fewer bytes (fp16 or bf16 "
                      "gradients, compression) or give each step more compute; a faster interconnect helps only if "
                      "that bandwidth is near what the link sustains (nccl-tests on the same machines says).",
                   ovl_ns_str(transfer, t1), ovl_ns_str(wait + transfer, t2), busbw);
  else
    ovl_msg_printf(m, " From one rank a late peer looks the same as a slow transfer%s: analyse all ranks together "
                      "(ovl report DIR) to tell them apart; fewer bytes or more compute per step help either way.",
                   busbw);
}

/* exposed_communication's text, written when it is read (ovl_finding_text_fn): what is exposed
** and why nothing more specific applies, from the step and the rank's fit (f->text_fit). */
static int exposed_text(const ovl_step_result *st, const ovl_finding *f, char *buf, size_t size) {
  double exposed = (double)st->totals.exposed, step_ns = (double)st->end - (double)st->start;
  exposed_group *g = calloc(st->ncolls ? st->ncolls : 1, sizeof *g);
  if (!g) return -1;
  size_t ng = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (ovl_coll_exposed(c) <= 0) continue;
    size_t k = 0;
    while (k < ng && !(g[k].op == c->op && g[k].stream == ovl_coll_stream(c))) k++;
    if (k == ng) g[ng++] = (exposed_group){c->op, ovl_coll_stream(c), 0, 0, 0, c->gpu_start, ovl_coll_gpu_end(c), 0, 0};
    g[k].n++;
    g[k].unsized += c->bytes == OVL_NONE;
    g[k].exposed += ovl_coll_exposed(c);
    if (c->gpu_start < g[k].first_start) g[k].first_start = c->gpu_start;
    if (ovl_coll_gpu_end(c) > g[k].last_end) g[k].last_end = ovl_coll_gpu_end(c);
    g[k].duration += (double)(ovl_coll_gpu_end(c) - c->gpu_start);
    g[k].overlapped += (double)(ovl_coll_gpu_end(c) - c->gpu_start - ovl_coll_exposed(c));
  }
  ovl_qsort(g, ng, sizeof *g, cmp_group);
  char t1[32], t2[32], t3[32], t4[32];
  ovl_msg m = {buf, 0, size, 0, 1};
  ovl_msg_printf(&m, "%s of the step's %s is exposed communication (%.0f%% of the step; overlap efficiency %.1f%%)",
                 ovl_ns_str(exposed, t1), ovl_ns_str(step_ns, t2), 100.0 * exposed / step_ns,
                 100.0 * ovl_overlap_efficiency(&st->totals));
  ovl_msg_printf(&m, ". Exposed:");
  for (size_t k = 0; k < ng && k < 3; k++) {
    ovl_msg_printf(&m, "%s %ld %s%s on stream %lld, %s exposed, from %s to %s into the step, %.0f%% of their time "
                       "overlapping compute",
                   k ? ";" : "", g[k].n, ovl_op_name(g[k].op), g[k].unsized == g[k].n ? " (sizes unknown)" : "",
                   (long long)g[k].stream, ovl_ns_str((double)g[k].exposed, t1),
                   ovl_ns_str((double)(g[k].first_start - st->start), t3),
                   ovl_ns_str((double)(g[k].last_end - st->start), t4),
                   g[k].duration > 0 ? 100.0 * g[k].overlapped / g[k].duration : 0);
  }
  if (ng > 3) ovl_msg_printf(&m, "; and %zu more group(s)", ng - 3);
  ovl_msg_printf(&m, ".");
  if (ng > 0 && st->backward_end != OVL_NONE && g[0].first_start < st->backward_end && g[0].duration > 0 &&
      g[0].overlapped < 0.1 * g[0].duration)
    ovl_msg_printf(&m, " They run while backward is still going (it ends at %s) yet almost never alongside compute: "
                       "compute waits for them (the compute stream synchronises with the communication stream after "
                       "each call, or the GPU does not run the two concurrently).",
                   ovl_ns_str((double)(st->backward_end - st->start), t1));
  if (st->totals.comm >= st->totals.compute) comm_bound(st, &m);
  why_none(st, f, &m);
  long unsized = 0;
  for (size_t k = 0; k < ng; k++) unsized += g[k].unsized;
  ovl_msg_printf(&m, " Look at the timeline around them (ovl export --perfetto) for what compute waits on%s.",
                 unsized ? "; record NCCL arguments (sizes) in the trace so that the bucket model can judge them" : "");
  free(g);
  return m.oom ? -1 : 0;
}

/* exposed_communication: a step whose exposed communication is a large share of its time and
** that got no other finding gets one saying what is exposed and why nothing more specific
** applies (docs/findings.md). Not counted as recoverable: no fix is known. A trace can have one
** in every step, so its text is written when it is read (exposed_text). */
static int exposed_fallback(step_view *v) {
  ovl_step_result *st = v->st;
  double exposed = (double)st->totals.exposed;
  if (st->nfindings > 0 || !(v->step_ns > 0) || exposed < OVL_EXPOSED_LARGE_SHARE * v->step_ns ||
      exposed < OVL_DIAG_MIN_NS || !(ovl_overlap_efficiency(&st->totals) < OVL_EXPOSED_MAX_EFFICIENCY))
    return OVL_OK;
  ovl_finding *f = ovl_step_finding_text(v->d, st, "exposed_communication", st->start, exposed_text);
  if (!f) return OVL_EINTERNAL;
  f->text_fit = v->d->fit_useless ? FIT_USELESS : !v->d->have_cost ? FIT_NONE : FIT_EXPLAINS;
  f->text_r2 = v->d->fit.fit.r2;
  return OVL_OK;
}

/* ---------------------------------------------------------------------------------- */

int ovl_diagnose_step(ovl_diag *d, size_t s) {
  ovl_step_result *st = &d->r->steps[s];
  step_view v = {d, st, (double)st->end - (double)st->start, ovl_observed_tail(st), d->marks.marks + d->marks.offset[s],
                 d->marks.offset[s + 1] - d->marks.offset[s], NULL, NULL, 0, 0};
  int rc = blocking(&v);
  if (!rc) rc = find_unused(&v);
  if (rc || st->ngrad == 0 || v.obs_tail < 0 || !(v.step_ns > 0)) return rc ? rc : exposed_fallback(&v);
  v.grad = malloc((size_t)st->ngrad * sizeof *v.grad);
  v.ready = malloc((size_t)st->ngrad * sizeof *v.ready);
  if (!v.grad || !v.ready) rc = ovl_oom(d->err, "diagnosis");
  int k = 0;
  for (size_t i = 0; !rc && i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT) v.grad[k++] = &st->colls[i];
  if (!rc) v.ready_ok = ovl_bucket_ready_times(st, v.marks, v.nmarks, v.ready, &v.ready_approx) == 0;
  int fired = 0;
  size_sweep sz = {0};
  if (!rc) rc = readiness_stall(&v, &fired);
  if (!rc && !fired) rc = sweep_sizes(&v, &sz);
  if (!rc && !fired) rc = single_bucket(&v, &sz, &fired);
  if (!rc && !fired) rc = late_firing(&v, &fired);
  if (!rc && !fired) rc = exposed_tail(&v, &sz);
  if (!rc && !fired) rc = latency_bound(&v, &sz);
  free(v.grad);
  free(v.ready);
  return rc ? rc : exposed_fallback(&v);
}
