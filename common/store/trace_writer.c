/*
** Trace writer: see trace_writer.h.
**
** One prepared INSERT per table, bound and stepped per row inside a long transaction. The
** high-volume tables (kernels, memops, api, collective_launches, collective_channels) are written BATCH_ROWS rows
** per statement: rows wait in the writer as plain integers and go out in one multi-row
** INSERT, which halves the per-row cost of SQLite's statement machinery. Pending rows are
** written before any single-row insert into the same table, and at every commit, so the
** insertion order of each table is the order of the calls.
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

enum { ST_META, ST_STRING, ST_KERNEL, ST_MEMOP, ST_COLL, ST_LAUNCH, ST_NVTX, ST_API, ST_CHANNEL, ST_PROXY_OP,
       ST_PROXY_STEP, ST_GPU_TIMER, ST_COUNT };

static const char *const insert_sql[ST_COUNT] = {
  "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
  "INSERT INTO strings(id, value) VALUES (?, ?)",
  "INSERT INTO kernels(start, end, device, stream, correlation, name, grid_x, grid_y, grid_z,"
  " block_x, block_y, block_z) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO memops(start, end, device, stream, correlation, kind, bytes) VALUES (?,?,?,?,?,?,?)",
  "INSERT INTO collectives(id, comm, rank, nranks, seq, op, count, dtype, bytes, redop, peer,"
  " device, stream, host_start, host_end, tid, group_id, algorithm, protocol, nchannels, nwarps, nccl_seq)"
  " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO collective_launches(collective, correlation) VALUES (?, ?)",
  "INSERT INTO nvtx(start, end, tid, domain, name) VALUES (?,?,?,?,?)",
  "INSERT INTO api(start, end, tid, correlation, name) VALUES (?,?,?,?,?)",
  "INSERT INTO collective_channels(collective, channel, device, start, end, timer_start, timer_end)"
  " VALUES (?,?,?,?,?,?,?)",
  "INSERT INTO proxy_ops(collective, channel, peer, is_send, nsteps, chunk_size, start, end) VALUES (?,?,?,?,?,?,?,?)",
  "INSERT INTO proxy_steps(collective, channel, is_send, step, bytes, start, end, gpu_wait, peer_wait, net_wait,"
  " flush_wait) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
  "INSERT OR REPLACE INTO gpu_timer_offsets(device, offset, error, stamps) VALUES (?,?,?,?)",
};

/* The statements name every column of their table (their order is the binding order of the
** row structs): a column added to schema/ovl.sql fails the build here until it is written. */
_Static_assert(OVL_SCHEMA_META_NCOLUMNS == 2, "meta columns: see insert_sql");
_Static_assert(OVL_SCHEMA_STRINGS_NCOLUMNS == 2, "strings columns: see insert_sql");
_Static_assert(OVL_SCHEMA_KERNELS_NCOLUMNS == 12, "kernels columns: see insert_sql");
_Static_assert(OVL_SCHEMA_MEMOPS_NCOLUMNS == 7, "memops columns: see insert_sql");
_Static_assert(OVL_SCHEMA_COLLECTIVES_NCOLUMNS == 22, "collectives columns: see insert_sql");
_Static_assert(OVL_SCHEMA_COLLECTIVE_LAUNCHES_NCOLUMNS == 2, "collective_launches columns: see insert_sql");
_Static_assert(OVL_SCHEMA_NVTX_NCOLUMNS == 5, "nvtx columns: see insert_sql");
_Static_assert(OVL_SCHEMA_API_NCOLUMNS == 5, "api columns: see insert_sql");
_Static_assert(OVL_SCHEMA_COLLECTIVE_CHANNELS_NCOLUMNS == 7, "collective_channels columns: see insert_sql");
_Static_assert(OVL_SCHEMA_PROXY_OPS_NCOLUMNS == 8, "proxy_ops columns: see insert_sql");
_Static_assert(OVL_SCHEMA_PROXY_STEPS_NCOLUMNS == 11, "proxy_steps columns: see insert_sql");
_Static_assert(OVL_SCHEMA_GPU_TIMER_OFFSETS_NCOLUMNS == 4, "gpu_timer_offsets columns: see insert_sql");

/* Batched tables: the single-row statement each one falls back to, and its columns. */
enum { B_KERNEL, B_MEMOP, B_API, B_LAUNCH, B_CHANNEL, B_COUNT };
#define BATCH_ROWS 64
#define BATCH_MAX_COLS 12
static const struct { int single, ncols, text_col; } batched[B_COUNT] = {
  {ST_KERNEL, OVL_SCHEMA_KERNELS_NCOLUMNS, -1},
  {ST_MEMOP, OVL_SCHEMA_MEMOPS_NCOLUMNS, 5},
  {ST_API, OVL_SCHEMA_API_NCOLUMNS, -1},
  {ST_LAUNCH, OVL_SCHEMA_COLLECTIVE_LAUNCHES_NCOLUMNS, -1},
  {ST_CHANNEL, OVL_SCHEMA_COLLECTIVE_CHANNELS_NCOLUMNS, -1},
};
/* memops.kind values a batch can hold (as an index); other text takes the single-row path. */
static const char *const memop_kinds[] = {"HtoD", "DtoH", "DtoD", "PtoP", "HtoH", "memset"};
#define NKINDS ((int64_t)(sizeof memop_kinds / sizeof memop_kinds[0]))

typedef struct batch {
  sqlite3_stmt *multi;  /* INSERT ... VALUES (...), (...) x BATCH_ROWS */
  int n;                /* rows waiting */
  int64_t vals[BATCH_ROWS * BATCH_MAX_COLS];
} batch;

struct ovl_trace_writer {
  sqlite3 *db;
  char *path;
  sqlite3_stmt *st[ST_COUNT];
  batch batches[B_COUNT];
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

static void finalize_all(ovl_trace_writer *w) {
  for (int i = 0; i < ST_COUNT; i++) {
    sqlite3_finalize(w->st[i]);
    w->st[i] = NULL;
  }
  for (int b = 0; b < B_COUNT; b++) {
    sqlite3_finalize(w->batches[b].multi);
    w->batches[b].multi = NULL;
  }
}

/* The multi-row form of a single-row INSERT: its VALUES tuple repeated BATCH_ROWS times. */
static int prepare_batch(ovl_trace_writer *w, int b, ovl_err *err) {
  const char *single = insert_sql[batched[b].single];
  const char *values = strstr(single, "VALUES ");
  size_t head = (size_t)(values - single) + 7, tuple = strlen(values + 7);
  char *sql = malloc(head + BATCH_ROWS * (tuple + 1) + 1);
  if (!sql) return ovl_oom(err, "trace writer");
  memcpy(sql, single, head);
  char *p = sql + head;
  for (int r = 0; r < BATCH_ROWS; r++) {
    if (r) *p++ = ',';
    memcpy(p, values + 7, tuple);
    p += tuple;
  }
  *p = 0;
  int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->batches[b].multi, NULL) == SQLITE_OK
               ? OVL_OK
               : db_fail(w, err, "prepare an insert");
  free(sql);
  return rc;
}

static void free_writer(ovl_trace_writer *w) {
  finalize_all(w);
  if (w->db) sqlite3_close(w->db);
  ovl_strmap_free(&w->strings);
  free(w->path);
  free(w);
}

static int open_writer(ovl_trace_writer **out, const char *path, int replace, ovl_err *err) {
  *out = NULL;
  ovl_trace_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return ovl_oom(err, "trace writer");
  }
  w->next_string_id = 1;
  /* Replace: a stale -wal beside an old file would otherwise be replayed into the new one. */
  if (replace) {
    char side[4096];
    remove(path);
    snprintf(side, sizeof side, "%s-wal", path);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", path);
    remove(side);
  }
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
  for (int b = 0; !rc && b < B_COUNT; b++) rc = prepare_batch(w, b, err);
  if (!rc) rc = ovl_tw_meta_int(w, "schema_version", OVL_SCHEMA_VERSION, err);
  if (rc) {
    free_writer(w);
    return rc;
  }
  *out = w;
  return OVL_OK;
}

int ovl_tw_open(ovl_trace_writer **out, const char *path, ovl_err *err) {
  return open_writer(out, path, 1, err);
}

int ovl_tw_open_created(ovl_trace_writer **out, const char *path, ovl_err *err) {
  return open_writer(out, path, 0, err);
}

static void bind_opt_int(sqlite3_stmt *st, int col, int64_t v) {
  if (v == OVL_NONE) sqlite3_bind_null(st, col);
  else sqlite3_bind_int64(st, col, v);
}

static void bind_text(sqlite3_stmt *st, int col, const char *s) {
  if (s) sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, col);
}

static int begin(ovl_trace_writer *w, ovl_err *err) {
  if (w->in_txn) return OVL_OK;
  int rc = exec(w, "BEGIN", err);
  if (!rc) w->in_txn = 1;
  return rc;
}

static int count_row(ovl_trace_writer *w, ovl_err *err) {
  if (++w->rows_in_txn >= OVL_TW_AUTOCOMMIT_ROWS) return ovl_tw_commit(w, err);
  return OVL_OK;
}

static void bind_value(sqlite3_stmt *st, int col, int64_t v, int is_text) {
  if (is_text) bind_text(st, col, v >= 0 && v < NKINDS ? memop_kinds[v] : NULL);
  else bind_opt_int(st, col, v);
}

/* Writes the rows waiting in batch b: all at once when full, else one by one. */
static int flush_batch(ovl_trace_writer *w, int b, ovl_err *err) {
  batch *bt = &w->batches[b];
  if (bt->n == 0) return OVL_OK;
  int ncols = batched[b].ncols, text_col = batched[b].text_col;
  int rows = bt->n == BATCH_ROWS ? BATCH_ROWS : 1;
  sqlite3_stmt *st = rows == BATCH_ROWS ? bt->multi : w->st[batched[b].single];
  int rc = begin(w, err);
  for (int done = 0; !rc && done < bt->n; done += rows) {
    const int64_t *v = &bt->vals[done * ncols];
    for (int i = 0; i < rows * ncols; i++) bind_value(st, i + 1, v[i], i % ncols == text_col);
    int src = sqlite3_step(st);
    sqlite3_reset(st);
    if (src != SQLITE_DONE) rc = db_fail(w, err, "insert a row");
  }
  bt->n = 0;
  return rc;
}

/* Room for one more row of batch b, written out first when the batch is full. */
static int64_t *batch_row(ovl_trace_writer *w, int b, ovl_err *err, int *rc) {
  batch *bt = &w->batches[b];
  *rc = bt->n == BATCH_ROWS ? flush_batch(w, b, err) : OVL_OK;
  return *rc ? NULL : &bt->vals[bt->n * batched[b].ncols];
}

static int add_batch_row(ovl_trace_writer *w, int b, ovl_err *err) {
  w->batches[b].n++;
  return count_row(w, err);
}

/* Opens the transaction on first use; steps and resets the statement. */
static int step_row(ovl_trace_writer *w, int which, ovl_err *err) {
  sqlite3_stmt *st = w->st[which];
  int rc = begin(w, err);
  if (rc) {
    sqlite3_reset(st);
    return rc;
  }
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (src != SQLITE_DONE) return db_fail(w, err, "insert a row");
  return count_row(w, err);
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
  int rc;
  int64_t *v = batch_row(w, B_KERNEL, err, &rc);
  if (!v) return rc;
  v[0] = r->start, v[1] = r->end, v[2] = r->device, v[3] = r->stream, v[4] = r->correlation, v[5] = r->name;
  for (int i = 0; i < 3; i++) {
    v[6 + i] = r->grid[i];
    v[9 + i] = r->block[i];
  }
  return add_batch_row(w, B_KERNEL, err);
}

int ovl_tw_memop(ovl_trace_writer *w, const ovl_memop_row *r, ovl_err *err) {
  int64_t kind = r->kind ? 0 : OVL_NONE;
  while (r->kind && kind < NKINDS && strcmp(memop_kinds[kind], r->kind) != 0) kind++;
  if (kind == NKINDS) {  /* unusual text: single-row insert, after the rows before it */
    int rc = flush_batch(w, B_MEMOP, err);
    if (rc) return rc;
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
  int rc;
  int64_t *v = batch_row(w, B_MEMOP, err, &rc);
  if (!v) return rc;
  v[0] = r->start, v[1] = r->end, v[2] = r->device, v[3] = r->stream, v[4] = r->correlation, v[5] = kind;
  v[6] = r->bytes;
  return add_batch_row(w, B_MEMOP, err);
}

int ovl_tw_collective(ovl_trace_writer *w, const ovl_collective_row *r, int64_t *id, ovl_err *err) {
  return ovl_tw_collective_nccl(w, r, NULL, id, err);
}

int ovl_tw_collective_nccl(ovl_trace_writer *w, const ovl_collective_row *r, const ovl_collective_nccl *nccl,
                           int64_t *id, ovl_err *err) {
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
  bind_text(st, 18, nccl ? nccl->algorithm : NULL);
  bind_text(st, 19, nccl ? nccl->protocol : NULL);
  bind_opt_int(st, 20, nccl ? nccl->nchannels : OVL_NONE);
  bind_opt_int(st, 21, nccl ? nccl->nwarps : OVL_NONE);
  bind_opt_int(st, 22, nccl ? nccl->nccl_seq : OVL_NONE);
  int rc = step_row(w, ST_COLL, err);
  if (!rc && id) *id = r->id != OVL_NONE ? r->id : sqlite3_last_insert_rowid(w->db);
  return rc;
}

/* Binds n integers (OVL_NONE as NULL) to a single-row statement and inserts the row. */
static int insert_ints(ovl_trace_writer *w, int which, const int64_t *v, int n, ovl_err *err) {
  for (int i = 0; i < n; i++) bind_opt_int(w->st[which], i + 1, v[i]);
  return step_row(w, which, err);
}

int ovl_tw_channel(ovl_trace_writer *w, const ovl_channel_row *r, ovl_err *err) {
  int rc;
  int64_t *v = batch_row(w, B_CHANNEL, err, &rc);
  if (!v) return rc;
  v[0] = r->collective, v[1] = r->channel, v[2] = r->device, v[3] = r->start, v[4] = r->end;
  v[5] = r->timer_start, v[6] = r->timer_end;
  return add_batch_row(w, B_CHANNEL, err);
}

int ovl_tw_proxy_op(ovl_trace_writer *w, const ovl_proxy_op_row *r, ovl_err *err) {
  const int64_t v[] = {r->collective, r->channel, r->peer, r->is_send, r->nsteps, r->chunk_size, r->start, r->end};
  return insert_ints(w, ST_PROXY_OP, v, 8, err);
}

int ovl_tw_proxy_step(ovl_trace_writer *w, const ovl_proxy_step_row *r, ovl_err *err) {
  const int64_t v[] = {r->collective, r->channel, r->is_send,  r->step,     r->bytes,     r->start,
                       r->end,        r->gpu_wait, r->peer_wait, r->net_wait, r->flush_wait};
  return insert_ints(w, ST_PROXY_STEP, v, 11, err);
}

int ovl_tw_gpu_timer_offset(ovl_trace_writer *w, int64_t device, int64_t offset, int64_t error, int64_t stamps,
                            ovl_err *err) {
  const int64_t v[] = {device, offset, error, stamps};
  return insert_ints(w, ST_GPU_TIMER, v, 4, err);
}

int ovl_tw_launch(ovl_trace_writer *w, int64_t collective, int64_t correlation, ovl_err *err) {
  int rc;
  int64_t *v = batch_row(w, B_LAUNCH, err, &rc);
  if (!v) return rc;
  v[0] = collective, v[1] = correlation;
  return add_batch_row(w, B_LAUNCH, err);
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
  int rc;
  int64_t *v = batch_row(w, B_API, err, &rc);
  if (!v) return rc;
  v[0] = r->start, v[1] = r->end, v[2] = r->tid, v[3] = r->correlation, v[4] = r->name;
  return add_batch_row(w, B_API, err);
}

int ovl_tw_commit(ovl_trace_writer *w, ovl_err *err) {
  int rc = OVL_OK;
  for (int b = 0; b < B_COUNT; b++) {
    int brc = flush_batch(w, b, err);
    if (!rc) rc = brc;
  }
  if (rc || !w->in_txn) return rc;
  rc = exec(w, "COMMIT", err);
  w->in_txn = 0;
  w->rows_in_txn = 0;
  return rc;
}

int ovl_tw_close(ovl_trace_writer *w, ovl_err *err) {
  if (!w) return OVL_OK;
  int rc = ovl_tw_commit(w, err);
  finalize_all(w);
  if (!rc) rc = exec(w, "PRAGMA journal_mode=DELETE;", err);
  if (sqlite3_close(w->db) != SQLITE_OK && !rc)
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot close the trace: %s", w->path, sqlite3_errmsg(w->db));
  else
    w->db = NULL;
  free_writer(w);
  return rc;
}
