/*
** Trace writer: see trace_writer.h.
**
** One prepared INSERT per table, bound and stepped per row inside a long transaction.
** WAL journaling with synchronous=OFF while writing (a crash may lose the last
** transaction, never corrupt earlier ones); at close the journal is switched back to
** DELETE so the trace is one self-contained file that read-only readers can open.
*/
#include "trace_writer.h"

#include "../base/strmap.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_META, ST_STRING, ST_KERNEL, ST_MEMOP, ST_COLL, ST_LAUNCH, ST_NVTX, ST_API, ST_COUNT };

static const char *const insert_sql[ST_COUNT] = {
  "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
  "INSERT INTO strings(id, value) VALUES (?, ?)",
  "INSERT INTO kernels(start, end, device, stream, correlation, name, grid_x, grid_y, grid_z,"
  " block_x, block_y, block_z) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO memops(start, end, device, stream, correlation, kind, bytes) VALUES (?,?,?,?,?,?,?)",
  "INSERT INTO collectives(id, comm, rank, nranks, seq, op, count, dtype, bytes, redop, peer,"
  " device, stream, host_start, host_end, tid, group_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO collective_launches(collective, correlation) VALUES (?, ?)",
  "INSERT INTO nvtx(start, end, tid, domain, name) VALUES (?,?,?,?,?)",
  "INSERT INTO api(start, end, tid, correlation, name) VALUES (?,?,?,?,?)",
};

struct ovl_trace_writer {
  sqlite3 *db;
  char *path;
  sqlite3_stmt *st[ST_COUNT];
  ovl_strmap strings;
  int64_t next_string_id;
  int in_txn;
  long rows_in_txn;
};

static int db_fail(ovl_trace_writer *w, ovl_err *err, const char *what) {
  return ovl_fail(err, OVL_EUSER, "%s: cannot %s: %s", w->path, what, sqlite3_errmsg(w->db));
}

static int exec(ovl_trace_writer *w, const char *sql, ovl_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    int rc = ovl_fail(err, OVL_EUSER, "%s: %s", w->path, msg ? msg : "SQLite error");
    sqlite3_free(msg);
    return rc;
  }
  return OVL_OK;
}

static void free_writer(ovl_trace_writer *w) {
  for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(w->st[i]);
  if (w->db) sqlite3_close(w->db);
  ovl_strmap_free(&w->strings);
  free(w->path);
  free(w);
}

int ovl_tw_open(ovl_trace_writer **out, const char *path, ovl_err *err) {
  *out = NULL;
  ovl_trace_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return ovl_oom(err, "trace writer");
  }
  w->next_string_id = 1;
  /* Replace: a stale -wal beside an old file would otherwise be replayed into the new one. */
  char side[4096];
  remove(path);
  snprintf(side, sizeof side, "%s-wal", path);
  remove(side);
  snprintf(side, sizeof side, "%s-shm", path);
  remove(side);
  if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      NULL) != SQLITE_OK) {
    int rc = w->db ? db_fail(w, err, "create the trace file")
                   : ovl_oom(err, "SQLite connection");
    free_writer(w);
    return rc;
  }
  int rc = exec(w, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;", err);
  if (!rc) rc = exec(w, ovl_schema_sql, err);
  for (int i = 0; !rc && i < ST_COUNT; i++) {
    if (sqlite3_prepare_v3(w->db, insert_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i], NULL) != SQLITE_OK)
      rc = db_fail(w, err, "prepare an insert");
  }
  if (!rc) rc = ovl_tw_meta_int(w, "schema_version", OVL_SCHEMA_VERSION, err);
  if (rc) {
    free_writer(w);
    return rc;
  }
  *out = w;
  return OVL_OK;
}

static void bind_opt_int(sqlite3_stmt *st, int col, int64_t v) {
  if (v == OVL_NONE) sqlite3_bind_null(st, col);
  else sqlite3_bind_int64(st, col, v);
}

static void bind_text(sqlite3_stmt *st, int col, const char *s) {
  if (s) sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, col);
}

/* Opens the transaction on first use; steps and resets the statement. */
static int step_row(ovl_trace_writer *w, int which, ovl_err *err) {
  sqlite3_stmt *st = w->st[which];
  if (!w->in_txn) {
    int rc = exec(w, "BEGIN", err);
    if (rc) {
      sqlite3_reset(st);
      return rc;
    }
    w->in_txn = 1;
  }
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (src != SQLITE_DONE) return db_fail(w, err, "insert a row");
  if (++w->rows_in_txn >= OVL_TW_AUTOCOMMIT_ROWS) return ovl_tw_commit(w, err);
  return OVL_OK;
}

int ovl_tw_meta(ovl_trace_writer *w, const char *key, const char *value, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_META];
  bind_text(st, 1, key);
  bind_text(st, 2, value);
  return step_row(w, ST_META, err);
}

int ovl_tw_meta_int(ovl_trace_writer *w, const char *key, int64_t value, ovl_err *err) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)value);
  return ovl_tw_meta(w, key, buf, err);
}

int ovl_tw_intern(ovl_trace_writer *w, const char *text, int64_t *id, ovl_err *err) {
  if (ovl_strmap_get(&w->strings, text, id)) return OVL_OK;
  int64_t nid = w->next_string_id;
  sqlite3_stmt *st = w->st[ST_STRING];
  sqlite3_bind_int64(st, 1, nid);
  bind_text(st, 2, text);
  int rc = step_row(w, ST_STRING, err);
  if (rc) return rc;
  if (ovl_strmap_put(&w->strings, text, nid)) return ovl_oom(err, "string table");
  w->next_string_id++;
  *id = nid;
  return OVL_OK;
}

int ovl_tw_kernel(ovl_trace_writer *w, const ovl_kernel_row *r, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_KERNEL];
  bind_opt_int(st, 1, r->start);
  bind_opt_int(st, 2, r->end);
  bind_opt_int(st, 3, r->device);
  bind_opt_int(st, 4, r->stream);
  bind_opt_int(st, 5, r->correlation);
  bind_opt_int(st, 6, r->name);
  for (int i = 0; i < 3; i++) {
    bind_opt_int(st, 7 + i, r->grid[i]);
    bind_opt_int(st, 10 + i, r->block[i]);
  }
  return step_row(w, ST_KERNEL, err);
}

int ovl_tw_memop(ovl_trace_writer *w, const ovl_memop_row *r, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_MEMOP];
  bind_opt_int(st, 1, r->start);
  bind_opt_int(st, 2, r->end);
  bind_opt_int(st, 3, r->device);
  bind_opt_int(st, 4, r->stream);
  bind_opt_int(st, 5, r->correlation);
  bind_text(st, 6, r->kind);
  bind_opt_int(st, 7, r->bytes);
  return step_row(w, ST_MEMOP, err);
}

int ovl_tw_collective(ovl_trace_writer *w, const ovl_collective_row *r, int64_t *id, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_COLL];
  bind_opt_int(st, 1, r->id);
  bind_opt_int(st, 2, r->comm);
  bind_opt_int(st, 3, r->rank);
  bind_opt_int(st, 4, r->nranks);
  bind_opt_int(st, 5, r->seq);
  bind_text(st, 6, r->op);
  bind_opt_int(st, 7, r->count);
  bind_text(st, 8, r->dtype);
  bind_opt_int(st, 9, r->bytes);
  bind_text(st, 10, r->redop);
  bind_opt_int(st, 11, r->peer);
  bind_opt_int(st, 12, r->device);
  bind_opt_int(st, 13, r->stream);
  bind_opt_int(st, 14, r->host_start);
  bind_opt_int(st, 15, r->host_end);
  bind_opt_int(st, 16, r->tid);
  bind_opt_int(st, 17, r->group_id);
  int rc = step_row(w, ST_COLL, err);
  if (!rc && id) *id = r->id != OVL_NONE ? r->id : sqlite3_last_insert_rowid(w->db);
  return rc;
}

int ovl_tw_launch(ovl_trace_writer *w, int64_t collective, int64_t correlation, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_LAUNCH];
  bind_opt_int(st, 1, collective);
  bind_opt_int(st, 2, correlation);
  return step_row(w, ST_LAUNCH, err);
}

int ovl_tw_nvtx(ovl_trace_writer *w, const ovl_nvtx_row *r, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_NVTX];
  bind_opt_int(st, 1, r->start);
  bind_opt_int(st, 2, r->end);
  bind_opt_int(st, 3, r->tid);
  bind_text(st, 4, r->domain);
  bind_text(st, 5, r->name);
  return step_row(w, ST_NVTX, err);
}

int ovl_tw_api(ovl_trace_writer *w, const ovl_api_row *r, ovl_err *err) {
  sqlite3_stmt *st = w->st[ST_API];
  bind_opt_int(st, 1, r->start);
  bind_opt_int(st, 2, r->end);
  bind_opt_int(st, 3, r->tid);
  bind_opt_int(st, 4, r->correlation);
  bind_opt_int(st, 5, r->name);
  return step_row(w, ST_API, err);
}

int ovl_tw_commit(ovl_trace_writer *w, ovl_err *err) {
  if (!w->in_txn) return OVL_OK;
  int rc = exec(w, "COMMIT", err);
  w->in_txn = 0;
  w->rows_in_txn = 0;
  return rc;
}

int ovl_tw_close(ovl_trace_writer *w, ovl_err *err) {
  if (!w) return OVL_OK;
  int rc = ovl_tw_commit(w, err);
  for (int i = 0; i < ST_COUNT; i++) {
    sqlite3_finalize(w->st[i]);
    w->st[i] = NULL;
  }
  if (!rc) rc = exec(w, "PRAGMA journal_mode=DELETE;", err);
  if (sqlite3_close(w->db) != SQLITE_OK && !rc)
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot close the trace: %s", w->path, sqlite3_errmsg(w->db));
  else
    w->db = NULL;
  free_writer(w);
  return rc;
}
