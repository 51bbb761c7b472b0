/*
** What the real GPU traces of tests/data/gpu-h100 (README there) showed, asserted on this
** machine: the capture of the GPU test program, libovl beside torch.profiler, the PyTorch
** runs, and the workloads' benchmark table. Each check reads the raw rows with SQLite (what
** libovl wrote) and runs `ovl` as a user would (what the analyzer makes of it); expected
** counts come from the rows, never from numbers copied out of the files.
** usage: test_gpu_traces OVL_BINARY DATA_DIR CHECK
*/
#include "check.h"
#include "db_query.h"
#include "load/comm_names.h"
#include "run_cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ovl, *dir;

static const char *data(const char *sub) {
  static char buf[4][4096];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, sub);
  return buf[k];
}

static cmd_result ovl_run(const char *args) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' %s", ovl, args);
  return run_cmd(cmd);
}

/* The number after `"key": ` at its first occurrence in JSON text; -1 when absent. */
static double json_num(const char *json, const char *key) {
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(json, pat);
  return p ? strtod(p + strlen(pat), NULL) : -1;
}

static int64_t meta_int(sqlite3 *db, const char *key) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = '%s'", key);
  return dbq_int(db, sql);
}

/* The GPU test program: CUPTI attached by injection, its SGEMMs and NCCL work on their own
** streams, every NCCL call linked to GPU work that started after the call, nothing lost, and
** a report with one step per NVTX step range. */
static void capture(void) {
  const char *trace = data("capture-gpu_workload.sqlite");
  sqlite3 *db = dbq_open(trace);
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'cupti'"), "attached (injection)");
  CHECK_I64(meta_int(db, "dropped_records"), 0);
  CHECK_I64(meta_int(db, "bad_records"), 0);
  CHECK(dbq_int(db, "SELECT count(DISTINCT stream) FROM kernels") >= 2);
  int64_t colls = dbq_int(db, "SELECT count(*) FROM collectives");
  CHECK(colls > 0);
  CHECK_I64(dbq_int(db, "SELECT count(DISTINCT c.id) FROM collectives c JOIN collective_launches l ON l.collective = c.id"
                        " WHERE EXISTS (SELECT 1 FROM kernels k WHERE k.correlation = l.correlation AND k.start >= c.host_start)"
                        "    OR EXISTS (SELECT 1 FROM memops m WHERE m.correlation = l.correlation AND m.start >= c.host_start)"),
            colls);
  /* the NCCL work runs on the collectives' stream, not on the SGEMMs' */
  CHECK(dbq_int(db, "SELECT count(*) FROM kernels k JOIN collective_launches l ON l.correlation = k.correlation"
                    " JOIN collectives c ON c.id = l.collective WHERE k.stream = c.stream") > 0);
  int64_t steps = dbq_int(db, "SELECT count(*) FROM nvtx WHERE name IN ('step', 'ovl:step') AND end IS NOT NULL");
  CHECK(steps > 0);
  sqlite3_close(db);

  char args[4200];
  snprintf(args, sizeof args, "report --json '%s'", trace);
  cmd_result r = ovl_run(args);
  CHECK_I64(r.status, 0);
  double eff = json_num(r.out, "overlap_efficiency");
  CHECK(eff >= 0 && eff <= 1);
  CHECK(json_num(r.out, "t_comm_ns") > 0);
  CHECK(strstr(r.out, "\"step_detection\": \"nvtx\"") != NULL);
  CHECK_I64(json_num(r.out, "collectives_without_gpu_work"), 0);
  CHECK_I64(json_num(r.out, "comm_kernels"), colls);
  cmd_free(&r);
  snprintf(args, sizeof args, "report --all '%s'", trace);
  r = ovl_run(args);
  char pat[64];
  snprintf(pat, sizeof pat, "%lld steps from NVTX ranges", (long long)steps);
  CHECK(strstr(r.out, pat) != NULL);
  cmd_free(&r);
}

/* libovl and torch.profiler in one process: libovl yields CUPTI to it and says so; the
** kernels of the steps before come back timed (an H200 run lost 292 of 298 until libovl
** completed CUPTI's records before yielding); none after the hand-over. */
static void profiler(void) {
  sqlite3 *db = dbq_open(data("profiler-probe.sqlite"));
  CHECK_I64(meta_int(db, "bad_records"), 0);
  CHECK(strstr(dbq_text(db, "SELECT value FROM meta WHERE key = 'cupti_conflict'"), "libtorch") != NULL);
  int64_t ended = meta_int(db, "cupti_capture_ended_ns");
  CHECK(ended > 0);
  int64_t before = dbq_int(db, "SELECT count(*) FROM kernels k, nvtx n WHERE n.name = 'phase before'"
                               " AND k.start >= n.start AND k.end <= n.end");
  int64_t launches_before = dbq_int(db, "SELECT count(*) FROM api a, nvtx n WHERE n.name = 'phase before'"
                                        " AND a.start >= n.start AND a.end <= n.end AND a.correlation IN"
                                        " (SELECT correlation FROM kernels UNION SELECT correlation FROM memops)");
  CHECK(before > 0);
  CHECK_I64(before + dbq_int(db, "SELECT count(*) FROM memops m, nvtx n WHERE n.name = 'phase before'"
                                 " AND m.start >= n.start AND m.end <= n.end"),
            launches_before);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels WHERE start > " "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'cupti_capture_ended_ns')"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM kernels k, nvtx n WHERE n.name IN ('phase during', 'phase after')"
                        " AND k.start >= n.start"),
            0);
  sqlite3_close(db);
}

/* PyTorch DDP on one GPU: the steps come from the NVTX step ranges, and the all-reduces of a
** 1-rank communicator, which launch no GPU work, are said to; torchrun's agent process (CUDA
** initialised, no GPU work) is listed apart, not analysed. */
static void pytorch(void) {
  sqlite3 *db = dbq_open(data("pytorch/ddp-rank0.sqlite"));
  int64_t steps = dbq_int(db, "SELECT count(*) FROM nvtx WHERE name IN ('step', 'ovl:step') AND end IS NOT NULL");
  int64_t unlinked = dbq_int(db, "SELECT count(*) FROM collectives c WHERE NOT EXISTS"
                                 " (SELECT 1 FROM collective_launches l WHERE l.collective = c.id)");
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'rank'"), 0);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collectives WHERE nranks <> 1"), 0);
  CHECK(steps > 0 && unlinked > 0);
  sqlite3_close(db);
  char args[4200], expect[128];
  snprintf(args, sizeof args, "report '%s'", data("pytorch"));
  cmd_result r = ovl_run(args);
  CHECK_I64(r.status, 0);
  snprintf(expect, sizeof expect, "%lld steps from NVTX ranges", (long long)steps);
  CHECK(strstr(r.out, expect) != NULL);
  snprintf(expect, sizeof expect, "%lld collective calls launched no GPU work", (long long)unlinked);
  CHECK(strstr(r.out, expect) != NULL);
  CHECK(strstr(r.out, "Without GPU work") != NULL && strstr(r.out, "torchrun-agent.sqlite") != NULL);
  cmd_free(&r);
}

/* workloads/bench.sh on the GPU: every model x mode, and bucketing pays: for every model the
** bucketed mode's epoch is shorter than the naive (all after backward) and the interleaved
** (one collective per parameter) ones. */
static void table(void) {
  FILE *f = fopen(data("table.md"), "r");
  CHECK(f != NULL);
  if (!f) return;
  static const char *const models[] = {"small", "medium", "large", "xlarge"};
  double epoch[4][3] = {{0}};  /* naive, interleaved, bucketed */
  int rows = 0;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char model[32], mode[32];
    double e;
    if (sscanf(line, "| %31s | %31s | %*[^|] | %*[^|] | %lf s |", model, mode, &e) != 3) continue;
    rows++;
    for (int m = 0; m < 4; m++) {
      if (strcmp(model, models[m]) != 0) continue;
      if (strcmp(mode, "naive") == 0) epoch[m][0] = e;
      if (strcmp(mode, "interleaved") == 0) epoch[m][1] = e;
      if (strcmp(mode, "bucketed") == 0) epoch[m][2] = e;
    }
  }
  fclose(f);
  CHECK_I64(rows, 4 * 6);
  for (int m = 0; m < 4; m++) {
    CHECK(epoch[m][2] > 0);
    CHECK(epoch[m][2] < epoch[m][0] && epoch[m][2] < epoch[m][1]);
  }
}

/* `ovl report --json TRACE` (the caller frees). */
static char *report_json(const char *trace) {
  char args[4200];
  snprintf(args, sizeof args, "report --json '%s'", trace);
  cmd_result r = ovl_run(args);
  CHECK_I64(r.status, 0);
  free(r.err);
  return r.out;
}

static int has_finding(const char *json, const char *code) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"code\": \"%s\"", code);
  return strstr(json, pat) != NULL;
}

/* Each ovl-ddp mode traced on the GPU (--comm emulated, alpha 1 ms, beta 100 GB/s, 8 ranks)
** gets the finding its fault calls for, and the healthy mode none of the schedule findings:
** naive (all-reduces after backward) late_firing; interleaved (one all-reduce per parameter,
** launched during backward, queued at 1 ms each) latency_bound and not late_firing;
** misordered (buckets launched in index order) readiness_stall; find-unused (bucketed with
** --find-unused: an Int32 all-reduce of the used-parameter map after the last bucket, its result
** copied to the host) find_unused_parameters; bucketed none of them, and the highest overlap
** efficiency of the four. */
static void modes(void) {
  char *naive = report_json(data("ddp/naive.sqlite")), *inter = report_json(data("ddp/interleaved.sqlite"));
  char *mis = report_json(data("ddp/misordered.sqlite")), *buck = report_json(data("ddp/bucketed.sqlite"));
  CHECK(has_finding(naive, "late_firing"));
  CHECK(has_finding(inter, "latency_bound"));
  CHECK(!has_finding(inter, "late_firing"));
  CHECK(has_finding(mis, "readiness_stall"));
  char *unused = report_json(data("ddp/find-unused.sqlite"));  /* bucketed, with DDP's used-parameter map */
  CHECK(has_finding(unused, "find_unused_parameters"));
  free(unused);
  static const char *const schedule[] = {"late_firing", "readiness_stall", "latency_bound", "single_bucket",
                                         "exposed_tail", "blocking_collective", "find_unused_parameters"};
  for (size_t i = 0; i < sizeof schedule / sizeof schedule[0]; i++) CHECK(!has_finding(buck, schedule[i]));
  double eff_b = json_num(buck, "overlap_efficiency");
  CHECK(eff_b > json_num(naive, "overlap_efficiency"));
  CHECK(eff_b > json_num(inter, "overlap_efficiency"));
  CHECK(eff_b > json_num(mis, "overlap_efficiency"));
  free(naive);
  free(inter);
  free(mis);
  free(buck);
}

/* Emulated all-reduces have no NCCL call: each takes its bucket's size from the grad_ready
** marks, which must equal what the marks of its step announce (summed here in SQL). */
static void bucket_sizes(void) {
  const char *trace = data("ddp/bucketed.sqlite");
  sqlite3 *db = dbq_open(trace);
  CHECK_I64(dbq_int(db, "SELECT count(*) FROM collectives"), 0);
  int64_t steps = dbq_int(db, "SELECT count(*) FROM nvtx WHERE name = 'step'");
  char *json = report_json(trace);
  int checked = 0;
  for (int b = 0; b < 16; b++) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT sum(CAST(substr(name, instr(name, 'bytes=') + 6) AS INTEGER)) FROM nvtx"
             " WHERE name LIKE 'grad_ready bucket=%d bytes=%%'", b);
    int64_t total = dbq_int(db, sql);
    if (total <= 0) continue;
    char pat[96];
    snprintf(pat, sizeof pat, "\"bytes\": %lld,\n", (long long)(total / steps));
    const char *at = strstr(json, pat);
    CHECK(at != NULL);
    checked++;
  }
  CHECK(checked >= 2);
  free(json);
  sqlite3_close(db);
}

/* ovl whatif on the 25 MB trace against the step times measured without libovl at each cap
** (buckets/step-times.txt, medians of 3 alternated runs): every prediction within 10%, and the
** fastest cap predicted is the fastest measured. */
static void whatif(void) {
  FILE *f = fopen(data("buckets/step-times.txt"), "r");
  CHECK(f != NULL);
  if (!f) return;
  static const int caps[] = {1, 5, 25, 100};
  double measured[4][3];
  int n[4] = {0};
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    int cap, rep;
    if (sscanf(line, "%d %d", &cap, &rep) != 2) continue;
    const char *e = strstr(line, "\"avg_epoch_s\":"), *ep = strstr(line, "\"epochs\":"), *st = strstr(line, "\"steps\":");
    if (!e || !ep || !st) continue;
    double step_ns = strtod(e + 14, NULL) * strtod(ep + 9, NULL) / strtod(st + 8, NULL) * 1e9;
    for (int c = 0; c < 4; c++)
      if (caps[c] == cap && n[c] < 3) measured[c][n[c]++] = step_ns;
  }
  fclose(f);
  char args[4200];
  snprintf(args, sizeof args, "whatif --json --bucket-mb 1,5,25,100 '%s'", data("buckets/bucketed-25mb.sqlite"));
  cmd_result r = ovl_run(args);
  CHECK_I64(r.status, 0);
  int best_measured = 0, best_predicted = 0;
  double median[4], predicted[4];
  const char *p = strstr(r.out, "\"candidates\"");
  for (int c = 0; c < 4; c++) {
    CHECK_I64(n[c], 3);
    double a = measured[c][0], b = measured[c][1], m = measured[c][2];  /* median of three */
    median[c] = fmax(fmin(a, b), fmin(fmax(a, b), m));
    p = p ? strstr(p, "\"step_ns\": ") : NULL;
    predicted[c] = p ? strtod(p + 11, NULL) : NAN;
    if (p) p++;
    printf("bucket %3d MB: measured %.3f ms, predicted %.3f ms (%+.1f%%)\n", caps[c], median[c] / 1e6, predicted[c] / 1e6,
           100 * (predicted[c] / median[c] - 1));
    CHECK(fabs(predicted[c] / median[c] - 1) <= 0.10);
    if (median[c] < median[best_measured]) best_measured = c;
    if (predicted[c] < predicted[best_predicted]) best_predicted = c;
  }
  CHECK_I64(best_predicted, best_measured);
  cmd_free(&r);
}

/* A trace whose collectives are known by their kernels alone (no NCCL rows: a Kineto trace
** without NCCL metadata, the emulated workloads): the element type comes from the kernel's
** name, and DDP's used-parameter map is found by it (its size from the copy to the host). */
static void kernel_only_unused(void) {
  CHECK_STR(ovl_comm_kernel_dtype("ncclDevKernel_AllReduce_Sum_i32_RING_LL"), "Int32");
  CHECK_STR(ovl_comm_kernel_dtype("ncclKernel_AllReduce_RING_LL_Sum_int32_t"), "Int32");
  CHECK_STR(ovl_comm_kernel_dtype("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), "Bfloat16");
  CHECK_STR(ovl_comm_kernel_dtype("ovl_emulated_allreduce_i32"), "Int32");
  CHECK(ovl_comm_kernel_dtype("ovl_emulated_allreduce") == NULL);
  CHECK(ovl_comm_kernel_dtype("sgemm_i32_kernel") == NULL);  /* not communication */
  char path[4096], cmd[8400];
  snprintf(path, sizeof path, "%s/kernel-only-unused.sqlite", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  remove(path);
  snprintf(cmd, sizeof cmd, "'%s' simulate --bucket-layers 8 --find-unused --emit-trace '%s' >/dev/null", ovl, path);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  sqlite3 *db = NULL;
  CHECK_I64(sqlite3_open(path, &db), SQLITE_OK);
  CHECK_I64(sqlite3_exec(db, "DELETE FROM collective_launches; DELETE FROM collectives;", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  char *json = report_json(path);
  CHECK(has_finding(json, "find_unused_parameters"));
  free(json);
  remove(path);
}

/* gpu_workload --self-sendrecv under libovl preloaded (hooks), loaded by NCCL 2.28.9 as its
** profiler plugin alone (plugin), and both: NCCL reports to the plugin every send and receive
** the hooks saw and none of the one-rank communicator's all-reduces (it turns them into a copy
** before any profiler event); both ways, every call is one row, none twice. */
static void plugin(void) {
  sqlite3 *hooks = dbq_open(data("plugin/hooks.sqlite")), *plug = dbq_open(data("plugin/plugin.sqlite"));
  sqlite3 *both = dbq_open(data("plugin/both.sqlite"));
  const char *p2p = "SELECT count(*) FROM collectives WHERE op IN ('Send', 'Recv')";
  const char *one_rank_colls = "SELECT count(*) FROM collectives WHERE nranks = 1 AND op NOT IN ('Send', 'Recv')";
  CHECK(strncmp(dbq_text(plug, "SELECT value FROM meta WHERE key = 'nccl_profiler'"), "v5:", 3) == 0);
  CHECK(dbq_int(hooks, p2p) > 0);
  CHECK(dbq_int(hooks, one_rank_colls) > 0);
  CHECK_I64(dbq_int(plug, p2p), dbq_int(hooks, p2p));
  CHECK_I64(dbq_int(plug, "SELECT count(*) FROM collectives"), dbq_int(plug, p2p));
  CHECK_I64(dbq_int(both, "SELECT count(*) FROM collectives"), dbq_int(hooks, "SELECT count(*) FROM collectives"));
  CHECK_I64(dbq_int(both, "SELECT count(*) FROM (SELECT 1 FROM collectives GROUP BY comm, seq HAVING count(*) > 1)"),
            0);
  /* The plugin's own rows carry what NCCL said of each call: its size and element type. */
  CHECK_I64(dbq_int(plug, "SELECT count(*) FROM collectives WHERE count > 0 AND dtype IS NOT NULL"),
            dbq_int(plug, p2p));
  sqlite3_close(hooks);
  sqlite3_close(plug);
  sqlite3_close(both);
  /* The plugin alone with CUPTI: attached late (at NCCL's first communicator), CUPTI gave the
  ** kernels but no record of the launches, so no call is linked to its kernel; attached from
  ** CUDA's start (CUDA_INJECTION64_PATH=libovl.so), every call is, through the external id the
  ** plugin pushes around NCCL's kernel launch. */
  sqlite3 *late = dbq_open(data("plugin/plugin-late-cupti.sqlite"));
  sqlite3 *injected = dbq_open(data("plugin/plugin-injected.sqlite"));
  CHECK(strncmp(dbq_text(late, "SELECT value FROM meta WHERE key = 'cupti'"), "attached (late", 14) == 0);
  CHECK(dbq_int(late, "SELECT count(*) FROM kernels") > 0);
  CHECK_I64(dbq_int(late, "SELECT count(*) FROM api"), 0);
  CHECK_I64(dbq_int(late, "SELECT count(*) FROM collective_launches"), 0);
  CHECK_STR(dbq_text(injected, "SELECT value FROM meta WHERE key = 'cupti'"), "attached (injection)");
  int64_t calls = dbq_int(injected, "SELECT count(*) FROM collectives");
  CHECK(calls > 0);
  CHECK_I64(dbq_int(injected, "SELECT count(DISTINCT collective) FROM collective_launches"), calls);
  /* ... each to an NCCL kernel. */
  CHECK_I64(dbq_int(injected, "SELECT count(DISTINCT l.collective) FROM collective_launches l JOIN kernels k ON "
                              "k.correlation = l.correlation JOIN strings s ON s.id = k.name WHERE s.value LIKE "
                              "'%ncclDevKernel%'"),
            calls);
  sqlite3_close(late);
  sqlite3_close(injected);
  /* The report names the remedy for the late trace's unlinked calls, and only for it. */
  char args[4200];
  snprintf(args, sizeof args, "report '%s'", data("plugin/plugin-late-cupti.sqlite"));
  cmd_result r = ovl_run(args);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "launched no GPU work") != NULL && strstr(r.out, "CUDA_INJECTION64_PATH") != NULL);
  cmd_free(&r);
  snprintf(args, sizeof args, "report '%s'", data("plugin/plugin-injected.sqlite"));
  r = ovl_run(args);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "CUDA_INJECTION64_PATH") == NULL);
  cmd_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_gpu_traces OVL_BINARY DATA_DIR CHECK\n");
    return 2;
  }
  ovl = argv[1];
  dir = argv[2];
  const char *check = argv[3];
  if (strcmp(check, "capture") == 0) capture();
  else if (strcmp(check, "profiler") == 0) profiler();
  else if (strcmp(check, "pytorch") == 0) pytorch();
  else if (strcmp(check, "table") == 0) table();
  else if (strcmp(check, "modes") == 0) modes();
  else if (strcmp(check, "bucket_sizes") == 0) bucket_sizes();
  else if (strcmp(check, "whatif") == 0) whatif();
  else if (strcmp(check, "kernel_only_unused") == 0) kernel_only_unused();
  else if (strcmp(check, "plugin") == 0) plugin();
  else {
    fprintf(stderr, "test_gpu_traces: unknown check '%s'\n", check);
    return 2;
  }
  return check_summary();
}
