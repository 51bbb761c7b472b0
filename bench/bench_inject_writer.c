/*
** Writer throughput of the capture library, side by side with plain SQLite in one run:
**
**   sqlite   one prepared single-row INSERT per kernel into the same kernels table, with the
**            same pragmas (the obvious way to write rows with SQLite)
**   writer   ovl_tw_kernel, as libovl's writer thread calls it
**   capture  the whole writer-thread path for CUPTI records: hand-built CUpti_ActivityKernel10
**            records walked through the CUPTI function table (the tests' fake one, which walks
**            hand-built buffers like CUPTI's), names interned, rows sorted by
**            start and written (libinject/cupti_records.c). As from CUPTI, the records are
**            nearly in start order: one in four is a little late.
**
** All three use the SQLite libovl.so uses (static, single-thread mode, no memory statistics).
** usage: ovl_bench_inject_writer [ROWS [DIR]]    defaults: 2000000 rows, /tmp
*/
#include "cupti_records.h"
#include "fakes/fake_cupti.h"
#include "schema.h"
#include "store/trace_writer.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fail(const char *what) {
  fprintf(stderr, "ovl_bench_inject_writer: %s\n", what);
  exit(1);
}

static const char *const names[] = {"void gemm_kernel<float>(Params)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                    "void elementwise_kernel<128, 4>(int, Functor)", "softmax_warp_forward"};

static double bench_sqlite(const char *path, long rows) {
  remove(path);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  double t0 = now();
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;", 0, 0, 0) ||
      sqlite3_exec(db, ovl_schema_sql, 0, 0, 0) || sqlite3_exec(db, "BEGIN", 0, 0, 0) ||
      sqlite3_prepare_v2(db, "INSERT INTO kernels VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL))
    fail(sqlite3_errmsg(db));
  for (long i = 0; i < rows; i++) {
    int64_t v[12] = {i * 1000, i * 1000 + 800, 0, 7 + i % 4, i, 1 + i % 4, 64, 1, 1, 256, 1, 1};
    for (int c = 0; c < 12; c++) sqlite3_bind_int64(st, c + 1, v[c]);
    if (sqlite3_step(st) != SQLITE_DONE) fail(sqlite3_errmsg(db));
    sqlite3_reset(st);
  }
  if (sqlite3_exec(db, "COMMIT", 0, 0, 0)) fail(sqlite3_errmsg(db));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return (double)rows / (now() - t0);
}

static double bench_writer(const char *path, long rows) {
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  double t0 = now();
  if (ovl_tw_open(&w, path, &err)) fail(err.msg);
  int64_t ids[4];
  for (int i = 0; i < 4; i++)
    if (ovl_tw_intern(w, names[i], &ids[i], &err)) fail(err.msg);
  for (long i = 0; i < rows; i++) {
    ovl_kernel_row k = {i * 1000, i * 1000 + 800, 0, 7 + i % 4, i, ids[i % 4], {64, 1, 1}, {256, 1, 1}};
    if (ovl_tw_kernel(w, &k, &err)) fail(err.msg);
  }
  if (ovl_tw_close(w, &err)) fail(err.msg);
  return (double)rows / (now() - t0);
}

static double bench_capture(const char *path, long rows) {
  /* 8 MB buffers of records, as CUPTI hands them over (built before timing starts). */
  long per_buffer = (8 << 20) / (long)(sizeof(CUpti_ActivityKernel10) + 8);
  long nbuf = (rows + per_buffer - 1) / per_buffer;
  fake_buffer *bufs = calloc((size_t)nbuf, sizeof *bufs);
  if (!bufs) fail("out of memory");
  for (long i = 0; i < rows; i++) {
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = (uint64_t)((i % 4 == 3 ? i - 2 : i) * 1000 + 1);  /* a kernel that finished late */
    k.end = k.start + 800;
    k.streamId = 7 + (uint32_t)(i % 4);
    k.correlationId = (uint32_t)i;
    k.name = names[i % 4];
    k.gridX = 64, k.gridY = k.gridZ = 1, k.blockX = 256, k.blockY = k.blockZ = 1;
    fake_buffer_add(&bufs[i / per_buffer], &k, sizeof k);
  }
  ovl_cupti_api api;
  fake_cupti_table(&api);
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  double t0 = now();
  if (ovl_tw_open(&w, path, &err)) fail(err.msg);
  ovl_cupti_records r;
  ovl_cupti_records_init(&r, &api, w);
  for (long b = 0; b < nbuf; b++)
    if (ovl_cupti_records_add(&r, bufs[b].data, bufs[b].used, &err) || ovl_cupti_records_flush(&r, &err))
      fail(err.msg);
  if (r.counts.kernels != (uint64_t)rows) fail("records lost");
  ovl_cupti_records_free(&r);
  if (ovl_tw_close(w, &err)) fail(err.msg);
  double rate = (double)rows / (now() - t0);
  for (long b = 0; b < nbuf; b++) fake_buffer_free(&bufs[b]);
  free(bufs);
  return rate;
}

int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 2000000;
  const char *dir = argc > 2 ? argv[2] : "/tmp";
  if (rows < 1000) fail("ROWS must be at least 1000");
  /* The SQLite configuration libovl.so uses on its writer thread. */
  sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  char a[4096], b[4096], c[4096];
  snprintf(a, sizeof a, "%s/ovl-bench-sqlite.sqlite", dir);
  snprintf(b, sizeof b, "%s/ovl-bench-writer.sqlite", dir);
  snprintf(c, sizeof c, "%s/ovl-bench-capture.sqlite", dir);
  /* Interleaved repetitions: the machine's noise hits both sides alike; keep each best. */
  double best_sql = 0, best_writer = 0, best_capture = 0;
  for (int rep = 0; rep < 3; rep++) {
    double s = bench_sqlite(a, rows), w = bench_writer(b, rows), k = bench_capture(c, rows);
    if (s > best_sql) best_sql = s;
    if (w > best_writer) best_writer = w;
    if (k > best_capture) best_capture = k;
  }
  printf("kernel rows: %ld (best of 3, interleaved)\n", rows);
  printf("plain sqlite single-row inserts   %10.0f rows/s\n", best_sql);
  printf("ovl trace writer (ovl_tw_kernel)  %10.0f rows/s   %.2fx sqlite\n", best_writer, best_writer / best_sql);
  printf("capture path (CUPTI records)      %10.0f rows/s   %.2fx sqlite\n", best_capture, best_capture / best_sql);
  remove(a), remove(b), remove(c);
  return 0;
}
