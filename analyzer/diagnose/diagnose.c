/*
** The diagnosis of one rank: the cost model of its gradient collectives,
** first_iteration_differs, the per-step findings (diagnose_steps.c), compute_slowdown, and
** one rank-level summary per code.
*/
#include "diagnose_internal.h"

#include "base/hash.h"
#include "base/units.h"
#include "base/vec.h"
#include "load/comm_names.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Messages                                                                            */
/* ---------------------------------------------------------------------------------- */

void ovl_msg_printf(ovl_msg *m, const char *fmt, ...) {
  if (m->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = m->cap - m->len;
    int n = vsnprintf(m->s ? m->s + m->len : NULL, m->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      m->oom = 1;
      return;
    }
    if (m->s && (size_t)n < room) {
      m->len += (size_t)n;
      return;
    }
    size_t cap = m->cap ? m->cap : 256;
    while (cap < m->len + (size_t)n + 1) cap *= 2;
    if (m->fixed) {  /* the text does not fit the caller's buffer */
      m->oom = 1;
      return;
    }
    char *grown = realloc(m->s, cap);
    if (!grown) {
      m->oom = 1;
      return;
    }
    m->s = grown;
    m->cap = cap;
  }
}

void ovl_msg_free(ovl_msg *m) {
  if (!m->fixed) free(m->s);
  memset(m, 0, sizeof *m);
}

const char *ovl_ns_str(double ns, char *buf) { return ovl_format_ns(ns, buf, 32); }
const char *ovl_bytes_str(double bytes, char *buf) { return ovl_format_bytes(bytes, buf, 32); }

static int add_finding(ovl_diag *d, ovl_finding **list, size_t *n, const char *code, long step, double recoverable,
                       int64_t at_ns, ovl_msg *m) {
  int rc = OVL_OK;
  if (m->oom || !m->s) rc = ovl_oom(d->err, "findings");
  else if (ovl_add_finding(list, n, code, step, (int64_t)llround(recoverable > 0 ? recoverable : 0), m->s))
    rc = ovl_oom(d->err, "findings");
  else (*list)[*n - 1].at_ns = at_ns;
  ovl_msg_free(m);
  return rc;
}

int ovl_step_finding(ovl_diag *d, ovl_step_result *st, const char *code, double recoverable_ns, int64_t at_ns,
                     ovl_msg *m) {
  return add_finding(d, &st->findings, &st->nfindings, code, st->index, recoverable_ns, at_ns, m);
}

ovl_finding *ovl_step_finding_text(ovl_diag *d, ovl_step_result *st, const char *code, int64_t at_ns,
                                   ovl_finding_text_fn text) {
  if (ovl_add_finding_text(&st->findings, &st->nfindings, code, st->index, 0, text)) {
    ovl_oom(d->err, "findings");
    return NULL;
  }
  ovl_finding *f = &st->findings[st->nfindings - 1];
  f->at_ns = at_ns;
  return f;
}

int ovl_step_finding_rests_on(ovl_diag *d, ovl_step_result *st, const char *code, double recoverable_ns,
                              int64_t at_ns, ovl_msg *m, ovl_confidence confidence, const char *evidence) {
  int rc = ovl_step_finding(d, st, code, recoverable_ns, at_ns, m);
  if (!rc) ovl_finding_rests_on(&st->findings[st->nfindings - 1], confidence, evidence);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* The cost model of the gradient collectives                                          */
/* ---------------------------------------------------------------------------------- */

static int fit_cost(ovl_diag *d) {
  ovl_comm_fit *fits = NULL;
  size_t nfits = 0;
  int rc = ovl_fit_ranks(d->r, 1, 1, &fits, &nfits, d->err);
  if (rc || nfits == 0) {
    free(fits);
    return rc;
  }
  size_t best = 0;
  for (size_t i = 1; i < nfits; i++)
    if (fits[i].total_bytes > fits[best].total_bytes) best = i;
  d->fit = fits[best];
  free(fits);
  d->have_cost = d->fit.fit.beta_bytes_per_s > 0;
  /* A line that explains none of the time predicts nothing: no bucket-size finding rests on it. */
  if (d->fit.fit.separable && !isnan(d->fit.fit.r2) && d->fit.fit.r2 < OVL_FIT_MIN_R2) {
    d->have_cost = 0;
    d->fit_useless = 1;
  }
  d->alpha_assumed = !d->fit.fit.separable;
  d->alpha_ns = d->fit.fit.separable ? d->fit.fit.alpha_ns : 0;
  d->beta = d->fit.fit.beta_bytes_per_s;
  return OVL_OK;
}

/* ---------------------------------------------------------------------------------- */
/* first_iteration_differs                                                             */
/* ---------------------------------------------------------------------------------- */

/* The bucket layout of a step: count and sizes of its gradient collectives in firing order. */
static uint64_t layout_hash(const ovl_step_result *st) {
  uint64_t h = OVL_HASH_SEED ^ (uint64_t)st->ngrad;
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT) h = ovl_hash_word(h, (uint64_t)st->colls[i].bytes);
  return h;
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return (a > b) - (a < b);
}

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return (a > b) - (a < b);
}

/* Step 0 differs when the layout most later steps share (at least two of them, and at least
** half) is not step 0's. */
static int first_iteration(ovl_diag *d) {
  ovl_rank_result *r = d->r;
  if (r->nsteps < 3 || r->steps[0].ngrad == 0) return OVL_OK;
  size_t n = r->nsteps - 1;
  uint64_t *h = malloc(n * sizeof *h);
  int64_t *exposed = malloc(n * sizeof *exposed);
  if (!h || !exposed) {
    free(h);
    free(exposed);
    return ovl_oom(d->err, "diagnosis");
  }
  for (size_t s = 0; s < n; s++) h[s] = layout_hash(&r->steps[s + 1]);
  uint64_t steady = 0;
  size_t best = 0;
  uint64_t *sorted = malloc(n * sizeof *sorted);
  if (!sorted) {
    free(h);
    free(exposed);
    return ovl_oom(d->err, "diagnosis");
  }
  memcpy(sorted, h, n * sizeof *h);
  ovl_qsort(sorted, n, sizeof *sorted, cmp_u64);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && sorted[j] == sorted[i]) j++;
    if (j - i > best) {
      best = j - i;
      steady = sorted[i];
    }
    i = j;
  }
  free(sorted);
  const ovl_step_result *s0 = &r->steps[0];
  int rc = OVL_OK;
  if (best >= OVL_STEADY_MIN_STEPS && (double)best >= OVL_STEADY_MIN_SHARE * (double)n && layout_hash(s0) != steady) {
    size_t m = 0, example = 0;
    for (size_t s = 0; s < n; s++)
      if (h[s] == steady) {
        if (!m) example = s + 1;
        exposed[m++] = r->steps[s + 1].totals.exposed;
      }
    ovl_qsort(exposed, m, sizeof *exposed, cmp_i64);
    double median = (double)exposed[m / 2];
    double recoverable = (double)s0->totals.exposed - median;
    const ovl_step_result *ex = &r->steps[example];
    int64_t largest0 = 0, largest = 0;
    for (size_t i = 0; i < s0->ncolls; i++)
      if (s0->colls[i].diag.role == OVL_ROLE_GRADIENT && s0->colls[i].bytes > largest0) largest0 = s0->colls[i].bytes;
    for (size_t i = 0; i < ex->ncolls; i++)
      if (ex->colls[i].diag.role == OVL_ROLE_GRADIENT && ex->colls[i].bytes > largest) largest = ex->colls[i].bytes;
    char b1[32], b2[32], b3[32], t1[32], t2[32];
    ovl_msg msg = {0};
    ovl_msg_printf(&msg, "the bucket layout of step 0 differs from the steady state (%zu of the %zu later steps): step "
                         "0 reduced %s of gradients in %d collective(s), the largest %s; the steady-state steps use %d, "
                         "the largest %s. Step 0 exposed %s of communication against a steady-state median of %s. "
                         "PyTorch DDP reduces the first iteration in parameter order and rebuilds its buckets in "
                         "gradient-ready order afterwards (static_graph=True, too): a one-time cost. Judge the "
                         "steady-state steps separately: the other findings and `ovl whatif` leave step 0 out.",
                   best, n, s0->grad_bytes != OVL_NONE ? ovl_bytes_str((double)s0->grad_bytes, b1) : "?", s0->ngrad,
                   ovl_bytes_str((double)largest0, b2), ex->ngrad, ovl_bytes_str((double)largest, b3),
                   ovl_ns_str((double)s0->totals.exposed, t1), ovl_ns_str(median, t2));
    r->first_step_differs = 1;
    rc = add_finding(d, &r->steps[0].findings, &r->steps[0].nfindings, "first_iteration_differs", 0, recoverable,
                     s0->start, &msg);
  }
  free(h);
  free(exposed);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* compute_slowdown                                                                    */
/* ---------------------------------------------------------------------------------- */

/* A fitted signature that shows a slowdown from sharing the GPU, by the rules of
** thresholds.h: enough runs of each kind, a large and significant effect, a fitted alone
** duration the runs alone agree with, and an effect above the spread of either kind of run. */
static int significant_slowdown(const ovl_kernel_slowdown *k) {
  if (k->runs_alone < OVL_SLOWDOWN_MIN_RUNS || k->runs_overlapped < OVL_SLOWDOWN_MIN_RUNS) return 0;
  if (!(k->factor >= OVL_SLOWDOWN_MIN_FACTOR) || !(k->alone_ns > 0) || !(k->t_stat >= OVL_SLOWDOWN_MIN_T)) return 0;
  double agree = fmax(OVL_SLOWDOWN_ALONE_AGREE * k->alone_mean_ns, 2 * k->alone_sd_ns);
  if (fabs(k->alone_ns - k->alone_mean_ns) > agree) return 0;
  if (k->alone_sd_ns > OVL_SLOWDOWN_MAX_CV * k->alone_mean_ns || k->over_sd_ns > OVL_SLOWDOWN_MAX_CV * k->over_mean_ns)
    return 0;
  double effect = k->alone_ns * (k->factor - 1);
  return effect > k->alone_sd_ns && effect > k->over_sd_ns;
}

static int cmp_slowdown_cost(const void *pa, const void *pb) {
  const ovl_kernel_slowdown *a = pa, *b = pb;
  if (a->cost_ns != b->cost_ns) return a->cost_ns > b->cost_ns ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* r->slowdowns: the significant fits of the measurement, largest cost first. */
static int select_slowdowns(ovl_diag *d) {
  ovl_rank_result *r = d->r;
  for (size_t i = 0; i < r->nkernel_fits; i++) {
    if (!significant_slowdown(&r->kernel_fits[i])) continue;
    ovl_kernel_slowdown *grown = realloc(r->slowdowns, (r->nslowdowns + 1) * sizeof *grown);
    if (!grown) return ovl_oom(d->err, "diagnosis");
    r->slowdowns = grown;
    r->slowdowns[r->nslowdowns] = r->kernel_fits[i];
    if (!(r->slowdowns[r->nslowdowns].name = strdup(r->kernel_fits[i].name))) return ovl_oom(d->err, "diagnosis");
    r->nslowdowns++;
  }
  ovl_qsort(r->slowdowns, r->nslowdowns, sizeof *r->slowdowns, cmp_slowdown_cost);
  return OVL_OK;
}

static void launch_dims_text(ovl_msg *m, const char *what, const int64_t v[3]) {
  if (v[0] != OVL_NONE) ovl_msg_printf(m, " %s (%lld,%lld,%lld)", what, (long long)v[0], (long long)v[1], (long long)v[2]);
}

static int compute_slowdown(ovl_diag *d) {
  ovl_rank_result *r = d->r;
  int rc = select_slowdowns(d);
  if (rc) return rc;
  double total = 0;
  for (size_t i = 0; i < r->nslowdowns; i++) total += r->slowdowns[i].cost_ns;
  if (r->nslowdowns == 0 || total < OVL_SLOWDOWN_MIN_SHARE * (double)r->totals.compute || total < OVL_DIAG_MIN_NS)
    return OVL_OK;
  char t1[32], t2[32], t3[32];
  ovl_msg m = {0};
  ovl_msg_printf(&m, "%zu compute kernel signature(s) run measurably slower while communication overlaps them, "
                     "costing %s of compute in total (%.1f%% of the rank's compute time): ",
                 r->nslowdowns, ovl_ns_str(total, t1), 100.0 * total / (double)r->totals.compute);
  for (size_t i = 0; i < r->nslowdowns && i < 3; i++) {
    const ovl_kernel_slowdown *k = &r->slowdowns[i];
    ovl_msg_printf(&m, "%s%.60s%s", i ? "; " : "", k->name, strlen(k->name) > 60 ? "..." : "");
    launch_dims_text(&m, "grid", k->grid);
    launch_dims_text(&m, "block", k->block);
    ovl_msg_printf(&m, " %.2fx slower when overlapped (%ld runs alone: %s +- %s; %ld of %ld runs overlapped; %s)",
                   k->factor, k->runs_alone, ovl_ns_str(k->alone_mean_ns, t1), ovl_ns_str(k->alone_sd_ns, t3),
                   k->runs_overlapped, k->runs, ovl_ns_str(k->cost_ns, t2));
  }
  if (r->nslowdowns > 3) ovl_msg_printf(&m, "; and %zu more", r->nslowdowns - 3);
  ovl_msg_printf(&m, ". An overlap percentage alone hides this: part of the hidden communication is paid back as "
                     "slower compute. Limit the GPU share NCCL takes (NCCL_MAX_CTAS or NCCL_MAX_NCHANNELS) and "
                     "compare the step time, or overlap communication with kernels that leave bandwidth to spare.");
  int named_only = r->slowdowns[0].grid[0] == OVL_NONE && r->slowdowns[0].block[0] == OVL_NONE;
  rc = add_finding(d, &r->findings, &r->nfindings, "compute_slowdown", -1, total, OVL_NONE, &m);
  if (!rc && named_only)  /* without launch dimensions one name may be different work */
    ovl_finding_rests_on(&r->findings[r->nfindings - 1], OVL_CONF_LOW,
                         "runs of one kernel name (the trace has no launch dimensions) alone and overlapped");
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* unrecognised_communication                                                          */
/* ---------------------------------------------------------------------------------- */

/* The identifier around the communication word of a kernel name ("fused_allreduce_kernel" in
** "void ns::fused_allreduce_kernel<float>(...)"): what --comm-pattern could match, into buf. */
static void name_token(const char *name, char *buf, size_t len) {
  const char *at = ovl_comm_lookalike_word(name);
  if (!at) at = name;
  const char *b = at, *e = at;
  while (b > name && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
  while (*e && (isalnum((unsigned char)*e) || *e == '_')) e++;
  size_t n = (size_t)(e - b) < len - 1 ? (size_t)(e - b) : len - 1;
  memcpy(buf, b, n);
  buf[n] = 0;
}

/* No kernel of the rank is communication, but compute kernels are named like collectives:
** their time is counted as compute, which the overlap figures cannot show. */
static int unrecognised_communication(ovl_diag *d) {
  ovl_rank_result *r = d->r;
  if (r->n_comm_kernels > 0 || r->n_comm_memops > 0 || r->nlookalikes == 0) return OVL_OK;
  char t1[32], token[96];
  ovl_msg m = {0};
  ovl_msg_printf(&m, "no kernel is recognised as communication, but %zu compute kernel(s) are named like collectives: ",
                 r->nlookalikes);
  for (size_t i = 0; i < r->nlookalikes && i < 3; i++)
    ovl_msg_printf(&m, "%s%.60s%s (%ld runs, %s)", i ? "; " : "", r->lookalikes[i].name,
                   strlen(r->lookalikes[i].name) > 60 ? "..." : "", r->lookalikes[i].runs,
                   ovl_ns_str(r->lookalikes[i].total_ns, t1));
  if (r->nlookalikes > 3) ovl_msg_printf(&m, "; and %zu more", r->nlookalikes - 3);
  name_token(r->lookalikes[0].name, token, sizeof token);
  ovl_msg_printf(&m, ". They are counted as compute: if they are communication, the communication, exposed time and "
                     "overlap efficiency of this report leave them out. Rerun with --comm-pattern '%s' (a POSIX "
                     "regular expression matching their names) to count them as communication; docs/report.md lists "
                     "the families recognised without it.", token);
  return add_finding(d, &r->findings, &r->nfindings, "unrecognised_communication", -1, 0, OVL_NONE, &m);
}

/* ---------------------------------------------------------------------------------- */
/* Rank summaries                                                                      */
/* ---------------------------------------------------------------------------------- */

static const char *const step_codes[] = {"first_iteration_differs", "readiness_stall", "single_bucket",
                                         "late_firing", "exposed_tail", "latency_bound",
                                         "find_unused_parameters", "blocking_collective", "peer_wait",
                                         "exposed_communication"};

static int is_step_code(const char *code) {
  for (size_t k = 0; k < sizeof step_codes / sizeof step_codes[0]; k++)
    if (strcmp(code, step_codes[k]) == 0) return 1;
  return 0;
}

static int summarise(ovl_diag *d, size_t steady_steps) {
  ovl_rank_result *r = d->r;
  for (size_t k = 0; k < sizeof step_codes / sizeof step_codes[0]; k++) {
    long nsteps = 0, last_step = -1;
    double total = 0;
    const ovl_finding *worst = NULL;
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].nfindings; i++) {
        const ovl_finding *f = &r->steps[s].findings[i];
        if (strcmp(f->code, step_codes[k]) != 0) continue;
        total += (double)f->recoverable_ns;
        if (last_step != (long)s) nsteps++;
        last_step = (long)s;
        /* the worst: most recoverable; among equals (exposed_communication recovers
        ** nothing) the most exposed step */
        if (!worst || f->recoverable_ns > worst->recoverable_ns ||
            (f->recoverable_ns == worst->recoverable_ns &&
             r->steps[s].totals.exposed > r->steps[worst->step].totals.exposed))
          worst = f;
      }
    if (!worst) continue;
    ovl_msg m = {0};
    char label[64], buf[OVL_FINDING_TEXT_MAX];
    ovl_step_label(&r->steps[worst->step], label, sizeof label);
    const char *text = ovl_finding_message(&r->steps[worst->step], worst, buf, sizeof buf);
    if (!text) return ovl_oom(d->err, "findings");
    if (strcmp(step_codes[k], "first_iteration_differs") == 0) ovl_msg_printf(&m, "%s", text);
    else if (nsteps == 1) ovl_msg_printf(&m, "step %s: %s", label, text);
    else
      ovl_msg_printf(&m, "%ld of %zu steps%s; step %s, the worst: %s", nsteps, steady_steps,
                     total > 0 ? " (recoverable summed over them)" : "", label, text);
    int rc = add_finding(d, &r->findings, &r->nfindings, step_codes[k], -1, total, worst->at_ns, &m);
    if (rc) return rc;
    r->findings[r->nfindings - 1].steps_affected = nsteps;
  }
  return OVL_OK;
}

int ovl_diagnose_resummarise(ovl_rank_result *r, ovl_err *err) {
  size_t kept = 0;
  for (size_t i = 0; i < r->nfindings; i++) {
    if (r->findings[i].step < 0 && r->findings[i].steps_affected > 0 && is_step_code(r->findings[i].code)) {
      free(r->findings[i].message);
      continue;
    }
    r->findings[kept++] = r->findings[i];
  }
  r->nfindings = kept;
  ovl_diag d;
  memset(&d, 0, sizeof d);
  d.r = r;
  d.err = err;
  return summarise(&d, r->nsteps - (r->first_step_differs ? 1 : 0));
}

int ovl_diagnose_rank(ovl_rank_result *r, ovl_err *err) {
  ovl_diag d;
  memset(&d, 0, sizeof d);
  d.r = r;
  d.err = err;
  if (ovl_step_marks_build(r, &d.marks)) return ovl_oom(err, "diagnosis");
  int rc = fit_cost(&d);
  if (!rc) rc = first_iteration(&d);
  size_t steady = 0;
  for (size_t s = 0; !rc && s < r->nsteps; s++) {
    if (s == 0 && r->first_step_differs) continue;
    steady++;
    rc = ovl_diagnose_step(&d, s);
  }
  if (!rc) rc = summarise(&d, steady);
  if (!rc) rc = compute_slowdown(&d);
  if (!rc) rc = unrecognised_communication(&d);
  if (!rc) ovl_findings_judge_rank(r);
  ovl_step_marks_free(&d.marks);
  return rc;
}
