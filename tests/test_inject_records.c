/*
** The capture's record path without a GPU: hand-built CUPTI 13 records (CUpti_ActivityKernel10,
** Memcpy6, MemcpyPtoP4, Memset4, API, ExternalCorrelation) go through the fake CUPTI table
** (tests/fakes/fake_cupti.c) into the real trace writer; the rows and collective links that
** come out are checked through the trace reader. Records with a zero timestamp or end <
** start are counted, not stored. Also: host events -> rows (NCCL names), rank evidence from
** the communicator table, the host event buffer's bound (drop and count, never block) and
** its accounting of every call (appended, dropped or let through unrecorded), and the
** capture clock against CLOCK_MONOTONIC (the TSC line where there is one: close, and never
** going back across refits).
*/
#include "check.h"
#include "clock.h"
#include "collective_ids.h"
#include "config.h"
#include "cupti_records.h"
#include "event_rows.h"
#include "fakes/fake_cupti.h"
#include "host_buffer.h"
#include "load/trace_reader.h"
#include "nccl_comms.h"
#include "nccl_names.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <pthread.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static CUpti_ActivityKernel10 kernel(uint64_t start, uint64_t end, uint32_t stream, uint32_t corr, const char *name) {
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 1;
  k.streamId = stream;
  k.correlationId = corr;
  k.name = name;
  k.gridX = 64, k.gridY = 2, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  return k;
}

static CUpti_ActivityAPI api_call(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t corr) {
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.threadId = 4242;
  a.correlationId = corr;
  return a;
}

static CUpti_ActivityExternalCorrelation external(CUpti_ExternalCorrelationKind kind, uint64_t id, uint32_t corr) {
  CUpti_ActivityExternalCorrelation x;
  memset(&x, 0, sizeof x);
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = kind;
  x.externalId = id;
  x.correlationId = corr;
  return x;
}

/* Column values of a table in insertion (rowid) order. */
static int column_in_table_order(const char *path, const char *sql, int64_t *out, int max) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int n = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
    while (n < max && sqlite3_step(st) == SQLITE_ROW) out[n++] = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

typedef struct api_seen {
  ovl_api_row rows[8];
  int n;
} api_seen;

static int collect_api(void *ctx, const ovl_api_row *r) {
  api_seen *s = ctx;
  if (s->n < 8) s->rows[s->n++] = *r;
  return 0;
}

/* A new trace at a temporary path (the test fails when it cannot be made). */
static ovl_trace_writer *new_trace(const char *tag, const char **path) {
  *path = tb_temp_path(tag);
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  CHECK(ovl_tw_open(&w, *path, &err) == OVL_OK);
  return w;
}

static void cupti_records(void) {
  const char *path;
  ovl_cupti_api api;
  fake_cupti_table(&api);
  ovl_err err = {0};
  ovl_trace_writer *w = new_trace("records.sqlite", &path);
  if (!w) return;
  ovl_cupti_records r;
  ovl_cupti_records_init(&r, &api, w);

  /* Two copies of one name at different addresses, as two modules would have them. */
  static char gemm[] = "_Z4gemmPfS_", gemm_again[] = "_Z4gemmPfS_";
  static char reused[] = "first_kernel";
  const char *nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  fake_buffer b = {0};
  CUpti_ActivityKernel10 k = kernel(1000, 2000, 7, 11, gemm);
  fake_buffer_add(&b, &k, sizeof k);
  k = kernel(500, 900, 8, 12, nccl);  /* earlier than the one before: written first */
  fake_buffer_add(&b, &k, sizeof k);
  k = kernel(2100, 2200, 7, 15, gemm_again);
  fake_buffer_add(&b, &k, sizeof k);
  k = kernel(2300, 2400, 7, 16, reused);
  CUpti_ActivityKernel10 *reused_rec = fake_buffer_add(&b, &k, sizeof k);
  k = kernel(0, 100, 7, 90, gemm);  /* no start timestamp */
  fake_buffer_add(&b, &k, sizeof k);
  k = kernel(300, 0, 7, 91, gemm);  /* no end timestamp */
  fake_buffer_add(&b, &k, sizeof k);
  k = kernel(300, 200, 7, 92, gemm);  /* ends before it starts */
  fake_buffer_add(&b, &k, sizeof k);

  CUpti_ActivityMemcpy6 m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.start = 300, m.end = 400, m.deviceId = 1, m.streamId = 9, m.correlationId = 13, m.bytes = 4096;
  fake_buffer_add(&b, &m, sizeof m);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;  /* a copy-engine collective's memcpy */
  m.start = 2500, m.end = 2600, m.correlationId = 14, m.bytes = 1 << 20;
  fake_buffer_add(&b, &m, sizeof m);
  CUpti_ActivityMemcpyPtoP4 p;
  memset(&p, 0, sizeof p);
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.start = 2700, p.end = 2800, p.deviceId = 1, p.streamId = 10, p.correlationId = 17, p.bytes = 8192;
  fake_buffer_add(&b, &p, sizeof p);
  CUpti_ActivityMemset4 s;
  memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.start = 50, s.end = 60, s.deviceId = 1, s.streamId = 9, s.correlationId = 18, s.bytes = 64;
  fake_buffer_add(&b, &s, sizeof s);

  CUpti_ActivityAPI a = api_call(CUPTI_ACTIVITY_KIND_RUNTIME, FAKE_RUNTIME_LAUNCH_CBID, 100, 150, 11);
  fake_buffer_add(&b, &a, sizeof a);
  a = api_call(CUPTI_ACTIVITY_KIND_DRIVER, FAKE_DRIVER_LAUNCH_CBID, 80, 95, 12);
  fake_buffer_add(&b, &a, sizeof a);
  a = api_call(CUPTI_ACTIVITY_KIND_DRIVER, 9999, 160, 170, 14);  /* a name CUPTI does not know */
  fake_buffer_add(&b, &a, sizeof a);
  a = api_call(CUPTI_ACTIVITY_KIND_RUNTIME, FAKE_RUNTIME_LAUNCH_CBID, 200, 0, 19);  /* bad */
  fake_buffer_add(&b, &a, sizeof a);

  CUpti_ActivityExternalCorrelation x = external(OVL_EXT_KIND, 5, 12);  /* collective 5 launched corr 12 */
  fake_buffer_add(&b, &x, sizeof x);
  x = external(OVL_EXT_KIND, ovl_group_ext_id(3, 2), 14);  /* group 3's two calls: corr 14 */
  fake_buffer_add(&b, &x, sizeof x);
  x = external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 77, 11);  /* another tool's: ignored */
  fake_buffer_add(&b, &x, sizeof x);
  CUpti_Activity other = {CUPTI_ACTIVITY_KIND_MARKER};  /* a kind libovl does not store */
  fake_buffer_add(&b, &other, sizeof other);

  CHECK(ovl_cupti_records_add(&r, b.data, b.used, &err) == OVL_OK);
  /* Same address, new text (a module unloaded, another loaded there): a new name. */
  memcpy(reused, "other_kernel", sizeof reused);
  fake_buffer_free(&b);
  k = kernel(2450, 2460, 7, 20, reused);
  fake_buffer_add(&b, &k, sizeof k);
  (void)reused_rec;
  CHECK(ovl_cupti_records_add(&r, b.data, b.used, &err) == OVL_OK);
  fake_buffer_free(&b);
  CHECK(ovl_cupti_records_flush(&r, &err) == OVL_OK);

  CHECK_I64(r.counts.records, 20);
  CHECK_I64(r.counts.kernels, 5);
  CHECK_I64(r.counts.memops, 4);
  CHECK_I64(r.counts.api, 3);
  CHECK_I64(r.counts.bad, 4);
  CHECK_I64(r.counts.ignored, 2);
  CHECK_I64(r.counts.links, 3);
  ovl_cupti_records_free(&r);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);

  /* Written in start order within the batch. */
  int64_t starts[16];
  int n = column_in_table_order(path, "SELECT start FROM kernels ORDER BY rowid", starts, 16);
  CHECK_I64(n, 5);
  for (int i = 1; i < n; i++) CHECK(starts[i - 1] <= starts[i]);

  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  ovl_work_cursor *cur = NULL;
  ovl_work_options opt = {OVL_DEFAULT_REORDER_WINDOW, 1};
  CHECK(ovl_work_open(t, &opt, &cur, &err) == OVL_OK);
  ovl_work wk[16];
  int nw = 0, has = 1;
  while (cur && nw < 16 && ovl_work_next(cur, &wk[nw], &has, &err) == OVL_OK && has) nw++;
  ovl_work_close(cur);
  CHECK_I64(nw, 9);
  if (nw == 9) {
    /* memset 50, HtoD 300, nccl 500, gemm 1000, gemm 2100, reused 2300, other 2450, DtoD 2500, PtoP 2700 */
    CHECK(wk[0].is_memop && !strcmp(wk[0].memkind, "memset") && wk[0].bytes == 64 && wk[0].correlation == 18);
    CHECK(wk[1].is_memop && !strcmp(wk[1].memkind, "HtoD") && wk[1].bytes == 4096 && wk[1].stream == 9);
    CHECK_STR(ovl_trace_string(t, wk[2].name), nccl);
    CHECK_I64(wk[2].correlation, 12);
    CHECK_I64(wk[2].stream, 8);
    CHECK_I64(wk[3].start, 1000);
    CHECK_I64(wk[3].end, 2000);
    CHECK_I64(wk[3].device, 1);
    CHECK_I64(wk[3].grid[0], 64);
    int64_t block_x = 0;  /* the block size is stored (the reader does not return it) */
    CHECK_I64(column_in_table_order(path, "SELECT block_x FROM kernels WHERE start = 1000", &block_x, 1), 1);
    CHECK_I64(block_x, 256);
    CHECK_STR(ovl_trace_string(t, wk[3].name), "_Z4gemmPfS_");
    CHECK_I64(wk[4].name, wk[3].name);  /* one strings row for both copies */
    CHECK_STR(ovl_trace_string(t, wk[5].name), "first_kernel");
    CHECK_STR(ovl_trace_string(t, wk[6].name), "other_kernel");
    CHECK(wk[7].is_memop && !strcmp(wk[7].memkind, "DtoD") && wk[7].correlation == 14);
    CHECK(wk[8].is_memop && !strcmp(wk[8].memkind, "PtoP") && wk[8].bytes == 8192);
  }

  api_seen seen = {.n = 0};
  CHECK(ovl_trace_scan_api(t, 0, collect_api, &seen, &err) == OVL_OK);
  CHECK_I64(seen.n, 3);
  if (seen.n == 3) {
    CHECK_I64(seen.rows[0].start, 80);  /* sorted by start */
    CHECK_STR(ovl_trace_string(t, seen.rows[0].name), "cuLaunchKernelEx");
    CHECK_I64(seen.rows[0].correlation, 12);
    CHECK_STR(ovl_trace_string(t, seen.rows[1].name), "cudaLaunchKernel");  /* version suffix gone */
    CHECK_I64(seen.rows[1].tid, 4242);
    CHECK_I64(seen.rows[1].end, 150);
    CHECK_STR(ovl_trace_string(t, seen.rows[2].name), "driver API 9999");
  }

  ovl_launch_rec *links = NULL;
  size_t nl = 0;
  CHECK(ovl_trace_read_launches(t, &links, &nl, &err) == OVL_OK);
  CHECK_I64(nl, 3);
  if (nl == 3) {
    CHECK_I64(links[0].collective, 5);
    CHECK_I64(links[0].correlation, 12);
    CHECK_I64(links[1].collective, ovl_group_member_id(3, 0));
    CHECK_I64(links[2].collective, ovl_group_member_id(3, 1));
    CHECK_I64(links[1].correlation, 14);
    CHECK_I64(links[2].correlation, 14);
  }
  free(links);
  ovl_trace_close(t);
}

static void host_events(void) {
  const char *path;
  ovl_err err = {0};
  ovl_trace_writer *w = new_trace("events.sqlite", &path);
  if (!w) return;
  ovl_event_rows e;
  ovl_event_rows_init(&e, w);
  ovl_comm_info comm = {0};
  comm.id = 77, comm.rank = 1, comm.nranks = 8, comm.device = 2;
  ovl_coll_event c;
  memset(&c, 0, sizeof c);
  c.h = (ovl_event_header){OVL_EV_COLLECTIVE, sizeof c, OVL_NCCL_REDUCESCATTER, 9 /* ncclBfloat16 */,
                           7 /* a PreMulSum operator */, OVL_EV_IN_GROUP};
  c.id = ovl_group_member_id(3, 1);
  c.comm = &comm, c.seq = 4, c.count = 100, c.peer = -1;
  c.stream = OVL_COLL_NO_STREAM, c.host_start = 10, c.host_end = 20;
  ovl_event_rows_add(&e, &c.h, 5);
  CHECK_I64(e.rc, OVL_OK);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);

  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  ovl_coll_rec *rows = NULL;
  size_t n = 0;
  CHECK(ovl_trace_read_collectives(t, &rows, &n, &err) == OVL_OK);
  CHECK_I64(n, 1);
  if (n == 1) {
    CHECK_I64(rows[0].id, ovl_group_member_id(3, 1));
    CHECK_STR(rows[0].op, "ReduceScatter");
    CHECK_STR(rows[0].dtype, "Bfloat16");
    CHECK_I64(rows[0].bytes, 100 * 8 * 2);  /* the writer works it out: 8 ranks' 100 bf16 each */
    CHECK_I64(rows[0].group_id, 3);  /* from the member's id */
    CHECK_I64(rows[0].stream, OVL_NONE);
    CHECK_I64(rows[0].comm, 77);     /* rank, size and device from the communicator */
    CHECK_I64(rows[0].rank, 1);
    CHECK_I64(rows[0].nranks, 8);
    CHECK_I64(rows[0].device, 2);
    CHECK_I64(rows[0].tid, 5);       /* the appending thread's, as the drain tells */
  }
  free(rows);
  ovl_trace_close(t);
  /* (the reader keeps 7 characters of redop: read the full name from the file) */
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  const unsigned char *redop = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT redop FROM collectives", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    redop = sqlite3_column_text(st, 0);
  CHECK_STR((const char *)redop, "PreMulSum");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* The writer's batches keep each table's insertion order, also around a row that cannot be
** batched (a memop kind outside the known list) and across commits. */
static void batched_order(void) {
  const char *path;
  ovl_err err = {0};
  ovl_trace_writer *w = new_trace("batched.sqlite", &path);
  if (!w) return;
  for (int i = 0; i < 150; i++) {
    ovl_memop_row m = {i, i + 1, 0, 0, i, i == 70 ? "HtoA" : "DtoD", i};
    CHECK(ovl_tw_memop(w, &m, &err) == OVL_OK);
    if (i == 100) CHECK(ovl_tw_commit(w, &err) == OVL_OK);
  }
  CHECK(ovl_tw_close(w, &err) == OVL_OK);
  int64_t bytes[200];
  int n = column_in_table_order(path, "SELECT bytes FROM memops ORDER BY rowid", bytes, 200);
  CHECK_I64(n, 150);
  int out_of_order = 0;
  for (int i = 0; i < n; i++) out_of_order += bytes[i] != i;
  CHECK_I64(out_of_order, 0);
  int64_t odd = 0;
  CHECK_I64(column_in_table_order(path, "SELECT bytes FROM memops WHERE kind = 'HtoA'", &odd, 1), 1);
  CHECK_I64(odd, 70);
}

static int count_events(void *ctx, const ovl_event_header *ev, int64_t tid) {
  (void)ev, (void)tid;
  ++*(size_t *)ctx;
  return 0;
}

/* A full buffer drops (and counts) instead of waiting; draining makes room again. Every call
** is counted: appended or dropped, and those let through unrecorded as dropped too. The
** writer's stock of warm chunks never takes the pool beyond its limit. */
static void bounded_buffer(void) {
  ovl_hostbuf_set_limit(2 * OVL_HOSTBUF_CHUNK_BYTES);
  ovl_hostbuf_prepare(0);
  ovl_coll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.h = (ovl_event_header){OVL_EV_COLLECTIVE, sizeof ev, 0, 0, 0, 0};
  size_t kept = 0, drained = 0;
  ovl_hostbuf_counts before, after;
  ovl_hostbuf_counts_now(&before);
  for (int i = 0; i < 10000; i++) kept += ovl_hostbuf_append(&ev, sizeof ev) == 0;
  CHECK(kept > 0 && kept < 10000);
  CHECK(kept <= 2 * OVL_HOSTBUF_CHUNK_BYTES / sizeof ev);
  ovl_hostbuf_counts_now(&after);
  CHECK_I64(after.calls - before.calls, 10000);
  CHECK_I64(after.dropped - before.dropped, 10000 - kept);
  CHECK_I64(ovl_hostbuf_dropped() - before.dropped, 10000 - kept);
  CHECK_I64(ovl_hostbuf_drain(count_events, &drained), kept);
  CHECK_I64(drained, kept);
  CHECK(ovl_hostbuf_append(&ev, sizeof ev) == 0);
  ovl_hostbuf_count_unrecorded();
  ovl_hostbuf_counts_now(&after);
  CHECK_I64(after.calls - before.calls, 10002);
  CHECK_I64(after.dropped - before.dropped, 10000 - kept + 1);
  drained = 0;
  CHECK_I64(ovl_hostbuf_drain(count_events, &drained), 1);
}

/* Calls counted by threads that have exited (and whose chains were freed) still count. */
static void *call_and_exit(void *arg) {
  ovl_coll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.h = (ovl_event_header){OVL_EV_COLLECTIVE, sizeof ev, 0, 0, 0, 0};
  for (int i = 0; i < 100; i++) ovl_hostbuf_append(&ev, sizeof ev);
  ovl_hostbuf_count_unrecorded();
  return arg;
}

static void counts_of_exited_threads(void) {
  ovl_hostbuf_set_limit(64 * OVL_HOSTBUF_CHUNK_BYTES);
  size_t drained = 0;
  ovl_hostbuf_drain(count_events, &drained);  /* whatever earlier checks left */
  ovl_hostbuf_counts before, after;
  ovl_hostbuf_counts_now(&before);
  pthread_t t[4];
  for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, call_and_exit, NULL) == 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  drained = 0;
  CHECK_I64(ovl_hostbuf_drain(count_events, &drained), 400);
  ovl_hostbuf_drain(count_events, &drained);  /* the exited threads' chains are freed by now */
  ovl_hostbuf_counts_now(&after);
  CHECK_I64(after.calls - before.calls, 404);
  CHECK_I64(after.dropped - before.dropped, 4);
}

/* meta.rank / world_size evidence: the largest communicator, the first of its size. */
static void communicator_world(void) {
  int64_t rank, world;
  ovl_comms_world(&rank, &world);
  CHECK_I64(world, OVL_NONE);
  int a, b, c, d;
  ovl_comms_add(&a, 1, 0, 2, 0);
  ovl_comms_add(&b, 2, 1, 8, 0);
  ovl_comms_add(&c, 3, 5, 8, 0);       /* as large, later: the first one stays */
  ovl_comms_add(&d, 4, OVL_NONE, OVL_NONE, 0);  /* unknown rank: no evidence */
  ovl_comms_world(&rank, &world);
  CHECK_I64(rank, 1);
  CHECK_I64(world, 8);
  CHECK(ovl_comms_find(&c) != NULL && ovl_comms_find(&c)->rank == 5);
  ovl_comms_set_nccl_version(22809);
  CHECK_I64(ovl_comms_nccl_version(), 22809);
}

/* The capture clock reads CLOCK_MONOTONIC (bracketed by two clock_gettime calls, within
** TOL_NS) before, during and after fitting the TSC line, and never goes back, also while
** the line is refitted under a reading thread. */
#define TOL_NS 20000
static atomic_int clock_reading;
static atomic_llong clock_backwards;

static void *read_clock(void *arg) {
  int64_t last = ovl_clock_ns();
  while (atomic_load(&clock_reading)) {
    int64_t now = ovl_clock_ns();
    if (now < last) atomic_fetch_add(&clock_backwards, 1);
    last = now;
  }
  return arg;
}

static int clock_close(void) {
  int64_t a = ovl_clock_gettime_ns(), c = ovl_clock_ns(), b = ovl_clock_gettime_ns();
  return c >= a - TOL_NS && c <= b + TOL_NS;
}

static void capture_clock(void) {
  CHECK(clock_close());
  pthread_t t;
  atomic_store(&clock_reading, 1);
  CHECK(pthread_create(&t, NULL, read_clock, NULL) == 0);
  ovl_clock_start();
  int64_t wait = 0, far = 0;
  for (int refit = 0; refit < 4 && wait != INT64_MAX; refit++) {  /* first fit, then 10 and 100 ms */
    struct timespec ts = {0, (long)(wait > 0 ? wait : 1000000)};
    nanosleep(&ts, NULL);
    wait = ovl_clock_calibrate(1);
    for (int i = 0; i < 1000; i++) far += !clock_close();
  }
  atomic_store(&clock_reading, 0);
  pthread_join(t, NULL);
  char how[200];
  ovl_clock_describe(how, sizeof how);
  printf("capture clock: %s\n", how);
  CHECK_I64(far, 0);
  CHECK_I64(atomic_load(&clock_backwards), 0);
  CHECK(strncmp(how, "tsc (", 5) == 0 || strncmp(how, "clock_gettime", 13) == 0);
}

/* A drain stops where the producers were when it began, however fast they append meanwhile
** (a flood must not keep the writer from committing), and a callback can end it early. */
typedef struct big_event {
  ovl_event_header h;
  unsigned char pad[504];
} big_event;

static atomic_int producer_step;  /* 1: first batch appended; 2: go on; 3: second batch appended */

static void *producer(void *arg) {
  (void)arg;
  big_event ev = {{OVL_EV_NVTX, sizeof ev, 0, 0, 0, 0}, {0}};
  for (int i = 0; i < 200; i++) ovl_hostbuf_append(&ev, sizeof ev);  /* two chunks */
  atomic_store(&producer_step, 1);
  while (atomic_load(&producer_step) != 2) sched_yield();
  for (int i = 0; i < 1000; i++) ovl_hostbuf_append(&ev, sizeof ev);  /* across several chunks */
  atomic_store(&producer_step, 3);
  return NULL;
}

/* On the first event, lets the producer append 1000 more and waits for them. */
static int count_while_producing(void *ctx, const ovl_event_header *ev, int64_t tid) {
  (void)ev, (void)tid;
  if (++*(size_t *)ctx == 1) {
    atomic_store(&producer_step, 2);
    while (atomic_load(&producer_step) != 3) sched_yield();
  }
  return 0;
}

static int stop_after_ten(void *ctx, const ovl_event_header *ev, int64_t tid) {
  (void)ev, (void)tid;
  return ++*(size_t *)ctx == 10;
}

static void drain_snapshot(void) {
  ovl_hostbuf_set_limit(64 * OVL_HOSTBUF_CHUNK_BYTES);
  size_t drained = 0;
  ovl_hostbuf_drain(count_events, &drained);  /* whatever earlier checks left */
  pthread_t t;
  CHECK(pthread_create(&t, NULL, producer, NULL) == 0);
  while (atomic_load(&producer_step) != 1) sched_yield();
  drained = 0;
  CHECK_I64(ovl_hostbuf_drain(count_while_producing, &drained), 200);
  CHECK_I64(drained, 200);
  drained = 0;
  CHECK_I64(ovl_hostbuf_drain(stop_after_ten, &drained), 10);
  drained = 0;
  CHECK_I64(ovl_hostbuf_drain(count_events, &drained), 990);
  pthread_join(t, NULL);
}

/* What the capture writes, `ovl report` reads: two grouped AllReduce calls linked through one
** external correlation record to an NCCL kernel [1000, 3000] that overlaps a compute kernel
** [10, 2000] on another stream: 2000 ns of communication, 1000 ns of it exposed. */
static void report_on_capture(void) {
  const char *path;
  ovl_cupti_api api;
  fake_cupti_table(&api);
  ovl_err err = {0};
  ovl_trace_writer *w = new_trace("report.sqlite", &path);
  if (!w) return;
  static const char *const meta[][2] = {{"rank", "0"}, {"world_size", "2"}, {"hostname", "h"}, {"pid", "1"},
                                        {"clock", "CLOCK_MONOTONIC"}};
  for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) CHECK(ovl_tw_meta(w, meta[i][0], meta[i][1], &err) == 0);
  ovl_event_rows e;
  ovl_event_rows_init(&e, w);
  ovl_comm_info comm = {0};
  comm.id = 5, comm.rank = 0, comm.nranks = 2, comm.device = 0;
  for (uint32_t k = 0; k < 2; k++) {
    ovl_coll_event c;
    memset(&c, 0, sizeof c);
    c.h = (ovl_event_header){OVL_EV_COLLECTIVE, sizeof c, OVL_NCCL_ALLREDUCE, 7 /* ncclFloat32 */, 0 /* ncclSum */,
                             OVL_EV_IN_GROUP};
    c.id = ovl_group_member_id(9, k);
    c.comm = &comm, c.seq = k, c.count = 256, c.peer = -1;
    c.stream = 8, c.host_start = 100 + k, c.host_end = 110 + k;
    ovl_event_rows_add(&e, &c.h, 1);
  }
  CHECK_I64(e.rc, OVL_OK);
  ovl_cupti_records r;
  ovl_cupti_records_init(&r, &api, w);
  fake_buffer b = {0};
  CUpti_ActivityKernel10 k = kernel(10, 2000, 7, 51, "gemm");
  k.deviceId = 0;
  fake_buffer_add(&b, &k, sizeof k);
  k = kernel(1000, 3000, 8, 50, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  k.deviceId = 0;
  fake_buffer_add(&b, &k, sizeof k);
  CUpti_ActivityExternalCorrelation x = external(OVL_EXT_KIND, ovl_group_ext_id(9, 2), 50);
  fake_buffer_add(&b, &x, sizeof x);
  CHECK(ovl_cupti_records_add(&r, b.data, b.used, &err) == OVL_OK);
  CHECK(ovl_cupti_records_flush(&r, &err) == OVL_OK);
  fake_buffer_free(&b);
  ovl_cupti_records_free(&r);
  CHECK(ovl_tw_close(w, &err) == OVL_OK);

  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' report --json '%s'", OVL_TEST_OVL, path);
  cmd_result out = run_cmd(cmd);
  CHECK_I64(out.status, 0);
  CHECK(strstr(out.out, "\"t_comm_ns\": 2000,") != NULL);
  CHECK(strstr(out.out, "\"t_exposed_ns\": 1000,") != NULL);
  int allreduces = 0;
  for (const char *p = out.out; (p = strstr(p, "\"op\": \"AllReduce\"")) != NULL; p++) allreduces++;
  CHECK_I64(allreduces, 2);  /* both calls of the group, each linked to the kernel */
  if (check_failures) fprintf(stderr, "%s%s", out.out, out.err);
  cmd_free(&out);
}

/* A fake environment for the settings parsers. */
static const char *const *fake_env;

static char *fake_getenv(const char *name) {
  for (const char *const *e = fake_env; e && *e; e += 2)
    if (!strcmp(e[0], name)) return (char *)e[1];
  return NULL;
}

static void settings(void) {
  ovl_capture_config c;
  fake_env = NULL;
  ovl_config_read(&c, fake_getenv);
  CHECK(!c.disabled);
  CHECK_STR(c.output_dir, "ovl-trace");
  CHECK_I64(c.flush_ms, 1000);
  CHECK_I64(c.log, OVL_LOG_INFO);
  CHECK_STR(c.problem, "");
  const char *const set[] = {"OVL_DISABLE", "1", "OVL_OUTPUT", "/x/y", "OVL_FLUSH_MS", "250", "OVL_LOG", "debug", NULL};
  fake_env = set;
  ovl_config_read(&c, fake_getenv);
  CHECK(c.disabled);
  CHECK_STR(c.output_dir, "/x/y");
  CHECK_I64(c.flush_ms, 250);
  CHECK_I64(c.log, OVL_LOG_DEBUG);
  const char *const bad[] = {"OVL_DISABLE", "0", "OVL_FLUSH_MS", "5", NULL};
  fake_env = bad;
  ovl_config_read(&c, fake_getenv);
  CHECK(!c.disabled);
  CHECK_I64(c.flush_ms, 1000);
  CHECK(strstr(c.problem, "OVL_FLUSH_MS='5'") != NULL);
  CHECK_I64(c.tsc_clock, 1);
  const char *const monotonic[] = {"OVL_CLOCK", "monotonic", NULL};
  fake_env = monotonic;
  ovl_config_read(&c, fake_getenv);
  CHECK_I64(c.tsc_clock, 0);
  const char *const bad_clock[] = {"OVL_CLOCK", "hpet", NULL};
  fake_env = bad_clock;
  ovl_config_read(&c, fake_getenv);
  CHECK_I64(c.tsc_clock, 1);
  CHECK(strstr(c.problem, "OVL_CLOCK='hpet'") != NULL);

  long rank, world;
  const char *const torchrun_under_slurm[] = {"SLURM_PROCID", "0", "SLURM_NTASKS", "2", "RANK", "5", "WORLD_SIZE", "16",
                                              NULL};
  fake_env = torchrun_under_slurm;
  ovl_launcher_rank(fake_getenv, &rank, &world);
  CHECK_I64(rank, 5);
  CHECK_I64(world, 16);
  const char *const mpi[] = {"OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "8", "RANK", "x", NULL};
  fake_env = mpi;
  ovl_launcher_rank(fake_getenv, &rank, &world);
  CHECK_I64(rank, 3);
  CHECK_I64(world, 8);
  const char *const pmix[] = {"PMIX_RANK", "7", NULL};
  fake_env = pmix;
  ovl_launcher_rank(fake_getenv, &rank, &world);
  CHECK_I64(rank, 7);
  CHECK_I64(world, -1);
  fake_env = NULL;
  ovl_launcher_rank(fake_getenv, &rank, &world);
  CHECK_I64(rank, -1);
}

/* One NCCL vocabulary: the capture's calls are the analyzer's operations (same values, same
** names both ways), and the sizes the capture stores are the shared ones. */
static void test_nccl_vocabulary(void) {
  const int calls[] = {OVL_NCCL_ALLREDUCE, OVL_NCCL_REDUCESCATTER, OVL_NCCL_ALLGATHER, OVL_NCCL_BROADCAST,
                       OVL_NCCL_REDUCE,    OVL_NCCL_ALLTOALL,      OVL_NCCL_GATHER,    OVL_NCCL_SCATTER,
                       OVL_NCCL_SEND,      OVL_NCCL_RECV};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    const char *name = ovl_nccl_call_name(calls[i]);
    CHECK(name != NULL);
    if (!name) continue;
    CHECK_I64(ovl_op_from_name(name), calls[i]);
    CHECK_STR(ovl_op_name((ovl_op)calls[i]), name);
  }
  CHECK_STR(ovl_nccl_call_name(OVL_NCCL_ALLREDUCE), "AllReduce");
  CHECK(ovl_nccl_call_name(OVL_OP_COUNT) == NULL);
  CHECK(ovl_nccl_call_name(-1) == NULL);
  CHECK_I64(ovl_nccl_send_bytes(OVL_NCCL_REDUCESCATTER, 10, 7 /* ncclFloat32 */, 4), 160);
  CHECK_I64(ovl_nccl_send_bytes(OVL_NCCL_ALLREDUCE, 10, 9 /* ncclBfloat16 */, 4), 20);
  CHECK_I64(ovl_nccl_send_bytes(OVL_NCCL_ALLREDUCE, 10, 99, 4), OVL_NONE);
}

int main(void) {
  settings();
  cupti_records();
  host_events();
  batched_order();
  report_on_capture();
  bounded_buffer();
  test_nccl_vocabulary();
  drain_snapshot();
  counts_of_exited_threads();
  communicator_world();
  capture_clock();
  return check_summary();
}
