/* The timeline's content for some steps of a rank: see html_step_work.h. */
#include "html_step_work.h"

#include "../analyze/work_stream.h"

#include <stdlib.h>
#include <string.h>

/* Appends [a, b) of class cls, merged into the previous box when the gap is below merge_ns. */
static int add_box(ovl_step_box **boxes, size_t *n, size_t *cap, int64_t a, int64_t b, ovl_work_class cls,
                   int64_t merge_ns) {
  if (*n) {
    ovl_step_box *last = &(*boxes)[*n - 1];
    if (last->cls == cls && a - last->end <= merge_ns) {
      if (b > last->end) last->end = b;
      return 0;
    }
  }
  if (*n == *cap) {
    size_t grown = *cap ? *cap * 2 : 64;
    ovl_step_box *p = realloc(*boxes, grown * sizeof *p);
    if (!p) return -1;
    *boxes = p;
    *cap = grown;
  }
  (*boxes)[(*n)++] = (ovl_step_box){a, b, cls};
  return 0;
}

/* One step being read: its window, what it gets, and how close boxes merge. */
typedef struct window {
  ovl_step_work *out;
  int64_t lo, hi, merge_ns;
} window;

typedef struct reading {
  window *w;
  size_t n;
  int64_t lo, hi;          /* of all the windows */
  int failed;
} reading;

/* The sweep's accounting, as the analysis does it: exposed when communication runs alone. */
static void on_segment(void *ctx, const ovl_sweep *s, int64_t a, int64_t b) {
  reading *rd = ctx;
  if (s->running[OVL_CLASS_COMM] == 0 || s->running[OVL_CLASS_COMPUTE] > 0) return;
  for (size_t i = 0; i < rd->n; i++) {
    const window *win = &rd->w[i];
    int64_t x = a < win->lo ? win->lo : a, y = b > win->hi ? win->hi : b;
    if (x >= y) continue;
    ovl_step_work *w = win->out;
    if (add_box(&w->exposed, &w->nexposed, &w->exposed_cap, x, y, OVL_CLASS_COMM, win->merge_ns)) rd->failed = 1;
  }
}

static ovl_step_lane *lane_of(ovl_step_work *w, int64_t stream) {
  for (size_t i = 0; i < w->nlanes; i++)
    if (w->lanes[i].stream == stream) return &w->lanes[i];
  ovl_step_lane *p = realloc(w->lanes, (w->nlanes + 1) * sizeof *p);
  if (!p) return NULL;
  w->lanes = p;
  memset(&p[w->nlanes], 0, sizeof *p);
  p[w->nlanes].stream = stream;
  return &p[w->nlanes++];
}

static void reset(ovl_step_work *w) {
  ovl_step_work_free(w);
  memset(w, 0, sizeof *w);
}

/* Adds [start, end) of work on stream to every window it falls in. */
static int add_work(reading *rd, const ovl_classified_work *cw) {
  const ovl_work *w = &cw->w;
  for (size_t i = 0; i < rd->n; i++) {
    const window *win = &rd->w[i];
    int64_t a = w->start > win->lo ? w->start : win->lo, b = w->end < win->hi ? w->end : win->hi;
    if (a >= b && !(w->start == w->end && w->start >= win->lo && w->start < win->hi)) continue;
    ovl_step_lane *lane = lane_of(win->out, w->stream);
    if (!lane || add_box(&lane->boxes, &lane->n, &lane->cap, a, b, cw->cls, win->merge_ns)) return -1;
    lane->busy[cw->cls] += b - a;
  }
  return 0;
}

/* One pass over the work up to the last step's end. */
static int pass(const ovl_analysis_ctx *ctx, ovl_work_stream *ws, ovl_coll_state *cs, const ovl_rank_result *r,
                reading *rd, ovl_err *err) {
  ovl_sweep sweep;
  if (ovl_sweep_init(&sweep, NULL, cs)) return ovl_oom(err, "timeline");
  sweep.on_segment = on_segment;
  sweep.on_segment_ctx = rd;
  size_t window = ctx->opt.reorder_window ? ctx->opt.reorder_window : OVL_DEFAULT_REORDER_WINDOW;
  int rc = ovl_work_stream_open(ws, window, 0, err);
  ovl_classified_work cw;
  int has = 0;
  while (!rc && !(rc = ovl_work_stream_next(ws, &cw, &has, err)) && has) {
    const ovl_work *w = &cw.w;
    if (w->device != r->device || w->end <= rd->lo) continue;
    if (w->start >= rd->hi) break;
    ovl_sweep_item item = {w->start, w->end, cw.cls, cw.colls, cw.ncolls, -1, -1, -1};
    if (ovl_sweep_add(&sweep, &item) || add_work(rd, &cw)) rc = ovl_oom(err, "timeline");
  }
  ovl_work_stream_close(ws);
  if (!rc && ovl_sweep_finish(&sweep)) rc = ovl_oom(err, "timeline");
  if (!rc && rd->failed) rc = ovl_oom(err, "timeline");
  ovl_sweep_free(&sweep);
  return rc;
}

static int64_t lane_busy(const ovl_step_lane *l) { return l->busy[0] + l->busy[1] + l->busy[2]; }

static int cmp_lane(const void *pa, const void *pb) {
  const ovl_step_lane *a = pa, *b = pb;
  return (a->stream > b->stream) - (a->stream < b->stream);
}

/* Keeps the busiest lanes, shown in stream order. */
static void trim_lanes(ovl_step_work *out) {
  while (out->nlanes > OVL_STEP_LANES) {
    size_t least = 0;
    for (size_t i = 1; i < out->nlanes; i++)
      if (lane_busy(&out->lanes[i]) < lane_busy(&out->lanes[least])) least = i;
    free(out->lanes[least].boxes);
    out->lanes[least] = out->lanes[--out->nlanes];
  }
  qsort(out->lanes, out->nlanes, sizeof *out->lanes, cmp_lane);
}

int ovl_step_work_read_many(const ovl_analysis_ctx *ctx, const ovl_rank_result *r, const ovl_step_result *const *steps,
                            const int64_t *merge_ns, size_t n, ovl_step_work *out, ovl_err *err) {
  for (size_t i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
  window *wins = calloc(n ? n : 1, sizeof *wins);
  if (!wins) return ovl_oom(err, "timeline");
  reading rd = {wins, n, INT64_MAX, INT64_MIN, 0};
  for (size_t i = 0; i < n; i++) {
    wins[i] = (window){&out[i], steps[i]->start, steps[i]->end, merge_ns[i]};
    if (wins[i].lo < rd.lo) rd.lo = wins[i].lo;
    if (wins[i].hi > rd.hi) rd.hi = wins[i].hi;
  }
  ovl_trace *t = NULL;
  int rc = ovl_trace_open(r->ovl_path, &t, err);
  if (rc) {
    free(wins);
    return rc;
  }
  ovl_work_stream ws;
  rc = ovl_work_stream_init(&ws, t, &ctx->classifier, err);
  if (rc) {
    ovl_trace_close(t);
    free(wins);
    return rc;
  }
  ovl_coll_state cs = {.exposed = calloc(ws.nrecs + 1, sizeof(int64_t)), .running = calloc(ws.nrecs + 1, sizeof(int32_t)),
                       .pieces = NULL, .len = ws.nrecs};
  if (!cs.exposed || !cs.running) rc = ovl_oom(err, "timeline");
  if (!rc) rc = pass(ctx, &ws, &cs, r, &rd, err);
  if (rc == OVL_EUNSORTED) {  /* the stream now sorts with SQLite: once more from scratch */
    ovl_err_clear(err);
    for (size_t i = 0; i < n; i++) reset(&out[i]);
    memset(cs.exposed, 0, (ws.nrecs + 1) * sizeof(int64_t));
    memset(cs.running, 0, (ws.nrecs + 1) * sizeof(int32_t));
    rd.failed = 0;
    rc = pass(ctx, &ws, &cs, r, &rd, err);
  }
  free(cs.exposed);
  free(cs.running);
  ovl_work_stream_free(&ws);
  ovl_trace_close(t);
  free(wins);
  for (size_t i = 0; i < n; i++) {
    if (rc) reset(&out[i]);
    else trim_lanes(&out[i]);
  }
  return rc;
}

int ovl_step_work_read(const ovl_analysis_ctx *ctx, const ovl_rank_result *r, const ovl_step_result *st,
                       int64_t merge_ns, ovl_step_work *out, ovl_err *err) {
  return ovl_step_work_read_many(ctx, r, &st, &merge_ns, 1, out, err);
}

void ovl_step_work_free(ovl_step_work *w) {
  for (size_t i = 0; i < w->nlanes; i++) free(w->lanes[i].boxes);
  free(w->lanes);
  free(w->exposed);
}
