/*
** Reader for ovl trace files: see trace_reader.h.
**
** The work cursor reads each of kernels and memops in table (insertion) order and holds
** back at most `reorder_window` rows to restore start order: the capture library inserts
** rows roughly in start order (activity buffers complete slightly out of order), so this
** costs O(1) per in-order row, where an ORDER BY would make SQLite sort the whole table.
** If a row arrives that is earlier than one already emitted, the cursor fails with
** OVL_EUNSORTED and the caller retries with SQLite sorting.
*/
#include "trace_reader.h"
#include "scan_vfs.h"
#include "table_pages.h"

#include "base/huge_pages.h"
#include "base/i64map.h"
#include "base/sane_values.h"
#include "base/strmap.h"
#include "base/text_clean.h"
#include "base/vec.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ovl_trace {
  sqlite3 *db;
  char *path;
  char **meta_keys, **meta_vals;
  size_t nmeta;
  ovl_i64map string_index;   /* strings.id -> index into strings */
  char **strings;
  size_t nstrings;
  int64_t string_limit;
  ovl_bad_rows bad;
  int counted;               /* in open_traces */
  struct api_scan *api_scan; /* the api scan running on db: ovl_push_api's rows go to it */
  ovl_strmap coll_texts;     /* the collectives rows' texts (ovl_coll_rec.op ...) */
};

/* ---------------------------------------------------------------------------------- */
/* Opening and validation                                                              */
/* ---------------------------------------------------------------------------------- */

static int db_error(ovl_trace *t, ovl_err *err, int src) {
  if (src == SQLITE_NOMEM) return ovl_oom(err, "SQLite");
  if (src == SQLITE_CORRUPT || src == SQLITE_NOTADB || src == SQLITE_IOERR)
    return ovl_fail(err, OVL_EUSER, "%s: corrupt or truncated trace database (%s)", t->path,
                    sqlite3_errmsg(t->db));
  return ovl_fail(err, OVL_EUSER, "%s: cannot read the trace: %s", t->path, sqlite3_errmsg(t->db));
}

static int prepare(ovl_trace *t, const char *sql, sqlite3_stmt **st, ovl_err *err) {
  int src = sqlite3_prepare_v2(t->db, sql, -1, st, NULL);
  if (src != SQLITE_OK) return db_error(t, err, src);
  return OVL_OK;
}

/* The end of a read loop: the error that stopped the rows early (src, the last step's result),
** if no other came first, and the statement finalized. */
static int end_rows(ovl_trace *t, sqlite3_stmt *st, int rc, int src, ovl_err *err) {
  if (!rc && src != SQLITE_DONE) rc = db_error(t, err, src);
  sqlite3_finalize(st);
  return rc;
}

/* Hands the rows of vector v out through out and n when rc is OVL_OK, else frees them;
** evaluates to rc (a variable: read twice). */
#define HAND_OUT(v, out, n, rc) ((rc) ? (OVL_VEC_FREE(v), (rc)) : (*(out) = (v)->items, *(n) = (v)->len, OVL_OK))

int ovl_trace_has_table(const ovl_trace *t, const char *table) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(t->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name=?",
                         -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return found;
}

/* Fails when an existing table lacks one of the contract's columns. */
static int check_columns(ovl_trace *t, const char *table, const char *const *cols, ovl_err *err) {
  if (!ovl_trace_has_table(t, table)) return OVL_OK;
  for (int i = 0; cols[i]; i++) assert(i < 64);  /* the bitmap below */
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, sql, &st, err);
  uint64_t found = 0;  /* bit i: cols[i] is there */
  int src;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    for (int i = 0; cols[i]; i++)
      if (name && strcmp(name, cols[i]) == 0) found |= UINT64_C(1) << i;
  }
  sqlite3_finalize(st);
  for (int i = 0; !rc && cols[i]; i++)
    if (!(found & (UINT64_C(1) << i)))
      rc = ovl_fail(err, OVL_EUSER, "%s: table %s has no column '%s'", t->path, table, cols[i]);
  return rc;
}

/* The required columns are those schema/ovl.sql does not mark optional (store/schema_def.h). */
static int validate_tables(ovl_trace *t, ovl_err *err) {
  static const char *const kernels[] = {OVL_SCHEMA_KERNELS_REQUIRED, NULL};
  static const char *const memops[] = {OVL_SCHEMA_MEMOPS_REQUIRED, NULL};
  static const char *const colls[] = {OVL_SCHEMA_COLLECTIVES_REQUIRED, NULL};
  static const char *const launches[] = {OVL_SCHEMA_COLLECTIVE_LAUNCHES_REQUIRED, NULL};
  static const char *const nvtx[] = {OVL_SCHEMA_NVTX_REQUIRED, NULL};
  static const char *const api[] = {OVL_SCHEMA_API_REQUIRED, NULL};
  static const char *const meta[] = {OVL_SCHEMA_META_REQUIRED, NULL};
  static const char *const strings[] = {OVL_SCHEMA_STRINGS_REQUIRED, NULL};
  if (!ovl_trace_has_table(t, "meta") || !ovl_trace_has_table(t, "kernels"))
    return ovl_fail(err, OVL_EUSER, "%s: SQLite database without ovl trace tables (meta, kernels)", t->path);
  int rc = check_columns(t, "meta", meta, err);
  if (!rc) rc = check_columns(t, "strings", strings, err);
  if (!rc) rc = check_columns(t, "kernels", kernels, err);
  if (!rc) rc = check_columns(t, "memops", memops, err);
  if (!rc) rc = check_columns(t, "collectives", colls, err);
  if (!rc) rc = check_columns(t, "collective_launches", launches, err);
  if (!rc) rc = check_columns(t, "nvtx", nvtx, err);
  if (!rc) rc = check_columns(t, "api", api, err);
  return rc;
}

static int load_meta(ovl_trace *t, ovl_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, "SELECT key, value FROM meta", &st, err);
  OVL_VEC(char *) keys = {0};
  OVL_VEC(char *) vals = {0};
  int src = SQLITE_DONE;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    const char *k = (const char *)sqlite3_column_text(st, 0);
    const char *v = (const char *)sqlite3_column_text(st, 1);
    if (!k) continue;
    char *kc = strdup(k), *vc = ovl_text_clean_dup(v ? v : "");
    if (!kc || !vc || OVL_VEC_RESERVE(&keys, 1) || OVL_VEC_RESERVE(&vals, 1)) {
      free(kc);
      free(vc);
      rc = ovl_oom(err, "meta");
      break;
    }
    keys.items[keys.len++] = kc;
    vals.items[vals.len++] = vc;
  }
  rc = end_rows(t, st, rc, src, err);
  t->meta_keys = keys.items;
  t->meta_vals = vals.items;
  t->nmeta = keys.len;
  if (rc) return rc;

  const char *version = ovl_trace_meta(t, "schema_version");
  if (!version) return ovl_fail(err, OVL_EUSER, "%s: meta has no schema_version", t->path);
  char *end = NULL;
  long v = strtol(version, &end, 10);
  if (end == version || *end || v < 1)
    return ovl_fail(err, OVL_EUSER, "%s: invalid schema_version '%s'", t->path, version);
  if (v > OVL_SCHEMA_VERSION)
    return ovl_fail(err, OVL_EUSER,
                    "%s: schema_version %ld is newer than this ovl understands (%d): upgrade ovl", t->path,
                    v, OVL_SCHEMA_VERSION);
  return OVL_OK;
}

static int load_strings(ovl_trace *t, ovl_err *err) {
  if (!ovl_trace_has_table(t, "strings")) return OVL_OK;
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, "SELECT id, value FROM strings", &st, err);
  OVL_VEC(char *) strs = {0};
  int src = SQLITE_DONE;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    const char *v = (const char *)sqlite3_column_text(st, 1);
    if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || !v) {
      t->bad.strings++;
      continue;
    }
    int64_t id = sqlite3_column_int64(st, 0);
    if (id < 0 || id == INT64_MAX) { /* ids index tables: id + 1 must be a size */
      t->bad.strings++;
      continue;
    }
    char *copy = ovl_text_clean_dup(v);
    if (!copy || OVL_VEC_PUSH(&strs, copy) || ovl_i64map_put(&t->string_index, id, (int64_t)strs.len - 1)) {
      free(copy);
      rc = ovl_oom(err, "strings");
      break;
    }
    if (id >= t->string_limit) t->string_limit = id + 1;
  }
  rc = end_rows(t, st, rc, src, err);
  t->strings = strs.items;
  t->nstrings = strs.len;
  return rc;
}

/* Traces open in this process: the analyses that may be reading at once (a job's workers). */
static atomic_int open_traces;

/* Every connection of the reader: read-only, one thread each, through the scan VFS (its
** forward scans read the file in windows: load/scan_vfs.h). */
static int open_connection(const char *path, sqlite3 **db) {
  return sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, ovl_scan_vfs_name());
}

/* Big tables' rows are pushed out of SQLite through functions of ours (see push_function). */
static int push_function(sqlite3 *db, const char *name, int nargs, void *ctx,
                         void (*fn)(sqlite3_context *, int, sqlite3_value **));
static void push_api(sqlite3_context *sctx, int argc, sqlite3_value **argv);
struct api_scan;
static void api_row(struct api_scan *a, const ovl_api_row *r);

int ovl_trace_open(const char *path, ovl_trace **out, ovl_err *err) {
  *out = NULL;
  ovl_trace *t = calloc(1, sizeof *t);
  if (!t || !(t->path = strdup(path))) {
    free(t);
    return ovl_oom(err, "trace");
  }
  int rc = OVL_OK;
  if (open_connection(path, &t->db) != SQLITE_OK)
    rc = t->db ? ovl_fail(err, OVL_EUSER, "%s: cannot open: %s", path, sqlite3_errmsg(t->db))
               : ovl_oom(err, "SQLite connection");
  if (!rc) {
    /* A bounded page cache: memory must not grow with the size of the trace. No mmap_size:
    ** mapped pages would count in the resident size as the file is read, and on the
    ** development VM a page fault costs more than the pread it saves (bench/results/report-3m.md). */
    sqlite3_exec(t->db, "PRAGMA cache_size=-256; PRAGMA query_only=1;", NULL, NULL, NULL);
    if (push_function(t->db, "ovl_push_api", -1, &t->api_scan, push_api) != SQLITE_OK)
      rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot read api rows: %s", path, sqlite3_errmsg(t->db));
    if (!rc) rc = validate_tables(t, err);
  }
  if (!rc) rc = load_meta(t, err);
  if (!rc) rc = load_strings(t, err);
  if (rc) {
    ovl_trace_close(t);
    return rc;
  }
  atomic_fetch_add(&open_traces, 1);
  t->counted = 1;
  *out = t;
  return OVL_OK;
}

void ovl_trace_close(ovl_trace *t) {
  if (!t) return;
  if (t->counted) atomic_fetch_sub(&open_traces, 1);
  sqlite3_close(t->db);
  for (size_t i = 0; i < t->nmeta; i++) {
    free(t->meta_keys[i]);
    free(t->meta_vals[i]);
  }
  free(t->meta_keys);
  free(t->meta_vals);
  for (size_t i = 0; i < t->nstrings; i++) free(t->strings[i]);
  free(t->strings);
  ovl_i64map_free(&t->string_index);
  ovl_strmap_free(&t->coll_texts);
  free(t->path);
  free(t);
}

const char *ovl_trace_path(const ovl_trace *t) { return t->path; }

int64_t ovl_trace_rows_estimate(const ovl_trace *t, const char *table) {
  static const char *const known[] = {"kernels", "memops", "api", "nvtx"};
  char sql[64];
  int64_t n = 0;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
    if (strcmp(table, known[i]) != 0 || !ovl_trace_has_table(t, table)) continue;
    snprintf(sql, sizeof sql, "SELECT max(rowid) FROM %s", known[i]);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  return n > 0 ? n : 0;
}

const char *ovl_trace_meta(const ovl_trace *t, const char *key) {
  for (size_t i = 0; i < t->nmeta; i++)
    if (strcmp(t->meta_keys[i], key) == 0) return t->meta_vals[i];
  return NULL;
}

int ovl_trace_comm_names(const ovl_trace *t, int (*fn)(void *ctx, int64_t comm, const char *name), void *ctx) {
  size_t n = strlen(OVL_COMM_NAME_META);
  for (size_t i = 0; i < t->nmeta; i++) {
    if (strncmp(t->meta_keys[i], OVL_COMM_NAME_META, n) != 0 || !t->meta_vals[i] || !t->meta_vals[i][0]) continue;
    char *end = NULL;
    errno = 0;
    long long comm = strtoll(t->meta_keys[i] + n, &end, 10);
    if (end == t->meta_keys[i] + n || *end || errno) continue;  /* not a comm id: not ours */
    int rc = fn(ctx, (int64_t)comm, t->meta_vals[i]);
    if (rc) return rc;
  }
  return 0;
}

int64_t ovl_trace_meta_int(const ovl_trace *t, const char *key, int64_t fallback) {
  const char *v = ovl_trace_meta(t, key);
  if (!v || !*v) return fallback;
  char *end = NULL;
  long long x = strtoll(v, &end, 10);
  return (end == v || *end) ? fallback : (int64_t)x;
}

const char *ovl_trace_string(const ovl_trace *t, int64_t id) {
  int64_t idx;
  if (id == OVL_NONE || !ovl_i64map_get(&t->string_index, id, &idx)) return NULL;
  return t->strings[idx];
}

int64_t ovl_trace_string_limit(const ovl_trace *t) { return t->string_limit; }

const ovl_bad_rows *ovl_trace_bad_rows(const ovl_trace *t) { return &t->bad; }

/* ---------------------------------------------------------------------------------- */
/* Small tables                                                                        */
/* ---------------------------------------------------------------------------------- */

/* Set by col_int when a value is not an integer (TEXT or BLOB in an INTEGER column, or a
** fraction): the row is then skipped and counted, as a NULL required field is. Per thread:
** the work tables are decoded on reader threads. */
static _Thread_local int row_malformed;

static int64_t val_int(sqlite3_value *v) {
  int type = sqlite3_value_type(v);
  if (type == SQLITE_INTEGER) return sqlite3_value_int64(v);
  if (type != SQLITE_NULL) row_malformed = 1;
  return OVL_NONE;
}

/* One call into the statement per column: the value's type and integer come from it. */
static int64_t col_int(sqlite3_stmt *st, int i) { return val_int(sqlite3_column_value(st, i)); }

/* An optional time: NULL, or a sane one. */
static int opt_time_ok(int64_t t) { return t == OVL_NONE || ovl_time_ok(t); }
/* An optional size or count: NULL, or within [0, limit]. */
static int opt_size_ok(int64_t v, int64_t limit) { return v == OVL_NONE || (v >= 0 && v <= limit); }

static void val_text(sqlite3_value *v, char *buf, size_t len) {
  const char *s = (const char *)sqlite3_value_text(v);
  ovl_text_clean_into(s ? s : "", buf, len);
}

static void col_text(sqlite3_stmt *st, int i, char *buf, size_t len) { val_text(sqlite3_column_value(st, i), buf, len); }

/* The same for a value read from the table's pages (load/table_pages.h): what val_int and
** val_text give for the value SQLite would have handed over. */
static int64_t tp_int(const ovl_tp_value *v) {
  if (v->type == SQLITE_INTEGER) return v->i;
  if (v->type != SQLITE_NULL) row_malformed = 1;
  return OVL_NONE;
}

/* Text as sqlite3_value_text gives it: bytes up to the first NUL (a blob's too), an integer
** in decimal, a real as SQLite itself writes it (asked of db: a rare value in a text column). */
static void tp_text(sqlite3 *db, const ovl_tp_value *v, char *buf, size_t len) {
  char tmp[128];
  tmp[0] = 0;
  if (v->type == SQLITE_TEXT || v->type == SQLITE_BLOB) {
    /* ovl_text_clean_into reads at most 4 bytes per byte it writes, and a sequence ahead. */
    size_t n = v->n < sizeof tmp - 1 ? v->n : sizeof tmp - 1;
    assert(4 * len + 4 < sizeof tmp);
    memcpy(tmp, v->p, n);
    tmp[n] = 0;
  } else if (v->type == SQLITE_INTEGER) {
    snprintf(tmp, sizeof tmp, "%lld", (long long)v->i);
  } else if (v->type == SQLITE_FLOAT) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT CAST(?1 AS TEXT)", -1, &st, NULL) == SQLITE_OK) {
      sqlite3_bind_double(st, 1, v->r);
      if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(tmp, sizeof tmp, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  ovl_text_clean_into(tmp, buf, len);
}

/* Big tables are read with their rows pushed out of SQLite: `SELECT 1 FROM t WHERE
** <function>(columns)` calls a function of ours with each row's values, in table order, and
** sqlite3_step returns only when that function says stop (true). This costs what SQLite's own
** aggregates cost per row (count(*), sum()), where a row per step costs a return to the caller
** and a call per column. Only for scans in table order: SQLite evaluates WHERE before an
** ORDER BY sorts. Direct-only: a view or trigger of the file cannot call it. */
static int push_function(sqlite3 *db, const char *name, int nargs, void *ctx,
                         void (*fn)(sqlite3_context *, int, sqlite3_value **)) {
  return sqlite3_create_function_v2(db, name, nargs, SQLITE_UTF8 | SQLITE_DIRECTONLY, ctx, fn, NULL, NULL, NULL);
}

/* Whether a table of the trace has an (optional) column. */
static int has_column(ovl_trace *t, const char *table, const char *column) {
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT %s FROM %s LIMIT 0", column, table);
  sqlite3_stmt *st = NULL;
  int ok = sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) == SQLITE_OK;
  sqlite3_finalize(st);
  return ok;
}

/* Doubles a vector that may grow to millions of rows, on huge pages once it is large
** (base/huge_pages.h): its pages are touched once, a fault each otherwise. */
static int grow_huge(void **items, size_t *cap, size_t size) {
  size_t ncap = *cap ? *cap * 2 : 64;
  if (ncap > SIZE_MAX / size) return -1;
  void *p = ovl_huge_realloc(*items, *cap * size, ncap * size);
  if (!p) return -1;
  *items = p;
  *cap = ncap;
  return 0;
}

/* Room for the collectives rows before reading them: their largest id (no scan; ids are
** usually 1..n), believed only when the file could hold that many rows of at least 16 bytes.
** One allocation, advised before its first touch, instead of doublings. */
static size_t collectives_hint(ovl_trace *t) {
  const int64_t min_row_bytes = 16;
  int64_t max_id = 0, file_bytes = 0;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(t->db, "SELECT max(rowid) FROM collectives", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    max_id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  st = NULL;
  if (sqlite3_prepare_v2(t->db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", -1, &st,
                         NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    file_bytes = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return max_id > 0 && max_id <= file_bytes / min_row_bytes ? (size_t)max_id : 0;
}

/* A collectives row's text column i (cut to len - 1 bytes) as the trace's interned copy; the
** previous row's when equal (rows repeat a few values: one compare instead of a hash).
** NULL when memory runs out. */
static const char *coll_text(ovl_trace *t, sqlite3_stmt *st, int i, size_t len, const char **last) {
  char buf[OVL_COLL_TEXT_BYTES];
  assert(len <= sizeof buf);
  col_text(st, i, buf, len);
  if (*last && strcmp(*last, buf) == 0) return *last;
  const char *kept = ovl_strmap_intern(&t->coll_texts, buf);
  if (kept) *last = kept;
  return kept;
}

int ovl_trace_read_collectives(ovl_trace *t, ovl_coll_rec **out, size_t *n, ovl_err *err) {
  *out = NULL;
  *n = 0;
  if (!ovl_trace_has_table(t, "collectives")) return OVL_OK;
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT id, comm, rank, nranks, seq, op, count, dtype, bytes, redop, peer, device, stream, host_start,"
           " host_end, tid, %s, %s, %s FROM collectives ORDER BY id",
           has_column(t, "collectives", "group_id") ? "group_id" : "NULL",
           has_column(t, "collectives", "algorithm") ? "algorithm" : "NULL",
           has_column(t, "collectives", "protocol") ? "protocol" : "NULL");
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, sql, &st, err);
  OVL_VEC(ovl_coll_rec) v = {0};
  size_t hint = rc ? 0 : collectives_hint(t);
  if (hint && (v.items = ovl_huge_malloc(hint * sizeof *v.items))) v.cap = hint;
  int src = SQLITE_DONE;
  t->bad.collectives = 0;
  const char *last[5] = {NULL, NULL, NULL, NULL, NULL};  /* per text column: the previous row's */
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    ovl_coll_rec c;
    row_malformed = 0;
    c.id = col_int(st, 0);
    c.comm = col_int(st, 1);
    c.rank = col_int(st, 2);
    c.nranks = col_int(st, 3);
    c.seq = col_int(st, 4);
    c.op = coll_text(t, st, 5, OVL_COLL_TEXT_BYTES, &last[0]);
    c.count = col_int(st, 6);
    c.dtype = coll_text(t, st, 7, OVL_COLL_TEXT_BYTES, &last[1]);
    c.bytes = col_int(st, 8);
    c.redop = coll_text(t, st, 9, OVL_COLL_TEXT_BYTES, &last[2]);
    c.peer = col_int(st, 10);
    c.device = col_int(st, 11);
    c.stream = col_int(st, 12);
    c.host_start = col_int(st, 13);
    c.host_end = col_int(st, 14);
    c.tid = col_int(st, 15);
    c.group_id = col_int(st, 16);
    c.algorithm = coll_text(t, st, 17, OVL_COLL_TEXT_BYTES, &last[3]);
    c.protocol = coll_text(t, st, 18, OVL_COLL_PROTOCOL_BYTES, &last[4]);
    if (!c.op || !c.dtype || !c.redop || !c.algorithm || !c.protocol) {
      rc = ovl_oom(err, "collectives");
      break;
    }
    if (row_malformed || c.id == OVL_NONE || !c.op[0] || !opt_time_ok(c.host_start) || !opt_time_ok(c.host_end) ||
        (c.host_start != OVL_NONE && c.host_end != OVL_NONE && c.host_end < c.host_start) ||
        !opt_size_ok(c.bytes, OVL_BYTES_LIMIT) || !opt_size_ok(c.count, OVL_BYTES_LIMIT) ||
        !opt_size_ok(c.nranks, INT32_MAX) || !opt_size_ok(c.rank, INT32_MAX) || c.nranks == 0) {
      t->bad.collectives++;
      continue;
    }
    if (v.len == v.cap && grow_huge((void **)&v.items, &v.cap, sizeof *v.items)) {
      rc = ovl_oom(err, "collectives");
      break;
    }
    v.items[v.len++] = c;
  }
  rc = end_rows(t, st, rc, src, err);
  return HAND_OUT(&v, out, n, rc);
}

int ovl_trace_read_launches(ovl_trace *t, ovl_launch_rec **out, size_t *n, ovl_err *err) {
  *out = NULL;
  *n = 0;
  if (!ovl_trace_has_table(t, "collective_launches")) return OVL_OK;
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, "SELECT collective, correlation FROM collective_launches", &st, err);
  OVL_VEC(ovl_launch_rec) v = {0};
  int src = SQLITE_DONE;
  t->bad.launches = 0;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    row_malformed = 0;
    ovl_launch_rec l = {col_int(st, 0), col_int(st, 1)};
    if (row_malformed || l.collective == OVL_NONE || l.correlation == OVL_NONE) {
      t->bad.launches++;
      continue;
    }
    if (OVL_VEC_PUSH(&v, l)) {
      rc = ovl_oom(err, "collective_launches");
      break;
    }
  }
  rc = end_rows(t, st, rc, src, err);
  return HAND_OUT(&v, out, n, rc);
}

/* One span per collective: its channels' hull, the earliest end, re-placed with the final
** offset of their device where the trace has gpu_timer_offsets. */
static const char channel_spans_sql[] =
  "SELECT h.collective, MAX(h.device), MIN(COALESCE(h.timer_start + o.offset, h.start)),"
  " MAX(COALESCE(h.timer_end + o.offset, h.end)), MIN(COALESCE(h.timer_end + o.offset, h.end)), MAX(o.error),"
  " COUNT(*) FROM collective_channels h LEFT JOIN gpu_timer_offsets o ON o.device = COALESCE(h.device, -1)"
  " GROUP BY h.collective ORDER BY h.collective";
static const char channel_spans_as_written_sql[] =
  "SELECT collective, MAX(device), MIN(start), MAX(end), MIN(end), NULL, COUNT(*) FROM collective_channels"
  " GROUP BY collective ORDER BY collective";

int ovl_trace_read_channels(ovl_trace *t, ovl_channel_span **out, size_t *n, ovl_err *err) {
  *out = NULL;
  *n = 0;
  t->bad.channels = 0;
  if (!ovl_trace_has_table(t, "collective_channels")) return OVL_OK;
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, ovl_trace_has_table(t, "gpu_timer_offsets") ? channel_spans_sql : channel_spans_as_written_sql,
                   &st, err);
  OVL_VEC(ovl_channel_span) v = {0};
  int src = SQLITE_DONE;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    row_malformed = 0;
    ovl_channel_span c = {col_int(st, 0), col_int(st, 1), col_int(st, 2), col_int(st, 3),
                          col_int(st, 4), col_int(st, 5), col_int(st, 6)};
    if (row_malformed || c.collective == OVL_NONE || c.start == OVL_NONE || c.end == OVL_NONE ||
        c.first_end == OVL_NONE || !ovl_time_ok(c.start) || !ovl_time_ok(c.end) || c.end < c.start ||
        c.first_end < c.start || !opt_size_ok(c.error, OVL_SPAN_LIMIT_NS) || c.end - c.start > OVL_SPAN_LIMIT_NS || (c.device != OVL_NONE && c.device < 0)) {
      t->bad.channels++;
      continue;
    }
    if (OVL_VEC_PUSH(&v, c)) {
      rc = ovl_oom(err, "collective channels");
      break;
    }
  }
  rc = end_rows(t, st, rc, src, err);
  return HAND_OUT(&v, out, n, rc);
}

/* ---------------------------------------------------------------------------------- */
/* Streams                                                                             */
/* ---------------------------------------------------------------------------------- */


/* Whether tables are decoded on reader threads (trace_reader.h): when every open trace can
** have two cores, one for its reader and one for the analysis, and there are enough cores that
** one is likely free. Not by the load average: it lags by a minute and counts this process's
** own earlier work. */
static int reader_threads_wanted(void) {
  const char *env = getenv("OVL_READER_THREADS");
  if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) return env[0] == '1';
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long readers = atomic_load(&open_traces);
  if (readers < 1) readers = 1;
  return cpus >= OVL_READER_THREAD_MIN_CPUS && cpus >= 2 * readers;
}

int ovl_trace_scan_nvtx(ovl_trace *t, ovl_nvtx_fn fn, void *ctx, ovl_err *err) {
  if (!ovl_trace_has_table(t, "nvtx")) return OVL_OK;
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, "SELECT start, end, tid, domain, name FROM nvtx", &st, err);
  int src = SQLITE_DONE;
  t->bad.nvtx = 0;
  while (!rc && (src = sqlite3_step(st)) == SQLITE_ROW) {
    ovl_nvtx_row r;
    row_malformed = 0;
    r.start = col_int(st, 0);
    r.end = col_int(st, 1);
    r.tid = col_int(st, 2);
    r.domain = (const char *)sqlite3_column_text(st, 3);
    r.name = (const char *)sqlite3_column_text(st, 4);
    if (row_malformed || r.start == OVL_NONE || !r.name || !ovl_time_ok(r.start) || !opt_time_ok(r.end) ||
        (r.end != OVL_NONE && r.end < r.start)) {
      t->bad.nvtx++;
      continue;
    }
    char *domain = NULL, *name = NULL; /* cleaned copies, only when needed */
    if (r.domain && !ovl_text_is_clean(r.domain) && !(r.domain = domain = ovl_text_clean_dup(r.domain)))
      rc = ovl_oom(err, "nvtx");
    if (!rc && !ovl_text_is_clean(r.name) && !(r.name = name = ovl_text_clean_dup(r.name))) rc = ovl_oom(err, "nvtx");
    if (!rc) rc = fn(ctx, &r);
    free(domain);
    free(name);
  }
  if (!rc && src != SQLITE_DONE && src != SQLITE_ROW) rc = db_error(t, err, src);
  sqlite3_finalize(st);
  return rc;
}

/* One scan of api rows: what the pushed rows go to. */
typedef struct api_scan {
  int launches_only;
  ovl_api_fn fn;
  void *ctx;
  long bad;
  int rc;                  /* fn's first non-zero return: ends the scan */
} api_scan;

/* ovl_push_api(start, correlation) or (start, end, tid, correlation, name): a row to the
** callback of the scan running on the connection (its user data: where that scan is
** registered; no per-row lookup of a bound pointer). True (stop) once the callback fails. */
static void push_api(sqlite3_context *sctx, int argc, sqlite3_value **argv) {
  api_scan *a = *(api_scan **)sqlite3_user_data(sctx);
  if (!a || (argc != (a->launches_only ? 2 : 5))) {
    sqlite3_result_error(sctx, "ovl_push_api: not an api scan", -1);
    return;
  }
  row_malformed = 0;
  ovl_api_row r = {val_int(argv[0]), OVL_NONE, OVL_NONE, OVL_NONE, OVL_NONE};
  if (a->launches_only) {
    r.correlation = val_int(argv[1]);
  } else {
    r.end = val_int(argv[1]);
    r.tid = val_int(argv[2]);
    r.correlation = val_int(argv[3]);
    r.name = val_int(argv[4]);
  }
  api_row(a, &r);
  sqlite3_result_int(sctx, a->rc != 0);
}

/* An api row, decoded (row_malformed set by the decoding), to the callback or counted bad. */
static void api_row(api_scan *a, const ovl_api_row *r) {
  if (row_malformed || r->start == OVL_NONE || r->correlation == OVL_NONE || !ovl_time_ok(r->start) ||
      (!a->launches_only && (r->end == OVL_NONE || !ovl_interval_ok(r->start, r->end))))
    a->bad++;
  else
    a->rc = a->fn(a->ctx, r);
}

/* The api rows with rowid in [lo, hi] read from the table's pages: 1 when done so (rc into
** *rc), 0 when they must be read through SQL (nothing was read). */
static int scan_api_pages(ovl_trace *t, sqlite3 *db, int launches_only, int64_t lo, int64_t hi, ovl_api_fn fn,
                          void *ctx, long *bad, int *rc, ovl_err *err) {
  static const char *const all[] = {OVL_SCHEMA_API_COLUMNS};  /* start, end, tid, correlation, name */
  _Static_assert(OVL_SCHEMA_API_NCOLUMNS == 5, "the api reader's columns (push_api)");
  const char *const launches[] = {all[0], all[3]};
  static const int kinds[] = {OVL_TP_INT, OVL_TP_INT, OVL_TP_INT, OVL_TP_INT, OVL_TP_INT};
  ovl_tp_scan *tp = NULL;
  *rc = ovl_tp_open(db, t->path, "api", launches_only ? launches : all, kinds, launches_only ? 2 : 5, lo, hi, &tp, err);
  if (*rc) return 1;
  if (!tp) return 0;
  api_scan scan = {launches_only, fn, ctx, 0, OVL_OK};
  ovl_tp_value v[5];
  int r = 0;
  while (!scan.rc && (r = ovl_tp_next(tp, v, err)) > 0) {
    row_malformed = 0;
    ovl_api_row row = {tp_int(&v[0]), OVL_NONE, OVL_NONE, OVL_NONE, OVL_NONE};
    if (launches_only) {
      row.correlation = tp_int(&v[1]);
    } else {
      row.end = tp_int(&v[1]);
      row.tid = tp_int(&v[2]);
      row.correlation = tp_int(&v[3]);
      row.name = tp_int(&v[4]);
    }
    api_row(&scan, &row);
  }
  *rc = scan.rc ? scan.rc : r < 0 ? -r : OVL_OK;
  ovl_tp_close(tp);
  *bad += scan.bad;
  return 1;
}

/* Scans api rows with rowid in [lo, hi] (the whole table for [INT64_MIN, INT64_MAX]: no
** rowid test per row) on connection db, whose ovl_push_api hands rows to *slot, counting
** invalid ones in *bad. */
static int scan_api_range(ovl_trace *t, sqlite3 *db, api_scan **slot, int launches_only, int64_t lo, int64_t hi,
                          ovl_api_fn fn, void *ctx, long *bad, ovl_err *err) {
  int rc = OVL_OK;
  if (scan_api_pages(t, db, launches_only, lo, hi, fn, ctx, bad, &rc, err)) return rc;
  sqlite3_stmt *st = NULL;
  /* The columns in the order stored (start, end, tid, correlation, name). */
  static const char *const sqls[2][2] = {
    {"SELECT 1 FROM api WHERE rowid BETWEEN ?1 AND ?2 AND ovl_push_api(start, end, tid, correlation, name)",
     "SELECT 1 FROM api WHERE rowid BETWEEN ?1 AND ?2 AND ovl_push_api(start, correlation)"},
    {"SELECT 1 FROM api WHERE ovl_push_api(start, end, tid, correlation, name)",
     "SELECT 1 FROM api WHERE ovl_push_api(start, correlation)"}};
  const char *sql = sqls[lo == INT64_MIN && hi == INT64_MAX][launches_only != 0];
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return ovl_fail(err, OVL_EUSER, "%s: cannot read the trace: %s", t->path, sqlite3_errmsg(db));
  api_scan scan = {launches_only, fn, ctx, 0, OVL_OK};
  if (lo != INT64_MIN || hi != INT64_MAX) {
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
  }
  api_scan *outer = *slot;  /* a scan from inside another's callback: the outer one resumes after */
  *slot = &scan;
  int src = sqlite3_step(st);  /* one step: a row only when the callback stopped the scan */
  *slot = outer;
  rc = scan.rc;
  if (!rc && src != SQLITE_DONE)
    rc = src == SQLITE_NOMEM ? ovl_oom(err, "SQLite")
                             : ovl_fail(err, OVL_EUSER, "%s: corrupt or truncated trace database (%s)", t->path,
                                        sqlite3_errmsg(db));
  sqlite3_finalize(st);
  *bad += scan.bad;
  return rc;
}

int ovl_trace_scan_api(ovl_trace *t, int launches_only, ovl_api_fn fn, void *ctx, ovl_err *err) {
  return ovl_trace_scan_api_split(t, launches_only, 1, fn, &ctx, err);
}

/* The single integer a bound query returns into *out; *out is left alone when it is NULL
** (an empty table). */
static int rowid_bound(ovl_trace *t, const char *sql, int64_t *out, ovl_err *err) {
  sqlite3_stmt *st = NULL;
  int rc = prepare(t, sql, &st, err);
  int src = rc ? SQLITE_DONE : sqlite3_step(st);
  if (src == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) *out = sqlite3_column_int64(st, 0);
  if (!rc && src != SQLITE_ROW && src != SQLITE_DONE) rc = db_error(t, err, src);
  sqlite3_finalize(st);
  return rc;
}

typedef struct api_part {
  ovl_trace *t;
  int launches_only;
  int64_t lo, hi;
  ovl_api_fn fn;
  void *ctx;
  long bad;
  int rc;
  ovl_err err;
} api_part;

static void *api_part_main(void *arg) {
  api_part *p = arg;
  sqlite3 *db = NULL;
  api_scan *slot = NULL;
  if (open_connection(p->t->path, &db) != SQLITE_OK)
    p->rc = ovl_fail(&p->err, OVL_EUSER, "%s: cannot open: %s", p->t->path, db ? sqlite3_errmsg(db) : "out of memory");
  else if (push_function(db, "ovl_push_api", -1, &slot, push_api) != SQLITE_OK)
    p->rc = ovl_fail(&p->err, OVL_EINTERNAL, "%s: cannot read api rows: %s", p->t->path, sqlite3_errmsg(db));
  else
    p->rc = scan_api_range(p->t, db, &slot, p->launches_only, p->lo, p->hi, p->fn, p->ctx, &p->bad, &p->err);
  sqlite3_close(db);
  return NULL;
}

int ovl_trace_scan_api_split(ovl_trace *t, int launches_only, size_t nparts, ovl_api_fn fn, void **ctxs,
                             ovl_err *err) {
  t->bad.api = 0;
  if (!ovl_trace_has_table(t, "api")) return OVL_OK;
  if (nparts <= 1 || !reader_threads_wanted()) {  /* one scan, all rows to the first part */
    long bad = 0;
    int rc = scan_api_range(t, t->db, &t->api_scan, launches_only, INT64_MIN, INT64_MAX, fn, ctxs[0], &bad, err);
    t->bad.api = bad;
    return rc;
  }
  /* Two lookups, each a descent of the table's b-tree: SQLite answers a lone min() or max()
  ** of the rowid from one end, but scans the whole table for both in one query. */
  int64_t lo = 0, hi = -1;
  int rc = rowid_bound(t, "SELECT min(rowid) FROM api", &lo, err);
  if (!rc) rc = rowid_bound(t, "SELECT max(rowid) FROM api", &hi, err);
  if (rc || hi < lo) return rc;
  api_part *parts = calloc(nparts, sizeof *parts);
  pthread_t *threads = calloc(nparts, sizeof *threads);
  int *started = calloc(nparts, sizeof *started);
  if (!parts || !threads || !started) {
    free(parts);
    free(threads);
    free(started);
    return ovl_oom(err, "api scan");
  }
  /* Rowids may be anywhere in int64 (hi - lo may not fit): split in unsigned arithmetic,
  ** which wraps instead of overflowing. */
  uint64_t span = ((uint64_t)hi - (uint64_t)lo) / nparts + 1;
  for (size_t i = 0; i < nparts; i++) {
    int64_t plo = (int64_t)((uint64_t)lo + i * span);
    int64_t phi = i + 1 == nparts ? hi : (int64_t)((uint64_t)lo + (i + 1) * span - 1);
    parts[i] = (api_part){t, launches_only, plo, phi, fn, ctxs[i], 0, OVL_OK, {0, {0}}};
    /* Part 0 runs here on the trace's own connection; the others on threads. */
    if (i > 0) started[i] = pthread_create(&threads[i], NULL, api_part_main, &parts[i]) == 0;
    if (i > 0 && !started[i]) api_part_main(&parts[i]);
  }
  parts[0].rc = scan_api_range(t, t->db, &t->api_scan, launches_only, parts[0].lo, parts[0].hi, fn, ctxs[0], &parts[0].bad,
                               &parts[0].err);
  for (size_t i = 0; i < nparts; i++) {
    if (i > 0 && started[i]) pthread_join(threads[i], NULL);
    t->bad.api += parts[i].bad;
    if (!rc && parts[i].rc) {
      rc = parts[i].rc;
      if (err) *err = parts[i].err;
    }
  }
  free(parts);
  free(threads);
  free(started);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* GPU work                                                                            */
/* ---------------------------------------------------------------------------------- */

/* Rows travel from a reader thread to the cursor in batches. */
#define BATCH_ROWS 2048
#define QUEUE_BATCHES 8

typedef struct row_batch {
  size_t n;
  ovl_work rows[BATCH_ROWS];
} row_batch;

/* A table's rows, decoded on the caller's thread or, when threaded, by a reader thread with
** its own connection while the caller works: SQLite decoding and the analysis then run on two
** cores. Batches cycle between a free list and a full list; both are bounded, so memory is
** fixed. */
typedef struct row_reader {
  int threaded;
  pthread_t thread;
  int started;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  row_batch *batches[QUEUE_BATCHES];
  row_batch *full[QUEUE_BATCHES];
  size_t full_head, full_len;
  row_batch *free_list[QUEUE_BATCHES];
  size_t free_len;
  int done, stop;          /* reader finished (or failed) / caller wants it to quit */
  int status;              /* reader's status when done */
  ovl_err err;
  long bad;                /* invalid rows skipped by the reader */
  sqlite3 *db;
  sqlite3_stmt *st;
  const char *path;
  int is_memop, launch_dims;
  int ncols;               /* columns the statement reads (6 to 12) */
  int pushed;              /* rows come through ovl_push_work (table order), not one per step */
  ovl_tp_scan *tp;         /* else the rows are read from the table's pages (load/table_pages.h) */
  ovl_tp_value tp_row[12]; /* its values, in the statement's order (those of absent columns NULL) */
  row_batch *target;       /* batch being filled */
  row_batch *current;      /* batch being consumed */
  size_t current_pos;
} row_reader;

/* One table's rows, restored to start order. Rows that arrive in order (nearly all) queue in
** a FIFO ring; rows that arrive earlier than the ring's tail go to a min-heap. The next row is
** the smaller of the ring's head and the heap's top, so in-order input costs O(1) per row.
** Together they hold at most `window` rows: a row leaves only when `window` rows (or all that
** are left) are held, so a row up to `window - 1` places late still comes out in order. */
typedef struct work_source {
  row_reader reader;
  int is_memop, exhausted;
  long *bad;               /* counter in ovl_trace.bad */
  size_t window;           /* rows held at most (>= 1) */
  ovl_work *ring;          /* circular FIFO of ring_cap slots (a power of two), grown on demand */
  size_t ring_head, ring_len, ring_cap;
  ovl_work *heap;          /* min-heap on start, heap_cap slots, grown on demand */
  size_t heap_len, heap_cap;
  int64_t last_start;      /* start of the row emitted last */
} work_source;

struct ovl_work_cursor {
  ovl_trace *t;
  work_source src[2];      /* kernels, memops */
  int nsrc;
};

/* The ring's slot for the next row, grown (doubled, in order) when full; NULL when out of
** memory. */
static ovl_work *ring_tail_slot(work_source *s) {
  if (s->ring_len == s->ring_cap) {
    size_t ncap = s->ring_cap ? s->ring_cap * 2 : 256;
    ovl_work *ring = ovl_huge_malloc(ncap * sizeof *ring);
    if (!ring) return NULL;
    for (size_t i = 0; i < s->ring_len; i++) ring[i] = s->ring[(s->ring_head + i) & (s->ring_cap - 1)];
    free(s->ring);
    s->ring = ring;
    s->ring_head = 0;
    s->ring_cap = ncap;
  }
  assert((s->ring_cap & (s->ring_cap - 1)) == 0);
  return &s->ring[(s->ring_head + s->ring_len) & (s->ring_cap - 1)];
}

static int heap_push(work_source *s, const ovl_work *w) {
  if (s->heap_len == s->heap_cap) {
    size_t ncap = s->heap_cap ? s->heap_cap * 2 : 256;
    if (ncap > s->window) ncap = s->window;
    ovl_work *p = realloc(s->heap, ncap * sizeof *p);
    if (!p) return -1;
    s->heap = p;
    s->heap_cap = ncap;
  }
  size_t i = s->heap_len++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (s->heap[parent].start <= w->start) break;
    s->heap[i] = s->heap[parent];
    i = parent;
  }
  s->heap[i] = *w;
  return 0;
}

static void heap_pop(work_source *s, ovl_work *out) {
  *out = s->heap[0];
  ovl_work last = s->heap[--s->heap_len];
  size_t i = 0, n = s->heap_len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && s->heap[c + 1].start < s->heap[c].start) c++;
    if (last.start <= s->heap[c].start) break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (n) s->heap[i] = last;
}

static int work_ok(const row_reader *rd, ovl_work *w);

/* Decodes one row's values (the reader's columns, in its statement's order) into *w: 1 when
** the row is valid, else 0. */
static int decode_values(const row_reader *rd, sqlite3_value **v, ovl_work *w) {
  row_malformed = 0;
  w->start = val_int(v[0]);
  w->end = val_int(v[1]);
  w->device = val_int(v[2]);
  w->stream = val_int(v[3]);
  w->correlation = val_int(v[4]);
  w->is_memop = rd->is_memop;
  if (rd->is_memop) {
    w->name = OVL_NONE;
    val_text(v[5], w->memkind, sizeof w->memkind);
    w->bytes = val_int(v[6]);
  } else {
    w->name = val_int(v[5]);
    w->memkind[0] = 0;
    w->bytes = OVL_NONE;
  }
  for (int i = 0; i < 3; i++) {
    w->grid[i] = rd->launch_dims ? val_int(v[6 + i]) : OVL_NONE;
    w->block[i] = rd->launch_dims ? val_int(v[9 + i]) : OVL_NONE;
  }
  return work_ok(rd, w);
}

/* The same from values read from the pages (v: the statement's columns). */
static int decode_direct(const row_reader *rd, const ovl_tp_value *v, ovl_work *w) {
  row_malformed = 0;
  w->start = tp_int(&v[0]);
  w->end = tp_int(&v[1]);
  w->device = tp_int(&v[2]);
  w->stream = tp_int(&v[3]);
  w->correlation = tp_int(&v[4]);
  w->is_memop = rd->is_memop;
  if (rd->is_memop) {
    w->name = OVL_NONE;
    tp_text(rd->db, &v[5], w->memkind, sizeof w->memkind);
    w->bytes = tp_int(&v[6]);
  } else {
    w->name = tp_int(&v[5]);
    w->memkind[0] = 0;
    w->bytes = OVL_NONE;
  }
  for (int i = 0; i < 3; i++) {
    w->grid[i] = rd->launch_dims ? tp_int(&v[6 + i]) : OVL_NONE;
    w->block[i] = rd->launch_dims ? tp_int(&v[9 + i]) : OVL_NONE;
  }
  return work_ok(rd, w);
}

/* Whether a decoded row is valid (row_malformed set by its decoding); a NULL stream is -1. */
static int work_ok(const row_reader *rd, ovl_work *w) {
  if (row_malformed || w->start == OVL_NONE || w->end == OVL_NONE || w->device == OVL_NONE ||
      !ovl_interval_ok(w->start, w->end) || (rd->is_memop && !opt_size_ok(w->bytes, OVL_BYTES_LIMIT)))
    return 0;
  if (w->stream == OVL_NONE) w->stream = -1;
  return 1;
}

/* A row into the batch being filled, or counted as bad. */
static void take_row(row_reader *rd, sqlite3_value **v) {
  row_batch *b = rd->target;
  assert(b && b->n < BATCH_ROWS);
  if (decode_values(rd, v, &b->rows[b->n])) b->n++;
  else rd->bad++;
}

/* ovl_push_work(columns...): a row of the reader's table; true (stop) when the batch is full. */
static void push_work(sqlite3_context *sctx, int argc, sqlite3_value **argv) {
  row_reader *rd = sqlite3_user_data(sctx);
  assert(argc == rd->ncols);
  (void)argc;
  take_row(rd, argv);
  sqlite3_result_int(sctx, rd->target->n == BATCH_ROWS);
}

/* Fills b with the next valid rows: 1 while the table may have more, 0 at its end (b may hold
** rows either way), or -status with rd->err set. Runs on the reader thread when there is one. */
static int fill_batch(row_reader *rd, row_batch *b) {
  b->n = 0;
  rd->target = b;
  if (rd->tp) {
    while (b->n < BATCH_ROWS) {
      int r = ovl_tp_next(rd->tp, rd->tp_row, &rd->err);
      if (r <= 0) return r;
      if (decode_direct(rd, rd->tp_row, &b->rows[b->n])) b->n++;
      else rd->bad++;
    }
    return 1;
  }
  while (b->n < BATCH_ROWS) {
    int src = sqlite3_step(rd->st);
    if (src == SQLITE_DONE) return 0;
    if (src != SQLITE_ROW) {
      if (src == SQLITE_NOMEM) return -ovl_oom(&rd->err, "SQLite");
      return -ovl_fail(&rd->err, OVL_EUSER, "%s: corrupt or truncated trace database (%s)", rd->path,
                       sqlite3_errmsg(rd->db));
    }
    if (rd->pushed) continue;  /* a row: the batch is full (push_work stopped the step) */
    sqlite3_value *v[12];
    assert(rd->ncols <= 12);
    for (int i = 0; i < rd->ncols; i++) v[i] = sqlite3_column_value(rd->st, i);
    take_row(rd, v);
  }
  return 1;
}

static void *reader_main(void *arg) {
  row_reader *rd = arg;
  int status = OVL_OK;
  for (;;) {
    pthread_mutex_lock(&rd->lock);
    while (rd->free_len == 0 && !rd->stop) pthread_cond_wait(&rd->changed, &rd->lock);
    if (rd->stop) {
      pthread_mutex_unlock(&rd->lock);
      break;
    }
    row_batch *b = rd->free_list[--rd->free_len];
    pthread_mutex_unlock(&rd->lock);
    int r = fill_batch(rd, b);
    if (r < 0) status = -r;
    pthread_mutex_lock(&rd->lock);
    if (b->n > 0) rd->full[(rd->full_head + rd->full_len++) % QUEUE_BATCHES] = b;
    else rd->free_list[rd->free_len++] = b;
    pthread_cond_broadcast(&rd->changed);
    pthread_mutex_unlock(&rd->lock);
    if (r <= 0) break;
  }
  pthread_mutex_lock(&rd->lock);
  rd->status = status;
  rd->done = 1;
  pthread_cond_broadcast(&rd->changed);
  pthread_mutex_unlock(&rd->lock);
  return NULL;
}

/* The next batch on the caller's thread (no reader thread): 1 with rows in rd->current, 0 at
** the end, or -status with *err set. */
static int next_batch_here(row_reader *rd, ovl_err *err) {
  while (!rd->done) {
    int r = fill_batch(rd, rd->batches[0]);
    if (r < 0) {
      *err = rd->err;
      return r;
    }
    rd->done = r == 0;
    rd->current = rd->batches[0];
    rd->current_pos = 0;
    if (rd->current->n > 0) return 1;
  }
  return 0;
}

/* The next decoded row into *w: 1, 0 at the end, or -status with *err set. */
static int read_row(row_reader *rd, ovl_work *w, ovl_err *err) {
  if (rd->current && rd->current_pos < rd->current->n) {
    *w = rd->current->rows[rd->current_pos++];
    return 1;
  }
  if (!rd->threaded) {
    int r = next_batch_here(rd, err);
    if (r > 0) *w = rd->current->rows[rd->current_pos++];
    return r;
  }
  pthread_mutex_lock(&rd->lock);
  if (rd->current) {
    rd->free_list[rd->free_len++] = rd->current;
    rd->current = NULL;
    pthread_cond_broadcast(&rd->changed);
  }
  while (rd->full_len == 0 && !rd->done) pthread_cond_wait(&rd->changed, &rd->lock);
  int r;
  if (rd->full_len > 0) {
    rd->current = rd->full[rd->full_head];
    rd->full_head = (rd->full_head + 1) % QUEUE_BATCHES;
    rd->full_len--;
    rd->current_pos = 0;
    *w = rd->current->rows[rd->current_pos++];
    r = 1;
  } else if (rd->status) {
    *err = rd->err;
    r = -rd->status;
  } else {
    r = 0;
  }
  pthread_mutex_unlock(&rd->lock);
  return r;
}

/* Opens the reader's own read-only connection on the ncols columns `cols` of `table` (in start
** order by SQLite when `sorted`, else in table order, pushed), and starts its thread when
** threaded. */
static int reader_start(row_reader *rd, const char *path, const char *table, const char *const *names, int ncols,
                        int sorted, int is_memop, int launch_dims, int threaded, ovl_err *err) {
  assert(ncols >= 6 && ncols <= 12);
  rd->path = path;
  rd->is_memop = is_memop;
  rd->launch_dims = launch_dims;
  rd->threaded = threaded;
  rd->ncols = ncols;
  rd->pushed = !sorted;
  if (open_connection(path, &rd->db) != SQLITE_OK)
    return ovl_fail(err, OVL_EUSER, "%s: cannot open: %s", path, rd->db ? sqlite3_errmsg(rd->db) : "out of memory");
  sqlite3_exec(rd->db, "PRAGMA cache_size=-256; PRAGMA query_only=1;", NULL, NULL, NULL);
  /* In table order from the pages where that reads the same rows (load/table_pages.h), else
  ** through SQL. Columns the table lacks (names[i] NULL) are NULL either way. */
  if (!sorted) {
    int kinds[12];
    for (int i = 0; i < ncols; i++) {
      kinds[i] = is_memop && i == 5 ? OVL_TP_TEXT : OVL_TP_INT;
      rd->tp_row[i] = (ovl_tp_value){.type = SQLITE_NULL};
    }
    int rc = ovl_tp_open(rd->db, path, table, names, kinds, ncols, INT64_MIN, INT64_MAX, &rd->tp, err);
    if (rc) return rc;
  }
  if (!rd->tp && push_function(rd->db, "ovl_push_work", ncols, rd, push_work) != SQLITE_OK)
    return ovl_fail(err, OVL_EINTERNAL, "%s: cannot read %s: %s", path, table, sqlite3_errmsg(rd->db));
  char cols[320];
  size_t used = 0;
  for (int i = 0; i < ncols; i++)
    used += (size_t)snprintf(cols + used, sizeof cols - used, "%s%s", i ? ", " : "", names[i] ? names[i] : "NULL");
  assert(used < sizeof cols);
  char sql[400];
  if (sorted) snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY start", cols, table);
  else snprintf(sql, sizeof sql, "SELECT 1 FROM %s WHERE ovl_push_work(%s)", table, cols);
  if (!rd->tp && sqlite3_prepare_v2(rd->db, sql, -1, &rd->st, NULL) != SQLITE_OK)
    return ovl_fail(err, OVL_EUSER, "%s: cannot read the trace: %s", path, sqlite3_errmsg(rd->db));
  int nbatches = threaded ? QUEUE_BATCHES : 1;
  for (int i = 0; i < nbatches; i++)
    if (!(rd->batches[i] = malloc(sizeof *rd->batches[i]))) return ovl_oom(err, "row batches");
  if (!threaded) return OVL_OK;
  if (pthread_mutex_init(&rd->lock, NULL) || pthread_cond_init(&rd->changed, NULL))
    return ovl_fail(err, OVL_EINTERNAL, "cannot create a reader lock");
  for (int i = 0; i < QUEUE_BATCHES; i++) rd->free_list[rd->free_len++] = rd->batches[i];
  if (pthread_create(&rd->thread, NULL, reader_main, rd) != 0)
    return ovl_fail(err, OVL_EINTERNAL, "cannot start a reader thread");
  rd->started = 1;
  return OVL_OK;
}

/* Stops and joins the reader thread, if any, and closes the connection. */
static void reader_stop(row_reader *rd) {
  if (rd->started) {
    pthread_mutex_lock(&rd->lock);
    rd->stop = 1;
    pthread_cond_broadcast(&rd->changed);
    pthread_mutex_unlock(&rd->lock);
    pthread_join(rd->thread, NULL);
    pthread_mutex_destroy(&rd->lock);
    pthread_cond_destroy(&rd->changed);
    rd->started = 0;
  }
  ovl_tp_close(rd->tp);
  rd->tp = NULL;
  sqlite3_finalize(rd->st);
  sqlite3_close(rd->db);
  rd->st = NULL;
  rd->db = NULL;
  for (int i = 0; i < QUEUE_BATCHES; i++) free(rd->batches[i]);
  memset(rd->batches, 0, sizeof rd->batches);
}

/* Reads rows until the source holds `window` of them (or the table ends). */
static int fill(ovl_trace *t, work_source *s, ovl_err *err) {
  (void)t;
  while (!s->exhausted && s->ring_len + s->heap_len < s->window) {
    ovl_work *w = ring_tail_slot(s);  /* decoded in place: no copy for an in-order row */
    if (!w) return ovl_oom(err, "reorder window");
    int r = read_row(&s->reader, w, err);
    if (r < 0) return -r;
    if (r == 0) {
      s->exhausted = 1;
      *s->bad = s->reader.bad;
      break;
    }
    const ovl_work *tail = s->ring_len ? &s->ring[(s->ring_head + s->ring_len - 1) & (s->ring_cap - 1)] : NULL;
    if (!tail || w->start >= tail->start) s->ring_len++;
    else if (heap_push(s, w)) return ovl_oom(err, "reorder window");
  }
  return OVL_OK;
}

/* 1 and the start of the source's next row in *start, or 0 when it has none left. */
static int peek_start(const work_source *s, int64_t *start) {
  if (s->ring_len == 0 && s->heap_len == 0) return 0;
  *start = s->ring_len ? s->ring[s->ring_head].start : INT64_MAX;
  if (s->heap_len && (s->ring_len == 0 || s->heap[0].start < *start)) *start = s->heap[0].start;
  return 1;
}

/* Moves the source's next row into *w (it has one: peek_start said so). */
static void take(work_source *s, ovl_work *w) {
  if (s->heap_len > 0 && (s->ring_len == 0 || s->heap[0].start < s->ring[s->ring_head].start)) {
    heap_pop(s, w);
  } else {
    *w = s->ring[s->ring_head];
    s->ring_head = (s->ring_head + 1) & (s->ring_cap - 1);
    s->ring_len--;
  }
}

/* 1 when the kernels table has column `col` (an optional column of the schema). */
static int has_kernel_column(ovl_trace *t, const char *col) {
  char sql[96];
  sqlite3_stmt *probe = NULL;
  snprintf(sql, sizeof sql, "SELECT %s FROM kernels LIMIT 0", col);
  int has = sqlite3_prepare_v2(t->db, sql, -1, &probe, NULL) == SQLITE_OK;
  sqlite3_finalize(probe);
  return has;
}

static int open_source(ovl_trace *t, work_source *s, int is_memop, const ovl_work_options *opt, int threaded,
                       ovl_err *err) {
  int has_grid = 0, has_block = 0;
  if (!is_memop && opt->launch_dims) {
    has_grid = has_kernel_column(t, "grid_x") && has_kernel_column(t, "grid_y") && has_kernel_column(t, "grid_z");
    has_block = has_kernel_column(t, "block_x") && has_kernel_column(t, "block_y") && has_kernel_column(t, "block_z");
  }
  int has_dims = has_grid || has_block;
  /* Only the columns used, in the order the schema stores them: SQLite decodes a record's
  ** header once per row and each column as it goes. NULL: a column the table lacks. */
  static const char *const kernel_cols[] = {OVL_SCHEMA_KERNELS_COLUMNS};
  static const char *const memop_cols[] = {OVL_SCHEMA_MEMOPS_COLUMNS};
  _Static_assert(OVL_SCHEMA_KERNELS_NCOLUMNS == 12 && OVL_SCHEMA_MEMOPS_NCOLUMNS == 7,
                 "the work reader's columns (decode_values)");
  const char *cols[12];
  int ncols = is_memop ? 7 : 6;
  for (int i = 0; i < ncols; i++) cols[i] = is_memop ? memop_cols[i] : kernel_cols[i];
  if (!is_memop && has_dims) {  /* grid_x, grid_y, grid_z, block_x, block_y, block_z */
    for (int i = 6; i < 12; i++) cols[i] = (i < 9 ? has_grid : has_block) ? kernel_cols[i] : NULL;
    ncols = 12;
  }
  s->is_memop = is_memop;
  s->bad = is_memop ? &t->bad.memops : &t->bad.kernels;
  *s->bad = 0;
  s->window = opt->reorder_window ? opt->reorder_window : 1;
  s->last_start = INT64_MIN;
  /* The ring at its working size at once (up to 64 Ki rows; it grows past that if it must):
  ** growing it by doubling would touch and copy twice the memory. Pages never used cost
  ** nothing; the ones used are touched once, on huge pages (base/huge_pages.h). */
  size_t cap = 256;
  while (cap < s->window && cap < ((size_t)1 << 16)) cap *= 2;
  if (!(s->ring = ovl_huge_malloc(cap * sizeof *s->ring))) return ovl_oom(err, "reorder window");
  s->ring_cap = cap;
  int rc = reader_start(&s->reader, t->path, is_memop ? "memops" : "kernels", cols, ncols, opt->reorder_window == 0,
                        is_memop, has_dims, threaded, err);
  if (!rc) rc = fill(t, s, err);
  return rc;
}

int ovl_work_open(ovl_trace *t, const ovl_work_options *opt, ovl_work_cursor **out, ovl_err *err) {
  *out = NULL;
  ovl_work_cursor *c = calloc(1, sizeof *c);
  if (!c) return ovl_oom(err, "work cursor");
  c->t = t;
  int threaded = reader_threads_wanted();
  int rc = open_source(t, &c->src[c->nsrc++], 0, opt, threaded, err);
  if (!rc && ovl_trace_has_table(t, "memops")) rc = open_source(t, &c->src[c->nsrc++], 1, opt, threaded, err);
  if (rc) {
    ovl_work_close(c);
    return rc;
  }
  *out = c;
  return OVL_OK;
}

int ovl_work_next(ovl_work_cursor *c, ovl_work *w, int *has_row, ovl_err *err) {
  work_source *best = NULL;
  int64_t best_start = 0, start;
  for (int i = 0; i < c->nsrc; i++)  /* ties: kernels first */
    if (peek_start(&c->src[i], &start) && (!best || start < best_start)) {
      best = &c->src[i];
      best_start = start;
    }
  *has_row = 0;
  if (!best) return OVL_OK;
  if (best_start < best->last_start)
    return ovl_fail(err, OVL_EUNSORTED, "%s: %s rows are further out of start order than the reorder window",
                    c->t->path, best->is_memop ? "memops" : "kernels");
  take(best, w);
  best->last_start = w->start;
  *has_row = 1;
  return fill(c->t, best, err);
}

void ovl_work_close(ovl_work_cursor *c) {
  if (!c) return;
  for (int i = 0; i < c->nsrc; i++) {
    reader_stop(&c->src[i].reader);
    free(c->src[i].ring);
    free(c->src[i].heap);
  }
  free(c);
}
