/* Collective calls found by importers: see import_collectives.h. */
#include "import_collectives.h"

#include <assert.h>

#include "base/i64map.h"
#include "base/nccl_ops.h"

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

int ovl_found_colls_resolve_launches(ovl_found_colls *fc, ovl_trace_writer *w, const char *trace_path,
                                     ovl_err *err) {
  /* correlation -> first call that needs host times; later ones chained through next[]
  ** (grouped calls share one launch). */
  size_t n = fc->items.len;
  ovl_i64map wanted = {0};
  int64_t *next = malloc((n ? n : 1) * sizeof *next);
  int rc = next ? OVL_OK : ovl_oom(err, "collective calls");
  for (size_t k = n; !rc && k-- > 0;) {
    const ovl_found_coll *c = &fc->items.items[k];
    next[k] = -1;
    if (c->row.host_start != OVL_NONE || c->correlation == OVL_NONE) continue;
    ovl_i64map_get(&wanted, c->correlation, &next[k]);
    if (ovl_i64map_put(&wanted, c->correlation, (int64_t)k)) rc = ovl_oom(err, "collective calls");
  }
  if (!rc && wanted.len > 0) rc = ovl_tw_commit(w, err);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  if (!rc && wanted.len > 0 &&
      (sqlite3_open_v2(trace_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
       sqlite3_prepare_v2(db, "SELECT start, end, tid, correlation FROM api WHERE correlation IS NOT NULL", -1, &st,
                          NULL) != SQLITE_OK))
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot read back api rows: %s", trace_path,
                  db ? sqlite3_errmsg(db) : "out of memory");
  int step = SQLITE_DONE;
  while (!rc && st && (step = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t k;
    if (!ovl_i64map_get(&wanted, sqlite3_column_int64(st, 3), &k)) continue;
    for (; k >= 0; k = next[k]) {
      ovl_collective_row *row = &fc->items.items[k].row;
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
  ovl_i64map_free(&wanted);
  free(next);
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
