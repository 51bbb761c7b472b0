/*
** The Nsight Systems importer on a small database built here in the shape of the
** documented `nsys export --type sqlite` schema (no nsys on this machine): kernels with
** registered names, copies, a memset, runtime calls, NVTX ranges and a mark in named
** domains, NCCL NVTX ranges with NCCL's payload (a single all-reduce, a grouped send/recv,
** a communicator creation), and a second process, whose rows go to a trace of their own.
** Checks the rows, the links of NCCL calls to their kernels, the analysis, and `ovl import`.
*/
#include "analyze/job.h"
#include "check.h"
#include "db_query.h"
#include "run_cmd.h"
#include "load/trace_detect.h"
#include "load/trace_import.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PID 4242LL
#define OTHER_PID 4343LL
#define GPID(pid) ((pid) << 24)
#define GTID(pid, tid) (((pid) << 24) | (tid))
#define COMM_ID "12345678901234567890"

static void exec_or_die(sqlite3 *db, const char *sql) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "cannot build the export: %s\n%s\n", msg ? msg : "?", sql);
    exit(2);
  }
}

static void execf(sqlite3 *db, const char *fmt, long long a, long long b, long long c) {
  char sql[2048];
  snprintf(sql, sizeof sql, fmt, a, b, c);
  exec_or_die(db, sql);
}

static void build_export(const char *path) {
  remove(path);
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) exit(2);
  exec_or_die(db,
              "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
              "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,"
              " contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT,"
              " demangledName INT NOT NULL, shortName INT NOT NULL, mangledName INT, gridX INT NOT NULL,"
              " gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL,"
              " blockZ INT NOT NULL, registersPerThread INT NOT NULL);"
              "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,"
              " contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, bytes INT NOT NULL,"
              " copyKind INT NOT NULL, srcKind INT, dstKind INT);"
              "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL,"
              " contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT, globalPid INT, value INT NOT NULL,"
              " bytes INT NOT NULL);"
              "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT NOT NULL, end INT NOT NULL, eventClass INT NOT NULL,"
              " globalTid INT, correlationId INT, nameId INT NOT NULL, returnValue INT NOT NULL, callchainId INT);"
              "CREATE TABLE NVTX_EVENTS (start INT NOT NULL, end INT, eventType INT NOT NULL, rangeId INT,"
              " category INT, color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT,"
              " uint64Value INT, int64Value INT, doubleValue REAL, uint32Value INT, int32Value INT, floatValue REAL,"
              " jsonTextId INT, jsonText TEXT);"
              "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT, utcTime TEXT, localTime TEXT);"
              "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');"
              "INSERT INTO StringIds VALUES (1, 'void gemm_kernel<float>(float*)'), (2, 'gemm_kernel'),"
              " (3, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),"
              " (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (5, 'cudaLaunchKernel'),"
              " (6, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'), (7, 'ncclDevKernel_SendRecv'),"
              " (8, 'step'), (9, 'cudaMemcpyAsync');");
  /* Kernels of process PID on device 0; rows deliberately not in start order. */
  const char *kernel = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%lld, %lld, 0, 1, %s, %s, %lld, %s, 1, 1, 256, 1, 1, 32);";
  char sql[1024];
  snprintf(sql, sizeof sql, kernel, 12000LL, 15000LL, "7", "12", GPID(PID), "1, 2, NULL, 120");
  exec_or_die(db, sql);
  snprintf(sql, sizeof sql, kernel, 1000LL, 5000LL, "7", "10", GPID(PID), "1, 2, NULL, 120");
  exec_or_die(db, sql);
  snprintf(sql, sizeof sql, kernel, 6000LL, 9000LL, "20", "11", GPID(PID), "3, 4, NULL, 2");
  exec_or_die(db, sql);
  snprintf(sql, sizeof sql, kernel, 16000LL, 18000LL, "20", "13", GPID(PID), "6, 7, NULL, 2");
  exec_or_die(db, sql);
  /* The other process: device 1, correlation id 10 again. */
  snprintf(sql, sizeof sql, kernel, 2000LL, 3000LL, "7", "10", GPID(OTHER_PID), "1, 2, NULL, 120");
  exec_or_die(db, sql);
  execf(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1 WHERE globalPid = %lld", GPID(OTHER_PID), 0, 0);
  execf(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (500, 900, 0, 1, 7, 9, %lld, 4096, %lld, 0, 0);",
        GPID(PID), 1, 0);
  execf(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (950, 990, 0, 1, 7, 8, %lld, 0, %lld);", GPID(PID), 64, 0);
  const char *runtime = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%lld, %lld, 0, %lld, %s, 0, NULL);";
  const struct { long long start, pid, tid; const char *rest; } calls[] = {
    {400, PID, PID, "9, 9"}, {800, PID, PID, "10, 5"}, {5500, PID, PID + 1, "11, 5"},
    {11000, PID, PID, "12, 5"}, {15500, PID, PID + 1, "13, 5"}, {1900, OTHER_PID, OTHER_PID, "10, 5"},
  };
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    char fmt[256];
    snprintf(fmt, sizeof fmt, runtime, calls[i].start, calls[i].start + 50, GTID(calls[i].pid, calls[i].tid), "%s");
    snprintf(sql, sizeof sql, fmt, calls[i].rest);
    exec_or_die(db, sql);
  }
  /* NVTX: domains 1 (NCCL) and 2 (ovl); steps (one by registered string, one by text), a mark,
  ** and NCCL's ranges with its payload. */
  const char *nvtx = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId, jsonText)"
                     " VALUES (%lld, %s, %s);";
  const struct { long long start; const char *end_type; const char *rest; } ev[] = {
    {0, "NULL, 75", "'NCCL', NULL, NULL, 1, NULL"},
    {0, "NULL, 75", "'ovl', NULL, NULL, 2, NULL"},
    {0, "10000, 59", "NULL, " "%lld, 8, 2, NULL"},
    {10000, "20000, 59", "'step', %lld, NULL, 2, NULL"},
    {300, "NULL, 34", "'hello', %lld, NULL, 0, NULL"},
    {10, "50, 59", "'ncclCommInitRank', %lld, NULL, 1, '{\"NCCL communicator ID\": " COMM_ID ", \"No. of ranks\": 4, \"Rank\": 2, \"CUDA device\": 0}'"},
    {5400, "5600, 59", "'ncclAllReduce', %lld, NULL, 1, '{\"NCCL communicator ID\": " COMM_ID ", \"Message size [bytes]\": 1048576, \"Reduction operation\": \"Sum\"}'"},
    {15000, "15050, 59", "'ncclGroupStart', %lld, NULL, 1, NULL"},
    {15100, "15200, 59", "'ncclSend', %lld, NULL, 1, '{\"NCCL communicator ID\": " COMM_ID ", \"Message size [bytes]\": 256, \"Peer rank\": 3}'"},
    {15250, "15300, 59", "'ncclRecv', %lld, NULL, 1, '{\"NCCL communicator ID\": " COMM_ID ", \"Message size [bytes]\": 256, \"Peer rank\": 1}'"},
    {15400, "15600, 59", "'ncclGroupEnd', %lld, NULL, 1, NULL"},
  };
  for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
    char rest[1024], fmt[1400];
    long long tid = (i >= 5) ? PID + 1 : PID;
    snprintf(rest, sizeof rest, ev[i].rest, GTID(PID, tid));
    snprintf(fmt, sizeof fmt, nvtx, ev[i].start, ev[i].end_type, rest);
    exec_or_die(db, fmt);
  }
  sqlite3_close(db);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OVL_BINARY\n", argv[0]);
    return 2;
  }
  const char *ovl_bin = argv[1];
  char in[512], out[512];
  snprintf(in, sizeof in, "%s", tb_temp_path("export.sqlite"));
  snprintf(out, sizeof out, "%s", tb_temp_path("nsys-ovl.sqlite"));
  build_export(in);
  ovl_err err = {0};
  ovl_trace_format format;
  CHECK(ovl_detect_format(in, &format, &err) == OVL_OK);
  CHECK(format == OVL_FORMAT_NSYS_SQLITE);
  /* Two processes, one trace each. */
  int64_t *processes = NULL;
  size_t nprocesses = 0;
  CHECK(ovl_import_processes(in, format, &processes, &nprocesses, &err) == OVL_OK);
  CHECK_I64(nprocesses, 2);
  CHECK_I64(nprocesses == 2 ? processes[0] : -1, PID);
  CHECK_I64(nprocesses == 2 ? processes[1] : -1, OTHER_PID);
  free(processes);
  ovl_import_stats st;
  int rc = ovl_import_trace(in, OVL_FORMAT_NSYS_SQLITE, PID, out, NULL, &st, &err);
  CHECK_I64(rc, OVL_OK);
  if (rc) fprintf(stderr, "import: %s\n", err.msg);
  CHECK_I64(st.kernels, 4);
  CHECK_I64(st.nccl_kernels, 2);
  CHECK_I64(st.memops, 2);
  CHECK_I64(st.api, 5);
  CHECK_I64(st.nvtx, 9);  /* 2 steps, 1 mark, 6 NCCL ranges; domain creations are not rows */
  CHECK_I64(st.collectives, 3);

  sqlite3 *db = dbq_open(out);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels"), 4);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'pid'"), "4242");
  /* Written in start order; names from demangledName; dims kept. */
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels a JOIN kernels b ON b.rowid = a.rowid + 1 WHERE b.start < a.start"), 0);
  CHECK_STR(dbq_text(db, "SELECT s.value FROM kernels k JOIN strings s ON s.id = k.name WHERE k.start = 1000"),
            "void gemm_kernel<float>(float*)");
  CHECK_I64(dbq_int(db, "SELECT block_x FROM kernels WHERE start = 1000"), 256);
  /* Only this process's rows: its launches match its work one to one. */
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels k JOIN api a ON a.correlation = k.correlation"), 4);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels WHERE device = 1"), 0);
  CHECK_STR(dbq_text(db, "SELECT kind FROM memops WHERE start = 500"), "HtoD");
  CHECK_I64(dbq_int(db, "SELECT bytes FROM memops WHERE start = 500"), 4096);
  CHECK_STR(dbq_text(db, "SELECT kind FROM memops WHERE start = 950"), "memset");
  CHECK_I64(dbq_int(db, "SELECT tid FROM api WHERE start = 5500"), PID + 1);
  CHECK_STR(dbq_text(db, "SELECT s.value FROM api a JOIN strings s ON s.id = a.name WHERE a.start = 400"), "cudaMemcpyAsync");
  /* NVTX: names from text or registered strings, domains by name, the mark without end. */
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE domain = 'ovl' AND name = 'step'"), 2);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE name = 'hello' AND domain IS NULL AND end IS NULL"), 1);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE domain = 'NCCL'"), 6);
  /* NCCL calls: the all-reduce linked to its kernel, the grouped send and receive both linked
  ** to the one kernel launched in ncclGroupEnd; sizes, peers and the communicator from the
  ** payload, rank and size from the communicator's creation, numbered per communicator. */
  CHECK_STR(dbq_text(db, "SELECT group_concat(op || ':' || seq, ',') FROM (SELECT op, seq FROM collectives ORDER BY id)"),
            "AllReduce:0,Send:1,Recv:2");
  CHECK_I64(dbq_int(db, "SELECT bytes FROM collectives WHERE op = 'AllReduce'"), 1048576);
  CHECK_I64(dbq_int(db, "SELECT nranks * 10 + rank FROM collectives WHERE op = 'AllReduce'"), 42);
  CHECK_I64(dbq_int(db, "SELECT peer FROM collectives WHERE op = 'Send'"), 3);
  CHECK_I64(dbq_int(db, "SELECT peer FROM collectives WHERE op = 'Recv'"), 1);
  CHECK_I64(dbq_int(db, "SELECT peer FROM collectives WHERE op = 'AllReduce'"), -1);
  CHECK_I64(dbq_int(db, "SELECT count(DISTINCT comm) FROM collectives"), 1);
  CHECK_I64(dbq_int(db, "SELECT host_start FROM collectives WHERE op = 'AllReduce'"), 5400);
  CHECK_I64(dbq_int(db, "SELECT k.start FROM collectives c JOIN collective_launches l ON l.collective = c.id"
                      " JOIN kernels k ON k.correlation = l.correlation WHERE c.op = 'AllReduce'"), 6000);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collectives c JOIN collective_launches l ON l.collective = c.id"
                      " JOIN kernels k ON k.correlation = l.correlation WHERE k.start = 16000"), 2);
  CHECK_I64(dbq_int(db, "SELECT stream FROM collectives WHERE op = 'Recv'"), 20);
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'realtime_offset_ns'"), 1700000000000000000LL);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'import_format'"), "nsys");
  sqlite3_close(db);

  /* Analysed directly from the export: one rank per process; device 0 has the two steps,
  ** projected through the launches, and both NCCL kernels as communication; rank and size
  ** from the communicator. */
  ovl_analysis_options aopt = {0};
  ovl_analysis_ctx ctx;
  CHECK(ovl_analysis_ctx_init(&ctx, &aopt, &err) == OVL_OK);
  char *args[] = {in};
  ovl_job job;
  rc = ovl_analyze_job(&ctx, args, 1, NULL, NULL, &job, &err);
  CHECK_I64(rc, OVL_OK);
  if (rc) fprintf(stderr, "analyse: %s\n", err.msg);
  const ovl_rank_result *dev0 = NULL;
  for (size_t i = 0; !rc && i < job.nranks; i++)
    if (job.ranks[i].device == 0) dev0 = &job.ranks[i];
  CHECK(!rc && job.nranks == 2 && dev0);
  if (dev0) {
    CHECK(dev0->step_detection == OVL_STEPS_NVTX);
    CHECK(dev0->step_projection == OVL_PROJECT_CORRELATION);
    CHECK_I64(dev0->nsteps, 2);
    CHECK_I64(dev0->n_comm_kernels, 2);
    CHECK_I64(dev0->rank, 2);
    CHECK_I64(dev0->world_size, 4);
    /* The all-reduce [6000, 9000) overlaps no compute; nor does the send/recv [16000, 18000). */
    CHECK_I64(dev0->totals.exposed, 5000);
  }
  if (!rc) ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);

  /* `ovl import` writes one trace per process. */
  char cmd[2048], made[600];
  snprintf(cmd, sizeof cmd, "'%s' import '%s' -o '%s'", ovl_bin, in, out);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK_I64(count_lines(r.out), 2);
  cmd_free(&r);
  struct stat sb;
  size_t stem = strlen(out) - strlen(".sqlite");
  for (int i = 0; i < 2; i++) {
    snprintf(made, sizeof made, "%.*s.pid%lld.sqlite", (int)stem, out, i ? OTHER_PID : PID);
    CHECK(stat(made, &sb) == 0);
    remove(made);
  }
  remove(in);
  remove(out);
  return check_summary();
}
