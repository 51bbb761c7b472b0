/*
** Trace writer: see trace_writer.h.
**
** One prepared INSERT per table, bound and stepped per row inside a long transaction. The
** high-volume tables (kernels, memops, api, collective_launches, collectives,
** collective_channels) are written up to BATCH_ROWS rows per statement: rows wait in the
** writer as plain integers and go out in one INSERT ... SELECT from a virtual table that reads
** them straight from the batch, so no value is bound one by one (binding was a fifth of a
** row's cost). Text columns of batched rows wait as indexes into the writer's dictionary of
** the short names they repeat (op, dtype, memop kind, NCCL's algorithm...), copied once.
** Pending rows are written before any single-row insert into the same table, and at every
** commit, so the insertion order of each table is the order of the calls.
** WAL journaling with synchronous=OFF while writing (a crash may lose the last
** transaction, never corrupt earlier ones); at close the journal is switched back to
** DELETE so the trace is one self-contained file that read-only readers can open. A scratch
** file (an import's temporary output, discarded on failure) keeps its rollback journal in
** memory: WAL wrote every page twice and read it back once to move it into the database
** (a third of an import's time outside parsing), and a smaller cache pages in less.
**
** Write-behind (imports): full batches are handed to a worker thread that inserts them
** while the caller parses on. The connection is used by one thread at a time: the caller
** waits for the worker to finish every batch handed over (settle) before it touches SQLite
** itself, so each table still receives its rows in call order. nvtx rows are batched then
** too (their names copied into the batch's text arena): a single-row insert per annotation
** would make the caller wait for the worker every few hundred rows. The worker is woken once
** BEHIND_WAKE_AT batches wait (or the caller settles), not for each: every wake is a system
** call on the parsing thread.
*/
#define _GNU_SOURCE  /* sync_file_range */
#include "trace_writer.h"

#include "../base/strmap.h"
#include "schema.h"

#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Batched tables: the single-row statement each one falls back to, its columns, and which
** of them hold text (a bit per column). */
enum { B_KERNEL, B_MEMOP, B_API, B_LAUNCH, B_COLL, B_CHANNEL, B_NVTX, B_COUNT };
#define BATCH_ROWS 512
#define BATCH_MAX_COLS 22
static const struct { int single, ncols; unsigned text_cols; } batched[B_COUNT] = {
  {ST_KERNEL, OVL_SCHEMA_KERNELS_NCOLUMNS, 0},
  {ST_MEMOP, OVL_SCHEMA_MEMOPS_NCOLUMNS, 1u << 5},
  {ST_API, OVL_SCHEMA_API_NCOLUMNS, 0},
  {ST_LAUNCH, OVL_SCHEMA_COLLECTIVE_LAUNCHES_NCOLUMNS, 0},
  /* op, dtype, redop, algorithm, protocol */
  {ST_COLL, OVL_SCHEMA_COLLECTIVES_NCOLUMNS, 1u << 5 | 1u << 7 | 1u << 9 | 1u << 17 | 1u << 18},
  {ST_CHANNEL, OVL_SCHEMA_COLLECTIVE_CHANNELS_NCOLUMNS, 0},
  {ST_NVTX, OVL_SCHEMA_NVTX_NCOLUMNS, 1u << 3 | 1u << 4},  /* domain, name: write-behind only */
};
_Static_assert(OVL_SCHEMA_COLLECTIVES_NCOLUMNS <= BATCH_MAX_COLS, "a batched table is wider than a batch");

/* The short texts batched rows repeat, each copied once; a batched text value is its index
** (OVL_NONE for NULL). A text that does not fit takes the single-row path, except nvtx names,
** copied into the rows' own text arena: their value is DICT_MAX + their offset there. */
#define DICT_MAX 256
#define DICT_TEXT_MAX 64

/* Rows of one batched table: BATCH_ROWS * BATCH_MAX_COLS values and the texts they own. */
typedef struct rows_buf {
  int64_t *vals;
  char *text;
  size_t text_used, text_cap;
} rows_buf;

typedef struct batch {
  sqlite3_stmt *multi;  /* INSERT INTO <table> SELECT * FROM ovl_batch_<b> */
  int n;                /* rows waiting in cur */
  rows_buf cur;
  const rows_buf *out;  /* what the statement reads while it is stepped, and its row count */
  int out_n;
} batch;

/* Write-behind: a queue of full batches and the worker that inserts them. Every buffer is
** either a batch's cur (the caller's), queued, or spare: spare + queued = BEHIND_SLOTS. */
#define BEHIND_SLOTS 16
/* The sleeping worker is woken once this many batches wait, not for each one: a wake is a
** system call on the parsing thread (on a VM, an interrupt to the other CPU too). */
#define BEHIND_WAKE_AT 4
_Static_assert(BEHIND_WAKE_AT <= BEHIND_SLOTS, "a full queue must have woken the worker");
/* A scratch file's pages are sent to the disk every this many batches (sync_file_range, not
** waiting), so that the fsync its import ends with finds little left to write. */
#define BEHIND_WRITEBACK_EVERY 32
typedef struct behind_job {
  int b, n;
  rows_buf rows;
} behind_job;

typedef struct write_behind {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t queued, done;
  behind_job queue[BEHIND_SLOTS];  /* count jobs from head; the head one may be in the worker */
  int head, count;
  rows_buf spare[BEHIND_SLOTS];
  int nspare;
  int stop;             /* set by the caller: the worker ends once the queue is empty */
  int writeback_fd;     /* the scratch file, read-only, to start its writeback; -1: none */
  long inserted;        /* jobs the worker has inserted (its own) */
  int rc;               /* the first failed insert (err: its message); later jobs are dropped */
  ovl_err err;
} write_behind;

/* A batch as its virtual table's module sees it. */
typedef struct batch_source {
  ovl_trace_writer *w;
  int b;
} batch_source;

struct ovl_trace_writer {
  sqlite3 *db;
  char *path;
  sqlite3_stmt *st[ST_COUNT];
  sqlite3_stmt *page_count;
  int64_t page_size;
  batch batches[B_COUNT];
  batch_source sources[B_COUNT];  /* what each batch's virtual table reads */
  char *dict[DICT_MAX];
  int ndict;
  ovl_strmap strings;
  int64_t next_string_id;
  write_behind *behind;  /* NULL: batches are inserted by the caller's thread */
  int scratch;          /* opened by ovl_tw_open_scratch: an import's output */
  /* The largest collectives.id written (0: none yet), so that a scratch file's calls without
  ** an id are batched with the one SQLite would give them (the largest + 1); -1 once not
  ** known (after a rollback): they are inserted one by one then. */
  int64_t coll_max_id;
  int in_txn;
  int committing;       /* inside ovl_tw_commit: no automatic commit */
  long rows_in_txn;
  ovl_tw_commit_hooks hooks;
};

static int db_fail(ovl_trace_writer *w, ovl_err *err, const char *what) {
  return ovl_fail(err, OVL_EUSER, "%s: cannot %s: %s", w->path, what, sqlite3_errmsg(w->db));
}

/* ---------------------------------------------------------------------------------- */
/* Write-behind                                                                       */
/* ---------------------------------------------------------------------------------- */

/* Inserts n rows of batch b from rows, in one statement (the transaction is open). */
static int insert_rows(ovl_trace_writer *w, int b, const rows_buf *rows, int n, ovl_err *err) {
  batch *bt = &w->batches[b];
  bt->out = rows;
  bt->out_n = n;
  int src = sqlite3_step(bt->multi);
  sqlite3_reset(bt->multi);
  bt->out = NULL;
  bt->out_n = 0;
  return src == SQLITE_DONE ? OVL_OK : db_fail(w, err, "insert a row");
}

static void *behind_main(void *arg) {
  ovl_trace_writer *w = arg;
  write_behind *q = w->behind;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    while (q->count == 0 && !q->stop) pthread_cond_wait(&q->queued, &q->lock);
    if (q->count == 0) break;
    behind_job job = q->queue[q->head];
    int failed = q->rc != OVL_OK;
    pthread_mutex_unlock(&q->lock);
    /* The caller does not touch the connection while a job is queued (settle). */
    ovl_err err;
    int rc = failed ? OVL_OK : insert_rows(w, job.b, &job.rows, job.n, &err);
#ifdef SYNC_FILE_RANGE_WRITE
    if (q->writeback_fd >= 0 && ++q->inserted % BEHIND_WRITEBACK_EVERY == 0)
      sync_file_range(q->writeback_fd, 0, 0, SYNC_FILE_RANGE_WRITE);  /* a hint: failures change nothing */
#endif
    pthread_mutex_lock(&q->lock);
    if (rc && !q->rc) {
      q->rc = rc;
      q->err = err;
    }
    job.rows.text_used = 0;
    q->spare[q->nspare++] = job.rows;
    q->head = (q->head + 1) % BEHIND_SLOTS;
    q->count--;
    pthread_cond_signal(&q->done);
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

/* Waits until the worker has inserted every batch handed to it; then the connection is the
** caller's. Returns the worker's first error (kept until ovl_tw_rollback). */
static int settle(ovl_trace_writer *w, ovl_err *err) {
  write_behind *q = w->behind;
  if (!q) return OVL_OK;
  pthread_mutex_lock(&q->lock);
  if (q->count > 0) pthread_cond_signal(&q->queued);  /* fewer than BEHIND_WAKE_AT may wait unseen */
  while (q->count > 0) pthread_cond_wait(&q->done, &q->lock);
  int rc = q->rc;
  if (rc && err) *err = q->err;
  pthread_mutex_unlock(&q->lock);
  return rc;
}

/* Queues the rows of batch b for the worker and gives the batch a spare buffer. */
static int hand_over(ovl_trace_writer *w, int b, ovl_err *err) {
  write_behind *q = w->behind;
  batch *bt = &w->batches[b];
  pthread_mutex_lock(&q->lock);
  while (q->nspare == 0) pthread_cond_wait(&q->done, &q->lock);
  assert(q->count + q->nspare == BEHIND_SLOTS);
  int rc = q->rc;
  if (rc) {
    if (err) *err = q->err;
  } else {
    q->queue[(q->head + q->count) % BEHIND_SLOTS] = (behind_job){b, bt->n, bt->cur};
    q->count++;
    bt->cur = q->spare[--q->nspare];
    /* The worker sleeps only with nothing queued, so a queue of BEHIND_WAKE_AT or more has
    ** always been signalled since (a full one, waited on above, included). */
    if (q->count >= BEHIND_WAKE_AT) pthread_cond_signal(&q->queued);
  }
  pthread_mutex_unlock(&q->lock);
  return rc;
}

static void free_rows(rows_buf *r) {
  free(r->vals);
  free(r->text);
  memset(r, 0, sizeof *r);
}

static int alloc_rows(rows_buf *r) {
  memset(r, 0, sizeof *r);
  return (r->vals = malloc(BATCH_ROWS * BATCH_MAX_COLS * sizeof *r->vals)) != NULL;
}

/* Ends the worker once it has inserted what it was handed. */
static void stop_behind(ovl_trace_writer *w) {
  write_behind *q = w->behind;
  if (!q) return;
  pthread_mutex_lock(&q->lock);
  q->stop = 1;
  pthread_cond_signal(&q->queued);
  pthread_mutex_unlock(&q->lock);
  pthread_join(q->thread, NULL);
  assert(q->count == 0 && q->nspare == BEHIND_SLOTS);
  if (q->writeback_fd >= 0) close(q->writeback_fd);
  pthread_cond_destroy(&q->done);
  pthread_cond_destroy(&q->queued);
  pthread_mutex_destroy(&q->lock);
  for (int i = 0; i < q->nspare; i++) free_rows(&q->spare[i]);
  free(q);
  w->behind = NULL;
}

int ovl_tw_writes_behind(const ovl_trace_writer *w) { return w->behind != NULL; }

int ovl_tw_write_behind(ovl_trace_writer *w, ovl_err *err) {
  if (w->behind || w->hooks.before || w->hooks.reserve || w->hooks.after || sysconf(_SC_NPROCESSORS_ONLN) < 2)
    return OVL_OK;  /* one CPU: a second thread would only take turns with the caller */
  write_behind *q = calloc(1, sizeof *q);
  if (!q) return ovl_oom(err, "write-behind");
  for (; q->nspare < BEHIND_SLOTS; q->nspare++)
    if (!alloc_rows(&q->spare[q->nspare])) {
      for (int i = 0; i < q->nspare; i++) free_rows(&q->spare[i]);
      free(q);
      return ovl_oom(err, "write-behind buffers");
    }
  q->writeback_fd = w->scratch ? open(w->path, O_RDONLY | O_CLOEXEC) : -1;
  int locks = pthread_mutex_init(&q->lock, NULL) == 0;
  int conds = locks && pthread_cond_init(&q->queued, NULL) == 0;
  int conds2 = conds && pthread_cond_init(&q->done, NULL) == 0;
  w->behind = q;
  /* The worker is born with every signal blocked: they go to the threads that handle them. */
  sigset_t all, old;
  sigfillset(&all);
  int masked = conds2 && pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
  int started = conds2 && pthread_create(&q->thread, NULL, behind_main, w) == 0;
  if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!started) {  /* no thread: the caller inserts its batches itself, as without write-behind */
    w->behind = NULL;
    if (q->writeback_fd >= 0) close(q->writeback_fd);
    if (conds2) pthread_cond_destroy(&q->done);
    if (conds) pthread_cond_destroy(&q->queued);
    if (locks) pthread_mutex_destroy(&q->lock);
    for (int i = 0; i < q->nspare; i++) free_rows(&q->spare[i]);
    free(q);
  }
  return OVL_OK;
}

static int exec(ovl_trace_writer *w, const char *sql, ovl_err *err) {
  int settled = settle(w, err);
  if (settled) return settled;
  char *msg = NULL;
  if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    int rc = ovl_fail(err, OVL_EUSER, "%s: %s", w->path, msg ? msg : "SQLite error");
    sqlite3_free(msg);
    return rc;
  }
  return OVL_OK;
}

static void finalize_all(ovl_trace_writer *w) {
  stop_behind(w);
  for (int i = 0; i < ST_COUNT; i++) {
    sqlite3_finalize(w->st[i]);
    w->st[i] = NULL;
  }
  sqlite3_finalize(w->page_count);
  w->page_count = NULL;
  for (int b = 0; b < B_COUNT; b++) {
    sqlite3_finalize(w->batches[b].multi);
    w->batches[b].multi = NULL;
  }
}

/* ---------------------------------------------------------------------------------- */
/* Batches as a virtual table                                                         */
/* ---------------------------------------------------------------------------------- */

/* A batch's rows are read by SQLite straight from the batch array through a virtual table
** (module "ovl_batch_<b>", eponymous: no CREATE needed), so that a batch, full or not, is one
** INSERT ... SELECT with no value bound. */
typedef struct batch_vtab {
  sqlite3_vtab base;
  ovl_trace_writer *w;
  int b;
} batch_vtab;

typedef struct batch_cursor {
  sqlite3_vtab_cursor base;
  int row;
} batch_cursor;

static int bv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err) {
  (void)argc, (void)argv, (void)err;
  const batch_source *a = aux;
  char sql[256] = "CREATE TABLE x(";
  size_t n = strlen(sql);
  for (int c = 0; c < batched[a->b].ncols; c++) n += (size_t)snprintf(sql + n, sizeof sql - n, "%sc%d", c ? "," : "", c);
  snprintf(sql + n, sizeof sql - n, ")");
  int rc = sqlite3_declare_vtab(db, sql);
  if (rc != SQLITE_OK) return rc;
  batch_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->w = a->w;
  v->b = a->b;
  *out = &v->base;
  return SQLITE_OK;
}

static int bv_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  info->estimatedCost = 1;
  return SQLITE_OK;
}

static int bv_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int bv_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  (void)v;
  batch_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int bv_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}

static int bv_filter(sqlite3_vtab_cursor *c, int idx, const char *idxs, int argc, sqlite3_value **argv) {
  (void)idx, (void)idxs, (void)argc, (void)argv;
  ((batch_cursor *)c)->row = 0;
  return SQLITE_OK;
}

static int bv_next(sqlite3_vtab_cursor *c) {
  ((batch_cursor *)c)->row++;
  return SQLITE_OK;
}

static int bv_eof(sqlite3_vtab_cursor *c) {
  const batch_vtab *v = (const batch_vtab *)c->pVtab;
  return ((batch_cursor *)c)->row >= v->w->batches[v->b].out_n;
}

static int bv_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col) {
  const batch_vtab *v = (const batch_vtab *)c->pVtab;
  const ovl_trace_writer *w = v->w;
  const rows_buf *rows = w->batches[v->b].out;
  int64_t x = rows->vals[((batch_cursor *)c)->row * batched[v->b].ncols + col];
  if (x == OVL_NONE) sqlite3_result_null(ctx);
  else if (!((batched[v->b].text_cols >> col) & 1)) sqlite3_result_int64(ctx, x);
  else if (x < DICT_MAX) sqlite3_result_text(ctx, w->dict[x], -1, SQLITE_STATIC);
  else sqlite3_result_text(ctx, rows->text + (x - DICT_MAX), -1, SQLITE_STATIC);
  return SQLITE_OK;
}

static int bv_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *rowid) {
  *rowid = ((batch_cursor *)c)->row;
  return SQLITE_OK;
}

static const sqlite3_module batch_module = {
  .iVersion = 0, .xCreate = NULL, .xConnect = bv_connect, .xBestIndex = bv_best_index,
  .xDisconnect = bv_disconnect, .xDestroy = bv_disconnect, .xOpen = bv_open, .xClose = bv_close,
  .xFilter = bv_filter, .xNext = bv_next, .xEof = bv_eof, .xColumn = bv_column, .xRowid = bv_rowid,
};

/* INSERT INTO <table>(<columns>) SELECT * FROM ovl_batch_<b>: the column list of the
** single-row statement. */
static int prepare_batch(ovl_trace_writer *w, int b, ovl_err *err) {
  w->sources[b] = (batch_source){w, b};
  char name[32];
  snprintf(name, sizeof name, "ovl_batch_%d", b);
  if (sqlite3_create_module(w->db, name, &batch_module, &w->sources[b]) != SQLITE_OK) return db_fail(w, err, "register a module");
  const char *single = insert_sql[batched[b].single];
  const char *values = strstr(single, " VALUES ");
  char sql[512];
  snprintf(sql, sizeof sql, "%.*s SELECT * FROM %s", (int)(values - single), single, name);
  return sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->batches[b].multi, NULL) == SQLITE_OK
             ? OVL_OK
             : db_fail(w, err, "prepare an insert");
}

static void free_writer(ovl_trace_writer *w) {
  finalize_all(w);
  if (w->db) sqlite3_close(w->db);
  for (int b = 0; b < B_COUNT; b++) free_rows(&w->batches[b].cur);
  for (int i = 0; i < w->ndict; i++) free(w->dict[i]);
  ovl_strmap_free(&w->strings);
  free(w->path);
  free(w);
}

/* How open_writer prepares the file. */
enum { OPEN_REPLACE, OPEN_CREATED, OPEN_SCRATCH };

static int open_writer(ovl_trace_writer **out, const char *path, int how, ovl_err *err) {
  *out = NULL;
  ovl_trace_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return ovl_oom(err, "trace writer");
  }
  w->next_string_id = 1;
  w->scratch = how == OPEN_SCRATCH;
  for (int b = 0; b < B_COUNT; b++)
    if (!alloc_rows(&w->batches[b].cur)) {
      free_writer(w);
      return ovl_oom(err, "trace writer");
    }
  /* Replace: a stale -wal beside an old file would otherwise be replayed into the new one. */
  if (how == OPEN_REPLACE) {
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
  /* Someone reading the file as it is created (`ovl report` on a live trace, a test polling
  ** its commits) holds a shared lock for a moment; switching to WAL needs the file alone.
  ** Wait for it a bounded time rather than give up capture on the first try. */
  sqlite3_busy_timeout(w->db, OVL_TW_BUSY_TIMEOUT_MS);
  /* The page cache holds what an append needs (the right edge of each table) and the dirty
  ** pages waiting for a commit; more is spilled to the journal. A small one is reused rather
  ** than grown: 64 MB cost a page fault per fresh 4 KiB, 25 % of the writer's time. A
  ** scratch file spills straight into itself, each full page once, so 512 KB do: the hot
  ** pages are a few per table, and a 256 MB import writes as many pages as with 2 MB but
  ** faults 400 fewer in (about 20 us each on a VM). */
  int rc = exec(w, how == OPEN_SCRATCH ? "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; PRAGMA cache_size=-512;"
                                       : "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-8192;",
                err);
  /* An import's scratch file gets its tables in one transaction, not one each: a dozen fewer
  ** rounds of locks and header writes (its rows come later, in transactions of their own). */
  if (!rc && how == OPEN_SCRATCH) rc = exec(w, "BEGIN", err);
  if (!rc) rc = exec(w, ovl_schema_sql, err);
  if (!rc && how == OPEN_SCRATCH) rc = exec(w, "COMMIT", err);
  for (int i = 0; !rc && i < ST_COUNT; i++) {
    if (sqlite3_prepare_v3(w->db, insert_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i], NULL) != SQLITE_OK)
      rc = db_fail(w, err, "prepare an insert");
  }
  for (int b = 0; !rc && b < B_COUNT; b++) rc = prepare_batch(w, b, err);
  if (!rc && sqlite3_prepare_v3(w->db, "PRAGMA page_count", -1, SQLITE_PREPARE_PERSISTENT, &w->page_count, NULL))
    rc = db_fail(w, err, "prepare a query");
  if (!rc) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      w->page_size = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  if (!rc) rc = ovl_tw_meta_int(w, "schema_version", OVL_SCHEMA_VERSION, err);
  if (rc) {
    free_writer(w);
    return rc;
  }
  *out = w;
  return OVL_OK;
}

int ovl_tw_open(ovl_trace_writer **out, const char *path, ovl_err *err) {
  return open_writer(out, path, OPEN_REPLACE, err);
}

int ovl_tw_open_created(ovl_trace_writer **out, const char *path, ovl_err *err) {
  return open_writer(out, path, OPEN_CREATED, err);
}

int ovl_tw_open_scratch(ovl_trace_writer **out, const char *path, ovl_err *err) {
  return open_writer(out, path, OPEN_SCRATCH, err);
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
  if (++w->rows_in_txn >= OVL_TW_AUTOCOMMIT_ROWS && !w->committing) return ovl_tw_commit(w, err);
  return OVL_OK;
}

/* The dictionary index of `text` (OVL_NONE for NULL), copying it on first sight; -1 when it
** cannot be batched (too long, dictionary full, out of memory). `hint` is the index the
** same column had last time: most rows repeat it. */
static int64_t dict_index(ovl_trace_writer *w, const char *text, int64_t hint) {
  if (!text) return OVL_NONE;
  if (hint >= 0 && hint < w->ndict && strcmp(w->dict[hint], text) == 0) return hint;
  for (int i = 0; i < w->ndict; i++)
    if (strcmp(w->dict[i], text) == 0) return i;
  if (w->ndict == DICT_MAX || strlen(text) > DICT_TEXT_MAX || !(w->dict[w->ndict] = strdup(text))) return -1;
  return w->ndict++;
}


/* Writes the rows waiting in batch b, all in one statement, or hands them to the worker. */
static int flush_batch(ovl_trace_writer *w, int b, ovl_err *err) {
  batch *bt = &w->batches[b];
  if (bt->n == 0) return OVL_OK;
  int rc = begin(w, err);
  if (!rc) rc = w->behind ? hand_over(w, b, err) : insert_rows(w, b, &bt->cur, bt->n, err);
  bt->n = 0;
  bt->cur.text_used = 0;
  return rc;
}

/* Room for one more row of batch b, written out first when the batch is full. */
static int64_t *batch_row(ovl_trace_writer *w, int b, ovl_err *err, int *rc) {
  batch *bt = &w->batches[b];
  *rc = bt->n == BATCH_ROWS ? flush_batch(w, b, err) : OVL_OK;
  return *rc ? NULL : &bt->cur.vals[bt->n * batched[b].ncols];
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
  int rc = settle(w, err);  /* before any binding: the connection must be this thread's */
  if (rc) return rc;
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
  int rc = settle(w, err);
  if (rc) return rc;
  sqlite3_stmt *st = w->st[ST_STRING];
  sqlite3_bind_int64(st, 1, nid);
  bind_text(st, 2, text);
  rc = step_row(w, ST_STRING, err);
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
  batch *bt = &w->batches[B_MEMOP];
  int64_t kind = dict_index(w, r->kind, bt->n ? bt->cur.vals[(bt->n - 1) * OVL_SCHEMA_MEMOPS_NCOLUMNS + 5] : -1);
  if (kind == -1) {  /* text that cannot be batched: single-row insert, after the rows before it */
    int rc = flush_batch(w, B_MEMOP, err);
    if (!rc) rc = settle(w, err);
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

/* A collective with its id given: batched (its id is known before the row is written).
** Returns 0 when a text does not fit the dictionary (the caller takes the single-row path). */
static int batch_collective(ovl_trace_writer *w, const ovl_collective_row *r, const ovl_collective_nccl *nccl,
                            ovl_err *err, int *rc) {
  batch *bt = &w->batches[B_COLL];
  const int64_t *last = bt->n ? &bt->cur.vals[(bt->n - 1) * OVL_SCHEMA_COLLECTIVES_NCOLUMNS] : NULL;
  int64_t op = dict_index(w, r->op, last ? last[5] : -1), dtype = dict_index(w, r->dtype, last ? last[7] : -1),
          redop = dict_index(w, r->redop, last ? last[9] : -1),
          algo = dict_index(w, nccl ? nccl->algorithm : NULL, last ? last[17] : -1),
          proto = dict_index(w, nccl ? nccl->protocol : NULL, last ? last[18] : -1);
  if (op == -1 || dtype == -1 || redop == -1 || algo == -1 || proto == -1) return 0;
  int64_t *v = batch_row(w, B_COLL, err, rc);
  if (!v) return 1;
  v[0] = r->id, v[1] = r->comm, v[2] = r->rank, v[3] = r->nranks, v[4] = r->seq, v[5] = op, v[6] = r->count;
  v[7] = dtype, v[8] = r->bytes, v[9] = redop, v[10] = r->peer, v[11] = r->device, v[12] = r->stream;
  v[13] = r->host_start, v[14] = r->host_end, v[15] = r->tid, v[16] = r->group_id;
  v[17] = algo, v[18] = proto, v[19] = nccl ? nccl->nchannels : OVL_NONE, v[20] = nccl ? nccl->nwarps : OVL_NONE;
  v[21] = nccl ? nccl->nccl_seq : OVL_NONE;
  if (w->coll_max_id >= 0 && r->id > w->coll_max_id) w->coll_max_id = r->id;
  *rc = add_batch_row(w, B_COLL, err);
  return 1;
}

int ovl_tw_collective(ovl_trace_writer *w, const ovl_collective_row *r, int64_t *id, ovl_err *err) {
  return ovl_tw_collective_nccl(w, r, NULL, id, err);
}

int ovl_tw_collective_nccl(ovl_trace_writer *w, const ovl_collective_row *r, const ovl_collective_nccl *nccl,
                           int64_t *id, ovl_err *err) {
  int rc;
  if (r->id != OVL_NONE && batch_collective(w, r, nccl, err, &rc)) {
    if (!rc && id) *id = r->id;
    return rc;
  }
  /* An import's calls take their ids here: one by one, each insert would wait for the
  ** write-behind thread and step a statement of its own. */
  if (r->id == OVL_NONE && w->scratch && w->coll_max_id >= 0 && w->coll_max_id < INT64_MAX) {
    ovl_collective_row numbered = *r;
    numbered.id = w->coll_max_id + 1;
    if (batch_collective(w, &numbered, nccl, err, &rc)) {
      if (!rc && id) *id = numbered.id;
      return rc;
    }
  }
  rc = flush_batch(w, B_COLL, err);  /* SQLite assigns the id now: after the rows before it */
  if (!rc) rc = settle(w, err);
  if (rc) return rc;
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
  rc = step_row(w, ST_COLL, err);
  int64_t given = r->id != OVL_NONE ? r->id : sqlite3_last_insert_rowid(w->db);
  if (!rc && w->coll_max_id >= 0 && given > w->coll_max_id) w->coll_max_id = given;
  if (!rc && id) *id = given;
  return rc;
}

/* Binds n integers (OVL_NONE as NULL) to a single-row statement and inserts the row. */
static int insert_ints(ovl_trace_writer *w, int which, const int64_t *v, int n, ovl_err *err) {
  int rc = settle(w, err);
  if (rc) return rc;
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

/* An nvtx row into its batch (write-behind only); 0 when it cannot go there (its domain does
** not fit the dictionary, no memory for its name): the caller inserts it alone. */
static int batch_nvtx(ovl_trace_writer *w, const ovl_nvtx_row *r, ovl_err *err, int *rc) {
  batch *bt = &w->batches[B_NVTX];
  int64_t domain = dict_index(w, r->domain, bt->n ? bt->cur.vals[(bt->n - 1) * OVL_SCHEMA_NVTX_NCOLUMNS + 3] : -1);
  if (domain == -1) return 0;
  int64_t *v = batch_row(w, B_NVTX, err, rc);
  if (!v) return 1;
  int64_t name = OVL_NONE;
  if (r->name) {  /* copied after batch_row: a full batch has just been handed over with its texts */
    rows_buf *rows = &bt->cur;
    size_t len = strlen(r->name) + 1;
    if (rows->text_cap - rows->text_used < len) {
      size_t cap = rows->text_cap ? rows->text_cap : 4096;
      while (cap - rows->text_used < len) cap *= 2;
      char *grown = realloc(rows->text, cap);
      if (!grown) return 0;
      rows->text = grown;
      rows->text_cap = cap;
    }
    memcpy(rows->text + rows->text_used, r->name, len);
    name = DICT_MAX + (int64_t)rows->text_used;
    rows->text_used += len;
  }
  v[0] = r->start, v[1] = r->end, v[2] = r->tid, v[3] = domain, v[4] = name;
  *rc = add_batch_row(w, B_NVTX, err);
  return 1;
}

int ovl_tw_nvtx(ovl_trace_writer *w, const ovl_nvtx_row *r, ovl_err *err) {
  int rc = OVL_OK;
  if (w->behind && batch_nvtx(w, r, err, &rc)) return rc;
  rc = flush_batch(w, B_NVTX, err);
  if (!rc) rc = settle(w, err);
  if (rc) return rc;
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

void ovl_tw_set_commit_hooks(ovl_trace_writer *w, const ovl_tw_commit_hooks *hooks) {
  assert(!w->behind || !hooks);  /* hooks write rows at commits: not beside the worker */
  memset(&w->hooks, 0, sizeof w->hooks);
  if (hooks) w->hooks = *hooks;
}

static int flush_batches(ovl_trace_writer *w, ovl_err *err) {
  int rc = OVL_OK;
  for (int b = 0; b < B_COUNT; b++) {
    int brc = flush_batch(w, b, err);
    if (!rc) rc = brc;
  }
  return rc;
}

/* The size the database will have once the open transaction commits. */
static int pending_bytes(ovl_trace_writer *w, int64_t *bytes, ovl_err *err) {
  int rc = settle(w, err);
  if (rc) return rc;
  int src = sqlite3_step(w->page_count);
  *bytes = src == SQLITE_ROW ? sqlite3_column_int64(w->page_count, 0) * w->page_size : 0;
  sqlite3_reset(w->page_count);
  return src == SQLITE_ROW ? OVL_OK : db_fail(w, err, "count the database's pages");
}

/* The hooks' part of a commit: their last rows, then room on disk for the result. */
static int before_commit(ovl_trace_writer *w, ovl_err *err) {
  int rc = w->hooks.before ? w->hooks.before(w->hooks.ctx, w, err) : OVL_OK;
  if (!rc) rc = flush_batches(w, err);
  if (!rc && w->in_txn && w->hooks.reserve) {
    int64_t bytes = 0;
    rc = pending_bytes(w, &bytes, err);
    if (!rc) rc = w->hooks.reserve(w->hooks.ctx, bytes, err);
  }
  return rc;
}

int ovl_tw_commit(ovl_trace_writer *w, ovl_err *err) {
  if (w->committing) return OVL_OK;  /* a hook's own rows: the commit under way takes them */
  int rc = flush_batches(w, err);
  w->committing = 1;
  if (!rc) rc = before_commit(w, err);
  w->committing = 0;
  if (rc) {
    ovl_tw_rollback(w);
    return rc;
  }
  if (!w->in_txn) return rc;
  rc = exec(w, "COMMIT", err);
  if (rc) ovl_tw_rollback(w);  /* SQLite may have rolled back already: a no-op then */
  w->in_txn = 0;
  w->rows_in_txn = 0;
  if (!rc && w->hooks.after) w->hooks.after(w->hooks.ctx);
  return rc;
}

void ovl_tw_rollback(ovl_trace_writer *w) {
  settle(w, NULL);  /* what was handed over is inserted, then undone with the rest */
  if (w->behind) {
    pthread_mutex_lock(&w->behind->lock);
    w->behind->rc = OVL_OK;  /* the failed insert belonged to the abandoned transaction */
    pthread_mutex_unlock(&w->behind->lock);
  }
  for (int b = 0; b < B_COUNT; b++) {
    w->batches[b].n = 0;
    w->batches[b].cur.text_used = 0;
  }
  if (sqlite3_get_autocommit(w->db) == 0) sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
  w->coll_max_id = -1;  /* the rolled back ids are free again: SQLite gives them next */
  w->in_txn = 0;
  w->rows_in_txn = 0;
}

int ovl_tw_checkpoint(ovl_trace_writer *w, ovl_err *err) {
  int settled = settle(w, err);
  if (settled) return settled;
  int rc = sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  return rc == SQLITE_OK || rc == SQLITE_BUSY ? OVL_OK : db_fail(w, err, "move the journal into the database");
}

int ovl_tw_unjournaled(ovl_trace_writer *w, ovl_err *err) {
  ovl_tw_rollback(w);
  int rc = sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
  if (rc != SQLITE_OK) return db_fail(w, err, "move the journal into the database");
  return exec(w, "PRAGMA journal_mode=OFF;", err);
}

int ovl_tw_close(ovl_trace_writer *w, ovl_err *err) {
  if (!w) return OVL_OK;
  int rc = ovl_tw_commit(w, err);
  finalize_all(w);
  /* Leaving WAL needs the file alone: while another connection has it open (a reader of the
  ** live trace) the trace is complete but only together with its -wal file; say so. */
  if (!rc && sqlite3_exec(w->db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL) != SQLITE_OK)
    rc = (sqlite3_errcode(w->db) & 0xff) == SQLITE_BUSY
             ? ovl_fail(err, OVL_EUSER, "%s: a reader still has the trace open, so it is complete only "
                        "with its -wal file beside it: keep both", w->path)
             : ovl_fail(err, OVL_EUSER, "%s: %s", w->path, sqlite3_errmsg(w->db));
  if (sqlite3_close(w->db) != SQLITE_OK && !rc)
    rc = ovl_fail(err, OVL_EINTERNAL, "%s: cannot close the trace: %s", w->path, sqlite3_errmsg(w->db));
  else
    w->db = NULL;
  free_writer(w);
  return rc;
}
