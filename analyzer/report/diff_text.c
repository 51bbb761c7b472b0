/* `ovl diff` as text: see diff_text.h. */
#include "diff_text.h"

#include "base/text_clean.h"
#include "base/units.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *ns(double v, char *buf) {
  if (isnan(v)) return strcpy(buf, "-");
  return ovl_format_ns(v, buf, 32);
}

/* "+12.34 ms" */
static const char *signed_ns(double v, char *buf) {
  if (isnan(v)) return strcpy(buf, "-");
  char t[32];
  ovl_format_ns(fabs(v), t, sizeof t);
  snprintf(buf, 40, "%s%s", v < 0 ? "-" : "+", t);
  return buf;
}

static const char *pct(double ratio, char *buf) {
  if (isnan(ratio)) return strcpy(buf, "n/a");
  snprintf(buf, 32, "%.1f%%", 100.0 * ratio);
  return buf;
}

/* A change's relative part, "(-34.4%)", or "" when it has none. */
static const char *rel(const ovl_change *c, char *buf) {
  if (isnan(c->relative) || isinf(c->relative)) return strcpy(buf, "");
  snprintf(buf, 32, "%+.1f%%", 100.0 * c->relative);
  return buf;
}

static char mark(const ovl_change *c) { return c->significant ? '*' : ' '; }

static const char *side_label(const ovl_profile *p, char *buf, size_t len) {
  char clean[512];
  ovl_text_clean_into(p->label, clean, sizeof clean);
  size_t steps = 0;
  for (size_t i = 0; i < p->nranks; i++) steps = p->ranks[i].nsteps > steps ? p->ranks[i].nsteps : steps;
  snprintf(buf, len, "%s (%zu rank%s, %zu step%s, %s)", clean, p->nranks, p->nranks == 1 ? "" : "s", steps,
           steps == 1 ? "" : "s", p->from_report ? "saved report" : "traces");
  return buf;
}

static void metric_rows(FILE *out, const ovl_metrics_diff *m) {
  fprintf(out, "  %-22s %22s %22s %22s\n", "", "before (spread)", "after (spread)", "change");
  for (int k = 0; k < OVL_M_COUNT; k++) {
    const ovl_change *c = &m->c[k];
    char a[40], b[40], s1[40], s2[40], d[40], r[32], left[64], right[64], change[64];
    if (k == OVL_M_EFFICIENCY) {
      snprintf(left, sizeof left, "%s (%.1f pt)", pct(c->from, a), 100.0 * (isnan(c->before.spread) ? 0 : c->before.spread));
      snprintf(right, sizeof right, "%s (%.1f pt)", pct(c->to, b), 100.0 * (isnan(c->after.spread) ? 0 : c->after.spread));
      if (isnan(c->delta)) snprintf(change, sizeof change, "-");
      else snprintf(change, sizeof change, "%+.1f points", 100.0 * c->delta);
    } else {
      snprintf(left, sizeof left, "%s (%s)", ns(c->from, a), ns(c->before.spread, s1));
      snprintf(right, sizeof right, "%s (%s)", ns(c->to, b), ns(c->after.spread, s2));
      snprintf(change, sizeof change, "%s %s", signed_ns(c->delta, d), rel(c, r));
    }
    fprintf(out, "  %-22s %22s %22s %22s %c\n", ovl_metric_title((ovl_metric)k), left, right, change, mark(c));
  }
}

static void recovered_line(FILE *out, const ovl_metrics_diff *m) {
  const ovl_change *e = &m->c[OVL_M_EXPOSED];
  char a[40], b[40], c[40];
  if (e->significant && e->delta < 0) {
    fprintf(out, "Exposed communication recovered: %s per step (%.1f%% of it); in all %s -> %s over %zu -> %zu steps\n",
            ns(-e->delta, a), -100.0 * e->relative, ns((double)m->before.exposed_total, b),
            ns((double)m->after.exposed_total, c), m->before.steps, m->after.steps);
  } else if (e->significant) {
    fprintf(out, "Exposed communication added: %s per step", ns(e->delta, a));
    if (!isnan(e->relative) && !isinf(e->relative)) fprintf(out, " (%+.1f%%)", 100.0 * e->relative);
    fprintf(out, "; in all %s -> %s\n", ns((double)m->before.exposed_total, b), ns((double)m->after.exposed_total, c));
  } else {
    fprintf(out, "Exposed communication: no change beyond the step-to-step spread (%s)\n", ns(e->noise, a));
  }
}

static void print_order(FILE *out, const long *v, size_t n) {
  size_t shown = n < 32 ? n : 32;
  for (size_t i = 0; i < shown; i++) fprintf(out, "%s%ld", i ? " " : "", v[i]);
  if (shown < n) fprintf(out, " ... (%zu)", n);
}

static void bucket_side(FILE *out, const char *label, const ovl_bucket_side *s) {
  fprintf(out, "  %-8s", label);
  if (s->grad_steps == 0) {
    fprintf(out, "no gradient buckets found\n");
    return;
  }
  if (s->misordered_steps) {
    fprintf(out, "fired against readiness in %ld of %ld steps (rank %lld, step %ld: fired ", s->misordered_steps,
            s->grad_steps, (long long)s->rank, s->step);
    print_order(out, s->fired, s->nfired);
    if (s->nready) {
      fprintf(out, "; ready ");
      print_order(out, s->ready, s->nready);
    }
    fprintf(out, ")\n");
  } else if (!s->numbered && !s->nready) {
    fprintf(out, "%zu gradient collectives per step; bucket numbers and readiness unknown (no grad_ready marks or bucket ranges)\n", s->nfired);
  } else {
    fprintf(out, "%s (", s->nready ? "fired in readiness order in every step" : "readiness unknown; fired");
    print_order(out, s->fired, s->nfired);
    fprintf(out, ")\n");
  }
}

static void layout_text(const ovl_bucket_side *s, char *buf, size_t len) {
  char b[32];
  if (s->grad_steps == 0) snprintf(buf, len, "none");
  else if (isnan(s->bytes_per_bucket)) snprintf(buf, len, "%.0f per step", s->buckets_per_step);
  else snprintf(buf, len, "%.0f per step of %s", s->buckets_per_step, ovl_format_bytes(s->bytes_per_bucket, b, sizeof b));
}

static void buckets(FILE *out, const ovl_bucket_diff *b) {
  if (b->before.grad_steps == 0 && b->after.grad_steps == 0) return;
  fprintf(out, "\nBucket order: %s\n", b->order_changed ? "changed" : "unchanged");
  bucket_side(out, "before:", &b->before);
  bucket_side(out, "after:", &b->after);
  char l1[96], l2[96];
  layout_text(&b->before, l1, sizeof l1);
  layout_text(&b->after, l2, sizeof l2);
  fprintf(out, "Gradient buckets: %s -> %s%s\n", l1, l2, b->layout_changed ? "" : " (unchanged)");
}

static const char *finding_verb(ovl_diff_status s) {
  return s == OVL_DS_NEW ? "appeared" : s == OVL_DS_VANISHED ? "disappeared" : s == OVL_DS_CHANGED ? "changed" : "persists";
}

static void finding_side(FILE *out, const char *when, const ovl_finding_side *s) {
  char t[32];
  fprintf(out, "%s: %ld rank%s, %ld step%s, recoverable %s", when, s->ranks, s->ranks == 1 ? "" : "s", s->steps,
          s->steps == 1 ? "" : "s", ns((double)s->recoverable, t));
  if (s->confidence[0]) fprintf(out, ", %s confidence", s->confidence);
}

static void findings(FILE *out, const ovl_diff *d, size_t max_rows) {
  if (d->nfindings == 0) {
    fprintf(out, "\nFindings: none before or after\n");
    return;
  }
  fprintf(out, "\nFindings\n");
  size_t shown = d->nfindings < max_rows ? d->nfindings : max_rows;
  for (size_t i = 0; i < shown; i++) {
    const ovl_finding_diff *f = &d->findings[i];
    fprintf(out, "  %-11s %s  ", finding_verb(f->status), f->code);
    if (f->status != OVL_DS_NEW) finding_side(out, "before", &f->before);
    if (f->status != OVL_DS_NEW && f->status != OVL_DS_VANISHED) fputs("; ", out);
    if (f->status != OVL_DS_VANISHED) finding_side(out, "after", &f->after);
    fputc('\n', out);
    const char *msg = f->status == OVL_DS_VANISHED ? f->before.message : f->after.message;
    if (msg && *msg && (f->status == OVL_DS_NEW || f->status == OVL_DS_VANISHED)) {
      char clean[200];
      ovl_text_clean_into(msg, clean, sizeof clean);
      fprintf(out, "              %s%s\n", clean, strlen(msg) >= sizeof clean - 1 ? "..." : "");
    }
  }
  if (shown < d->nfindings) fprintf(out, "  ... %zu more (use --all)\n", d->nfindings - shown);
}

/* Communicators are shown as #k, named once (comm_legend): their ids run to 19 digits. */
static const char *comm_text(size_t i, char *buf, size_t len) {
  snprintf(buf, len, "#%zu", i);
  return buf;
}

static void comm_legend(FILE *out, const ovl_diff *d) {
  fprintf(out, "  communicators:");
  for (size_t i = 0; i < d->ncomms; i++) {
    const ovl_comm_pair *c = &d->comms[i];
    char b[24], a[24];
    if (c->has_before && c->before != OVL_NONE) snprintf(b, sizeof b, "%lld", (long long)c->before);
    else snprintf(b, sizeof b, c->has_before ? "unknown" : "none");
    if (c->has_after && c->after != OVL_NONE) snprintf(a, sizeof a, "%lld", (long long)c->after);
    else snprintf(a, sizeof a, c->has_after ? "unknown" : "none");
    if (c->by_id) fprintf(out, "%s #%zu = %s", i ? ";" : "", i, b);
    else fprintf(out, "%s #%zu = %s before, %s after%s", i ? ";" : "", i, b, a,
                 c->has_before && c->has_after ? " (paired by order of first use)" : "");
  }
  fputc('\n', out);
}

static const char *count_pair(double b, double a, char *buf, size_t len) {
  snprintf(buf, len, "%.4g -> %.4g", isnan(b) ? 0.0 : b, isnan(a) ? 0.0 : a);
  return buf;
}

static const char *ns_pair(const ovl_change *c, char *buf, size_t len) {
  char a[32], b[32];
  /* a side without the row measured nothing: "-" rather than its 0 */
  snprintf(buf, len, "%s -> %s", c->before.n ? ns(c->from, a) : "-", c->after.n ? ns(c->to, b) : "-");
  return buf;
}

static const char *bytes_pair(const ovl_change *c, char *buf, size_t len) {
  char a[32], b[32];
  if (isnan(c->from) && isnan(c->to)) return strcpy(buf, "?");
  snprintf(buf, len, "%s -> %s", isnan(c->from) ? "?" : ovl_format_bytes(c->from, a, sizeof a),
           isnan(c->to) ? "?" : ovl_format_bytes(c->to, b, sizeof b));
  return buf;
}

static void collectives(FILE *out, const ovl_diff *d, size_t max_rows) {
  size_t nsum = 0;
  while (nsum < d->ncolls && d->colls[nsum].index < 0) nsum++;
  if (d->ncolls == 0) return;
  fprintf(out, "\nCollectives per communicator and operation, per step (calls: mean; bytes, time, exposed: median;"
               " * beyond the spread)\n");
  comm_legend(out, d);
  fprintf(out, "  %-5s %-13s %-9s %-16s %-22s %-24s %s\n", "comm", "op", "status", "calls", "bytes", "time", "exposed");
  size_t shown = nsum < max_rows ? nsum : max_rows;
  for (size_t i = 0; i < shown; i++) {
    const ovl_coll_diff *c = &d->colls[i];
    char cm[64], calls[48], by[64], t[64], e[64];
    fprintf(out, "  %-5s %-13s %-9s %-16s %-22s %-24s %s %c\n", comm_text(c->comm, cm, sizeof cm), ovl_op_name(c->op),
            ovl_diff_status_name(c->status), count_pair(c->calls.from, c->calls.to, calls, sizeof calls),
            bytes_pair(&c->bytes, by, sizeof by),
            ns_pair(&c->duration, t, sizeof t), ns_pair(&c->exposed, e, sizeof e),
            c->calls.significant || c->duration.significant || c->exposed.significant ? '*' : ' ');
  }
  if (shown < nsum) fprintf(out, "  ... %zu more (use --all)\n", nsum - shown);

  size_t ncalls = d->ncolls - nsum, changed = 0;
  for (size_t i = nsum; i < d->ncolls; i++) changed += d->colls[i].status != OVL_DS_SAME;
  fprintf(out, "\nCollectives matched by communicator, operation and index in the step: %zu, %zu changed; most changed first\n",
          ncalls, changed);
  if (changed == 0) return;
  fprintf(out, "  %-5s %-13s %5s %-9s %-9s %-24s %-24s\n", "comm", "op", "index", "bucket", "status", "duration",
          "exposed");
  shown = 0;
  for (size_t i = nsum; i < d->ncolls && shown < max_rows; i++) {
    const ovl_coll_diff *c = &d->colls[i];
    if (c->status == OVL_DS_SAME) continue;
    shown++;
    char cm[64], bk[32], t[64], e[64];
    long bb = c->status == OVL_DS_NEW ? c->bucket_after : c->bucket_before;
    long ba = c->status == OVL_DS_VANISHED ? c->bucket_before : c->bucket_after;
    if (bb < 0 && ba < 0) snprintf(bk, sizeof bk, "-");
    else if (bb == ba) snprintf(bk, sizeof bk, "%ld", bb);
    else snprintf(bk, sizeof bk, "%ld->%ld", bb, ba);
    fprintf(out, "  %-5s %-13s %5ld %-9s %-9s %-24s %-24s\n", comm_text(c->comm, cm, sizeof cm), ovl_op_name(c->op),
            c->index, bk, ovl_diff_status_name(c->status), ns_pair(&c->duration, t, sizeof t),
            ns_pair(&c->exposed, e, sizeof e));
  }
  if (shown < changed) fprintf(out, "  ... %zu more (use --all)\n", changed - shown);
}

static void kernels(FILE *out, const ovl_diff *d, size_t max_rows) {
  if (!d->kernels_compared) {
    fprintf(out, "\nKernels: not compared (%s is a saved report, which holds no kernels: give its traces)\n",
            d->before->from_report ? "BEFORE" : "AFTER");
    return;
  }
  size_t counts[4] = {0};
  for (size_t i = 0; i < d->nkernels; i++) counts[d->kernels[i].status]++;
  fprintf(out, "\nKernels by name: %zu new, %zu vanished, %zu changed, %zu the same; time per step, most changed first\n",
          counts[OVL_DS_NEW], counts[OVL_DS_VANISHED], counts[OVL_DS_CHANGED], counts[OVL_DS_SAME]);
  size_t n = counts[OVL_DS_NEW] + counts[OVL_DS_VANISHED] + counts[OVL_DS_CHANGED];
  if (n == 0) return;
  fprintf(out, "  %-9s %-24s %12s %-16s %s\n", "status", "time per step", "change", "count per step", "name");
  size_t shown = 0;
  for (size_t i = 0; i < d->nkernels && shown < max_rows; i++) {
    const ovl_kernel_diff *k = &d->kernels[i];
    if (k->status == OVL_DS_SAME) continue;
    shown++;
    char t[64], c[40], cnt[48], name[104];
    ovl_text_clean_into(k->name, name, sizeof name);
    fprintf(out, "  %-9s %-24s %12s %-16s %s%s%s\n", ovl_diff_status_name(k->status), ns_pair(&k->time, t, sizeof t),
            signed_ns(k->time.delta, c), count_pair(k->count_before, k->count_after, cnt, sizeof cnt),
            k->comm ? "[comm] " : "", name, strlen(k->name) >= sizeof name - 1 ? "..." : "");
  }
  if (shown < n) fprintf(out, "  ... %zu more (use --all)\n", n - shown);
}

static const char *rank_text(const ovl_profile *p, long i, char *buf, size_t len) {
  if (i < 0) return strcpy(buf, "-");
  if (p->ranks[i].rank == OVL_NONE) snprintf(buf, len, "?");
  else snprintf(buf, len, "%lld", (long long)p->ranks[i].rank);
  return buf;
}

/* Ranks on one side only first, then the most changed in exposed and step time. */
static ovl_order_key rank_key(const ovl_rank_pair *p) {
  const ovl_change *e = &p->m.c[OVL_M_EXPOSED], *t = &p->m.c[OVL_M_STEP_TIME];
  ovl_order_key k = {p->before < 0 || p->after < 0 ? 2 : (e->significant || t->significant),
                     fabs(isnan(e->delta) ? 0 : e->delta) + fabs(isnan(t->delta) ? 0 : t->delta)};
  return k;
}

static void ranks(FILE *out, const ovl_diff *d, size_t max_rows) {
  if (d->nranks <= 1 && d->ranks_by_number) return;  /* one rank: the job's table said it all */
  fprintf(out, "\nRanks (%s), most changed first\n",
          d->ranks_by_number ? "paired by rank number" : "one with one: the runs have one rank each");
  fprintf(out, "  %-9s %-28s %-28s %s\n", "rank", "step time", "exposed", "efficiency");
  /* a bounded selection: the max_rows heaviest, in that order */
  size_t n = d->nranks, shown = n < max_rows ? n : max_rows;
  char *done = calloc(n ? n : 1, 1);
  if (!done) return;
  for (size_t k = 0; k < shown; k++) {
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
      if (!done[i] && (best == SIZE_MAX || ovl_order_key_cmp(rank_key(&d->ranks[i]), rank_key(&d->ranks[best])) < 0))
        best = i;
    done[best] = 1;
    const ovl_rank_pair *p = &d->ranks[best];
    char rb[24], ra[24], rk[56], t[64], e[64], f1[32], f2[32];
    snprintf(rk, sizeof rk, "%s", rank_text(d->before, p->before, rb, sizeof rb));
    if (!d->ranks_by_number || p->before < 0 || p->after < 0)
      snprintf(rk, sizeof rk, "%s -> %s", rank_text(d->before, p->before, rb, sizeof rb),
               rank_text(d->after, p->after, ra, sizeof ra));
    const ovl_metrics_diff *m = &p->m;
    fprintf(out, "  %-9s %-26s%c %-26s%c %s -> %s %c\n", rk, ns_pair(&m->c[OVL_M_STEP_TIME], t, sizeof t),
            mark(&m->c[OVL_M_STEP_TIME]), ns_pair(&m->c[OVL_M_EXPOSED], e, sizeof e), mark(&m->c[OVL_M_EXPOSED]),
            pct(m->c[OVL_M_EFFICIENCY].from, f1), pct(m->c[OVL_M_EFFICIENCY].to, f2), mark(&m->c[OVL_M_EFFICIENCY]));
  }
  if (shown < n) fprintf(out, "  ... %zu more (use --all)\n", n - shown);
  free(done);
}

void ovl_diff_text(FILE *out, const ovl_diff *d, size_t max_rows) {
  char b[700], a[700];
  fprintf(out, "BEFORE %s\nAFTER  %s\n", side_label(d->before, b, sizeof b), side_label(d->after, a, sizeof a));
  fprintf(out, "\nJob, per step: the median over steps of the mean over ranks; spread: interquartile range over "
               "steps; * a change beyond it\n");
  metric_rows(out, &d->job);
  recovered_line(out, &d->job);
  buckets(out, &d->buckets);
  findings(out, d, max_rows);
  collectives(out, d, max_rows);
  kernels(out, d, max_rows);
  ranks(out, d, max_rows);
}
