/*
** The trace store: every field written by the trace writer reads back through the reader,
** and GPU work comes back in start order whatever order it was inserted in (restored within
** the reorder window, or by the sorted fallback beyond it, with identical analysis results).
** Collectives written in batches keep their order, ids and texts around rows that cannot be
** batched; commit hooks add their rows to every commit and may refuse one for want of disk
** space (its rows rolled back, earlier commits kept); after ovl_tw_unjournaled the journal
** is gone and later commits still land. A scratch file (an import's) is written with its
** journal in memory and can still roll back. With write-behind (a worker thread inserting
** full batches) every table still gets its rows in call order, and a failed insert on the
** worker is reported by a later call; an import's collectives get the ids SQLite would give
** them. A reader holding the file delays the writer's open,
** it does not fail it; one still connected at close leaves the trace in WAL mode, and the
** close says so.
*/
#include "analyze/analysis.h"
#include "check.h"
#include "db_query.h"
#include "load/trace_reader.h"
#include "trace_builder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static void round_trip(void) {
  const char *path = tb_temp_path("store.sqlite");
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open(&w, path, &err) == OVL_OK);
  int64_t name = 0, api_name = 0, again = 0;
  CHECK(ovl_tw_meta(w, "rank", "3", &err) == OVL_OK);
  CHECK(ovl_tw_meta(w, "hostname", "node-\"7\"", &err) == OVL_OK);
  CHECK(ovl_tw_intern(w, "_Z10gemmKernelPfS_", &name, &err) == OVL_OK);
  CHECK(ovl_tw_intern(w, "cudaLaunchKernel", &api_name, &err) == OVL_OK);
  CHECK(ovl_tw_intern(w, "_Z10gemmKernelPfS_", &again, &err) == OVL_OK);
  CHECK_I64(again, name);
  ovl_kernel_row k = {100, 250, 1, 14, 77, name, {64, 2, 1}, {256, 1, 1}};
  CHECK(ovl_tw_kernel(w, &k, &err) == OVL_OK);
  ovl_memop_row m = {50, 90, 1, 15, 78, "HtoD", 4096};
  CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);
  ovl_collective_row c = {OVL_NONE, 99, 2, 8, 5, "ReduceScatter", 1024, "Bfloat16", 16384, "PreMulSum", -1,
                          1, 16, 40, 45, 1234, 3};
  int64_t cid = 0;
  CHECK(ovl_tw_collective(w, &c, &cid, &err) == OVL_OK);
  CHECK(ovl_tw_launch(w, cid, 77, &err) == OVL_OK);
  ovl_nvtx_row range = {10, 500, 1234, "ovl", "step"};
  ovl_nvtx_row mark = {20, OVL_NONE, 1234, NULL, "ovl:grad_ready bucket=0 bytes=16"};
  CHECK(ovl_tw_nvtx(w, &range, &err) == OVL_OK);
  CHECK(ovl_tw_nvtx(w, &mark, &err) == OVL_OK);
  ovl_api_row api = {30, 35, 1234, 77, api_name};
  CHECK(ovl_tw_api(w, &api, &err) == OVL_OK);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);

  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  CHECK_STR(ovl_trace_meta(t, "schema_version"), "1");
  CHECK_I64(ovl_trace_meta_int(t, "rank", -1), 3);
  CHECK_STR(ovl_trace_meta(t, "hostname"), "node-\"7\"");
  CHECK(ovl_trace_meta(t, "nope") == NULL);
  CHECK_STR(ovl_trace_string(t, name), "_Z10gemmKernelPfS_");
  ovl_coll_rec *colls = NULL;
  size_t ncolls = 0;
  CHECK(ovl_trace_read_collectives(t, &colls, &ncolls, &err) == OVL_OK);
  CHECK_I64(ncolls, 1);
  if (ncolls == 1) {
    CHECK_I64(colls[0].id, cid);
    CHECK_I64(colls[0].comm, 99);
    CHECK_I64(colls[0].rank, 2);
    CHECK_I64(colls[0].nranks, 8);
    CHECK_I64(colls[0].seq, 5);
    CHECK_STR(colls[0].op, "ReduceScatter");
    CHECK_I64(colls[0].count, 1024);
    CHECK_STR(colls[0].dtype, "Bfloat16");
    CHECK_I64(colls[0].bytes, 16384);
    CHECK_STR(colls[0].redop, "PreMulSum");
    CHECK_I64(colls[0].peer, -1);
    CHECK_I64(colls[0].device, 1);
    CHECK_I64(colls[0].stream, 16);
    CHECK_I64(colls[0].host_start, 40);
    CHECK_I64(colls[0].host_end, 45);
    CHECK_I64(colls[0].tid, 1234);
    CHECK_I64(colls[0].group_id, 3);
  }
  free(colls);
  ovl_launch_rec *links = NULL;
  size_t nlinks = 0;
  CHECK(ovl_trace_read_launches(t, &links, &nlinks, &err) == OVL_OK);
  CHECK_I64(nlinks, 1);
  if (nlinks == 1) {
    CHECK_I64(links[0].collective, cid);
    CHECK_I64(links[0].correlation, 77);
  }
  free(links);

  ovl_work_options opt = {OVL_DEFAULT_REORDER_WINDOW, 1};
  ovl_work_cursor *cur = NULL;
  CHECK(ovl_work_open(t, &opt, &cur, &err) == OVL_OK);
  ovl_work wk;
  int has = 0;
  CHECK(ovl_work_next(cur, &wk, &has, &err) == OVL_OK && has);  /* the memop starts first */
  CHECK(wk.is_memop);
  CHECK_I64(wk.start, 50);
  CHECK_I64(wk.bytes, 4096);
  CHECK_STR(wk.memkind, "HtoD");
  CHECK(ovl_work_next(cur, &wk, &has, &err) == OVL_OK && has);
  CHECK(!wk.is_memop);
  CHECK_I64(wk.start, 100);
  CHECK_I64(wk.end, 250);
  CHECK_I64(wk.device, 1);
  CHECK_I64(wk.stream, 14);
  CHECK_I64(wk.correlation, 77);
  CHECK_I64(wk.name, name);
  CHECK_I64(wk.grid[0], 64);
  CHECK_I64(wk.grid[1], 2);
  CHECK(ovl_work_next(cur, &wk, &has, &err) == OVL_OK);
  CHECK(!has);
  ovl_work_close(cur);
  ovl_trace_close(t);
  remove(path);
}

/* Kernels inserted in a scrambled order: shuffled within blocks of `spread` rows. */
static void write_scrambled(const char *path, int n, int spread) {
  tb b;
  tb_open(&b, path);
  int *order = malloc((size_t)n * sizeof *order);
  for (int i = 0; i < n; i++) order[i] = i;
  unsigned s = 7;
  for (int base = 0; base < n; base += spread) {  /* shuffle each block of `spread` rows */
    int len = n - base < spread ? n - base : spread;
    for (int i = len - 1; i > 0; i--) {
      s = s * 1103515245u + 12345u;
      int j = (int)((s >> 8) % (unsigned)(i + 1));
      int tmp = order[base + i];
      order[base + i] = order[base + j];
      order[base + j] = tmp;
    }
  }
  for (int k = 0; k < n; k++) {
    int i = order[k];
    if (i % 5 == 4) tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", i * 100, i * 100 + 250, 0, 2);
    else tb_kernel(&b, "gemm", i * 100, i * 100 + 90, 0, 1);
  }
  tb_close(&b);
  free(order);
}

static void analyse(const char *path, size_t window, ovl_totals *out, size_t *nsteps) {
  ovl_analysis_ctx ctx;
  ovl_analysis_options opt = {0};
  opt.reorder_window = window;
  ovl_err err = {0};
  ovl_rank_result *r = NULL;
  size_t n = 0;
  CHECK(ovl_analysis_ctx_init(&ctx, &opt, &err) == OVL_OK);
  CHECK(ovl_analyze_file(&ctx, path, &r, &n, &err) == OVL_OK);
  CHECK_I64(n, 1);
  if (n == 1) {
    *out = r[0].totals;
    *nsteps = r[0].nsteps;
  }
  for (size_t i = 0; i < n; i++) ovl_rank_result_free(&r[i]);
  free(r);
  ovl_analysis_ctx_free(&ctx);
}

static void reordering(void) {
  const char *path = tb_temp_path("scrambled.sqlite");
  write_scrambled(path, 3000, 40);

  /* The cursor on its own: a window of 4 sees the disorder, SQLite sorting does not. */
  ovl_err err = {0};
  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  ovl_work_options small = {4, 0};
  ovl_work_cursor *cur = NULL;
  CHECK(ovl_work_open(t, &small, &cur, &err) == OVL_OK);
  ovl_work w;
  int has = 1, rc = OVL_OK;
  while (!rc && has) rc = ovl_work_next(cur, &w, &has, &err);
  CHECK_I64(rc, OVL_EUNSORTED);
  ovl_work_close(cur);
  for (size_t window = 0; window <= 64; window += 64) {  /* sorted by SQLite; restored by a big enough window */
    ovl_work_options opt = {window, 0};
    CHECK(ovl_work_open(t, &opt, &cur, &err) == OVL_OK);
    int64_t last = INT64_MIN;
    long rows = 0;
    has = 1;
    while (has && ovl_work_next(cur, &w, &has, &err) == OVL_OK && has) {
      CHECK(w.start >= last);
      last = w.start;
      rows++;
    }
    CHECK_I64(rows, 3000);
    ovl_work_close(cur);
  }
  ovl_trace_close(t);

  /* The analysis gives the same answer whether it restores order or falls back to sorting. */
  ovl_totals a, b;
  size_t sa = 0, sb = 0;
  analyse(path, 0, &a, &sa);
  analyse(path, 4, &b, &sb);
  CHECK_I64(a.compute, b.compute);
  CHECK_I64(a.comm, b.comm);
  CHECK_I64(a.exposed, b.exposed);
  CHECK_I64(sa, sb);
  CHECK(a.comm > 0 && a.exposed > 0);
  remove(path);
}

/* 150 collectives with their ids given (batched), one whose id SQLite assigns and one with
** an operation name too long for the batch dictionary, in between: order, ids and texts. */
static void batched_collectives(void) {
  const char *path = tb_temp_path("batched-colls.sqlite");
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open(&w, path, &err) == OVL_OK);
  char long_op[100];
  memset(long_op, 'x', sizeof long_op - 1);
  long_op[sizeof long_op - 1] = 0;
  int64_t assigned = 0;
  for (int i = 0; i < 152; i++) {
    const char *op = i % 3 ? "AllReduce" : "AllGather";
    if (i == 100) op = long_op;
    ovl_collective_row c = {i == 70 ? OVL_NONE : 1000 + i, 7, 0, 2, i, op, i, "Float32", 4 * i,
                            i % 3 ? "Sum" : NULL, -1, 0, OVL_NONE, 10 * i, 10 * i + 5, 1, OVL_NONE};
    int64_t id = -1;
    CHECK(ovl_tw_collective(w, &c, &id, &err) == OVL_OK);
    if (i == 70) assigned = id;
    else CHECK_I64(id, 1000 + i);
    if (i == 120) CHECK(ovl_tw_commit(w, &err) == OVL_OK);
  }
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  ovl_coll_rec *c = NULL;
  size_t n = 0;
  CHECK(ovl_trace_read_collectives(t, &c, &n, &err) == OVL_OK);
  CHECK_I64(n, 152);
  int wrong = 0;
  for (size_t i = 0; i < n; i++) {  /* by id: SQLite gave the row without one the next id after 1069 */
    int k = c[i].id == assigned ? 70 : (int)(c[i].id - 1000);
    wrong += c[i].seq != k || c[i].bytes != 4 * k || strcmp(c[i].dtype, "Float32") != 0 ||
             strcmp(c[i].redop, k % 3 ? "Sum" : "") != 0 || (k != 100 && strcmp(c[i].op, k % 3 ? "AllReduce" : "AllGather"));
  }
  CHECK_I64(wrong, 0);
  CHECK_I64(assigned, 1070);
  /* the texts are the trace's, one copy each; the long name cut to OVL_COLL_TEXT_BYTES - 1 */
  int shared = 1;
  for (size_t i = 1; i < n; i++) shared &= c[i].dtype == c[0].dtype && c[i].protocol == c[0].protocol;
  CHECK(shared);
  for (size_t i = 0; i < n; i++) {
    if (c[i].id != 1100) continue;
    CHECK_I64(strlen(c[i].op), OVL_COLL_TEXT_BYTES - 1);
    CHECK(strspn(c[i].op, "x") == OVL_COLL_TEXT_BYTES - 1);
    CHECK(c[i].op != c[i - 1].op && c[i].op != c[i + 1].op);
  }
  free(c);
  ovl_trace_close(t);
}

/* The hooks: each commit carries a meta row the hook writes, counts as done only when it
** succeeded, and is refused (rolled back) when the database would grow past a limit. */
typedef struct hook_state {
  int before, after;
  int64_t limit, largest_seen;
} hook_state;

static int hook_before(void *ctx, ovl_trace_writer *w, ovl_err *err) {
  hook_state *h = ctx;
  return ovl_tw_meta_int(w, "commits_begun", ++h->before, err);
}

static int hook_reserve(void *ctx, int64_t bytes, ovl_err *err) {
  hook_state *h = ctx;
  if (bytes > h->largest_seen) h->largest_seen = bytes;
  return bytes > h->limit ? ovl_fail(err, OVL_EUSER, "no room for %lld bytes", (long long)bytes) : OVL_OK;
}

static void hook_after(void *ctx) { ((hook_state *)ctx)->after++; }

static int file_exists(const char *path, const char *suffix) {
  char p[1024];
  struct stat st;
  snprintf(p, sizeof p, "%s%s", path, suffix);
  return stat(p, &st) == 0;
}

static void commit_hooks(void) {
  const char *path = tb_temp_path("hooks.sqlite");
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open(&w, path, &err) == OVL_OK);
  hook_state h = {0, 0, INT64_MAX, 0};
  ovl_tw_commit_hooks hooks = {&h, hook_before, hook_reserve, hook_after};
  ovl_tw_set_commit_hooks(w, &hooks);
  ovl_memop_row m = {1, 2, 0, 0, 0, "HtoD", 8};
  for (int i = 0; i < 10; i++) CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);
  CHECK(ovl_tw_commit(w, &err) == OVL_OK);
  CHECK(h.largest_seen > 0);
  h.limit = h.largest_seen;  /* the next transaction grows the file: refused */
  for (int i = 0; i < 20000; i++) CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);
  CHECK(ovl_tw_commit(w, &err) != OVL_OK);
  CHECK(strstr(err.msg, "no room") != NULL);
  CHECK(file_exists(path, "-wal"));
  CHECK(ovl_tw_unjournaled(w, &err) == OVL_OK);
  CHECK(!file_exists(path, "-wal"));
  CHECK(ovl_tw_meta(w, "after_stop", "yes", &err) == OVL_OK);  /* in place: no growth */
  CHECK(ovl_tw_commit(w, &err) == OVL_OK);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
  CHECK_I64(h.after, 3);  /* first commit, the meta one, the one at close */
  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  CHECK_STR(ovl_trace_meta(t, "after_stop"), "yes");
  CHECK_I64(ovl_trace_meta_int(t, "commits_begun", -1), h.before);
  ovl_trace_close(t);
  sqlite3 *db = dbq_open(path);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM memops"), 10);  /* the refused transaction's rows are not there */
  sqlite3_close(db);
  CHECK(!file_exists(path, "-wal"));
}

/* An import's scratch file: no journal file beside it while written, a rollback still
** undoes the open transaction (the journal is in memory), and the result is a plain
** rollback-journal database like any other trace. */
static void scratch_file(void) {
  const char *path = tb_temp_path("scratch.sqlite");
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open_scratch(&w, path, &err) == OVL_OK);
  if (!w) return;
  ovl_memop_row m = {1, 2, 0, 0, 0, "HtoD", 8};
  for (int i = 0; i < 20000; i++) CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);
  CHECK(ovl_tw_commit(w, &err) == OVL_OK);
  CHECK(!file_exists(path, "-wal"));
  CHECK(!file_exists(path, "-journal"));
  for (int i = 0; i < 300000; i++) CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);  /* beyond the cache: spilled into the file */
  CHECK(ovl_tw_meta(w, "rolled_back", "yes", &err) == OVL_OK);
  ovl_tw_rollback(w);
  CHECK(ovl_tw_meta(w, "kept", "yes", &err) == OVL_OK);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
  CHECK(!file_exists(path, "-wal"));
  CHECK(!file_exists(path, "-journal"));
  sqlite3 *db = dbq_open(path);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM memops"), 20000);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM meta WHERE key = 'rolled_back'"), 0);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'kept'"), "yes");
  CHECK_STR(dbq_text(db, "PRAGMA journal_mode"), "delete");
  CHECK_STR(dbq_text(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

/* A scratch writer with write-behind on; NULL (a failed check) when it cannot open. */
static ovl_trace_writer *open_behind(const char *path) {
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open_scratch(&w, path, &err) == OVL_OK);
  if (w) CHECK(ovl_tw_write_behind(w, &err) == OVL_OK);
  return w;
}

/* Write-behind: rows of every kind, batched or not, interleaved with new strings and a
** commit, land in each table in call order with their texts (nvtx names from the batches'
** own text arenas); many more batches than the worker's queue holds. */
static void write_behind_order(void) {
  const char *path = tb_temp_path("behind.sqlite");
  ovl_err err = {0};
  ovl_trace_writer *w = open_behind(path);
  if (!w) return;
  char long_kind[80], name[64];
  memset(long_kind, 'k', sizeof long_kind - 1);
  long_kind[sizeof long_kind - 1] = 0;
  enum { N = 60000 };
  int failures = 0;
  for (int i = 0; i < N; i++) {
    int64_t sid = 0;
    snprintf(name, sizeof name, "kernel-%d", i / 5000);  /* a new string now and then */
    failures += ovl_tw_intern(w, name, &sid, &err) != OVL_OK;
    ovl_kernel_row k = {i, i + 1, 0, 7, i, sid, {1, 1, 1}, {32, 1, 1}};
    failures += ovl_tw_kernel(w, &k, &err) != OVL_OK;
    ovl_api_row a = {i, i + 2, 9, i, sid};
    failures += ovl_tw_api(w, &a, &err) != OVL_OK;
    if (i % 3 == 0) {
      snprintf(name, sizeof name, "range %d", i);
      ovl_nvtx_row r = {i, i + 3, 9, i % 2 ? "gpu_user_annotation" : NULL, name};
      failures += ovl_tw_nvtx(w, &r, &err) != OVL_OK;
    }
    if (i % 1000 == 0) {  /* a kind too long to batch: a single-row insert after the batch */
      ovl_memop_row m = {i, i + 1, 0, 8, i, i % 2000 ? "HtoD" : long_kind, 64};
      failures += ovl_tw_memop(w, &m, &err) != OVL_OK;
    }
    if (i == N / 2) failures += ovl_tw_commit(w, &err) != OVL_OK;
  }
  CHECK_I64(failures, 0);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
  sqlite3 *db = dbq_open(path);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels"), N);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels WHERE start != rowid - 1 OR name != 1 + start / 5000"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM api WHERE start != rowid - 1"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM api"), N);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx"), N / 3);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE start != 3 * (rowid - 1) OR name != 'range ' || start"
                        " OR coalesce(domain, '') != CASE WHEN start % 2 THEN 'gpu_user_annotation' ELSE '' END"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM memops"), N / 1000);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM memops WHERE start != 1000 * (rowid - 1)"
                        " OR length(kind) != CASE WHEN start % 2000 THEN 4 ELSE 79 END"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM strings"), (N + 4999) / 5000);
  sqlite3_close(db);
}

/* Write-behind's errors: an insert that fails on the worker (a duplicate collective id) is
** reported by a later call, by the commit at the latest, naming the file; the commit's
** rollback clears it and the writer closes cleanly (no leak, no hang). */
static void write_behind_error(void) {
  const char *path = tb_temp_path("behind-error.sqlite");
  ovl_err err = {0};
  ovl_trace_writer *w = open_behind(path);
  if (!w) return;
  int failed = 0;
  for (int i = 0; i < 5000 && !failed; i++) {
    ovl_collective_row c = {i == 300 ? 1 : i + 1, 7, 0, 2, i, "AllReduce", i, "Float32", 4 * i,
                            "Sum", -1, 0, OVL_NONE, 10 * i, 10 * i + 5, 1, OVL_NONE};
    failed = ovl_tw_collective(w, &c, NULL, &err) != OVL_OK;
  }
  if (!failed) failed = ovl_tw_commit(w, &err) != OVL_OK;
  CHECK(failed);
  CHECK(strstr(err.msg, path) != NULL);
  CHECK(strstr(err.msg, "UNIQUE") != NULL);
  if (!strstr(err.msg, "UNIQUE")) fprintf(stderr, "error was: %s\n", err.msg);
  ovl_tw_rollback(w);
  CHECK(ovl_tw_meta(w, "after", "yes", &err) == OVL_OK);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
  sqlite3 *db = dbq_open(path);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'after'"), "yes");
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collectives"), 0);
  sqlite3_close(db);
}

/* The same calls of collectives, most without an id, to a plain writer (SQLite gives the ids)
** and to an import's (scratch, write-behind: it batches them with the ids it works out):
** every id returned and every row match, around an explicit id above the rest, one below
** it, a text too long to batch, a commit and a rollback. Returns the ids given, in call order. */
enum { COLL_CALLS = 3000 };
static void write_ids(ovl_trace_writer *w, int64_t *ids) {
  ovl_err err = {0};
  char long_op[100];
  memset(long_op, 'x', sizeof long_op - 1);
  long_op[sizeof long_op - 1] = 0;
  int failures = 0;
  for (int i = 0; i < COLL_CALLS; i++) {
    int64_t given = i == 500 ? 10000 : i == 700 ? 9000 : OVL_NONE;
    ovl_collective_row c = {given, 7, 0, 2, i, i == 900 ? long_op : "AllReduce", i, "Float32", 4 * i,
                            "Sum", -1, 0, OVL_NONE, 10 * i, 10 * i + 5, 1, OVL_NONE};
    failures += ovl_tw_collective(w, &c, &ids[i], &err) != OVL_OK;
    failures += ovl_tw_launch(w, ids[i], 100000 + i, &err) != OVL_OK;
    if (i == 1500) failures += ovl_tw_commit(w, &err) != OVL_OK;
    if (i == 2200) ovl_tw_rollback(w);  /* calls 1501..2200 are undone: their ids are free again */
  }
  CHECK_I64(failures, 0);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
}

static void collective_ids(void) {
  const char *plain_path = tb_temp_path("ids-plain.sqlite"), *import_path = tb_temp_path("ids-import.sqlite");
  static int64_t plain[COLL_CALLS], import[COLL_CALLS];
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open(&w, plain_path, &err) == OVL_OK);
  if (w) write_ids(w, plain);
  if (!(w = open_behind(import_path))) return;
  write_ids(w, import);
  int differ = 0;
  for (int i = 0; i < COLL_CALLS; i++) differ += plain[i] != import[i];
  CHECK_I64(differ, 0);
  CHECK_I64(plain[499], 500);
  CHECK_I64(plain[501], 10001);  /* after the explicit 10000, not after 9000 */
  CHECK_I64(plain[701], 10200);
  static const char rows[] = "SELECT count(*) || ':' || sum(id * (seq + 1) % 1000003) || ':' || sum(length(op)) ||"
                             " ':' || (SELECT sum(collective * correlation % 1000003) FROM collective_launches)"
                             " FROM collectives";
  sqlite3 *db = dbq_open(plain_path);
  char expected[128];
  snprintf(expected, sizeof expected, "%s", dbq_text(db, rows));
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collectives"), 1501 + COLL_CALLS - 2201);
  sqlite3_close(db);
  db = dbq_open(import_path);
  CHECK_STR(dbq_text(db, rows), expected);
  sqlite3_close(db);
}

/* A reader that holds the file for a moment. */
typedef struct held_reader {
  sqlite3 *db;
  double seconds;
} held_reader;

static void *release_later(void *arg) {
  held_reader *h = arg;
  struct timespec t = {0, (long)(h->seconds * 1e9)};
  nanosleep(&t, NULL);
  sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
  return NULL;
}

/* A reader holding the file while it is created (`ovl report` on a live trace, a test polling
** its commits) delays the writer, it does not fail it: the switch to WAL waits for the lock;
** and a reader still inside a read transaction at close leaves the trace complete, in WAL
** mode, with no error. */
static void reader_holds_the_file(void) {
  const char *path = tb_temp_path("held.sqlite");
  FILE *f = fopen(path, "wb");  /* the caller's empty file, as libovl makes it */
  CHECK(f != NULL);
  if (f) fclose(f);
  held_reader h = {NULL, 0.2};
  CHECK(sqlite3_open_v2(path, &h.db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  CHECK(sqlite3_exec(h.db, "BEGIN; SELECT count(*) FROM sqlite_master;", NULL, NULL, NULL) == SQLITE_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, release_later, &h) == 0);
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  int rc = ovl_tw_open_created(&w, path, &err);
  pthread_join(t, NULL);
  CHECK(rc == OVL_OK);
  if (rc) fprintf(stderr, "open failed: %s\n", err.msg);
  if (!w) {
    sqlite3_close(h.db);
    return;
  }
  CHECK(ovl_tw_meta(w, "rank", "0", &err) == OVL_OK);
  CHECK(ovl_tw_commit(w, &err) == OVL_OK);
  /* A reader still connected at close: the trace stays in WAL mode, complete with its -wal
  ** file, and the close says so (libovl warns with it). */
  ovl_memop_row m = {1, 2, 0, 8, 1, "HtoD", 64};
  CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);
  CHECK_I64(dbq_int(h.db, "SELECT count(*) FROM meta WHERE key = 'rank'"), 1);  /* it reads the live trace */
  CHECK(ovl_tw_close(w, &err) != OVL_OK);
  CHECK(strstr(err.msg, path) != NULL && strstr(err.msg, "-wal") != NULL);
  sqlite3 *db = dbq_open(path);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'rank'"), "0");
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM memops"), 1);
  sqlite3_close(db);
  sqlite3_close(h.db);
}

int main(void) {
  reader_holds_the_file();
  round_trip();
  write_behind_order();
  write_behind_error();
  collective_ids();
  scratch_file();
  reordering();
  batched_collectives();
  commit_hooks();
  return check_summary();
}
