/*
** libovl.so with a CUPTI library, no GPU: the fake libcupti.so.13 (tests/fakes/fake_libcupti.c)
** and a program that starts "CUDA" as the driver does (tests/fakes/fake_cuda_app.c), with the
** stub NCCL. Each case runs the program with and without libovl: same output and status.
**   found      CUPTI is found beside the CUDA runtime the program loaded from a directory the
**              loader does not search (a pip wheel's layout), before the system's CUPTI, and
**              meta says which; the attach sequence runs in order; kernels, launches and the
**              NCCL call's link to its kernel reach the trace
**   degraded   copies refused by CUPTI: kernels still captured, the loss said once and kept
**              in meta.cupti_degraded
**   profiler   torch.profiler's way (Kineto) after libovl attached: its cuptiSubscribe gets the
**              subscription, its buffers get its records and only the kinds it enabled,
**              libovl keeps what it captured before, says once that GPU capture ended, and
**              meta.cupti_conflict has each step with its time
**   first      the profiler starts before CUDA: libovl does not attach (it would take the
**              profiler's records), says why, and still records the NCCL calls
**   holder     another tool holds CUPTI: named in meta.cupti
**   explicit   OVL_CUPTI_LIBRARY names a missing file: said, nothing else tried
**   off        OVL_CUPTI=0: CUPTI never loaded, no warning, the NCCL calls still recorded
*/
#include "check.h"
#include "db_query.h"
#include "inject_harness.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 3    /* fake_cuda_app.c */
#define KERNELS 5

typedef struct run {
  cmd_result plain, with;
  const char *dir;
  sqlite3 *db;
} run;

/* Runs app args with and without libovl (env for both); the same stdout and status. */
static run run_both(const char *tag, const char *app, const char *env, const char *args) {
  run r = {{0}, {0}, ih_fresh_dir(tag), NULL};
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "env %s '%s' %s", env, app, args);
  r.plain = run_cmd(cmd);
  snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' OVL_LOG=debug %s '%s' %s", ih_preload(), r.dir, env,
           app, args);
  r.with = run_cmd(cmd);
  printf("== %s %s\n-- plain (%d):\n%s%s-- with libovl (%d):\n%s%s", tag, args, r.plain.status, r.plain.out,
         r.plain.err, r.with.status, r.with.out, r.with.err);
  CHECK_I64(r.plain.status, 0);
  CHECK_I64(r.with.status, r.plain.status);
  CHECK_STR(r.with.out, r.plain.out);
  const char *path = ih_trace_in(r.dir);
  CHECK(path != NULL);
  if (path) r.db = dbq_open(path);
  return r;
}

/* fake_cuda_app started as the driver would be, with the fake runtime from its folder. */
static run run_driver(const char *tag, const char *env) {
  char args[1024];
  snprintf(args, sizeof args, "driver '%s/libcudart.so.13'", OVL_TEST_FAKE_CUDA_DIR);
  return run_both(tag, OVL_TEST_APP, env, args);
}

static void run_free(run *r) {
  if (r->db) sqlite3_close(r->db);
  cmd_free(&r->plain);
  cmd_free(&r->with);
}

/* Lines of the warnings libovl printed (OVL_LOG=debug lines start "ovl: " too: counted apart). */
static int count_in(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

static const char *meta(run *r, const char *key) {
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT value FROM meta WHERE key = '%s'", key);
  return r->db ? dbq_text(r->db, sql) : "(no trace)";
}

static int64_t count(run *r, const char *sql) { return r->db ? dbq_int(r->db, sql) : -1; }

static void found_beside_the_runtime(void) {
  char env[1200], log[1024];
  snprintf(log, sizeof log, "%s", tb_temp_path("fake-cupti.log"));
  snprintf(env, sizeof env, "FAKE_CUPTI_LOG='%s' FAKE_CUPTI_LAZY_TIMESTAMPS=1", log);  /* records complete lazily */
  run r = run_driver("found", env);
  CHECK_STR(meta(&r, "cupti"), "attached (injection)");
  const char *lib = meta(&r, "cupti_library");
  printf("meta.cupti_library: %s\n", lib);
  CHECK(strstr(lib, OVL_TEST_FAKE_CUDA_DIR) == lib || strstr(lib, "/fake-cuda/libcupti.so.13") != NULL);
  CHECK(strstr(lib, "(beside libcudart.so.13)") != NULL);
  CHECK_STR(meta(&r, "cupti_kinds"), "kernel,memcpy,memcpy_p2p,memset,external_correlation");
  CHECK_I64(count(&r, "SELECT count(*) FROM meta WHERE key = 'cupti_degraded'"), 0);
  /* every kernel, on the capture clock's side of the host calls, and each NCCL call linked */
  CHECK_I64(count(&r, "SELECT count(*) FROM kernels"), 2 * STEPS);
  CHECK_I64(count(&r, "SELECT count(*) FROM api"), 2 * STEPS);
  CHECK_I64(count(&r, "SELECT count(*) FROM collectives"), STEPS);
  CHECK_I64(count(&r, "SELECT count(DISTINCT c.id) FROM collectives c JOIN collective_launches l ON l.collective = c.id"
                      " JOIN kernels k ON k.correlation = l.correlation JOIN strings s ON s.id = k.name"
                      " WHERE s.value LIKE 'ncclDevKernel%' AND k.start >= c.host_start"),
            STEPS);
  CHECK_I64(count(&r, "SELECT value FROM meta WHERE key = 'dropped_records'"), 0);
  /* the sequence as CUPTI saw it: named subscription, clock before any kind, no KERNEL kind,
  ** a forced flush at exit, and never cuptiFinalize (racy with the program's threads) */
  char *seen = NULL;
  FILE *f = fopen(log, "r");
  CHECK(f != NULL);
  if (f) {
    size_t n = 0;
    ssize_t got = getdelim(&seen, &n, 0, f);
    fclose(f);
    if (got < 0) seen = NULL;
  }
  const char *text = seen ? seen : "";
  const char *sub = strstr(text, "Subscribe_v2\n"), *clock = strstr(text, "ActivityRegisterTimestampCallback\n"),
             *kind = strstr(text, "ActivityEnable ");
  CHECK(sub && clock && kind && sub < clock && clock < kind);
  CHECK(strstr(text, "ActivityEnable 4\n") == NULL);
  /* at exit, a flush that completes the records, then a forced one for what is left */
  const char *plain_flush = strstr(text, "ActivityFlushAll 0\n"), *forced = strstr(text, "ActivityFlushAll 1\n");
  CHECK(forced != NULL && plain_flush != NULL && plain_flush < forced);
  CHECK_I64(count(&r, "SELECT value FROM meta WHERE key = 'bad_records'"), 0);
  CHECK(strstr(text, "Finalize") == NULL);
  CHECK(strstr(r.with.err, "ovl: CUPTI attached (injection)") != NULL);
  free(seen);
  run_free(&r);
}

static void refused_copies_degrade(void) {
  run r = run_driver("degraded", "FAKE_CUPTI_REFUSE=ActivityEnable:1,ActivityEnable:22");
  CHECK_STR(meta(&r, "cupti"), "attached (injection)");
  CHECK_STR(meta(&r, "cupti_kinds"), "kernel,memset,external_correlation");
  const char *lost = meta(&r, "cupti_degraded");
  CHECK(strstr(lost, "memcpy refused") != NULL && strstr(lost, "memcpy_p2p refused") != NULL);
  CHECK_I64(count(&r, "SELECT count(*) FROM kernels"), 2 * STEPS);
  CHECK_I64(count_in(r.with.err, "ovl: CUPTI attached with losses: memcpy refused"), 1);
  run_free(&r);
}

static void profiler_after_libovl(void) {
  /* CUPTI completes kernel records lazily: handed over by a forced flush alone, the steps
  ** before the profiler came back without timestamps (an H200 run: 290 of 298 records) */
  run r = run_both("profiler", OVL_TEST_KINETO_APP, "FAKE_CUPTI_LAZY_TIMESTAMPS=1", "after");
  /* the program's own profiler: subscribed, its records (its kernels only) */
  CHECK(strstr(r.with.out, "profiler: cuptiSubscribe 0\n") != NULL);
  char expect[64];
  snprintf(expect, sizeof expect, "profiler: %d records received\n", KERNELS);
  CHECK(strstr(r.with.out, expect) != NULL);
  /* libovl: the steps before the profiler, nothing of the profiler's, the NCCL calls after */
  CHECK_STR(meta(&r, "cupti"), "attached (injection)");
  CHECK_I64(count(&r, "SELECT count(*) FROM kernels"), 2 * STEPS);
  CHECK_I64(count(&r, "SELECT value FROM meta WHERE key = 'bad_records'"), 0);
  CHECK_I64(count(&r, "SELECT count(*) FROM kernels k JOIN strings s ON s.id = k.name WHERE s.value = 'profiled_kernel'"), 0);
  CHECK_I64(count(&r, "SELECT count(*) FROM collectives"), 2 * STEPS);
  const char *conflict = meta(&r, "cupti_conflict");
  printf("meta.cupti_conflict: %s\n", conflict);
  const char *gave = strstr(conflict, "gave the CUPTI subscription to fake_cuda_app_kineto");
  const char *took = strstr(conflict, "fake_cuda_app_kineto registered its own activity buffers");
  const char *fin = strstr(conflict, "fake_cuda_app_kineto finalized CUPTI");
  CHECK(gave && took && fin && gave < took && took < fin);
  /* GPU capture ended at the takeover: after the last step's kernel, before the NCCL calls that follow */
  int64_t ended = count(&r, "SELECT value FROM meta WHERE key = 'cupti_capture_ended_ns'");
  CHECK(ended > count(&r, "SELECT max(end) FROM kernels"));
  CHECK(ended < count(&r, "SELECT max(host_start) FROM collectives"));
  CHECK_I64(count_in(r.with.err, "ovl: fake_cuda_app_kineto (another CUPTI client, such as torch.profiler) took "
                                 "CUPTI's activity records"), 1);
  run_free(&r);
}

static void profiler_before_cuda(void) {
  run r = run_both("first", OVL_TEST_KINETO_APP, "", "first");
  char expect[64];  /* its kernels: the steps' and its own */
  snprintf(expect, sizeof expect, "profiler: %d records received\n", 2 * STEPS + KERNELS);
  CHECK(strstr(r.with.out, expect) != NULL);
  CHECK_STR(meta(&r, "cupti"), "not attached: another CUPTI client (fake_cuda_app_kineto) receives CUPTI's "
                               "activity records");
  CHECK_I64(count(&r, "SELECT count(*) FROM kernels"), 0);
  CHECK_I64(count(&r, "SELECT count(*) FROM collectives"), 2 * STEPS);
  CHECK_I64(count_in(r.with.err, "ovl: CUPTI not attached"), 1);
  run_free(&r);
}

static void another_tool_holds_cupti(void) {
  run r = run_driver("holder", "FAKE_CUPTI_HOLDER='Nsight Systems'");
  CHECK_STR(meta(&r, "cupti"), "not attached: another CUPTI client is active (CUPTI for Nsight Systems)");
  CHECK_I64(count(&r, "SELECT count(*) FROM collectives"), STEPS);
  run_free(&r);
}

static void explicit_library(void) {
  run r = run_driver("explicit", "OVL_CUPTI_LIBRARY=/nonexistent/libcupti.so.13");
  CHECK(strstr(meta(&r, "cupti"), "not attached: OVL_CUPTI_LIBRARY=/nonexistent/libcupti.so.13 cannot be loaded") != NULL);
  CHECK_I64(count(&r, "SELECT count(*) FROM collectives"), STEPS);
  run_free(&r);
}

static void cupti_off(void) {
  char env[1200], log[1024];
  snprintf(log, sizeof log, "%s", tb_temp_path("fake-cupti-off.log"));
  snprintf(env, sizeof env, "OVL_CUPTI=0 FAKE_CUPTI_LOG='%s'", log);
  run r = run_driver("off", env);
  CHECK_STR(meta(&r, "cupti"), "not attached: OVL_CUPTI=0");
  CHECK_I64(count(&r, "SELECT count(*) FROM kernels"), 0);
  CHECK_I64(count(&r, "SELECT count(*) FROM collectives"), STEPS);
  CHECK_I64(count_in(r.with.err, "are not captured (NCCL calls"), 0);  /* no warning (debug lines say why) */
  FILE *f = fopen(log, "r");  /* the fake CUPTI logs every call made to it: none */
  CHECK(f == NULL || fgetc(f) == EOF);
  if (f) fclose(f);
  run_free(&r);
}

int main(void) {
  found_beside_the_runtime();
  refused_copies_degrade();
  profiler_after_libovl();
  profiler_before_cuda();
  another_tool_holds_cupti();
  explicit_library();
  cupti_off();
  return check_summary();
}
