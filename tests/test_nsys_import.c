/*
** The Nsight Systems importer on a small database built here in the shape of the
** documented `nsys export --type sqlite` schema (no nsys on this machine): kernels with
** registered names, copies, a memset, runtime calls, NVTX ranges and a mark in named
** domains, NCCL NVTX ranges with NCCL's payload (a single all-reduce, a grouped send/recv,
** a communicator creation), and a second process, whose rows go to a trace of their own.
** Checks the rows, the links of NCCL calls to their kernels, the analysis, and `ovl import`.
*/
#include "driver/job_driver.h"
#include "check.h"
#include "db_query.h"
#include "run_cmd.h"
#include "load/trace_detect.h"
#include "load/trace_import.h"
#include "nsys_builder.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OVL_BINARY\n", argv[0]);
    return 2;
  }
  const char *ovl_bin = argv[1];
  char in[512], out[512];
  snprintf(in, sizeof in, "%s", tb_temp_path("export.sqlite"));
  snprintf(out, sizeof out, "%s", tb_temp_path("nsys-ovl.sqlite"));
  nsys_build_two_process_export(in);
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
