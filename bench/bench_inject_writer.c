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
**   nccl     the writer-thread path for NCCL calls: host events as the hooks make them
**            (ovl_coll_event), turned into collectives rows (libinject/event_rows.c): four
**            threads' calls (each thread its own communicator and blocks of ids) in the order
**            a drain hands them over, 4096 calls of one thread after another's.
**
** All use the SQLite libovl.so uses (static, single-thread mode, no memory statistics). Each
** rate is given per second of wall time and per second of the writing thread's CPU time
** (CLOCK_THREAD_CPUTIME_ID, system calls included): what the writer does with a core to
** itself, which other jobs on a shared machine do not change much.
** usage: ovl_bench_inject_writer [ROWS [DIR [all|nccl]]]    defaults: 2000000 rows, /tmp, all
*/
#include "cupti_records.h"
#include "event_rows.h"
#include "nccl_comms.h"
#include "nccl_names.h"
#include "fakes/fake_cupti.h"
#include "schema.h"
#include "store/trace_writer.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_on(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A rate measured both ways. */
typedef struct rate {
  double wall, cpu;  /* rows per second of wall time, of the thread's CPU time */
} rate;

typedef struct timer {
  double wall, cpu;
} timer;

static timer start_timer(void) { return (timer){now_on(CLOCK_MONOTONIC), now_on(CLOCK_THREAD_CPUTIME_ID)}; }

static rate rate_since(timer t, long rows) {
  return (rate){(double)rows / (now_on(CLOCK_MONOTONIC) - t.wall), (double)rows / (now_on(CLOCK_THREAD_CPUTIME_ID) - t.cpu)};
}

static void keep_best(rate *best, rate r) {
  if (r.wall > best->wall) best->wall = r.wall;
  if (r.cpu > best->cpu) best->cpu = r.cpu;
}

static void fail(const char *what) {
  fprintf(stderr, "ovl_bench_inject_writer: %s\n", what);
  exit(1);
}

static const char *const names[] = {"void gemm_kernel<float>(Params)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                    "void elementwise_kernel<128, 4>(int, Functor)", "softmax_warp_forward"};

static rate bench_sqlite(const char *path, long rows) {
  remove(path);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  timer t0 = start_timer();
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-8192;", 0, 0, 0) ||
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
  return rate_since(t0, rows);
}

static rate bench_writer(const char *path, long rows) {
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  timer t0 = start_timer();
  if (ovl_tw_open(&w, path, &err)) fail(err.msg);
  int64_t ids[4];
  for (int i = 0; i < 4; i++)
    if (ovl_tw_intern(w, names[i], &ids[i], &err)) fail(err.msg);
  for (long i = 0; i < rows; i++) {
    ovl_kernel_row k = {i * 1000, i * 1000 + 800, 0, 7 + i % 4, i, ids[i % 4], {64, 1, 1}, {256, 1, 1}};
    if (ovl_tw_kernel(w, &k, &err)) fail(err.msg);
  }
  if (ovl_tw_close(w, &err)) fail(err.msg);
  return rate_since(t0, rows);
}

static rate bench_capture(const char *path, long rows) {
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
  timer t0 = start_timer();
  if (ovl_tw_open(&w, path, &err)) fail(err.msg);
  ovl_cupti_records r;
  ovl_cupti_records_init(&r, &api, w);
  for (long b = 0; b < nbuf; b++)
    if (ovl_cupti_records_add(&r, bufs[b].data, bufs[b].used, &err) || ovl_cupti_records_flush(&r, &err))
      fail(err.msg);
  if (r.counts.kernels != (uint64_t)rows) fail("records lost");
  ovl_cupti_records_free(&r);
  if (ovl_tw_close(w, &err)) fail(err.msg);
  rate r_ = rate_since(t0, rows);
  for (long b = 0; b < nbuf; b++) fake_buffer_free(&bufs[b]);
  free(bufs);
  return r_;
}

/* Host events of `rows` NCCL calls by four threads, as a drain hands them to the writer. */
static rate bench_nccl(const char *path, long rows) {
  ovl_coll_event *evs = calloc((size_t)rows, sizeof *evs);
  ovl_comm_info comms[4];
  memset(comms, 0, sizeof comms);
  if (!evs) fail("out of memory");
  for (int c = 0; c < 4; c++) comms[c].id = 1000 + c, comms[c].rank = 0, comms[c].nranks = 8, comms[c].device = c;
  for (long i = 0; i < rows; i++) {
    long block = i / 4096, thread = block % 4, k = i % 4096;
    ovl_coll_event *e = &evs[i];
    e->h = (ovl_event_header){OVL_EV_COLLECTIVE, sizeof *e, OVL_NCCL_ALLREDUCE, 7 /* ncclFloat32 */, 0 /* ncclSum */, 0};
    e->id = 1 + block * 4096 + k;  /* thread `thread`'s block of ids: taken in turn */
    e->comm = &comms[thread], e->seq = block / 4 * 4096 + k, e->count = 1 << 20, e->peer = -1;
    e->stream = OVL_COLL_NO_STREAM, e->host_start = i * 1000, e->host_end = i * 1000 + 700;
  }
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  timer t0 = start_timer();
  if (ovl_tw_open(&w, path, &err)) fail(err.msg);
  ovl_event_rows e;
  ovl_event_rows_init(&e, w);
  for (long i = 0; i < rows; i++) ovl_event_rows_add(&e, &evs[i].h, 4000 + i / 4096 % 4);
  if (e.rc) fail(e.err.msg);
  if (ovl_tw_close(w, &err)) fail(err.msg);
  rate r = rate_since(t0, rows);
  free(evs);
  return r;
}

static void show(const char *what, rate r, rate sql) {
  printf("%-34s %10.0f rows/s per CPU-second (%.2fx sqlite), %10.0f rows/s wall\n", what, r.cpu, r.cpu / sql.cpu,
         r.wall);
}

int main(int argc, char **argv) {
  long rows = argc > 1 ? atol(argv[1]) : 2000000;
  const char *dir = argc > 2 ? argv[2] : "/tmp";
  int all = argc <= 3 || strcmp(argv[3], "nccl") != 0;
  if (rows < 1000) fail("ROWS must be at least 1000");
  /* The SQLite configuration libovl.so uses on its writer thread. */
  sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  char a[4096], b[4096], c[4096], d[4096];
  snprintf(a, sizeof a, "%s/ovl-bench-sqlite.sqlite", dir);
  snprintf(b, sizeof b, "%s/ovl-bench-writer.sqlite", dir);
  snprintf(c, sizeof c, "%s/ovl-bench-capture.sqlite", dir);
  snprintf(d, sizeof d, "%s/ovl-bench-nccl.sqlite", dir);
  /* Interleaved repetitions: the machine's noise hits all alike; keep each best. */
  rate sql = {0, 0}, writer = {0, 0}, capture = {0, 0}, nccl = {0, 0};
  for (int rep = 0; rep < 3; rep++) {
    keep_best(&sql, bench_sqlite(a, rows));
    if (all) keep_best(&writer, bench_writer(b, rows));
    if (all) keep_best(&capture, bench_capture(c, rows));
    keep_best(&nccl, bench_nccl(d, rows));
  }
  printf("rows: %ld of each kind (best of 3, interleaved)\n", rows);
  show("plain sqlite single-row inserts", sql, sql);
  if (all) show("ovl trace writer (ovl_tw_kernel)", writer, sql);
  if (all) show("capture path (CUPTI records)", capture, sql);
  show("capture path (NCCL calls)", nccl, sql);
  remove(a), remove(b), remove(c), remove(d);
  return 0;
}
