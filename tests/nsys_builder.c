/* Nsight Systems export builder: see nsys_builder.h. */
#include "nsys_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

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

void nsys_build_two_process_export(const char *path) {
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

