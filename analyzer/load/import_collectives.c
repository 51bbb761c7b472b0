/* Collective calls found by importers: see import_collectives.h. */
#include "import_collectives.h"

#include <assert.h>

#include "base/i64map.h"
#include "base/nccl_ops.h"
#include "base/sort_inplace.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

int ovl_found_colls_add(ovl_found_colls *fc, const ovl_found_coll *c, ovl_err *err) {
  ovl_found_coll copy = *c;
  copy.found = fc->items.len;
  if (OVL_VEC_PUSH(&fc->items, copy)) return ovl_oom(err, "collective calls");
  return OVL_OK;
}

int ovl_found_colls_reserve(ovl_found_colls *fc, size_t n) {
  /* calloc: pages are touched only as calls are placed. */
  ovl_found_coll *items = calloc(n ? n : 1, sizeof *items);
  if (!items) return -1;
  free(fc->items.items);
  fc->items.items = items;
  fc->items.len = 0;
  fc->items.cap = n ? n : 1;
  return 0;
}

void ovl_found_colls_set(ovl_found_colls *fc, size_t i, const ovl_found_coll *c) {
  assert(i < fc->items.cap);
  fc->items.items[i] = *c;
  fc->items.items[i].found = i;
}

/* A call that needs the host times of its launch: the correlation of its GPU work. */
typedef struct wanted_call {
  int64_t correlation;
  int64_t call;             /* index in the found calls */
} wanted_call;

static int cmp_wanted(const void *pa, const void *pb) {
  const wanted_call *a = pa, *b = pb;
  if (a->correlation != b->correlation) return a->correlation < b->correlation ? -1 : 1;
  return (a->call > b->call) - (a->call < b->call);
}

/* The first of w[0..n) (sorted) whose correlation is >= c. The api rows come mostly in
** correlation order, so the search gallops on from the previous answer `hint` when c lies
** beyond it, and halves the range before it otherwise. */
static size_t first_at_least(const wanted_call *w, size_t n, int64_t c, size_t hint) {
  size_t lo = 0, hi = n;
  if (hint < n && w[hint].correlation < c) {
    lo = hint + 1;  /* everything before lo is below c */
    size_t bound = 1;
    while (lo + bound - 1 < n && w[lo + bound - 1].correlation < c) {
      lo += bound;
      bound *= 2;
    }
    hi = lo + bound - 1 < n ? lo + bound : n;
  } else if (hint < n) {
    hi = hint + 1;
  }
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (w[mid].correlation < c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* 1 when c's host times are to be read back: none known, and its GPU work's correlation is. */
static int needs_launch(const ovl_found_coll *c) {
  return c->row.host_start == OVL_NONE && c->correlation != OVL_NONE;
}

int ovl_found_colls_resolve_launches(ovl_found_colls *fc, ovl_trace_writer *w, const char *trace_path,
                                     ovl_err *err) {
  /* The calls that need host times by (correlation, call): grouped calls share one launch and
  ** sit together, first found first. A sorted array, 16 bytes a call, where a hash map of them
  ** took ~64 (1.37 M calls: 22 MB against 78, the import's peak). */
  size_t n = fc->items.len, nw = 0;
  for (size_t k = 0; k < n; k++) nw += needs_launch(&fc->items.items[k]);
  wanted_call *wanted = malloc((nw ? nw : 1) * sizeof *wanted);
  int rc = wanted ? OVL_OK : ovl_oom(err, "collective calls");
  for (size_t k = 0, i = 0; !rc && k < n; k++) {
    const ovl_found_coll *c = &fc->items.items[k];
    if (needs_launch(c)) wanted[i++] = (wanted_call){c->correlation, (int64_t)k};
  }
  if (!rc) ovl_sort_inplace(wanted, nw, sizeof *wanted, cmp_wanted);  /* no two are equal */
  if (!rc && nw > 0) rc = ovl_tw_commit(w, err);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  if (!rc && nw > 0 &&
      (sqlite3_open_v2(trace_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
       sqlite3_prepare_v2(db, "SELECT start, end, tid, correlation FROM api WHERE correlation IS NOT NULL", -1, &st,
                          NULL) != SQLITE_OK))
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot read back api rows: %s", trace_path,
                  db ? sqlite3_errmsg(db) : "out of memory");
  int step = SQLITE_DONE;
  size_t hint = 0;
  while (!rc && st && (step = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t correlation = sqlite3_column_int64(st, 3);
    size_t i = hint = first_at_least(wanted, nw, correlation, hint);
    for (; i < nw && wanted[i].correlation == correlation; i++) {
      ovl_collective_row *row = &fc->items.items[wanted[i].call].row;
      if (row->host_start != OVL_NONE) break;  /* an earlier api row with this id won */
      row->host_start = sqlite3_column_int64(st, 0);
      row->host_end = sqlite3_column_type(st, 1) == SQLITE_NULL ? OVL_NONE : sqlite3_column_int64(st, 1);
      if (row->tid == OVL_NONE && sqlite3_column_type(st, 2) != SQLITE_NULL) row->tid = sqlite3_column_int64(st, 2);
    }
  }
  if (!rc && step != SQLITE_DONE)
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot read back api rows: %s", trace_path, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(wanted);
  return rc;
}

static int64_t launch_time(const ovl_found_coll *c) {
  return c->row.host_start != OVL_NONE ? c->row.host_start : c->gpu_start;
}

static int cmp_launch(const void *pa, const void *pb) {
  const ovl_found_coll *a = pa, *b = pb;
  int64_t ta = launch_time(a), tb = launch_time(b);
  if ((ta == OVL_NONE) != (tb == OVL_NONE)) return ta == OVL_NONE ? 1 : -1;
  if (ta != tb) return ta < tb ? -1 : 1;
  if (a->gpu_start != b->gpu_start) return a->gpu_start < b->gpu_start ? -1 : 1;
  return (a->found > b->found) - (a->found < b->found);
}

int ovl_found_colls_write(ovl_found_colls *fc, ovl_trace_writer *w, long *written, ovl_err *err) {
  *written = 0;
  /* Launch order; ties keep the order found. */
  size_t n = fc->items.len;
  ovl_found_coll *items = fc->items.items;
  ovl_qsort(items, n, sizeof *items, cmp_launch);
  ovl_i64map next_seq = {0};  /* comm -> next number */
  int rc = OVL_OK;
  long numbered = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    ovl_collective_row row = items[i].row;
    row.id = OVL_NONE;
    /* A call whose operation nothing in the trace names (a kernel named for no operation,
    ** such as ncclDevKernel_Generic, launched before the window without its arguments) is
    ** still a call: written as what is known, an operation the reader accepts as unknown. */
    if (!row.op || !row.op[0]) row.op = ovl_op_name(OVL_OP_UNKNOWN);
    if (row.seq == OVL_NONE && row.comm != OVL_NONE) {
      int64_t s = 0;
      ovl_i64map_get(&next_seq, row.comm, &s);
      row.seq = s;
      numbered++;
      if (ovl_i64map_put(&next_seq, row.comm, s + 1)) rc = ovl_oom(err, "collective numbering");
    }
    int64_t id;
    if (!rc) rc = ovl_tw_collective(w, &row, &id, err);
    if (!rc && items[i].correlation != OVL_NONE) rc = ovl_tw_launch(w, id, items[i].correlation, err);
    if (!rc) (*written)++;
  }
  ovl_i64map_free(&next_seq);
  /* Numbers given here are positions in this trace, not NCCL's: events missing from a trace
  ** shift them, which the cross-rank matching must be able to say. */
  if (!rc) rc = ovl_tw_meta_int(w, "import_seq_numbered", numbered, err);
  return rc;
}

void ovl_found_colls_free(ovl_found_colls *fc) {
  OVL_VEC_FREE(&fc->items);
}
