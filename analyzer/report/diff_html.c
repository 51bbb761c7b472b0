/* The comparison's section of the HTML page: see diff_html.h. */
#include "diff_html.h"

#include "html_out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BAR_WIDTH 520.0
#define BAR_LEFT 190.0
#define BAR_ROW 46.0

/* Two cells, the change's before and after values, at JSON paths prefix.before and prefix.after. */
static void before_after(FILE *out, ovl_html_kind kind, const ovl_change *c, const char *prefix) {
  fputs("<td>", out);
  ovl_html_dnum(out, kind, c->from, "%s.before", prefix);
  fputs("</td><td>", out);
  ovl_html_dnum(out, kind, c->to, "%s.after", prefix);
  fputs("</td>", out);
}

static void metrics_table(FILE *out, const ovl_diff *d) {
  fputs("<table><tr><th class=\"l\">per step (median over steps)</th><th>before</th><th>after</th><th>change</th>"
        "<th>spread before</th><th>spread after</th><th class=\"l\">beyond the spread</th></tr>\n",
        out);
  for (int m = 0; m < OVL_M_COUNT; m++) {
    const ovl_change *c = &d->job.c[m];
    const char *key = ovl_metric_name((ovl_metric)m);
    ovl_html_kind k = m == OVL_M_EFFICIENCY ? OVL_HN_PCT : OVL_HN_NS;
    fputs("<tr><td class=\"l\">", out);
    ovl_html_text(out, ovl_metric_title((ovl_metric)m));
    if (m == OVL_M_EFFICIENCY) fputs(" (whole run)", out);
    fputs("</td>", out);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "diff.job.%s", key);
    before_after(out, k, c, prefix);
    fputs("<td>", out);
    ovl_html_dnum(out, k, c->delta, "diff.job.%s.change", key);
    fputs("</td><td>", out);
    ovl_html_dnum(out, k, c->before.n ? c->before.spread : NAN, "diff.job.%s.before_spread", key);
    fputs("</td><td>", out);
    ovl_html_dnum(out, k, c->after.n ? c->after.spread : NAN, "diff.job.%s.after_spread", key);
    fprintf(out, "</td><td class=\"l\">%s</td></tr>\n", c->significant ? "<b class=\"bad\">yes</b>" : "no");
  }
  fputs("</table>\n", out);
}

/* Before and after as two bars per time metric, on one scale. */
static void bars(FILE *out, const ovl_diff *d) {
  double top = 0;
  for (int m = 0; m < OVL_M_EFFICIENCY; m++) {
    const ovl_change *c = &d->job.c[m];
    if (!isnan(c->from)) top = fmax(top, c->from);
    if (!isnan(c->to)) top = fmax(top, c->to);
  }
  if (top <= 0) return;
  double height = BAR_ROW * OVL_M_EFFICIENCY + 30;
  fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\">\n",
          BAR_LEFT + BAR_WIDTH + 140, height, BAR_LEFT + BAR_WIDTH + 140, height);
  for (int m = 0; m < OVL_M_EFFICIENCY; m++) {
    const ovl_change *c = &d->job.c[m];
    const char *key = ovl_metric_name((ovl_metric)m);
    double y = 10 + BAR_ROW * m;
    fprintf(out, "<text class=\"lbl\" x=\"4\" y=\"%.1f\">", y + 16);
    ovl_html_text(out, ovl_metric_title((ovl_metric)m));
    fputs("</text>\n", out);
    double wb = isnan(c->from) ? 0 : BAR_WIDTH * c->from / top, wa = isnan(c->to) ? 0 : BAR_WIDTH * c->to / top;
    fprintf(out, "<rect class=\"def\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"#bbb\"/>\n", BAR_LEFT,
            y, wb);
    ovl_html_svg_dnum(out, BAR_LEFT + wb + 6, y + 12, "val", OVL_HN_NS, c->from, "diff.job.%s.before", key);
    fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\"/>\n",
            c->significant && c->delta > 0 ? "barbad" : "bar", BAR_LEFT, y + 20, wa);
    ovl_html_svg_dnum(out, BAR_LEFT + wa + 6, y + 32, "val", OVL_HN_NS, c->to, "diff.job.%s.after", key);
  }
  fputs("</svg>\n<p class=\"legend\"><span class=\"sw\" style=\"background:#bbb\"></span>before"
        "<span class=\"sw bar\" style=\"background:#4e79a7\"></span>after "
        "<span class=\"sw\" style=\"background:#e15759\"></span>after, grown beyond the spread</p>\n",
        out);
}

static void recovered(FILE *out, const ovl_diff *d) {
  const ovl_change *e = &d->job.c[OVL_M_EXPOSED];
  if (e->significant && e->delta < 0) {
    fputs("<p><b>Exposed communication recovered:</b> ", out);
    ovl_html_dnum(out, OVL_HN_NS, -e->delta, "diff.job.exposed_recovered_per_step_ns");
    fputs(" per step; over the whole run ", out);
    ovl_html_inum(out, OVL_HN_NS, d->job.before.exposed_total, "diff.job.exposed_total_before_ns");
    fputs(" before, ", out);
    ovl_html_inum(out, OVL_HN_NS, d->job.after.exposed_total, "diff.job.exposed_total_after_ns");
    fputs(" after.</p>\n", out);
  } else if (e->significant) {
    fputs("<p><b class=\"bad\">Exposed communication grew</b> beyond the step-to-step spread.</p>\n", out);
  } else {
    fputs("<p>Exposed communication: no change beyond the step-to-step spread.</p>\n", out);
  }
}

static void order_list(FILE *out, const char *side, const char *which, const long *v, size_t n) {
  size_t shown = n < 32 ? n : 32;
  for (size_t i = 0; i < shown; i++) {
    if (i) fputc(' ', out);
    ovl_html_inum(out, OVL_HN_COUNT, v[i], "diff.bucket_order.%s.%s.%zu", side, which, i);
  }
  if (shown < n) fputs(" ...", out);
}

static void bucket_side(FILE *out, const char *label, const char *side, const ovl_bucket_side *s) {
  fprintf(out, "<li>%s: ", label);
  if (s->grad_steps == 0) {
    fputs("no gradient buckets found</li>\n", out);
    return;
  }
  fputs("misordered in ", out);
  ovl_html_inum(out, OVL_HN_COUNT, s->misordered_steps, "diff.bucket_order.%s.misordered_steps", side);
  fputs(" of ", out);
  ovl_html_inum(out, OVL_HN_COUNT, s->grad_steps, "diff.bucket_order.%s.steps_with_gradients", side);
  fputs(" steps; fired ", out);
  order_list(out, side, "fired", s->fired, s->nfired);
  if (s->nready) {
    fputs("; ready ", out);
    order_list(out, side, "ready", s->ready, s->nready);
  }
  fputs("</li>\n", out);
}

static void bucket_order(FILE *out, const ovl_diff *d) {
  const ovl_bucket_diff *b = &d->buckets;
  if (b->before.grad_steps == 0 && b->after.grad_steps == 0) return;
  fprintf(out, "<h3>Bucket order: %s</h3>\n<ul>\n", b->order_changed ? "changed" : "unchanged");
  bucket_side(out, "before", "before", &b->before);
  bucket_side(out, "after", "after", &b->after);
  fputs("</ul>\n", out);
}

static const char *finding_status(ovl_diff_status s) {
  return s == OVL_DS_NEW ? "appeared" : s == OVL_DS_VANISHED ? "disappeared" : s == OVL_DS_CHANGED ? "changed" : "persists";
}

static void findings(FILE *out, const ovl_diff *d) {
  fputs("<h3>Findings</h3>\n", out);
  if (d->nfindings == 0) {
    fputs("<p>None before or after.</p>\n", out);
    return;
  }
  fputs("<table><tr><th class=\"l\">finding</th><th class=\"l\">status</th><th>recoverable before</th>"
        "<th>recoverable after</th><th class=\"l\">confidence</th></tr>\n",
        out);
  for (size_t i = 0; i < d->nfindings && i < OVL_DIFF_HTML_ROWS; i++) {
    const ovl_finding_diff *f = &d->findings[i];
    fputs("<tr><td class=\"l code\">", out);
    ovl_html_text(out, f->code);
    fprintf(out, "</td><td class=\"l%s\">%s</td><td>", f->status == OVL_DS_NEW ? " bad" : "", finding_status(f->status));
    if (f->before.message) ovl_html_inum(out, OVL_HN_NS, f->before.recoverable, "diff.findings.%zu.before.recoverable_ns", i);
    else fputs("-", out);
    fputs("</td><td>", out);
    if (f->after.message) ovl_html_inum(out, OVL_HN_NS, f->after.recoverable, "diff.findings.%zu.after.recoverable_ns", i);
    else fputs("-", out);
    const ovl_finding_side *latest = f->after.message ? &f->after : &f->before;
    fputs("</td><td class=\"l\">", out);
    ovl_html_text(out, latest->confidence[0] ? latest->confidence : "-");
    fputs("</td></tr>\n", out);
  }
  fputs("</table>\n", out);
}

static void collectives(FILE *out, const ovl_diff *d) {
  size_t nsum = 0;
  while (nsum < d->ncolls && d->colls[nsum].index < 0) nsum++;
  if (nsum == 0) return;
  fputs("<h3>Collectives per communicator and operation, per step</h3>\n<table><tr><th class=\"l\">op</th>"
        "<th>calls before</th><th>calls after</th><th>time before</th><th>time after</th><th>exposed before</th>"
        "<th>exposed after</th></tr>\n",
        out);
  for (size_t i = 0; i < nsum && i < OVL_DIFF_HTML_ROWS; i++) {
    const ovl_coll_diff *c = &d->colls[i];
    fputs("<tr><td class=\"l\">", out);
    ovl_html_text(out, ovl_op_name(c->op));
    fputs("</td>", out);
    char prefix[96];
    snprintf(prefix, sizeof prefix, "diff.collectives.%zu.calls_per_step", i);
    before_after(out, OVL_HN_COUNT, &c->calls, prefix);
    snprintf(prefix, sizeof prefix, "diff.collectives.%zu.time_per_step_ns", i);
    before_after(out, OVL_HN_NS, &c->duration, prefix);
    snprintf(prefix, sizeof prefix, "diff.collectives.%zu.exposed_per_step_ns", i);
    before_after(out, OVL_HN_NS, &c->exposed, prefix);
    fputs("</tr>\n", out);
  }
  fputs("</table>\n", out);
}

static void kernels(FILE *out, const ovl_diff *d) {
  if (!d->kernels_compared) {
    fputs("<p>Kernels: not compared (a saved report holds no kernels).</p>\n", out);
    return;
  }
  fputs("<h3>Kernels, most changed first (time per step)</h3>\n<table><tr><th class=\"l\">status</th>"
        "<th>before</th><th>after</th><th class=\"l\">name</th></tr>\n",
        out);
  size_t shown = 0;
  for (size_t i = 0; i < d->nkernels && shown < OVL_DIFF_HTML_ROWS; i++) {
    const ovl_kernel_diff *k = &d->kernels[i];
    if (k->status == OVL_DS_SAME) continue;
    shown++;
    fprintf(out, "<tr><td class=\"l\">%s</td>", ovl_diff_status_name(k->status));
    char prefix[96];
    snprintf(prefix, sizeof prefix, "diff.kernels.%zu.time_per_step_ns", i);
    before_after(out, OVL_HN_NS, &k->time, prefix);
    fprintf(out, "<td class=\"l\" data-j=\"diff.kernels.%zu.name\" data-k=\"text\">", i);
    ovl_html_text(out, k->name);
    fputs("</td></tr>\n", out);
  }
  if (shown == 0) fputs("<tr><td class=\"l\" colspan=\"4\">no kernel changed beyond the spread</td></tr>\n", out);
  fputs("</table>\n", out);
}

void ovl_diff_html_section(FILE *out, const void *ctx) {
  const ovl_diff *d = ctx;
  fputs("<p>Before: <span class=\"path\">", out);
  ovl_html_text(out, d->before->label);
  fputs("</span>; after: <span class=\"path\">", out);
  ovl_html_text(out, d->after->label);
  fputs("</span>. Each value is the median over steps; a change counts only beyond the step-to-step spread "
        "(interquartile range).</p>\n",
        out);
  metrics_table(out, d);
  bars(out, d);
  recovered(out, d);
  bucket_order(out, d);
  findings(out, d);
  collectives(out, d);
  kernels(out, d);
}
