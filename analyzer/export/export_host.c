/*
** Host threads of one trace file, drawn under the file's first rank. Per thread:
**   "thread <tid>"           NVTX ranges (and marks as instants) with the NCCL calls,
**                            nested as they were called;
**   "thread <tid> CUDA API"  the CUDA API calls of the api table.
** NCCL calls start a flow to the GPU work that executed them and API calls one to the work
** they launched, when that work exists (the GPU pre-pass knows).
**
** NVTX and api rows stream in table order, which is close to start order but not exactly:
** a reorder window (a min-heap on start) restores it, so memory stays bounded. A row later
** than the window allows is still drawn, on a lane of its own when it cannot nest.
*/
#include "export_internal.h"

#include "base/progress.h"
#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct xthread {
  int64_t tid;
  int32_t order;
  int has_main, has_api;
  xgroup main, api;
} xthread;

typedef struct host_item {
  int64_t start, end;      /* end == start for a mark */
  int64_t seq;             /* arrival order: ties stay stable */
  int64_t tid, correlation;
  uint32_t iid;
  int is_mark;
} host_item;

typedef struct call_key {
  int64_t start, end;
  size_t coll;               /* index in the file's collectives */
} call_key;

typedef struct host_pass {
  xfile *f;
  OVL_VEC(xthread) threads;
  ovl_i64map thread_index;   /* tid -> threads index (unknown tid: its own slot) */
  long unknown_thread;       /* index of the unknown-tid thread, or -1 */
  int64_t last_tid;          /* the thread looked up last (rows come in runs of one thread) */
  long last_thread;          /* its index, or -1 */
  /* Reorder window: rows in key order queue in a FIFO (the common case: O(1)); rows
  ** that arrive before the FIFO's tail go to a min-heap. The smaller head of the two is drawn
  ** when more than `window` rows are held. */
  host_item *fifo;
  size_t fifo_head, fifo_len, fifo_cap;
  host_item *heap;
  size_t n, cap, window;
  int64_t seq;
  call_key *calls;           /* collectives with a host interval, in start order */
  size_t ncalls, next_call;
  int api;                   /* scanning api rows (else NVTX) */
  int64_t api_rows, api_estimate;  /* for progress (base/progress.h) */
  ovl_err *err;
  OVL_VEC(uint64_t) flows;
} host_pass;

static int item_before(const host_item *a, const host_item *b) {
  if (a->start != b->start) return a->start < b->start;
  if (a->end != b->end) return a->end > b->end;  /* enclosing ranges first */
  return a->seq < b->seq;
}

static int heap_push(host_pass *h, const host_item *it) {
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 256;
    host_item *g = realloc(h->heap, cap * sizeof *g);
    if (!g) return -1;
    h->heap = g;
    h->cap = cap;
  }
  size_t i = h->n++;
  while (i > 0 && item_before(it, &h->heap[(i - 1) / 2])) {
    h->heap[i] = h->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->heap[i] = *it;
  return 0;
}

static host_item heap_pop(host_pass *h) {
  host_item top = h->heap[0], last = h->heap[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && item_before(&h->heap[c + 1], &h->heap[c])) c++;
    if (!item_before(&h->heap[c], &last)) break;
    h->heap[i] = h->heap[c];
    i = c;
  }
  if (h->n) h->heap[i] = last;
  return top;
}

static int get_thread(host_pass *h, int64_t tid, xthread **out, ovl_err *err) {
  if (h->last_thread >= 0 && tid == h->last_tid) {
    *out = &h->threads.items[h->last_thread];
    return OVL_OK;
  }
  int64_t idx = -1;
  if (tid == OVL_NONE) idx = h->unknown_thread;
  else if (!ovl_i64map_get(&h->thread_index, tid, &idx)) idx = -1;
  if (idx < 0) {
    xthread t;
    memset(&t, 0, sizeof t);
    t.tid = tid;
    t.order = 100000 + (int32_t)h->threads.len * 2048;
    idx = (int64_t)h->threads.len;
    if (OVL_VEC_PUSH(&h->threads, t)) return ovl_oom(err, "threads");
    if (tid == OVL_NONE) h->unknown_thread = (long)idx;
    else if (ovl_i64map_put(&h->thread_index, tid, idx)) return ovl_oom(err, "threads");
  }
  *out = &h->threads.items[idx];
  h->last_tid = tid;
  h->last_thread = (long)idx;
  return OVL_OK;
}

/* The thread's lane group for ranges and calls (api = 0) or for CUDA API calls. */
static int thread_group(host_pass *h, int64_t tid, int api, xgroup **out, ovl_err *err) {
  xthread *t = NULL;
  int rc = get_thread(h, tid, &t, err);
  if (rc) return rc;
  int *has = api ? &t->has_api : &t->has_main;
  xgroup *g = api ? &t->api : &t->main;
  if (!*has) {
    char name[96];
    if (tid == OVL_NONE) snprintf(name, sizeof name, "host thread (unknown)%s", api ? " CUDA API" : "");
    else snprintf(name, sizeof name, "thread %lld%s", (long long)tid, api ? " CUDA API" : "");
    if (xgroup_init(g, OVL_LANES_NESTED, h->f->host_proc, name, t->order + (api ? 1024 : 0), -1))
      return ovl_oom(err, "threads");
    *has = 1;
  }
  *out = g;
  return OVL_OK;
}

/* ---- NCCL calls ---- */

static int cmp_call(const void *pa, const void *pb) {
  const call_key *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end > b->end ? -1 : 1;
  return (a->coll > b->coll) - (a->coll < b->coll);
}

static int collect_calls(host_pass *h, ovl_err *err) {
  xfile *f = h->f;
  h->calls = malloc((f->nrecs ? f->nrecs : 1) * sizeof *h->calls);
  if (!h->calls) return ovl_oom(err, "NCCL calls");
  for (size_t i = 0; i < f->nrecs; i++) {
    const ovl_coll_rec *c = &f->recs[i];
    if (c->host_start != OVL_NONE && c->host_end != OVL_NONE && c->host_end >= c->host_start)
      h->calls[h->ncalls++] = (call_key){c->host_start, c->host_end, i};
  }
  ovl_qsort(h->calls, h->ncalls, sizeof *h->calls, cmp_call);
  return OVL_OK;
}

static int draw_call(host_pass *h, size_t c, ovl_err *err) {
  xfile *f = h->f;
  const ovl_coll_rec *rec = &f->recs[c];
  const ovl_coll_result *res = f->coll_result[c];
  xgroup *g = NULL;
  int rc = thread_group(h, rec->tid, 0, &g, err);
  if (rc) return rc;
  char name[48];
  snprintf(name, sizeof name, "nccl%s", rec->op[0] ? rec->op : "Unknown");
  ovl_xarg a[10];
  size_t n = 0;
  if (rec->bytes != OVL_NONE) a[n++] = (ovl_xarg){"bytes", OVL_XARG_INT, rec->bytes, 0, NULL};
  if (rec->count != OVL_NONE) a[n++] = (ovl_xarg){"count", OVL_XARG_INT, rec->count, 0, NULL};
  if (rec->dtype[0]) a[n++] = (ovl_xarg){"dtype", OVL_XARG_STRING, 0, 0, rec->dtype};
  if (rec->comm != OVL_NONE) a[n++] = (ovl_xarg){"comm", OVL_XARG_INT, rec->comm, 0, NULL};
  if (rec->seq != OVL_NONE) a[n++] = (ovl_xarg){"seq", OVL_XARG_INT, rec->seq, 0, NULL};
  if (rec->peer != OVL_NONE && rec->peer >= 0) a[n++] = (ovl_xarg){"peer", OVL_XARG_INT, rec->peer, 0, NULL};
  if (res && res->bucket >= 0) a[n++] = (ovl_xarg){"bucket", OVL_XARG_INT, res->bucket, 0, NULL};
  if (res && ovl_coll_stall(res) != OVL_NONE)
    a[n++] = (ovl_xarg){"readiness_stall_ns", OVL_XARG_INT, ovl_coll_stall(res), 0, NULL};
  uint64_t flow;
  ovl_xslice sl = {rec->host_start, rec->host_end, xname(f->ex, name), name, "nccl_call", a, n, NULL, 0, NULL, 0};
  if (!sl.name_iid) return ovl_oom(err, "names");
  if (f->coll_started[c]) {  /* set before the passes (export_file.c) */
    flow = xflow_id(f->ex, f->host_proc, XFLOW_NCCL, (int64_t)c);
    sl.flows_out = &flow;
    sl.nflows_out = 1;
  }
  f->ex->stats.host_slices++;
  return xgroup_slice(f->ex, g, &sl, 0, err);
}

/* Draws the NCCL calls that come before `until` (NULL: all that are left). */
static int drain_calls(host_pass *h, const host_item *until, ovl_err *err) {
  while (h->next_call < h->ncalls) {
    const call_key *c = &h->calls[h->next_call];
    /* On an identical interval the NVTX range (a `bucket <k>` range) encloses the call. */
    host_item as_item = {c->start, c->end, INT64_MAX, 0, 0, 0, 0};
    if (until && !item_before(&as_item, until)) break;
    int rc = draw_call(h, h->calls[h->next_call++].coll, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* ---- NVTX and API rows ---- */

static int draw_item(host_pass *h, const host_item *it, ovl_err *err) {
  xfile *f = h->f;
  int rc = h->api ? OVL_OK : drain_calls(h, it, err);
  xgroup *g = NULL;
  if (!rc) rc = thread_group(h, it->tid, h->api, &g, err);
  if (rc) return rc;
  ovl_xslice sl = {it->start, it->end, it->iid, xname_text(f->ex, it->iid), h->api ? "cuda_api" : "nvtx", NULL, 0,
                   NULL, 0, NULL, 0};
  uint64_t flow;
  if (h->api && xflow_ok(f->ex, it->correlation) && ovl_idset_has(f->gpu_corr, it->correlation) &&
      !ovl_idset_has(&f->launch_started, it->correlation)) {
    if (ovl_idset_add(&f->launch_started, it->correlation)) return ovl_oom(err, "flows");
    flow = xflow_id(f->ex, f->host_proc, XFLOW_LAUNCH, it->correlation);
    sl.flows_out = &flow;
    sl.nflows_out = 1;
  }
  f->ex->stats.host_slices++;
  return xgroup_slice(f->ex, g, &sl, it->is_mark, err);
}

static int fifo_push(host_pass *h, const host_item *it) {
  if (h->fifo_len == h->fifo_cap) {
    size_t cap = h->fifo_cap ? h->fifo_cap * 2 : 256;
    host_item *q = malloc(cap * sizeof *q);
    if (!q) return -1;
    for (size_t i = 0; i < h->fifo_len; i++) q[i] = h->fifo[(h->fifo_head + i) % h->fifo_cap];
    free(h->fifo);
    h->fifo = q;
    h->fifo_head = 0;
    h->fifo_cap = cap;
  }
  h->fifo[(h->fifo_head + h->fifo_len++) % h->fifo_cap] = *it;
  return 0;
}

/* Removes the first held row in key order. */
static host_item take_first(host_pass *h) {
  const host_item *head = h->fifo_len ? &h->fifo[h->fifo_head] : NULL;
  if (h->n && (!head || item_before(&h->heap[0], head))) return heap_pop(h);
  host_item it = *head;
  h->fifo_head = (h->fifo_head + 1) % h->fifo_cap;
  h->fifo_len--;
  return it;
}

static int offer(host_pass *h, host_item *it) {
  it->seq = h->seq++;
  const host_item *tail = h->fifo_len ? &h->fifo[(h->fifo_head + h->fifo_len - 1) % h->fifo_cap] : NULL;
  int full = (!tail || !item_before(it, tail)) ? fifo_push(h, it) : heap_push(h, it);
  if (full) return ovl_oom(h->err, "host rows");
  if (h->fifo_len + h->n <= h->window) return OVL_OK;
  host_item next = take_first(h);
  return draw_item(h, &next, h->err);
}

static int flush_items(host_pass *h, ovl_err *err) {
  while (h->fifo_len + h->n) {
    host_item next = take_first(h);
    int rc = draw_item(h, &next, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

static int on_nvtx(void *ctx, const ovl_nvtx_row *row) {
  host_pass *h = ctx;
  char name[512];
  const char *text = row->name;
  if (row->domain && strcmp(row->domain, "ovl") != 0) {
    snprintf(name, sizeof name, "%s: %s", row->domain, row->name);
    text = name;
  }
  host_item it = {row->start, row->end == OVL_NONE ? row->start : row->end, 0, row->tid, OVL_NONE,
                  xname(h->f->ex, text), row->end == OVL_NONE};
  if (!it.iid) return ovl_oom(h->err, "names");
  return offer(h, &it);
}

static int on_api(void *ctx, const ovl_api_row *row) {
  host_pass *h = ctx;
  if ((++h->api_rows & 0xFFFF) == 0 && h->api_estimate > 0)
    ovl_progress("exporting (host calls)", (double)h->api_rows / (double)h->api_estimate);
  host_item it = {row->start, row->end, 0, row->tid, row->correlation, xfile_string_iid(h->f, row->name), 0};
  if (!it.iid) return ovl_oom(h->err, "names");
  return offer(h, &it);
}

int xhost_export(xfile *f, ovl_err *err) {
  host_pass h;
  memset(&h, 0, sizeof h);
  h.f = f;
  h.err = err;
  h.window = f->reorder_window;
  h.unknown_thread = -1;
  h.last_thread = -1;
  int rc = collect_calls(&h, err);
  if (!rc) rc = ovl_trace_scan_nvtx(f->t, on_nvtx, &h, err);
  if (!rc) rc = flush_items(&h, err);
  if (!rc) rc = drain_calls(&h, NULL, err);
  h.api = 1;
  h.api_estimate = ovl_trace_rows_estimate(f->t, "api");
  /* the rows read beside the analysis (api_capture.h), else the table */
  const ovl_api_capture *held = f->ex->opt->facts ? ovl_api_reader_find(&f->ex->opt->facts->api, ovl_trace_path(f->t)) : NULL;
  if (!rc && held) rc = ovl_api_capture_replay(held, on_api, &h);
  else if (!rc && ovl_trace_has_table(f->t, "api")) rc = ovl_trace_scan_api(f->t, 0, on_api, &h, err);
  if (!rc) rc = flush_items(&h, err);
  for (size_t i = 0; i < h.threads.len; i++) {
    xthread *t = &h.threads.items[i];
    if (t->has_main) {
      if (!rc) rc = xgroup_close(f->ex, &t->main, err);
      else xgroup_free(&t->main);
    }
    if (t->has_api) {
      if (!rc) rc = xgroup_close(f->ex, &t->api, err);
      else xgroup_free(&t->api);
    }
  }
  OVL_VEC_FREE(&h.threads);
  ovl_i64map_free(&h.thread_index);
  free(h.heap);
  free(h.fifo);
  free(h.calls);
  OVL_VEC_FREE(&h.flows);
  return rc;
}
