/* The pictures of the HTML report: see html_charts.h. */
#include "html_charts.h"

#include "base/i64map.h"
#include "base/none.h"
#include "html_out.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LEFT 175.0
#define PLOT (OVL_HTML_WIDTH - LEFT - 30.0)
#define MAX_MARK_ROWS 32
#define MAX_ORDER_ROWS 64

static const char *const class_fill[] = {"#4e79a7", "#f28e2b", "#9c9c9c"};

static void svg_open(FILE *out, double h, const char *label) {
  fprintf(out, "<svg class=\"chart\" viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" role=\"img\" aria-label=\"",
          OVL_HTML_WIDTH, h, OVL_HTML_WIDTH, h);
  ovl_html_text(out, label);
  fputs("\">\n", out);
}

static void label(FILE *out, double x, double y, const char *anchor, const char *cls, const char *text) {
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
  ovl_html_text(out, text);
  fputs("</text>\n", out);
}

/* An axis' name written upwards beside it, centred on y. */
static void vlabel(FILE *out, double x, double y, const char *text) {
  fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"lbl\" transform=\"rotate(-90 %.1f %.1f)\">", x,
          y, x, y);
  ovl_html_text(out, text);
  fputs("</text>\n", out);
}

/* A tick's time in the unit of the ticks' spacing, without useless decimals: "20 ms", "2.5 us". */
static const char *tick_time(double ns, double step, char *buf, size_t len) {
  double unit = step >= 1e9 ? 1e9 : step >= 1e6 ? 1e6 : step >= 1e3 ? 1e3 : 1;
  const char *name = unit == 1e9 ? "s" : unit == 1e6 ? "ms" : unit == 1e3 ? "us" : "ns";
  snprintf(buf, len, "%.6g %s", ns / unit, name);
  return buf;
}

/* Grid lines and ticks at 0, 25, 50, 75 and 100% of a plot ph high whose top is at top. */
static void percent_axis(FILE *out, double top, double ph) {
  for (int i = 0; i <= 4; i++) {
    double y = top + ph - ph * i / 4;
    char t[16];
    snprintf(t, sizeof t, "%d%%", i * 25);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n", LEFT, y, LEFT + PLOT, y);
    label(out, LEFT - 6, y + 4, "end", "tick", t);
  }
}

/* A tick spacing of 1, 2 or 5 times a power of ten giving about `want` ticks over span (ticks
** at 3.69 ms say nothing; at 5 ms they do). */
static double nice_step(double span, int want) {
  if (!(span > 0)) return 1;
  double raw = span / want, p = pow(10, floor(log10(raw))), f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* ------------------------------------------------------------------------------------ */
/* Section 2: the timeline                                                               */
/* ------------------------------------------------------------------------------------ */

typedef struct tscale {
  int64_t t0, dur;
} tscale;

static double tx(const tscale *s, int64_t t) {
  double f = s->dur > 0 ? (double)(t - s->t0) / (double)s->dur : 0;
  if (f < 0) f = 0;
  if (f > 1) f = 1;
  return LEFT + f * PLOT;
}

static const char *lane_role(const ovl_step_lane *l) {
  if (l->busy[OVL_CLASS_COMM] >= l->busy[OVL_CLASS_COMPUTE] && l->busy[OVL_CLASS_COMM] >= l->busy[OVL_CLASS_MEMORY])
    return "communication";
  return l->busy[OVL_CLASS_COMPUTE] >= l->busy[OVL_CLASS_MEMORY] ? "compute" : "memory";
}

/* Ticks at round times from the step's start (0, 5 ms, 10 ms, ...). */
static void time_axis(FILE *out, const tscale *s, double y, double bottom) {
  double step = nice_step((double)s->dur, 6);
  for (int i = 0; i <= 20 && step * i <= (double)s->dur * (1 + 1e-9); i++) {
    double x = tx(s, s->t0 + (int64_t)llround(step * i));
    char buf[48];
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n", x, y + 4, x, bottom);
    label(out, x, y, i == 0 ? "start" : x > LEFT + PLOT - 30 ? "end" : "middle", "tick",
          tick_time(step * i, step, buf, sizeof buf));
  }
}

/* One collective's row: GPU time as a bar, readiness and launch as marks, the stall between. */
static void mark_row(FILE *out, const tscale *s, const ovl_coll_result *c, double y, double h) {
  char name[64], a[32], b[32], d[32], e[32], f[32];
  if (c->bucket >= 0) snprintf(name, sizeof name, "#%d bucket %ld", c->order, (long)c->bucket);
  else snprintf(name, sizeof name, "#%d %s", c->order, ovl_op_name(c->op));
  label(out, LEFT - 6, y + h - 2, "end", "lbl", name);
  int64_t ready = ovl_coll_ready(c), launch = ovl_coll_host_launch(c), end = ovl_coll_gpu_end(c);
  fprintf(out, "<g><title>");
  ovl_html_text(out, name);
  fprintf(out, ": ready %s, launch %s, GPU start %s, end %s, exposed %s</title>\n",
          ready != OVL_NONE ? ovl_html_format(OVL_HN_NS, (double)(ready - s->t0), a, sizeof a) : "-",
          launch != OVL_NONE ? ovl_html_format(OVL_HN_NS, (double)(launch - s->t0), b, sizeof b) : "-",
          ovl_html_format(OVL_HN_NS, (double)(c->gpu_start - s->t0), d, sizeof d),
          ovl_html_format(OVL_HN_NS, (double)(end - s->t0), e, sizeof e),
          ovl_html_format(OVL_HN_NS, (double)ovl_coll_exposed(c), f, sizeof f));
  double mid = y + h / 2;
  if (ready != OVL_NONE && launch != OVL_NONE)
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"stall\"/>\n", tx(s, ready), mid,
            tx(s, launch), mid);
  if (launch != OVL_NONE && c->gpu_start != OVL_NONE)
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"queue\"/>\n", tx(s, launch),
            mid, tx(s, c->gpu_start), mid);
  double x0 = tx(s, c->gpu_start), x1 = tx(s, end);
  fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"%s\"/>\n", x0, y + 1,
          x1 - x0 > 1 ? x1 - x0 : 1, h - 2, ovl_coll_exposed(c) > 0 ? "collx" : "coll");
  if (ready != OVL_NONE)
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" class=\"ready\"/>\n", tx(s, ready), mid);
  if (launch != OVL_NONE) {
    double x = tx(s, launch);
    fprintf(out, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" class=\"launch\"/>\n", x - 3.5, y + 1, x + 3.5, y + 1, x,
            y + h - 1);
  }
  fputs("</g>\n", out);
}

void ovl_html_timeline(FILE *out, const ovl_rank_result *r, size_t ri, size_t si, const ovl_step_work *w) {
  const ovl_step_result *st = &r->steps[si];
  const char *jp = "ranks.%zu.steps.%zu.%s";
  fprintf(out, "<p>Rank ");
  ovl_html_inum(out, OVL_HN_COUNT, r->rank, "ranks.%zu.rank", ri);
  fprintf(out, ", step ");
  ovl_html_inum(out, OVL_HN_COUNT, st->index, jp, ri, si, "index");
  fprintf(out, ": duration ");
  ovl_html_inum(out, OVL_HN_NS, st->end - st->start, "ranks.%zu.steps.%zu.end_ns-ranks.%zu.steps.%zu.start_ns", ri, si,
                ri, si);
  fprintf(out, ", compute ");
  ovl_html_inum(out, OVL_HN_NS, st->totals.compute, jp, ri, si, "t_compute_ns");
  fprintf(out, ", communication ");
  ovl_html_inum(out, OVL_HN_NS, st->totals.comm, jp, ri, si, "t_comm_ns");
  fprintf(out, ", <b class=\"bad\">exposed ");
  ovl_html_inum(out, OVL_HN_NS, st->totals.exposed, jp, ri, si, "t_exposed_ns");
  fprintf(out, "</b>, overlap efficiency ");
  ovl_html_dnum(out, OVL_HN_PCT, ovl_overlap_efficiency(&st->totals), jp, ri, si, "overlap_efficiency");
  if (st->backward_end != OVL_NONE) {
    fprintf(out, "; backward ends at ");
    ovl_html_inum(out, OVL_HN_NS, st->backward_end - st->start,
                  "ranks.%zu.steps.%zu.backward_end_ns-ranks.%zu.steps.%zu.start_ns", ri, si, ri, si);
  }
  fprintf(out, ".</p>\n");

  tscale s = {st->start, st->end - st->start};
  size_t nmarks = st->ncolls < MAX_MARK_ROWS ? st->ncolls : MAX_MARK_ROWS;
  const double lane_h = 22, exp_h = 14, mark_h = 12, top = 22;
  double lanes_bottom = top + lane_h * (double)w->nlanes;
  double marks_top = lanes_bottom + exp_h + 10;
  double h = marks_top + mark_h * (double)nmarks + 8;
  svg_open(out, h, "timeline of a step");
  time_axis(out, &s, 14, h - 4);
  for (size_t i = 0; i < w->nlanes; i++) {
    const ovl_step_lane *l = &w->lanes[i];
    double y = top + lane_h * (double)i;
    char name[64];
    snprintf(name, sizeof name, "stream %lld (%s)", (long long)l->stream, lane_role(l));
    label(out, LEFT - 6, y + lane_h - 7, "end", "lbl", name);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"lane\"/>\n", LEFT, y + 2, PLOT,
            lane_h - 4);
    for (size_t k = 0; k < l->n; k++) {
      double x0 = tx(&s, l->boxes[k].start), x1 = tx(&s, l->boxes[k].end);
      fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n", x0, y + 3,
              x1 - x0 > 0.5 ? x1 - x0 : 0.5, lane_h - 6, class_fill[l->boxes[k].cls]);
    }
  }
  label(out, LEFT - 6, lanes_bottom + exp_h - 3, "end", "lbl", "exposed communication");
  for (size_t k = 0; k < w->nexposed; k++) {
    double x0 = tx(&s, w->exposed[k].start), x1 = tx(&s, w->exposed[k].end), wd = x1 - x0 > 0.5 ? x1 - x0 : 0.5;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" class=\"shade\"/>\n", x0, top, wd,
            lanes_bottom - top);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" class=\"exposed\"/>\n", x0,
            lanes_bottom + 2, wd, exp_h - 4);
  }
  for (size_t i = 0; i < nmarks; i++) mark_row(out, &s, &st->colls[i], marks_top + mark_h * (double)i, mark_h);
  if (st->backward_end != OVL_NONE) {
    double x = tx(&s, st->backward_end);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"bwd\"/>\n", x, top, x, h - 4);
    /* the label on the side of the line with room for it: never cut by the picture's edge */
    int right = x + 90 <= OVL_HTML_WIDTH;
    label(out, right ? x + 4 : x - 4, top + 10, right ? "start" : "end", "bwdl", "backward end");
  }
  fputs("</svg>\n", out);
  fprintf(out, "<p class=\"legend\"><i class=\"sw\" style=\"background:%s\"></i>compute "
               "<i class=\"sw\" style=\"background:%s\"></i>communication "
               "<i class=\"sw\" style=\"background:%s\"></i>memory "
               "<i class=\"sw shadei\"></i>exposed communication (no compute running) &nbsp; per collective: "
               "<b class=\"readyc\">&#9679;</b> bucket ready, <b class=\"launchc\">&#9660;</b> launched, bar: GPU "
               "start to end (red: partly exposed); dotted: readiness stall, thin: queueing. Times from the step's "
               "start.",
          class_fill[0], class_fill[1], class_fill[2]);
  if (st->ncolls > nmarks) {
    fprintf(out, " The first %zu of ", nmarks);
    ovl_html_inum(out, OVL_HN_COUNT, (int64_t)st->ncolls, "ranks.%zu.steps.%zu.collectives.length", ri, si);
    fputs(" collectives are shown.", out);
  }
  fputs("</p>\n", out);
}

/* ------------------------------------------------------------------------------------ */
/* Section 3: firing order                                                               */
/* ------------------------------------------------------------------------------------ */

void ovl_html_order(FILE *out, const ovl_rank_result *r, size_t ri, size_t si) {
  const ovl_step_result *st = &r->steps[si];
  size_t idx[MAX_ORDER_ROWS], n = 0;
  int known = 0;
  int64_t max_stall = 1;
  for (size_t i = 0; i < st->ncolls && n < MAX_ORDER_ROWS; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->diag.role != OVL_ROLE_GRADIENT) continue;
    idx[n++] = i;
    known |= c->diag.ready_order >= 0;
    int64_t stall = ovl_coll_stall(c);
    if (stall != OVL_NONE && stall > max_stall) max_stall = stall;
  }
  if (n == 0) {
    fputs("<p>This step has no gradient collective: no bucket order to show.</p>\n", out);
    return;
  }
  fprintf(out, "<p>Step ");
  ovl_html_inum(out, OVL_HN_COUNT, st->index, "ranks.%zu.steps.%zu.index", ri, si);
  fprintf(out, " of rank ");
  ovl_html_inum(out, OVL_HN_COUNT, r->rank, "ranks.%zu.rank", ri);
  fprintf(out, ": %s</p>\n",
          !known ? "the trace does not say when buckets became ready (no grad_ready marks): observed order only."
          : st->misordered ? "<b class=\"bad\">misordered</b>: buckets fired in an order other than the one "
                             "readiness gives (crossing lines), so ready buckets waited."
                           : "buckets fired in readiness order.");
  const double row = n > 30 ? 560.0 / (double)n : 18.0, top = 36;
  const double xo = 260, xe = 520, xb = 640, bw = OVL_HTML_WIDTH - xb - 120;
  double h = top + row * (double)n + 12;
  svg_open(out, h, "bucket firing order, expected and observed, and readiness stall");
  label(out, xo, 16, "middle", "hd", "observed (firing) order");
  label(out, xe, 16, "middle", "hd", "expected (readiness) order");
  label(out, xb, 16, "start", "hd", "readiness stall: launch - ready");
  for (size_t p = 0; p < n; p++) {
    const ovl_coll_result *c = &st->colls[idx[p]];
    double yo = top + row * ((double)p + 0.5);
    char name[48];
    if (c->bucket >= 0) snprintf(name, sizeof name, "bucket %ld", (long)c->bucket);
    else snprintf(name, sizeof name, "#%d", c->order);
    label(out, xo - 10, yo + 4, "end", "lbl", name);
    if (c->diag.ready_order >= 0) {
      double ye = top + row * ((double)c->diag.ready_order + 0.5);
      fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"%s\"/>\n", xo, yo, xe, ye,
              (size_t)c->diag.ready_order == p ? "ordok" : "ordbad");
      fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" class=\"ready\"/>\n", xe, ye);
      label(out, xe + 10, ye + 4, "start", "lbl", name);
    }
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" class=\"launch\"/>\n", xo, yo);
    int64_t stall = ovl_coll_stall(c);
    if (stall != OVL_NONE) {
      double len = stall > 0 ? bw * (double)stall / (double)max_stall : 0;
      fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"stallbar\"/>\n", xb,
              yo - row * 0.35, len > 1 ? len : 1, row * 0.7);
      ovl_html_svg_inum(out, xb + len + 6, yo + 4, "val", OVL_HN_NS, stall,
                        "ranks.%zu.steps.%zu.collectives.%zu.readiness_stall_ns", ri, si, idx[p]);
    }
  }
  fputs("</svg>\n", out);
}

/* ------------------------------------------------------------------------------------ */
/* Section 4: the bucket-size valley                                                     */
/* ------------------------------------------------------------------------------------ */

#define MIB 1048576.0
#define VALLEY_MIN_MIB 1.0
#define VALLEY_MAX_MIB 2048.0

static double vx(double mib) {
  double f = log2(mib / VALLEY_MIN_MIB) / log2(VALLEY_MAX_MIB / VALLEY_MIN_MIB);
  if (f < 0) f = 0;
  if (f > 1) f = 1;
  return LEFT + f * PLOT;
}

void ovl_html_valley(FILE *out, const ovl_whatif_result *w, double current_cap, const char *cap_path) {
  double lo = w->model_step_ns, hi = w->model_step_ns;
  for (size_t i = 0; i < w->ncands; i++) {
    if (w->cands[i].step_ns < lo) lo = w->cands[i].step_ns;
    if (w->cands[i].step_ns > hi) hi = w->cands[i].step_ns;
  }
  double pad = (hi - lo) * 0.08 + 1;
  lo -= pad;
  hi += pad;
  const double top = 20, ph = 300, h = top + ph + 40;
#define VY(v) (top + ph - ((v) - lo) / (hi - lo) * ph)
  const ovl_whatif_candidate *best = w->ncands ? &w->cands[w->best] : NULL;
  fprintf(out, "<p>Predicted step time per bucket cap (whatif's replay of every steady-state step with the "
               "trace's readiness and a%s collective cost). Best: <b>",
          w->alpha_given || w->beta_given ? " given"
          : w->alpha_assumed              ? "n assumed (alpha unknown: the collectives are all about one size; taken as 0)"
                                          : " fitted");
  if (best) {
    ovl_html_dnum(out, OVL_HN_MIB, best->cap_bytes / MIB, "whatif.best.bucket_mb");
    fprintf(out, "</b>, ");
    ovl_html_dnum(out, OVL_HN_NS, best->step_ns, "whatif.best.step_ns");
    fprintf(out, " per step against ");
    ovl_html_dnum(out, OVL_HN_NS, w->model_step_ns, "whatif.model_current.step_ns");
    fprintf(out, " for the trace's own buckets replayed by the same model (gain ");
    ovl_html_dnum(out, OVL_HN_NS, w->gain_ns, "whatif.best.gain_ns");
    fprintf(out, "%s)", w->gain_ns > 0 ? "" : ": no size beats the trace");
    if (w->fit_weak) fprintf(out, "; the fitted cost explains little of the collectives' time: predictions are rough");
  }
  if (current_cap > 0) {
    fprintf(out, ". The trace's largest gradient bucket: ");
    ovl_html_inum(out, OVL_HN_BYTES, (int64_t)current_cap, "%s", cap_path);
  }
  fputs(".</p>\n", out);
  svg_open(out, h, "predicted step time against bucket cap");
  for (double m = VALLEY_MIN_MIB; m <= VALLEY_MAX_MIB; m *= 4) {
    char t[32];
    snprintf(t, sizeof t, m >= 1024 ? "%.0f GiB" : "%.0f MiB", m >= 1024 ? m / 1024 : m);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n", vx(m), top, vx(m), top + ph);
    label(out, vx(m), top + ph + 16, "middle", "tick", t);
  }
  double tstep = nice_step(hi - lo, 5);
  for (double v = ceil(lo / tstep) * tstep; v <= hi; v += tstep) {
    char t[32];
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n", LEFT, VY(v), LEFT + PLOT,
            VY(v));
    label(out, LEFT - 6, VY(v) + 4, "end", "tick", tick_time(v, tstep, t, sizeof t));
  }
  label(out, LEFT + PLOT / 2, h - 4, "middle", "lbl", "bucket cap (log scale)");
  vlabel(out, LEFT - 90, top + ph / 2, "step time");
  /* What the lines are is said in the legend below, never written across the curve. */
  double yc = VY(w->model_step_ns);
  fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"cur\"/>\n", LEFT, yc, LEFT + PLOT, yc);
  fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"def\"/>\n", vx(25), top, vx(25), top + ph);
  if (current_cap > 0) {
    double x = vx(current_cap / MIB);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"capl\"/>\n", x, top, x, top + ph);
  }
  fputs("<polyline class=\"valley\" points=\"", out);
  for (size_t i = 0; i < w->ncands; i++)
    fprintf(out, "%.1f,%.1f ", vx(w->cands[i].cap_bytes / MIB), VY(w->cands[i].step_ns));
  fputs("\"/>\n", out);
  for (size_t i = 0; i < w->ncands; i++) {
    char a[32], b[32];
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" class=\"%s\"><title>%g MiB: %s per step, exposed %s</title>"
                 "</circle>\n",
            vx(w->cands[i].cap_bytes / MIB), VY(w->cands[i].step_ns), i == w->best ? "6" : "3",
            i == w->best ? "best" : "pt", w->cands[i].cap_bytes / MIB,
            ovl_html_format(OVL_HN_NS, w->cands[i].step_ns, a, sizeof a),
            ovl_html_format(OVL_HN_NS, w->cands[i].exposed_ns, b, sizeof b));
  }
#undef VY
  fputs("</svg>\n<p class=\"legend\"><i class=\"sw\" style=\"background:#4e79a7\"></i>predicted step time per "
        "bucket cap <i class=\"sw\" style=\"background:#59a14f\"></i>the best cap <i class=\"sw lk cur\"></i>the "
        "trace's own buckets, replayed by the same model <i class=\"sw lk def\"></i>DDP's default cap (<span class=\"lbl\">25 MiB</span>)", out);
  if (current_cap > 0) fputs(" <i class=\"sw lk capl\"></i>the trace's largest bucket", out);
  fputs("</p>\n<details><summary>every prediction</summary><table><tr><th>bucket cap</th><th>step</th>"
        "<th>exposed</th></tr>\n",
        out);
  for (size_t i = 0; i < w->ncands; i++) {
    fputs("<tr><td>", out);
    ovl_html_dnum(out, OVL_HN_MIB, w->cands[i].cap_bytes / MIB, "whatif.candidates.%zu.bucket_mb", i);
    fputs("</td><td>", out);
    ovl_html_dnum(out, OVL_HN_NS, w->cands[i].step_ns, "whatif.candidates.%zu.step_ns", i);
    fputs("</td><td>", out);
    ovl_html_dnum(out, OVL_HN_NS, w->cands[i].exposed_ns, "whatif.candidates.%zu.t_exposed_ns", i);
    fputs("</td></tr>\n", out);
  }
  fputs("</table></details>\n", out);
}

/* ------------------------------------------------------------------------------------ */
/* Section 5: the job                                                                    */
/* ------------------------------------------------------------------------------------ */

#define HEAT_ROWS 64
#define HEAT_COLS 96
#define BAR_RANKS 128

static const char *heat_color(double f, char *buf) {
  if (f < 0) f = 0;
  if (f > 1) f = 1;
  /* light (#f7fbff) to dark blue (#08306b) */
  snprintf(buf, 16, "#%02x%02x%02x", (int)(247 + (8 - 247) * f), (int)(251 + (48 - 251) * f), (int)(255 + (107 - 255) * f));
  return buf;
}

/* Matched collectives of the job's first member define the columns, by (comm, seq). */
static int64_t coll_key(const ovl_coll_result *c) {
  return (int64_t)(((uint64_t)c->comm * 0x9E3779B97F4A7C15ull) ^ (uint64_t)ovl_coll_seq(c)) & INT64_MAX;
}

static void heat_map(FILE *out, const ovl_job *job) {
  const ovl_job_cross *jc = &job->cross;
  const ovl_rank_result *r0 = &job->ranks[jc->members[0]];
  ovl_i64map cols = {0};
  size_t ncols = 0;
  for (size_t s = 0; s < r0->nsteps; s++)
    for (size_t i = 0; i < r0->steps[s].ncolls; i++) {
      const ovl_coll_result *c = &r0->steps[s].colls[i];
      if (c->cross && ovl_i64map_put(&cols, coll_key(c), (int64_t)ncols++)) goto done;
    }
  if (ncols == 0) {
    fputs("<p>No collective was matched on every rank within steps: no arrival map.</p>\n", out);
    goto done;
  }
  size_t nrows = jc->nmembers < HEAT_ROWS ? jc->nmembers : HEAT_ROWS;
  size_t ncb = ncols < HEAT_COLS ? ncols : HEAT_COLS;
  double *sum = calloc(nrows * ncb, sizeof *sum);
  long *cnt = calloc(nrows * ncb, sizeof *cnt);
  if (!sum || !cnt) {
    free(sum);
    free(cnt);
    goto done;
  }
  double vmax = 0;
  for (size_t m = 0; m < jc->nmembers; m++) {
    const ovl_rank_result *r = &job->ranks[jc->members[m]];
    size_t row = m * nrows / jc->nmembers;
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].ncolls; i++) {
        const ovl_coll_result *c = &r->steps[s].colls[i];
        int64_t col;
        if (!c->cross || !ovl_i64map_get(&cols, coll_key(c), &col)) continue;
        size_t k = row * ncb + (size_t)col * ncb / ncols;
        sum[k] += (double)c->cross->wait_ns;
        cnt[k]++;
      }
  }
  for (size_t k = 0; k < nrows * ncb; k++)
    if (cnt[k] && sum[k] / (double)cnt[k] > vmax) vmax = sum[k] / (double)cnt[k];
  const double top = 24, cw = PLOT / (double)ncb, ch = nrows > 32 ? 6 : 14, h = top + ch * (double)nrows + 30;
  fprintf(out, "<p>Time each rank waited in each collective for its last peer (the collective's arrival skew as this "
               "rank saw it): darker = waited longer; a light row is a rank the others wait for. Columns: the "
               "collectives matched on every rank within steps, in order%s; rows: %s.</p>\n",
          ncols > ncb ? ", averaged in groups" : "", nrows < jc->nmembers ? "ranks averaged in groups" : "ranks");
  svg_open(out, h, "arrival skew heat map, rank by collective");
  label(out, LEFT, 16, "start", "hd", "collectives in order");
  vlabel(out, LEFT - 90, top + ch * (double)nrows / 2, "rank");
  /* the colour scale: no wait to the longest mean wait of a cell */
  const double lx = LEFT + PLOT - 240, lw = 160;
  for (int i = 0; i < 16; i++) {
    char color[16];
    fprintf(out, "<rect x=\"%.1f\" y=\"6\" width=\"%.2f\" height=\"10\" fill=\"%s\"/>\n", lx + lw * i / 16, lw / 16 + 0.3,
            heat_color(i / 15.0, color));
  }
  char vmax_text[32];
  label(out, lx - 4, 15, "end", "tick", "no wait");
  label(out, lx + lw + 4, 15, "start", "tick", ovl_html_format(OVL_HN_NS, vmax, vmax_text, sizeof vmax_text));
  for (size_t row = 0; row < nrows; row++) {
    size_t m0 = (row * jc->nmembers + nrows - 1) / nrows, m1 = ((row + 1) * jc->nmembers + nrows - 1) / nrows - 1;
    const ovl_rank_result *a = &job->ranks[jc->members[m0]], *b = &job->ranks[jc->members[m1]];
    char name[64];
    if (m0 == m1) snprintf(name, sizeof name, "rank %lld%s", (long long)a->rank, a->cross.straggler ? " (straggler)" : "");
    else snprintf(name, sizeof name, "ranks %lld-%lld", (long long)a->rank, (long long)b->rank);
    if (nrows <= 32 || row % 8 == 0) label(out, LEFT - 6, top + ch * (double)row + ch - 2, "end", "lbl", name);
    for (size_t col = 0; col < ncb; col++) {
      size_t k = row * ncb + col;
      if (!cnt[k]) continue;
      char color[16];
      fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n", LEFT + cw * (double)col,
              top + ch * (double)row, cw + 0.3, ch, heat_color(vmax > 0 ? sum[k] / (double)cnt[k] / vmax : 0, color));
    }
  }
  fputs("</svg>\n", out);
  free(sum);
  free(cnt);
done:
  ovl_i64map_free(&cols);
}

/* "rank 7, last at 5 of 8 collectives, the others waited 35.56 ms for it" for ranks[ri], the rank
** in bold red when it is a straggler. */
static void rank_lateness(FILE *out, const ovl_job *job, size_t ri, int straggler) {
  const ovl_rank_result *r = &job->ranks[ri];
  fputs(straggler ? "<b class=\"bad\">rank " : "rank ", out);
  ovl_html_inum(out, OVL_HN_COUNT, r->rank, "ranks.%zu.rank", ri);
  fprintf(out, "%s, last at ", straggler ? "</b>" : "");
  ovl_html_inum(out, OVL_HN_COUNT, r->cross.times_last, "ranks.%zu.cross_rank.times_last", ri);
  fprintf(out, " of ");
  ovl_html_inum(out, OVL_HN_COUNT, r->cross.decisive, "ranks.%zu.cross_rank.decisive_arrivals", ri);
  fprintf(out, " collectives, the others waited ");
  ovl_html_inum(out, OVL_HN_NS, r->cross.wait_caused_ns, "ranks.%zu.cross_rank.wait_caused_ns", ri);
  fprintf(out, " for it");
}

void ovl_html_job(FILE *out, const ovl_job *job) {
  const ovl_job_cross *jc = &job->cross;
  fputs("<p>", out);
  ovl_html_inum(out, OVL_HN_COUNT, (int64_t)jc->nmembers, "cross_rank.ranks.length");
  fputs(" ranks, ", out);
  ovl_html_inum(out, OVL_HN_COUNT, (int64_t)jc->matched, "cross_rank.collectives_matched");
  fprintf(out, " collectives matched on every rank. Overlap efficiency of the job: ");
  ovl_html_dnum(out, OVL_HN_PCT, jc->t_comm > 0 ? 1.0 - (double)jc->t_exposed / (double)jc->t_comm : NAN,
                "cross_rank.overlap_efficiency");
  fprintf(out, " of all communication, ");
  ovl_html_dnum(out, OVL_HN_PCT,
                jc->t_transfer > 0 ? 1.0 - (double)jc->t_exposed_transfer / (double)jc->t_transfer : NAN,
                "cross_rank.overlap_efficiency_transfer");
  fprintf(out, " of transfer time only (waiting for peers: ");
  ovl_html_inum(out, OVL_HN_NS, jc->t_wait, "cross_rank.t_wait_ns");
  fprintf(out, "). Arrival skew ");
  ovl_html_inum(out, OVL_HN_NS, jc->skew_p50, "cross_rank.skew_p50_ns");
  fprintf(out, " (p50), ");
  ovl_html_inum(out, OVL_HN_NS, jc->skew_p99, "cross_rank.skew_p99_ns");
  fprintf(out, " (p99).</p>\n<p>Stragglers: ");
  size_t ns = 0;
  for (size_t m = 0; m < jc->nmembers; m++) {
    size_t ri = jc->members[m];
    const ovl_rank_result *r = &job->ranks[ri];
    if (!r->cross.straggler) continue;
    if (ns++ >= 16) continue;
    fputs(ns > 1 ? "; " : "", out);
    rank_lateness(out, job, ri, 1);
  }
  if (ns > 16) fprintf(out, "; and %zu more", ns - 16);
  if (!ns && jc->most_waited_for != SIZE_MAX) {  /* the same rank a peer_wait finding may name */
    fputs("none significant; the others waited most for ", out);
    rank_lateness(out, job, jc->most_waited_for, 0);
  }
  fprintf(out, "%s.</p>\n", ns || jc->most_waited_for != SIZE_MAX ? "" : "none");

  /* Per-rank overlap efficiency: a bar per rank (a dot per rank for large jobs). */
  const double top = 16, ph = 160, h = top + ph + 44;
  svg_open(out, h, "overlap efficiency per rank");
  percent_axis(out, top, ph);
  label(out, LEFT + PLOT / 2, h - 4, "middle", "lbl", "rank (red: straggler)");
  vlabel(out, LEFT - 60, top + ph / 2, "overlap efficiency");
  double bw = PLOT / (double)jc->nmembers;
  /* every rank's number under its bar while they fit, else every few */
  size_t every = jc->nmembers <= 32 ? 1 : (jc->nmembers + 31) / 32;
  for (size_t m = 0; m < jc->nmembers; m += every) {
    char t[24];
    snprintf(t, sizeof t, "%lld", (long long)job->ranks[jc->members[m]].rank);
    label(out, LEFT + bw * ((double)m + 0.5), top + ph + 14, "middle", "tick", t);
  }
  for (size_t m = 0; m < jc->nmembers; m++) {
    const ovl_rank_result *r = &job->ranks[jc->members[m]];
    double e = ovl_overlap_efficiency(&r->totals);
    if (isnan(e)) continue;
    double y = top + ph - ph * e, x = LEFT + bw * (double)m;
    char t[32];
    if (jc->nmembers <= BAR_RANKS)
      fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"%s\"><title>rank %lld: %s"
                   "</title></rect>\n",
              x + bw * 0.1, y, bw * 0.8, top + ph - y, r->cross.straggler ? "barbad" : "bar", (long long)r->rank,
              ovl_html_format(OVL_HN_PCT, e, t, sizeof t));
    else
      fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" class=\"%s\"/>\n", x + bw / 2, y,
              r->cross.straggler ? "3" : "1.5", r->cross.straggler ? "barbad" : "bar");
  }
  fputs("</svg>\n", out);
  heat_map(out, job);
}

/* ------------------------------------------------------------------------------------ */
/* Section 6: efficiency per step                                                        */
/* ------------------------------------------------------------------------------------ */

#define TREND_RANKS 16
#define TREND_POINTS 600

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                      "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c",
                                      "#d62728", "#9467bd", "#8c564b", "#17becf"};

void ovl_html_trend(FILE *out, const ovl_job *job) {
  size_t pick[TREND_RANKS], npick = 0, maxsteps = 0;
  /* All ranks when few; else stragglers first, then ranks spread evenly. */
  for (size_t i = 0; i < job->nranks && npick < TREND_RANKS; i++)
    if (job->nranks > TREND_RANKS && job->ranks[i].cross.straggler) pick[npick++] = i;
  size_t want = TREND_RANKS - npick;
  for (size_t k = 0; k < want && k < job->nranks; k++) {
    size_t i = job->nranks <= want ? k : k * job->nranks / want;
    int dup = 0;
    for (size_t p = 0; p < npick; p++) dup |= pick[p] == i;
    if (!dup) pick[npick++] = i;
  }
  for (size_t p = 0; p < npick; p++)
    if (job->ranks[pick[p]].nsteps > maxsteps) maxsteps = job->ranks[pick[p]].nsteps;
  if (maxsteps == 0) {
    fputs("<p>No steps.</p>\n", out);
    return;
  }
  if (maxsteps == 1) {  /* one point per rank on a line of one step says nothing: the ranks chart has it */
    fputs("<p>One step per rank: nothing to follow from step to step (each rank's efficiency is in the summary "
          "and, for a job, the ranks chart).</p>\n", out);
    return;
  }
  size_t stride = maxsteps > TREND_POINTS ? (maxsteps + TREND_POINTS - 1) / TREND_POINTS : 1;
  fprintf(out, "<p>Overlap efficiency of every step%s, to see warm-up and drift%s.</p>\n",
          npick < job->nranks ? " of a sample of ranks (stragglers first)" : "",
          stride > 1 ? " (every few steps shown)" : "");
  const double top = 16, ph = 220, h = top + ph + 34;
  svg_open(out, h, "overlap efficiency per step");
  percent_axis(out, top, ph);
  label(out, LEFT + PLOT / 2, h - 2, "middle", "lbl", "steps in order (position in the rank's list of steps)");
  double dx = maxsteps > 1 ? PLOT / (double)(maxsteps - 1) : 0, x0 = maxsteps > 1 ? LEFT : LEFT + PLOT / 2;
  for (size_t s = 0; s < maxsteps; s += maxsteps > 10 ? (maxsteps + 9) / 10 : 1) {
    char t[32];
    snprintf(t, sizeof t, "%zu", s);
    label(out, x0 + dx * (double)s, top + ph + 14, "middle", "tick", t);
  }
  for (size_t p = 0; p < npick; p++) {
    const ovl_rank_result *r = &job->ranks[pick[p]];
    fprintf(out, "<polyline class=\"trend\" stroke=\"%s\" points=\"", palette[p % 16]);
    for (size_t s = 0; s < r->nsteps; s += stride) {
      double e = ovl_overlap_efficiency(&r->steps[s].totals);
      if (!isnan(e)) fprintf(out, "%.1f,%.1f ", x0 + dx * (double)s, top + ph - ph * e);
    }
    fputs("\"/>\n", out);
    if (r->nsteps <= 60)
      for (size_t s = 0; s < r->nsteps; s++) {
        double e = ovl_overlap_efficiency(&r->steps[s].totals);
        char t[32];
        if (!isnan(e))
          fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>rank %lld step %ld: %s</title>"
                       "</circle>\n",
                  x0 + dx * (double)s, top + ph - ph * e, palette[p % 16], (long long)r->rank, r->steps[s].index,
                  ovl_html_format(OVL_HN_PCT, e, t, sizeof t));
      }
  }
  fputs("</svg>\n<p class=\"legend\">", out);
  for (size_t p = 0; p < npick; p++) {
    const ovl_rank_result *r = &job->ranks[pick[p]];
    fprintf(out, "<i class=\"sw\" style=\"background:%s\"></i>rank ", palette[p % 16]);
    ovl_html_inum(out, OVL_HN_COUNT, r->rank, "ranks.%zu.rank", pick[p]);
    fputs(" (", out);
    ovl_html_dnum(out, OVL_HN_PCT, ovl_overlap_efficiency(&r->totals), "ranks.%zu.overlap_efficiency", pick[p]);
    fputs(") ", out);
  }
  fputs("</p>\n", out);
}
