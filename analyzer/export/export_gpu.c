/*
** GPU work of one trace file on the timeline: one lane group per CUDA stream (named with its
** role: compute, NCCL or memcpy, from the classes of its work), flow ends (the launch and the
** NCCL call that started the work), the analysis of the collective a piece of work executes
** as debug annotations, and the rank's counters (exposed communication, bytes in flight),
** drawn from the analysis's sweep (sweep.c) over the same classified work stream
** (work_stream.h) the analysis read.
*/
#include "export_internal.h"

#include "base/progress.h"
#include "base/vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xstream {
  int64_t device, stream;
  uint32_t proc;
  long count[3];           /* work items per ovl_work_class */
  int32_t order;
  int has_group;
  xgroup group;
} xstream;

struct xstreams {
  xstream *items;          /* sorted by device and stream */
  size_t n;
  ovl_i64map index;        /* stream key -> items index */
  size_t last;             /* the stream looked up last */
};

/* The stream entry of (device, stream), or NULL. */
static xstream *find_stream(xstreams *s, int64_t device, int64_t stream) {
  if (s->n && s->items[s->last].device == device && s->items[s->last].stream == stream) return &s->items[s->last];
  int64_t idx;
  if (ovl_i64map_get(&s->index, ovl_fact_stream_key(device, stream), &idx) && s->items[idx].device == device &&
      s->items[idx].stream == stream) {
    s->last = (size_t)idx;
    return &s->items[idx];
  }
  for (size_t i = 0; i < s->n; i++)  /* key collision: rare */
    if (s->items[i].device == device && s->items[i].stream == stream) return &s->items[s->last = i];
  return NULL;
}

void xgpu_streams_free(xstreams *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n; i++)
    if (s->items[i].has_group) xgroup_free(&s->items[i].group);
  free(s->items);
  ovl_i64map_free(&s->index);
  free(s);
}

typedef int (*work_fn)(xfile *f, xstreams *s, const ovl_classified_work *cw, void *ctx, ovl_err *err);

/* Runs fn over the file's classified GPU work in start order (SQLite sorting once the
** pre-pass found the rows further out of order than the reorder window). Returns
** OVL_EUNSORTED when the window was too small: the caller resets what it counted and runs
** again. */
static int for_each_work(xfile *f, xstreams *s, work_fn fn, void *ctx, ovl_err *err) {
  if (f->capture) {  /* the analysis's own read, replayed: no second read of the trace */
    ovl_capture_cursor cur;
    ovl_classified_work cw;
    ovl_capture_cursor_init(&cur, f->capture);
    size_t n = f->capture->capture.nitems;
    int rc = OVL_OK;
    while (!rc && ovl_capture_next(&cur, f->capture, &cw)) {
      if (f->ws.progress && (cur.item & 0xFFFF) == 0) ovl_progress(f->ws.progress, (double)cur.item / (double)n);
      rc = fn(f, s, &cw, ctx, err);  /* facts_usable: every item is of an exported device */
    }
    return rc;
  }
  size_t window = f->ex->ctx->opt.reorder_window ? f->ex->ctx->opt.reorder_window : OVL_DEFAULT_REORDER_WINDOW;
  if (f->sort_work) window = 0;
  int rc = ovl_work_stream_open(&f->ws, window, 0, err);
  const ovl_classified_work *cw = NULL;
  int has = 0;
  while (!rc && !(rc = ovl_work_stream_next_ref(&f->ws, &cw, &has, err)) && has)  /* no copy per piece */
    if (xfile_proc_of(f, cw->w.device) != UINT32_MAX) rc = fn(f, s, cw, ctx, err);
  ovl_work_stream_close(&f->ws);
  if (rc == OVL_EUNSORTED) ovl_err_clear(err);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Streams and flows' starts: the facts of the file's GPU work (gpu_facts.h)             */
/* ---------------------------------------------------------------------------------- */

static int prepass_one(xfile *f, xstreams *s, const ovl_classified_work *cw, void *ctx, ovl_err *err) {
  (void)f;
  (void)s;
  if (ovl_gpu_facts_add(ctx, cw)) return ovl_oom(err, "streams");
  return OVL_OK;
}

/* The analysis's facts hold what the pre-pass would have counted when they cover only the
** file's exported devices (the pre-pass skips other devices' work). */
static int facts_usable(const xfile *f, const ovl_gpu_facts *facts) {
  if (!facts) return 0;
  for (size_t i = 0; i < facts->nstreams; i++)
    if (xfile_proc_of(f, facts->streams[i].device) == UINT32_MAX) return 0;
  return 1;
}

static int cmp_stream(const void *pa, const void *pb) {
  const xstream *a = pa, *b = pb;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  return (a->stream > b->stream) - (a->stream < b->stream);
}

int xgpu_streams(xfile *f, const ovl_gpu_facts *facts, xstreams **out, ovl_err *err) {
  int rc = OVL_OK;
  if (!facts_usable(f, facts)) {
    rc = for_each_work(f, NULL, prepass_one, &f->own_facts, err);
    if (rc == OVL_EUNSORTED) {
      ovl_gpu_facts_clear(&f->own_facts);
      rc = for_each_work(f, NULL, prepass_one, &f->own_facts, err);
    }
    facts = &f->own_facts;
  }
  if (rc) return rc;
  f->gpu_corr = &facts->gpu_corr;
  f->sort_work = facts->sorted;
  const char *one_read = getenv("OVL_EXPORT_ONE_READ");
  if (facts != &f->own_facts && ovl_gpu_facts_captured(facts) && !(one_read && strcmp(one_read, "0") == 0))
    f->capture = facts;
  xstreams *s = calloc(1, sizeof *s);
  if (s) s->items = calloc(facts->nstreams ? facts->nstreams : 1, sizeof *s->items);
  if (!s || !s->items) {
    free(s);
    return ovl_oom(err, "streams");
  }
  s->n = facts->nstreams;  /* each (device, stream) once */
  for (size_t i = 0; i < s->n; i++) {
    const ovl_fact_stream *fs = &facts->streams[i];
    s->items[i].device = fs->device;
    s->items[i].stream = fs->stream;
    memcpy(s->items[i].count, fs->count, sizeof s->items[i].count);
  }
  /* Streams ordered by device and id. */
  ovl_qsort(s->items, s->n, sizeof *s->items, cmp_stream);
  for (size_t i = 0; !rc && i < s->n; i++) {
    s->items[i].order = 1000 + (int32_t)i * 1024;
    s->items[i].proc = xfile_proc_of(f, s->items[i].device);
    if (ovl_i64map_put(&s->index, ovl_fact_stream_key(s->items[i].device, s->items[i].stream), (int64_t)i))
      rc = ovl_oom(err, "streams");
  }
  if (rc) {
    xgpu_streams_free(s);
    return rc;
  }
  *out = s;
  return OVL_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Counters                                                                            */
/* ---------------------------------------------------------------------------------- */

/* Writes the counters' values from t on, each only when it changed. */
static int write_values(ovl_exporter *ex, xcounters *c, int64_t t, int exposed, int64_t bytes, ovl_err *err) {
  int rc = OVL_OK;
  if (!c->written_any || exposed != c->last_exposed) rc = xcounter(ex, c->proc, c->exposed_track, t, exposed, err);
  if (!rc && (!c->written_any || bytes != c->last_bytes)) rc = xcounter(ex, c->proc, c->bytes_track, t, bytes, err);
  c->written_any = 1;
  c->last_exposed = exposed;
  c->last_bytes = bytes;
  return rc;
}

/* A stretch of constant running work on the rank's device (the sweep's accounting):
** communication is exposed when it runs with no compute; the bytes in flight are those of
** the collectives with work running. */
static void on_segment(void *ctx, const ovl_sweep *s, int64_t a, int64_t b) {
  (void)b;
  xcounters *c = ctx;
  if (c->rc) return;
  int64_t bytes = 0;
  for (size_t i = 0; i < s->nactive; i++) {
    int64_t by = c->file->recs[s->active_colls[i]].bytes;
    if (by > 0) bytes += by;
  }
  int exposed = s->running[OVL_CLASS_COMM] > 0 && s->running[OVL_CLASS_COMPUTE] == 0;
  int first = !c->written_any;
  c->rc = write_values(c->file->ex, c, a, exposed, bytes, &c->err);
  if (!c->dim_mask) return;
  /* per dimension: exposed while a collective of that dimension runs with no compute */
  unsigned dim_exposed = 0;  /* bit d */
  for (size_t i = 0; exposed && i < s->nactive; i++) {
    const ovl_coll_result *res = c->file->coll_result[s->active_colls[i]];
    if (res && res->pdim.dim < OVL_DIM_COUNT) dim_exposed |= 1u << res->pdim.dim;
  }
  /* the dimensions whose value changed (all at the first segment), in ascending order */
  unsigned write = c->dim_mask & (first ? ~0u : dim_exposed ^ c->last_dim_mask);
  for (int d = 1; !c->rc && write; d++) {
    if (!(write & (1u << d))) continue;
    write &= ~(1u << d);
    int value = (dim_exposed >> d) & 1;
    c->rc = xcounter(c->file->ex, c->proc, c->dim_track[d], a, value, &c->err);
    c->last_dim_exposed[d] = value;
    c->last_dim_mask = (c->last_dim_mask & ~(1u << d)) | (unsigned)value << d;
  }
}

static int counters_add(xfile *f, uint32_t proc, const ovl_classified_work *cw, ovl_err *err) {
  xcounters *c = &f->ex->procs[proc].counters;
  ovl_sweep_item item = {cw->w.start, cw->w.end, cw->cls, cw->colls, cw->ncolls, -1, -1, -1};
  if (ovl_sweep_add(&c->sweep, &item)) return ovl_oom(err, "counters");
  if (c->rc) *err = c->err;
  return c->rc;
}

/* Runs the rank's remaining work to its end, then writes the idle values. */
static int counters_finish(xfile *f, uint32_t proc, ovl_err *err) {
  xcounters *c = &f->ex->procs[proc].counters;
  if (ovl_sweep_finish(&c->sweep)) return ovl_oom(err, "counters");
  if (c->rc) {
    *err = c->err;
    return c->rc;
  }
  if (!c->sweep.started) return OVL_OK;
  int rc = write_values(f->ex, c, c->sweep.now, 0, 0, err);
  for (int d = 1; !rc && d < OVL_DIM_COUNT; d++)
    if (c->has_dim[d] && c->last_dim_exposed[d]) rc = xcounter(f->ex, c->proc, c->dim_track[d], c->sweep.now, 0, err);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* The pass                                                                            */
/* ---------------------------------------------------------------------------------- */

/* Results of collectives inferred from NCCL kernel names (no collectives row), per rank
** in GPU start order: matched to their kernel as the pass reaches it. */
typedef struct inferred {
  const ovl_coll_result **items;
  size_t n, next;
} inferred;

typedef struct gpu_pass {
  OVL_VEC(uint64_t) flows;
  inferred *inferred;      /* per device of the file */
} gpu_pass;

static int cmp_inferred(const void *pa, const void *pb) {
  const ovl_coll_result *a = *(const ovl_coll_result *const *)pa, *b = *(const ovl_coll_result *const *)pb;
  return (a->gpu_start > b->gpu_start) - (a->gpu_start < b->gpu_start);
}

static int collect_inferred(xfile *f, gpu_pass *g, ovl_err *err) {
  g->inferred = calloc(f->nprocs, sizeof *g->inferred);
  if (!g->inferred) return ovl_oom(err, "collectives");
  for (size_t p = 0; p < f->nprocs; p++) {
    const ovl_rank_result *r = f->ex->procs[f->procs[p]].r;
    inferred *in = &g->inferred[p];
    for (int pass = 0; pass < 2; pass++) {
      for (size_t s = 0; s < r->nsteps; s++)
        for (size_t i = 0; i < r->steps[s].ncolls; i++)
          if (ovl_coll_id(&r->steps[s].colls[i]) == OVL_NONE) {
            if (pass) in->items[in->n] = &r->steps[s].colls[i];
            in->n++;
          }
      if (!pass) {
        in->items = malloc((in->n ? in->n : 1) * sizeof *in->items);
        if (!in->items) return ovl_oom(err, "collectives");
        in->n = 0;
      }
    }
    ovl_qsort(in->items, in->n, sizeof *in->items, cmp_inferred);
  }
  return OVL_OK;
}

static const ovl_coll_result *match_inferred(xfile *f, gpu_pass *g, const ovl_work *w) {
  for (size_t p = 0; p < f->nprocs; p++) {
    if (f->devices[p] != w->device) continue;
    inferred *in = &g->inferred[p];
    while (in->next < in->n && in->items[in->next]->gpu_start < w->start) in->next++;
    if (in->next < in->n && in->items[in->next]->gpu_start == w->start) return in->items[in->next++];
  }
  return NULL;
}

/* Debug annotations of work that executes a collective. */
static size_t coll_args(const ovl_coll_result *c, const ovl_coll_rec *rec, size_t ncolls, ovl_xarg *a) {
  size_t n = 0;
  a[n++] = (ovl_xarg){"op", OVL_XARG_STRING, 0, 0, c ? ovl_op_name(c->op) : rec->op};
  int64_t bytes = c ? c->bytes : rec->bytes;
  if (bytes != OVL_NONE) a[n++] = (ovl_xarg){"bytes", OVL_XARG_INT, bytes, 0, NULL};
  if (c) {
    if (c->bucket >= 0) a[n++] = (ovl_xarg){"bucket", OVL_XARG_INT, c->bucket, 0, NULL};
    a[n++] = (ovl_xarg){"exposed_ns", OVL_XARG_INT, ovl_coll_exposed(c), 0, NULL};
    if (ovl_coll_stall(c) != OVL_NONE)
      a[n++] = (ovl_xarg){"readiness_stall_ns", OVL_XARG_INT, ovl_coll_stall(c), 0, NULL};
    if (ovl_coll_ready(c) != OVL_NONE) a[n++] = (ovl_xarg){"ready_ns", OVL_XARG_INT, ovl_coll_ready(c), 0, NULL};
    /* Unknown bandwidths (NaN: no size, or no duration) are left out, not shown as NaN. */
    double busbw = ovl_coll_busbw(c), algbw = ovl_coll_algbw(c);
    if (isfinite(busbw)) a[n++] = (ovl_xarg){"busbw_gbps", OVL_XARG_DOUBLE, 0, busbw, NULL};
    if (isfinite(algbw)) a[n++] = (ovl_xarg){"algbw_gbps", OVL_XARG_DOUBLE, 0, algbw, NULL};
    a[n++] = (ovl_xarg){"step", OVL_XARG_INT, c->step, 0, NULL};
    if (c->pdim.dim != OVL_DIM_UNKNOWN) {  /* its parallelism dimension (job_dims.h) */
      a[n++] = (ovl_xarg){"dim", OVL_XARG_STRING, 0, 0, ovl_pdim_name((ovl_pdim)c->pdim.dim)};
      a[n++] = (ovl_xarg){"dim_role", OVL_XARG_STRING, 0, 0, ovl_prole_name((ovl_prole)c->pdim.role)};
    }
  }
  int64_t seq = c ? ovl_coll_seq(c) : rec->seq;
  if (seq != OVL_NONE) a[n++] = (ovl_xarg){"seq", OVL_XARG_INT, seq, 0, NULL};
  if (ncolls > 1) a[n++] = (ovl_xarg){"collectives", OVL_XARG_INT, (int64_t)ncolls, 0, NULL};
  return n;
}

static const char *role_of(const xstream *x) {
  const long *k = x->count;
  if (k[OVL_CLASS_COMM] > k[OVL_CLASS_COMPUTE] && k[OVL_CLASS_COMM] >= k[OVL_CLASS_MEMORY]) return "NCCL";
  if (k[OVL_CLASS_MEMORY] > k[OVL_CLASS_COMPUTE]) return "memcpy";
  return "compute";
}

static int gpu_one(xfile *f, xstreams *s, const ovl_classified_work *cw, void *ctx, ovl_err *err) {
  gpu_pass *g = ctx;
  const ovl_work *w = &cw->w;
  ovl_exporter *ex = f->ex;
  uint32_t proc = xfile_proc_of(f, w->device);
  xstream *x = find_stream(s, w->device, w->stream);
  if (!x) return ovl_fail(err, OVL_EINTERNAL, "%s: a stream appeared that the first read of the GPU work did not see", f->path);
  if (!x->has_group) {
    char name[96];
    if (w->stream >= 0) snprintf(name, sizeof name, "stream %lld (%s)", (long long)w->stream, role_of(x));
    else snprintf(name, sizeof name, "unknown stream (%s)", role_of(x));
    if (xgroup_init(&x->group, OVL_LANES_DISJOINT, proc, name, x->order, w->stream >= 0 ? w->stream : -1))
      return ovl_oom(err, "streams");
    x->has_group = 1;
  }
  size_t nlinks = cw->ncolls;
  ovl_work_class cls = cw->cls;

  ovl_xslice sl;
  memset(&sl, 0, sizeof sl);
  sl.start = w->start;
  sl.end = w->end;
  char memname[32];
  if (w->is_memop) {
    snprintf(memname, sizeof memname, strcmp(w->memkind, "memset") == 0 ? "memset" : "memcpy %s",
             w->memkind[0] ? w->memkind : "?");
    sl.name = memname;
    sl.name_iid = xname(ex, memname);
    sl.category = "memcpy";
  } else if (cw->from_channels) {  /* a collective NCCL timed by its channels (no kernel captured) */
    sl.name = "NCCL channels";
    sl.name_iid = xname(ex, sl.name);
    sl.category = "nccl";
  } else {
    sl.name_iid = xfile_string_iid(f, w->name);
    sl.name = xname_text(ex, sl.name_iid);  /* the trace's name, or "kernel" */
    sl.category = cls == OVL_CLASS_COMM ? "nccl" : "kernel";
  }
  if (!sl.name_iid) return ovl_oom(err, "names");

  /* Flow ends: the launch (when its api row drew a start) and the NCCL calls. */
  g->flows.len = 0;
  if (ovl_idset_has(f->launch_from, w->correlation) && !ovl_idset_has(&f->launch_ended, w->correlation) &&
      xflow_ok(ex, w->correlation)) {
    if (ovl_idset_add(&f->launch_ended, w->correlation) ||
        OVL_VEC_PUSH(&g->flows, xflow_id(f->ex, f->host_proc, XFLOW_LAUNCH, w->correlation)))
      return ovl_oom(err, "flows");
  }
  const ovl_coll_result *res = NULL;
  for (size_t k = 0; k < nlinks; k++) {
    int32_t c = cw->colls[k];
    if (!res) res = f->coll_result[c];
    if (f->coll_started[c] && !f->coll_ended[c]) {
      f->coll_ended[c] = 1;
      if (OVL_VEC_PUSH(&g->flows, xflow_id(f->ex, f->host_proc, XFLOW_NCCL, (int64_t)c))) return ovl_oom(err, "flows");
    }
  }
  sl.flows_in = g->flows.items;
  sl.nflows_in = g->flows.len;

  ovl_xarg args[14];
  if (nlinks) {
    sl.nargs = coll_args(res, &f->recs[cw->colls[0]], nlinks, args);
  } else if (cls == OVL_CLASS_COMM && !w->is_memop && (res = match_inferred(f, g, w))) {
    sl.nargs = coll_args(res, NULL, 1, args);
  }
  sl.args = sl.nargs ? args : NULL;

  int rc = xgroup_slice(ex, &x->group, &sl, 0, err);
  if (!rc && !f->counters_apart) rc = counters_add(f, proc, cw, err);
  if (w->is_memop) ex->stats.memop_slices++;
  else ex->stats.kernel_slices++;
  return rc;
}

/* The file's ranks' counter tracks and sweeps. */
static int counters_begin(xfile *f, ovl_err *err) {
  ovl_exporter *ex = f->ex;
  int rc = OVL_OK;
  for (size_t p = 0; !rc && p < f->nprocs; p++) {
    xcounters *c = &ex->procs[f->procs[p]].counters;
    c->file = f;
    c->proc = f->procs[p];
    if (ovl_sweep_init(&c->sweep, NULL, &f->coll_state)) rc = ovl_oom(err, "counters");
    else c->has_sweep = 1;
    c->sweep.on_segment = on_segment;
    c->sweep.on_segment_ctx = c;
    if (!rc) rc = xtrack(ex, f->procs[p], OVL_XTRACK_COUNTER, "exposed communication", 1, -1, &c->exposed_track, err);
    if (!rc)
      rc = xtrack(ex, f->procs[p], OVL_XTRACK_COUNTER_BYTES, "communication bytes in flight", 2, -1, &c->bytes_track,
                  err);
    const ovl_rank_result *r = ex->procs[f->procs[p]].r;
    for (int d = 1; !rc && d < OVL_DIM_COUNT; d++) {
      c->has_dim[d] = r && r->dims[d].colls > 0;
      c->last_dim_exposed[d] = 0;
      if (d == 1) c->dim_mask = c->last_dim_mask = 0;
      if (c->has_dim[d]) c->dim_mask |= 1u << d;
      char name[64];
      snprintf(name, sizeof name, "exposed %s communication", ovl_pdim_name((ovl_pdim)d));
      if (c->has_dim[d]) rc = xtrack(ex, f->procs[p], OVL_XTRACK_COUNTER, name, 2 + d, -1, &c->dim_track[d], err);
    }
  }
  return rc;
}

/* Runs the sweeps to their ends (when rc is OVL_OK), closes the counter tracks, frees the sweeps. */
static int counters_end(xfile *f, int rc, ovl_err *err) {
  ovl_exporter *ex = f->ex;
  for (size_t p = 0; !rc && p < f->nprocs; p++) rc = counters_finish(f, f->procs[p], err);
  for (size_t p = 0; p < f->nprocs; p++) {
    xcounters *c = &ex->procs[f->procs[p]].counters;
    if (!rc) rc = ex->sink.close_track(ex->sink.self, c->exposed_track, err);
    if (!rc) rc = ex->sink.close_track(ex->sink.self, c->bytes_track, err);
    for (int d = 1; d < OVL_DIM_COUNT; d++)
      if (!rc && c->has_dim[d]) rc = ex->sink.close_track(ex->sink.self, c->dim_track[d], err);
    if (c->has_sweep) ovl_sweep_free(&c->sweep);
    c->has_sweep = 0;
  }
  return rc;
}

static int counters_one(xfile *f, xstreams *s, const ovl_classified_work *cw, void *ctx, ovl_err *err) {
  (void)s;
  (void)ctx;
  return counters_add(f, xfile_proc_of(f, cw->w.device), cw, err);
}

int xcounters_export(xfile *f, ovl_err *err) {
  int rc = counters_begin(f, err);
  if (!rc) rc = for_each_work(f, NULL, counters_one, NULL, err);
  if (rc == OVL_EUNSORTED)
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: GPU work further out of order than seen before", f->path);
  return counters_end(f, rc, err);
}

int xgpu_export(xfile *f, xstreams *s, ovl_err *err) {
  ovl_exporter *ex = f->ex;
  gpu_pass g;
  memset(&g, 0, sizeof g);
  int rc = collect_inferred(f, &g, err);
  if (!rc && !f->counters_apart) rc = counters_begin(f, err);
  if (!rc) rc = for_each_work(f, s, gpu_one, &g, err);
  /* the facts said whether the work must be sorted: the pass cannot be run again */
  if (rc == OVL_EUNSORTED)
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: GPU work further out of order than seen before", f->path);
  if (!f->counters_apart) rc = counters_end(f, rc, err);
  for (size_t i = 0; i < s->n; i++)
    if (s->items[i].has_group) {
      if (!rc) rc = xgroup_close(ex, &s->items[i].group, err);
      else xgroup_free(&s->items[i].group);
      s->items[i].has_group = 0;
    }
  for (size_t p = 0; g.inferred && p < f->nprocs; p++) free(g.inferred[p].items);
  free(g.inferred);
  OVL_VEC_FREE(&g.flows);
  return rc;
}
