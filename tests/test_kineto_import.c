/*
** The Kineto importer on hand-written traces whose every row is known: GPU work, launches,
** annotations and steps, NCCL kernels with their PyTorch arguments (on the kernel or on the
** record_param_comms op), communicator ids equal on both ranks, sequence numbers, the
** float-µs-with-base and integer-absolute-µs time formats (exact ns), --hta-compat
** (rounding and the dropped last step), and the analysis of the imported trace (steps from
** ProfilerStep ranges projected through launch correlation).
*/
#include "driver/job_driver.h"
#include "check.h"
#include "db_query.h"
#include "load/comm_names.h"
#include "load/trace_import.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define BASE_NS 1711964646000000000LL

/* A new-style trace (float µs relative to baseTimeNanoseconds) of `rank` of 2: two
** ProfilerSteps, a GEMM per step, an all-reduce whose arguments sit on its
** record_param_comms op, an all-gather that carries its own arguments, copies, a memset,
** events that must be ignored or skipped, and some noise. */
static void write_new_trace(const char *path, int rank) {
  FILE *f = fopen(path, "w");
  fprintf(f,
          "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n"
          "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 2, \"pg_count\": 1,"
          " \"pg_config\": [{\"pg_name\": \"0\", \"ranks\": [0, 1]}], \"nccl_version\": \"2.21.5\"},\n"
          "  \"traceEvents\": [\n", rank);
  fprintf(f,
          "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 100, \"tid\": 100,"
          " \"ts\": 10.000, \"dur\": 100.000, \"args\": {\"External id\": 1}},\n"
          "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#6\", \"pid\": 100, \"tid\": 100,"
          " \"ts\": 110.000, \"dur\": 100.000},\n"
          "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 100, \"tid\": 100, \"ts\": 20.0,"
          " \"dur\": 5.0, \"args\": {\"External id\": 2, \"Input Dims\": [[64, 64], [64, 64]],"
          " \"deep\": [[[[[[[[[[{\"x\": [[[[1]]]]}]]]]]]]]]]}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100,"
          " \"ts\": 20.5, \"dur\": 1.25, \"args\": {\"External id\": 2, \"cbid\": 211, \"correlation\": 1001}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 100, \"tid\": 200,"
          " \"ts\": 50.0, \"dur\": 3.0, \"args\": {\"External id\": 555, \"Collective name\": \"allreduce\","
          " \"In msg nelems\": 1000, \"Out msg nelems\": 1000, \"Group size\": 2, \"dtype\": \"BFloat16\","
          " \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 200,"
          " \"ts\": 51.0, \"dur\": 1.0, \"args\": {\"External id\": 555, \"correlation\": 1002}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 100, \"tid\": 100,"
          " \"ts\": 22.0, \"dur\": 1.0, \"args\": {\"correlation\": 1003}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemsetAsync\", \"pid\": 100, \"tid\": 100,"
          " \"ts\": 23.0, \"dur\": 1.0, \"args\": {\"correlation\": 1004}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100,"
          " \"ts\": 120.0, \"dur\": 1.0, \"args\": {\"correlation\": 1005}},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 200,"
          " \"ts\": 150.0, \"dur\": 1.0, \"args\": {\"correlation\": 1006}},\n"
          "  {\"ph\": \"s\", \"id\": 1001, \"pid\": 100, \"tid\": 100, \"ts\": 20.5, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
          "  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {\"name\": \"GPU 0\"}},\n");
  /* GPU side: pid = device, tid = stream. */
  fprintf(f,
          "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm<float>(float*)\", \"pid\": 0, \"tid\": 7,"
          " \"ts\": 30.123, \"dur\": 10.2, \"args\": {\"External id\": 2, \"device\": 0, \"stream\": 7,"
          " \"correlation\": 1001, \"grid\": [64, 2, 1], \"block\": [256, 1, 1]}},\n"
          "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\", \"pid\": 0,"
          " \"tid\": 7, \"ts\": 24.0, \"dur\": 2.0, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1003,"
          " \"bytes\": 4096}},\n"
          "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 7,"
          " \"ts\": 26.5, \"dur\": 0.5, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1004, \"bytes\": 128}},\n"
          "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\","
          " \"pid\": 0, \"tid\": 20, \"ts\": 60.0, \"dur\": 20.0, \"args\": {\"External id\": 555, \"device\": 0,"
          " \"stream\": 20, \"correlation\": 1002}},\n"
          "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm<float>(float*)\", \"pid\": 0, \"tid\": 7,"
          " \"ts\": 125.0, \"dur\": 30.0, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1005}},\n"
          "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)\","
          " \"pid\": 0, \"tid\": 20, \"ts\": 160.0, \"dur\": 5.0, \"args\": {\"device\": 0, \"stream\": 20,"
          " \"correlation\": 1006, \"Collective name\": \"_allgather_base\", \"In msg nelems\": 10,"
          " \"Out msg nelems\": 20, \"Group size\": 2, \"dtype\": \"Float\", \"Process Group Name\": \"0\","
          " \"Process Group Ranks\": \"[0, 1]\", \"Seq\": 7}},\n"
          "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no_duration\", \"pid\": 0, \"tid\": 7, \"ts\": 170.0},\n"
          "  {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"pid\": 0, \"tid\": 7, \"ts\": 171.0,"
          " \"dur\": 1.0},\n"
          "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 0, \"tid\": 7,"
          " \"ts\": 24.0, \"dur\": 80.0},\n"
          "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"## backward ##\", \"pid\": 0, \"tid\": 7,"
          " \"ts\": 30.0, \"dur\": 12.0}\n"
          "  ],\n  \"traceName\": \"t.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %lld\n}\n",
          (long long)BASE_NS);
  fclose(f);
}

static void import_ok(const char *in, const char *out, int hta, ovl_import_stats *st) {
  ovl_err err = {0};
  ovl_import_options opt = {hta};
  int rc = ovl_import_trace(in, OVL_FORMAT_KINETO_JSON, OVL_NONE, out, &opt, st, &err);
  CHECK_I64(rc, OVL_OK);
  if (rc) fprintf(stderr, "  import %s: %s\n", in, err.msg);
}

static void full_precision(void) {
  const char *in0 = tb_temp_path("rank0.json"), *in1 = tb_temp_path("rank1.json");
  const char *out0 = tb_temp_path("rank0.sqlite"), *out1 = tb_temp_path("rank1.sqlite");
  write_new_trace(in0, 0);
  write_new_trace(in1, 1);
  ovl_import_stats st;
  import_ok(in0, out0, 0, &st);
  import_ok(in1, out1, 0, &st);
  CHECK_I64(st.kernels, 4);
  CHECK_I64(st.nccl_kernels, 2);
  CHECK_I64(st.memops, 2);
  CHECK_I64(st.api, 6);
  CHECK_I64(st.skipped, 1);  /* the kernel without dur */
  CHECK_I64(st.rank, 1);
  CHECK_I64(st.world_size, 2);

  sqlite3 *db = dbq_open(out0);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key='rank'"), "0");
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key='world_size'"), "2");
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key='pid'"), "100");
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key='nccl_version'"), "2.21.5");
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key='realtime_offset_ns'"), BASE_NS);
  /* Exact ns from the decimal text: 30.123 us + 10.2 us. */
  CHECK_I64(dbq_int(db, "SELECT start FROM kernels WHERE correlation=1001"), 30123);
  CHECK_I64(dbq_int(db, "SELECT end FROM kernels WHERE correlation=1001"), 40323);
  CHECK_I64(dbq_int(db, "SELECT device * 1000 + stream FROM kernels WHERE correlation=1001"), 7);
  CHECK_I64(dbq_int(db, "SELECT grid_x * 10000 + block_x FROM kernels WHERE correlation=1001"), 640256);
  CHECK_STR(dbq_text(db, "SELECT s.value FROM kernels k JOIN strings s ON s.id = k.name WHERE correlation=1005"),
            "void gemm<float>(float*)");
  CHECK_STR(dbq_text(db, "SELECT kind FROM memops WHERE correlation=1003"), "HtoD");
  CHECK_I64(dbq_int(db, "SELECT bytes FROM memops WHERE correlation=1003"), 4096);
  CHECK_STR(dbq_text(db, "SELECT kind FROM memops WHERE correlation=1004"), "memset");
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels WHERE name IN (SELECT id FROM strings WHERE value='no_duration')"), 0);
  CHECK_I64(dbq_int(db, "SELECT tid FROM api WHERE correlation=1002"), 200);
  CHECK_I64(dbq_int(db, "SELECT start FROM api WHERE correlation=1001"), 20500);
  /* Annotations: the host steps in the default domain, the GPU copy of a step left out. */
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE name GLOB 'ProfilerStep#*' AND domain IS NULL"), 2);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE name GLOB 'ProfilerStep#*' AND domain IS NOT NULL"), 0);
  CHECK_STR(dbq_text(db, "SELECT domain FROM nvtx WHERE name='## backward ##'"), "gpu_user_annotation");
  CHECK_I64(dbq_int(db, "SELECT tid FROM nvtx WHERE name='ProfilerStep#6'"), 100);
  /* The all-reduce: arguments and host time from record_param_comms (External id 555). */
  CHECK_STR(dbq_text(db, "SELECT op FROM collectives WHERE seq=0"), "AllReduce");
  CHECK_I64(dbq_int(db, "SELECT bytes FROM collectives WHERE op='AllReduce'"), 2000);
  CHECK_I64(dbq_int(db, "SELECT count FROM collectives WHERE op='AllReduce'"), 1000);
  CHECK_STR(dbq_text(db, "SELECT dtype FROM collectives WHERE op='AllReduce'"), "Bfloat16");
  CHECK_STR(dbq_text(db, "SELECT redop FROM collectives WHERE op='AllReduce'"), "Sum");
  CHECK_I64(dbq_int(db, "SELECT nranks FROM collectives WHERE op='AllReduce'"), 2);
  CHECK_I64(dbq_int(db, "SELECT rank FROM collectives WHERE op='AllReduce'"), 0);
  CHECK_I64(dbq_int(db, "SELECT host_start FROM collectives WHERE op='AllReduce'"), 50000);
  CHECK_I64(dbq_int(db, "SELECT tid FROM collectives WHERE op='AllReduce'"), 200);
  CHECK_I64(dbq_int(db, "SELECT stream FROM collectives WHERE op='AllReduce'"), 20);
  CHECK_I64(dbq_int(db, "SELECT l.correlation FROM collective_launches l JOIN collectives c ON c.id = l.collective"
                      " WHERE c.op='AllReduce'"), 1002);
  /* The all-gather: its own arguments, Seq as given, host time from its launch. */
  CHECK_I64(dbq_int(db, "SELECT seq FROM collectives WHERE op='AllGather'"), 7);
  CHECK_I64(dbq_int(db, "SELECT bytes FROM collectives WHERE op='AllGather'"), 40);
  CHECK_I64(dbq_int(db, "SELECT host_start FROM collectives WHERE op='AllGather'"), 150000);
  CHECK_I64(dbq_int(db, "SELECT count(DISTINCT comm) FROM collectives"), 1);
  int64_t comm0 = dbq_int(db, "SELECT comm FROM collectives WHERE op='AllReduce'");
  sqlite3_close(db);
  db = dbq_open(out1);
  CHECK_I64(dbq_int(db, "SELECT comm FROM collectives WHERE op='AllReduce'"), comm0);
  CHECK_I64(dbq_int(db, "SELECT rank FROM collectives WHERE op='AllReduce'"), 1);
  sqlite3_close(db);
  CHECK(comm0 >= 0);

  /* Analysed directly from the JSON files: two ranks, steps from the ProfilerStep ranges
  ** projected through the launches. */
  ovl_analysis_options aopt = {0};
  ovl_analysis_ctx ctx;
  ovl_err err = {0};
  CHECK(ovl_analysis_ctx_init(&ctx, &aopt, &err) == OVL_OK);
  char *args[] = {(char *)in0, (char *)in1};
  ovl_job job;
  int rc = ovl_analyze_job(&ctx, args, 2, NULL, NULL, &job, &err);
  CHECK_I64(rc, OVL_OK);
  if (rc) fprintf(stderr, "  analyse: %s\n", err.msg);
  CHECK_I64(job.nranks, 2);
  for (size_t i = 0; !rc && i < job.nranks; i++) {
    const ovl_rank_result *r = &job.ranks[i];
    CHECK_I64(r->rank, (int64_t)i);
    CHECK_I64(r->world_size, 2);
    CHECK(r->step_detection == OVL_STEPS_NVTX);
    CHECK(r->step_projection == OVL_PROJECT_CORRELATION);
    CHECK_I64(r->nsteps, 2);
    CHECK_I64(r->n_kernels, 4);
    CHECK_I64(r->n_comm_kernels, 2);
    CHECK_STR(r->trace_path, i == 0 ? in0 : in1);
    if (r->nsteps == 2) {
      CHECK_I64(r->steps[0].ncolls, 1);
      CHECK_I64(r->steps[1].ncolls, 1);
      /* All-reduce [60, 80) us and all-gather [160, 165) us never overlap compute. */
      CHECK_I64(r->steps[0].totals.comm, 20000);
      CHECK_I64(r->steps[1].totals.exposed, 5000);
    }
  }
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  remove(out0);
  remove(out1);
  remove(in1);
}

static void hta_compat(void) {
  char in[512], out[512];
  snprintf(in, sizeof in, "%s", tb_temp_path("rank0.json"));
  snprintf(out, sizeof out, "%s", tb_temp_path("hta.sqlite"));
  ovl_import_stats st;
  import_ok(in, out, 1, &st);
  CHECK(st.dropped > 0);
  sqlite3 *db = dbq_open(out);
  /* 30.123 us rounds up to 31, 40.323 down to 40. */
  CHECK_I64(dbq_int(db, "SELECT start FROM kernels WHERE correlation=1001"), 31000);
  CHECK_I64(dbq_int(db, "SELECT end FROM kernels WHERE correlation=1001"), 40000);
  /* The memset of [26.5, 27.0) us is shorter than a whole microsecond: empty, not negative. */
  CHECK_I64(dbq_int(db, "SELECT end - start FROM memops WHERE correlation=1004"), 0);
  /* Everything from the last ProfilerStep on is gone: its launches and their GPU work. */
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE name='ProfilerStep#6'"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM api WHERE start >= 110000"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels"), 2);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels WHERE correlation IN (1005, 1006)"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collectives"), 1);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collective_launches"), 1);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key='import_mode'"), "hta-compat");
  sqlite3_close(db);
  remove(out);

  /* The same through the analysis options (`ovl report --hta-compat`): one step is left. */
  ovl_analysis_options aopt = {0};
  aopt.import.hta_compat = 1;
  ovl_analysis_ctx ctx;
  ovl_err err = {0};
  CHECK(ovl_analysis_ctx_init(&ctx, &aopt, &err) == OVL_OK);
  char *args[] = {in};
  ovl_job job;
  int rc = ovl_analyze_job(&ctx, args, 1, NULL, NULL, &job, &err);
  CHECK_I64(rc, OVL_OK);
  CHECK_I64(rc ? -1 : (int64_t)job.nranks, 1);
  if (!rc && job.nranks == 1) {
    CHECK_I64(job.ranks[0].nsteps, 1);
    CHECK_I64(job.ranks[0].n_kernels, 2);
  }
  if (!rc) ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  remove(in);
}

/* An older trace: integer absolute µs, no baseTimeNanoseconds, "Kernel"/"Runtime" categories,
** ProfilerStep as a cpu_op, NCCL kernels without arguments, one step only (nothing dropped by
** --hta-compat), gzip-compressed. */
static void old_format(void) {
  const char *in = tb_temp_path("old.json.gz"), *out = tb_temp_path("old.sqlite");
  gzFile g = gzopen(in, "wb");
  gzprintf(g, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 4},"
              " \"traceEvents\": [\n");
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#1009\", \"pid\": 9, \"tid\": 9,"
              " \"ts\": 1661203462598772, \"dur\": 75473},\n");
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9,"
              " \"ts\": 1661203462600000, \"dur\": 5, \"args\": {\"correlation\": 77, \"External id\": 77}},\n");
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9,"
              " \"ts\": 1661203462600010, \"dur\": 5, \"args\": {\"correlation\": 78}},\n");
  /* ProcessGroupNCCL's range around the second call, with record_shapes' input. */
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_to_all\", \"pid\": 9,"
              " \"tid\": 9, \"ts\": 1661203462600008, \"dur\": 9, \"args\": {\"Input Dims\": [[64, 96]],"
              " \"Input type\": [\"float\"]}},\n");
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)\","
              " \"pid\": 3, \"tid\": \"stream 21\", \"ts\": 1661203462600100, \"dur\": 40,"
              " \"args\": {\"correlation\": 77, \"External id\": 77}},\n");
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)\","
              " \"pid\": 3, \"tid\": 21, \"ts\": 1661203462600200, \"dur\": 10, \"args\": {\"correlation\": 78}},\n");
  gzprintf(g, "{\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy DtoH (Device -> Pageable)\", \"pid\": 3,"
              " \"tid\": 7, \"ts\": 1661203462600300, \"dur\": 2, \"args\": {\"bytes\": 8}}\n");
  gzprintf(g, "]}\n");
  gzclose(g);
  ovl_import_stats st;
  import_ok(in, out, 1, &st);
  CHECK_I64(st.dropped, 0);
  CHECK_I64(st.nccl_kernels, 2);
  sqlite3 *db = dbq_open(out);
  CHECK_I64(dbq_int(db, "SELECT start FROM kernels WHERE correlation=77"), 1661203462600100000LL);
  CHECK_I64(dbq_int(db, "SELECT end FROM kernels WHERE correlation=77"), 1661203462600140000LL);
  CHECK_I64(dbq_int(db, "SELECT device * 1000 + stream FROM kernels WHERE correlation=77"), 3021);
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key='realtime_offset_ns'"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM nvtx WHERE name='ProfilerStep#1009'"), 1);
  CHECK_STR(dbq_text(db, "SELECT kind FROM memops"), "DtoH");
  /* No process group named: one communicator per stream, numbered in launch order, the
  ** world as its size; host times from the launches, or from the `nccl:` range around the
  ** launch, which also names the operation (not SendRecv but AlltoAll) and its input. */
  CHECK_STR(dbq_text(db, "SELECT group_concat(op || ':' || seq, ',') FROM (SELECT op, seq FROM collectives ORDER BY id)"),
            "AllReduce:0,AlltoAll:1");
  CHECK_I64(dbq_int(db, "SELECT count(DISTINCT comm) FROM collectives"), 1);
  CHECK_I64(dbq_int(db, "SELECT nranks FROM collectives WHERE op='AllReduce'"), 4);
  CHECK_I64(dbq_int(db, "SELECT rank FROM collectives WHERE op='AllReduce'"), 3);
  CHECK_I64(dbq_int(db, "SELECT bytes FROM collectives WHERE op='AllReduce'"), -999);
  CHECK_I64(dbq_int(db, "SELECT host_start FROM collectives WHERE op='AllReduce'"), 1661203462600000000LL);
  CHECK_I64(dbq_int(db, "SELECT host_start FROM collectives WHERE op='AlltoAll'"), 1661203462600008000LL);
  CHECK_I64(dbq_int(db, "SELECT count FROM collectives WHERE op='AlltoAll'"), 64 * 96);
  CHECK_I64(dbq_int(db, "SELECT bytes FROM collectives WHERE op='AlltoAll'"), 64 * 96 * 4);
  CHECK_STR(dbq_text(db, "SELECT dtype FROM collectives WHERE op='AlltoAll'"), "Float32");
  sqlite3_close(db);
  remove(out);
  remove(in);
}

/* A call's launch is the first api row with its kernel's correlation id, whether that row
** comes after the kernel (caught while streaming) or before it (read back), for grouped
** kernels sharing one launch, and when the ids seen cannot be kept (one far from the rest). */
static void launch_rows(void) {
  static const char *const kernel = "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float\","
                                    " \"pid\": 0, \"tid\": 21, \"ts\": %d, \"dur\": 5, \"args\": {\"correlation\": %lld}},\n";
  static const char *const api = "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9,"
                                 " \"tid\": %d, \"ts\": %d, \"dur\": 2, \"args\": {\"correlation\": %lld}},\n";
  struct { const char *what; long long far; const char *want; } cases[] = {
    /* after: ids 100000 then 70 (the set grows down), kernels 10, 11 (twice), 12 (no launch) */
    {"after", 0, "100000/5,300000/7,300000/7,-/-"},
    /* 20's first api row comes before its kernel */
    {"before", 0, "50000/8,100000/5,300000/7,300000/7,-/-"},
    /* the same, after an id the set cannot span besides the others */
    {"far", 1LL << 40, "50000/8,100000/5,300000/7,300000/7,-/-"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char *in = tb_temp_path("launches.json"), *out = tb_temp_path("launches.sqlite");
    FILE *f = fopen(in, "w");
    fprintf(f, "{\"traceEvents\": [\n");
    fprintf(f, api, 4, 1, 100000LL);
    if (cases[c].far) fprintf(f, api, 4, 2, cases[c].far);
    fprintf(f, api, 4, 3, 70LL);
    if (c > 0) {
      fprintf(f, api, 8, 50, 20LL);
      fprintf(f, kernel, 55, 20LL);
      fprintf(f, api, 9, 60, 20LL);
    }
    fprintf(f, kernel, 400, 10LL);
    fprintf(f, api, 5, 100, 10LL);
    fprintf(f, api, 6, 200, 10LL);
    fprintf(f, kernel, 500, 11LL);
    fprintf(f, kernel, 510, 11LL);
    fprintf(f, api, 7, 300, 11LL);
    fprintf(f, kernel, 600, 12LL);
    fprintf(f, "{\"ph\": \"i\", \"name\": \"end\"}]}\n");
    fclose(f);
    ovl_import_stats st;
    import_ok(in, out, 0, &st);
    sqlite3 *db = dbq_open(out);
    const char *got = dbq_text(db, "SELECT group_concat(coalesce(host_start, '-') || '/' || coalesce(tid, '-'), ',')"
                                   " FROM (SELECT host_start, tid FROM collectives ORDER BY host_start IS NULL, host_start)");
    CHECK_STR(got, cases[c].want);
    if (strcmp(got, cases[c].want) != 0) fprintf(stderr, "  case %s\n", cases[c].what);
    sqlite3_close(db);
    remove(out);
    remove(in);
  }
}

/* Which family a kernel name belongs to (comm_names.c, read in one pass): the first of the
** list whose pattern occurs anywhere, in any case, and whose exception does not. */
static void kernel_families(void) {
  static char long_name[6000];
  memset(long_name, 'm', 5000);
  snprintf(long_name + 5000, sizeof long_name - 5000, "MultiMem_All_Gather<bf16>");
  const char *const cases[][2] = {
    {"void deep_ep::layout::get_dispatch_layout(long*)", NULL},
    {"void DEEP_EP::intranode::dispatch<8>(int4*)", "DeepEP"},
    {"deep_ep::layout::x_ncclKernel", "NCCL"},
    {"x_rcclDeep_ep::combine", "RCCL"},
    {"deep_ep::layout::deep_ep::combine", NULL},
    {"nccnccl", "NCCL"},
    {"ncc_l", NULL},
    {long_name, "SymmetricMemory"},
    {"", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = ovl_comm_kernel_family(cases[i][0]);
    CHECK_STR(got ? got : "(none)", cases[i][1] ? cases[i][1] : "(none)");
  }
}

/* A JSON document that is not a trace, and a trace without traceEvents. */
static void not_traces(void) {
  const char *in = tb_temp_path("config.json"), *out = tb_temp_path("config.sqlite");
  const char *docs[] = {"{\"model\": \"resnet\", \"layers\": [1, 2]}", "[{\"ph\": \"X\"}]",
                        "{\"traceEvents\": {\"ph\": \"X\"}}"};
  const char *why[] = {"no traceEvents array", "the top level is not an object", "traceEvents is not an array"};
  for (int i = 0; i < 3; i++) {
    FILE *f = fopen(in, "w");
    fputs(docs[i], f);
    fclose(f);
    ovl_err err = {0};
    int rc = ovl_import_trace(in, OVL_FORMAT_KINETO_JSON, OVL_NONE, out, NULL, NULL, &err);
    CHECK_I64(rc, OVL_EUSER);
    CHECK(strncmp(err.msg, in, strlen(in)) == 0);
    CHECK(strstr(err.msg, why[i]) != NULL);
    FILE *left = fopen(out, "r");
    CHECK(left == NULL);  /* nothing half-written stays behind */
    if (left) fclose(left);
  }
  remove(in);
}

int main(void) {
  full_precision();
  hta_compat();
  old_format();
  launch_rows();
  kernel_families();
  not_traces();
  return check_summary();
}
