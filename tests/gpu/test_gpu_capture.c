/*
** The GPU check (needs an NVIDIA GPU and driver; skips, exit 77, without one): runs
** gpu_workload under LD_PRELOAD=libovl.so and checks its trace: CUPTI attached through
** CUDA_INJECTION64_PATH as libovl's constructor set it (not the late fallback), every SGEMM
** kernel on the compute stream, the NCCL all-reduce row linked to its GPU work on the second
** stream, the host-to-device copies, the NVTX steps, the launch API rows; then `ovl report
** --json` finds the NVTX steps and most of the communication hidden under the SGEMMs.
*/
#include "check.h"
#include "gpu_probe.h"
#include "gpu_workload.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static int64_t query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  else
    fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return v;
}

static char *query_text(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  char *v = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_text(st, 0))
    v = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return v ? v : strdup("");
}

/* The number after "key": at its first occurrence in json at or after `from`. */
static double json_number(const char *json, const char *from, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(from ? from : json, pat);
  return p ? strtod(p + strlen(pat), NULL) : -1;
}

static const char *find_trace(const char *dir) {
  static char path[1024];
  DIR *d = opendir(dir);
  const char *found = NULL;
  for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (n > 7 && strcmp(e->d_name + n - 7, ".sqlite") == 0) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      found = path;
    }
  }
  if (d) closedir(d);
  return found;
}

int main(void) {
  char why[256];
  if (!gpu_present(why, sizeof why)) {
    printf("SKIP: %s: the GPU capture check did not run\n", why);
    return SKIP;
  }
  char dir[600], cmd[4096];
  snprintf(dir, sizeof dir, "%s", tb_temp_path("gpu"));
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) return 2;
  /* Plain LD_PRELOAD (not ovl run): this is what proves the constructor's setenv works. */
  snprintf(cmd, sizeof cmd, "env %s LD_PRELOAD='%s%s%s' OVL_OUTPUT='%s' '%s'", OVL_TEST_GPU_ENV, OVL_TEST_PRELOAD_FIRST,
           OVL_TEST_PRELOAD_FIRST[0] ? ":" : "", OVL_TEST_LIBOVL, dir, OVL_TEST_GPU_WORKLOAD);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  if (r.status != 0) fprintf(stderr, "%s%s", r.out, r.err);
  cmd_free(&r);
  const char *path = find_trace(dir);
  CHECK(path != NULL);
  if (!path) return check_summary();

  sqlite3 *db = NULL;
  CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  char *cupti = query_text(db, "SELECT value FROM meta WHERE key = 'cupti'");
  printf("meta.cupti: %s\n", cupti);
  CHECK_STR(cupti, "attached (injection)");  /* else: the driver ignored the constructor's setenv */
  free(cupti);
  CHECK_I64(query_int(db, "SELECT count(*) FROM meta WHERE key = 'dropped_records' AND value = '0'"), 1);
  /* every SGEMM: the compute stream holds at least GEMMS x STEPS kernels */
  CHECK(query_int(db, "SELECT max(n) FROM (SELECT count(*) AS n FROM kernels k JOIN strings s ON s.id = k.name"
                      " WHERE s.value NOT LIKE '%nccl%' GROUP BY stream)") >= GPU_GEMMS_PER_STEP * GPU_STEPS);
  /* the all-reduce: one row per step, with its arguments, linked to an NCCL kernel on another stream */
  CHECK_I64(query_int(db, "SELECT count(*) FROM collectives WHERE op = 'AllReduce' AND redop = 'Avg'"
                          " AND dtype = 'Float32'"),
            GPU_STEPS);
  snprintf(cmd, sizeof cmd, "SELECT count(*) FROM collectives WHERE count = %d AND bytes = %d", GPU_ALLREDUCE_COUNT,
           GPU_ALLREDUCE_COUNT * 4);
  CHECK_I64(query_int(db, cmd), GPU_STEPS);
  /* each linked to its GPU work, whatever NCCL names it: with one rank NCCL 2.28 runs Avg as
  ** a kernel without "nccl" in its name (oneRankReduce), and some calls as a copy */
  CHECK_I64(query_int(db, "SELECT count(DISTINCT c.id) FROM collectives c JOIN collective_launches l"
                          " ON l.collective = c.id WHERE EXISTS (SELECT 1 FROM kernels k WHERE k.correlation ="
                          " l.correlation) OR EXISTS (SELECT 1 FROM memops m WHERE m.correlation = l.correlation)"),
            GPU_STEPS);
  char *linked = query_text(db, "SELECT group_concat(DISTINCT s.value) FROM collectives c JOIN collective_launches l"
                                " ON l.collective = c.id JOIN kernels k ON k.correlation = l.correlation"
                                " JOIN strings s ON s.id = k.name");
  printf("kernels linked to the all-reduces: %s\n", linked);
  free(linked);
  CHECK(query_int(db, "SELECT count(DISTINCT stream) FROM kernels") >= 2);
  CHECK_I64(query_int(db, "SELECT count(*) FROM collectives WHERE stream IS NULL"), 0);
  /* the copies, the steps, the launches */
  snprintf(cmd, sizeof cmd, "SELECT count(*) FROM memops WHERE kind = 'HtoD' AND bytes = %d", GPU_COPY_BYTES);
  CHECK_I64(query_int(db, cmd), GPU_STEPS);
  CHECK_I64(query_int(db, "SELECT count(*) FROM nvtx WHERE domain = 'ovl' AND name = 'step' AND end > start"),
            GPU_STEPS);
  CHECK(query_int(db, "SELECT count(*) FROM kernels k JOIN api a ON a.correlation = k.correlation") >=
        GPU_GEMMS_PER_STEP * GPU_STEPS);
  /* one clock: every step range contains the GPU work launched inside it */
  CHECK(query_int(db, "SELECT count(*) FROM nvtx n JOIN api a ON a.start BETWEEN n.start AND n.end"
                      " WHERE n.name = 'step'") >= GPU_GEMMS_PER_STEP * GPU_STEPS);
  sqlite3_close(db);

  snprintf(cmd, sizeof cmd, "'%s' report --json '%s'", OVL_TEST_OVL, path);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  const char *rank = strstr(r.out, "\"ranks\"");
  CHECK(rank != NULL);
  CHECK(strstr(r.out, "\"step_detection\": \"nvtx\"") || strstr(r.out, "\"step_detection\":\"nvtx\""));
  double comm = json_number(r.out, rank, "t_comm_ns"), eff = json_number(r.out, rank, "overlap_efficiency");
  printf("ovl report: t_comm_ns %.0f, overlap_efficiency %.3f\n", comm, eff);
  CHECK(comm > 0);
  CHECK(eff >= 0.5);  /* the all-reduce ran while SGEMMs were queued on the other stream */
  cmd_free(&r);
  return check_summary();
}
