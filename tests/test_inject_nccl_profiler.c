/*
** libovl.so as NCCL's profiler plugin, driven by the fake NCCL core (tests/fakes/fake_nccl_core.c)
** in the stand-in trainer (tests/fakes/fake_nccl_trainer.c): 3 threads, 6 communicators.
**   * plugin only (NCCL_PROFILER_PLUGIN, no LD_PRELOAD), v5 and v4, NCCL linked statically:
**     every call once, with its sequence number per communicator, NCCL's own sequence number,
**     algorithm, protocol and channels; each channel's GPU interval placed on the host clock
**     within the measured offset's error of the fake GPU's truth; the offset within its bounds;
**     `ovl report` shows the communication on the GPU timeline and a slow channel's spread;
**   * preloaded only, NCCL linked statically: the hooks see nothing, no trace;
**   * both ways, NCCL linked statically or as a shared library, and with a copy of libovl as
**     the plugin: one trace, each call recorded once, the hooks' and NCCL's facts in one row
**     (v4: the calls NCCL starts inside ncclGroupEnd are the hooks' alone);
**   * `ovl run --nccl-profiler` does both ways at once;
**   * communicators created and destroyed round after round (NCCL closing and reloading its
**     plugin in between), more over the run than the communicator table holds at once;
**   * a faulty NCCL that never stops its channel events: what the plugin cannot take is counted;
**   * CUPTI attached at NCCL's first communicator where CUDA is loaded, and only there;
**   * OVL_NCCL_PROXY=1 adds proxy operations and steps; OVL_DISABLE=1 declines the plugin;
**     the trainer's output and exit status never change.
*/
#include "check.h"
#include "db_query.h"
#include "inject_harness.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3
#define STEPS 12
#define GPU_OFFSET INT64_C(1600000000000000000)  /* the fake's default: gpu = host + this */

/* What the trainer makes: an all-reduce a step; every third step a group of four calls (two of
** them point-to-point) and a broadcast. */
#define GROUPS (STEPS / 3)
#define CALLS (THREADS * (STEPS + 5 * GROUPS))
#define P2P (THREADS * 2 * GROUPS)
#define COLLS (CALLS - P2P)

static char truth_path[600];

/* Runs a trainer for `rounds` rounds of `steps` steps; `plugin` names NCCL_PROFILER_PLUGIN
** (NULL: none). */
static cmd_result run_trainer_rounds(const char *trainer, int preload, const char *plugin, const char *dir,
                                     const char *env, int steps, int rounds) {
  snprintf(truth_path, sizeof truth_path, "%s.truth", dir);
  remove(truth_path);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "env %s%s%s %s%s%s OVL_OUTPUT='%s' FAKE_NCCL_TRUTH='%s' %s '%s' %d %d %d",
           preload ? "LD_PRELOAD='" : "", preload ? ih_preload() : "", preload ? "'" : "",
           plugin ? "NCCL_PROFILER_PLUGIN='" : "", plugin ? plugin : "", plugin ? "'" : "", dir, truth_path,
           env ? env : "", trainer, THREADS, steps, rounds);
  return run_cmd(cmd);
}

static cmd_result run_trainer(const char *trainer, int preload, const char *plugin, const char *dir, const char *env) {
  return run_trainer_rounds(trainer, preload, plugin, dir, env, STEPS, 1);
}

/* Removes a run's trace folder and truth file. */
static void clean(const char *dir) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.truth'", dir, dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static int run_ok(cmd_result *r) {
  char expect[128];
  snprintf(expect, sizeof expect, "calls %d collectives %d p2p %d\n", CALLS, COLLS, P2P);
  int ok = r->status == 0 && strcmp(r->out, expect) == 0;
  if (!ok) fprintf(stderr, "trainer: status %d, out '%s', err '%s'\n", r->status, r->out, r->err);
  return ok;
}

static sqlite3 *open_db(const char *dir) {
  CHECK_I64(ih_count_traces(dir), 1);
  const char *path = ih_trace_in(dir);
  return path ? dbq_open(path) : NULL;
}

/* Every call once: as many rows as calls, (communicator, seq) unique, seq 0..n-1 on each. */
static void check_each_call_once(sqlite3 *db) {
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives"), CALLS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(DISTINCT comm) FROM collectives"), 2 * THREADS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM (SELECT 1 FROM collectives GROUP BY comm, seq HAVING COUNT(*) > 1)"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM (SELECT MIN(seq) lo, MAX(seq) hi, COUNT(*) n FROM collectives"
                        " GROUP BY comm) WHERE lo != 0 OR hi != n - 1"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'AllReduce'"), THREADS * STEPS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'Broadcast' AND peer = 0"), THREADS * GROUPS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'Send' AND peer = (rank + 1) % nranks"),
            THREADS * GROUPS);
  /* ReduceScatter sends nranks x recvcount Bfloat16 (the second communicator: THREADS + 8). */
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'ReduceScatter' AND dtype = 'Bfloat16'"
                        " AND bytes = nranks * 128 * 2"), THREADS * GROUPS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE host_start IS NULL OR host_end < host_start"), 0);
}

/* Every event counted is a row (meta.host_events: the calls, channel intervals and proxy
** activity NCCL reported, a call both paths see counted once), and the process's place in the
** job is known, also when only the plugin saw the communicators. */
static void check_accounted(sqlite3 *db) {
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'host_events'"),
            dbq_int(db, "SELECT (SELECT COUNT(*) FROM collectives) + (SELECT COUNT(*) FROM nvtx)"
                        " + (SELECT COUNT(*) FROM collective_channels) + (SELECT COUNT(*) FROM proxy_ops)"
                        " + (SELECT COUNT(*) FROM proxy_steps)"));
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_host_events'"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM meta r JOIN meta w ON r.key = 'rank' AND w.key = 'world_size'"
                        " WHERE CAST(r.value AS INTEGER) BETWEEN 0 AND CAST(w.value AS INTEGER) - 1"), 1);
}

/* NCCL's account: every collective (not the sends and receives) carries NCCL's sequence number
** and algorithm; its channels' GPU intervals are there, on the trace clock. */
static void check_nccl_account(sqlite3 *db) {
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE nccl_seq IS NOT NULL AND algorithm IS NOT NULL"
                        " AND protocol IS NOT NULL AND nchannels = 4"), COLLS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op IN ('Send', 'Recv') AND nchannels = 1"), P2P);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'AllReduce' AND algorithm = 'RING'"),
            THREADS * STEPS);
  /* NCCL numbers each kind of operation apart, from 0, per communicator. */
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM (SELECT MIN(nccl_seq) lo, MAX(nccl_seq) hi, COUNT(*) n FROM collectives"
                        " WHERE nccl_seq IS NOT NULL GROUP BY comm, op) WHERE lo != 0 OR hi != n - 1"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collective_channels"), 4 * COLLS + P2P);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collective_channels WHERE collective NOT IN (SELECT id FROM collectives)"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collective_channels WHERE start IS NULL OR end < start"
                        " OR timer_end < timer_start"), 0);
  /* One offset per device: timer - start is the same for every stamp of a device. */
  CHECK_I64(dbq_int(db, "SELECT COUNT(DISTINCT device) FROM collective_channels"), THREADS);
}

/* Where the fake reports a stamp within this of the GPU passing it, a one-sided offset (v4: no
** host time is known to precede a kernel) is off by at most as much (and this machine's noise). */
#define ONE_SIDED_SLACK INT64_C(50000000)

/* The measured offset of each device holds the fake's true one within its error, and each
** collective's channels, placed with it, span its truth within that error. v4 bounds the offset
** from above only (the proxy's report): it may be late, never early. */
static void check_clock(sqlite3 *db, int one_sided) {
  int64_t offset = dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'gpu_timer_offset_ns'");
  int64_t error = dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'gpu_timer_offset_error_ns'");
  fprintf(stderr, "gpu timer offset %" PRId64 " ns (truth %" PRId64 "), error %" PRId64 " ns\n", offset, -GPU_OFFSET,
          error);
  if (one_sided) {
    CHECK_I64(error, -1);
    CHECK(offset + GPU_OFFSET >= 0 && offset + GPU_OFFSET < ONE_SIDED_SLACK);
  } else {
    CHECK(error >= 0 && error < 100000000);  /* sane: how tight it gets is test_inject_nccl_plugin_units' */
    CHECK(llabs(offset + GPU_OFFSET) <= error);
  }
  CHECK(strstr(dbq_text(db, "SELECT value FROM meta WHERE key = 'gpu_timer'"), "device 0: offset") != NULL);
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM gpu_timer_offsets WHERE stamps > 0 AND %s", one_sided
           ? "error IS NULL AND offset + 1600000000000000000 BETWEEN 0 AND 50000000"
           : "error >= 0 AND ABS(offset + 1600000000000000000) <= error");
  CHECK_I64(dbq_int(db, sql), THREADS);
  FILE *f = fopen(truth_path, "r");
  CHECK(f != NULL);
  if (!f) return;
  char kind[8], func[32];
  int rank, nranks, lines = 0, matched = 0;
  long long seq, kstart, kend, first, last;
  while (fscanf(f, "%7s %d %d %31s %lld %lld %lld %lld %lld", kind, &rank, &nranks, func, &seq, &kstart, &kend, &first,
                &last) == 9) {
    if (strcmp(kind, "coll") != 0) continue;
    lines++;
    snprintf(sql, sizeof sql,
             "SELECT ABS(MIN(h.timer_start + o.offset) - %lld) <= IFNULL(MAX(o.error), %lld) + 1"
             " AND ABS(MAX(h.timer_end + o.offset) - %lld) <= IFNULL(MAX(o.error), %lld) + 1"
             " FROM collective_channels h JOIN collectives c ON c.id = h.collective"
             " JOIN gpu_timer_offsets o ON o.device = h.device"
             " WHERE c.rank = %d AND c.nranks = %d AND c.op = '%s' AND c.nccl_seq = %lld",
             first, (long long)ONE_SIDED_SLACK, last, (long long)ONE_SIDED_SLACK, rank, nranks, func, seq);
    matched += dbq_int(db, sql) == 1;
  }
  fclose(f);
  CHECK_I64(lines, COLLS);
  CHECK_I64(matched, lines);
}

/* `ovl report` on a plugin-only trace: each device's communication is on the GPU timeline, from
** NCCL's channels (no CUPTI), and the slow channel (2, 30 us late) is the widest spread. */
static void check_report(const char *dir) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s report --json '%s'", OVL_TEST_OVL, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  int ranks = 0, with_comm = 0, spread_ok = 0;
  for (const char *p = r.out; (p = strstr(p, "\"t_comm_ns\": ")) != NULL; p++) {
    ranks++;
    with_comm += strtoll(p + 13, NULL, 10) > 0;
  }
  for (const char *p = r.out; (p = strstr(p, "\"max_spread_ns\": ")) != NULL; p++)
    spread_ok += strtoll(p + 17, NULL, 10) == 30000 + 200;  /* channel 2 ends 30 us + 100 ns after 0 */
  CHECK(ranks >= THREADS);
  CHECK(with_comm >= THREADS);
  CHECK_I64(spread_ok, THREADS);
  char want[64];
  snprintf(want, sizeof want, "\"gpu_time_from_channels\": %d", CALLS / THREADS);
  CHECK(strstr(r.out, want) != NULL);
  CHECK(strstr(r.out, "\"algorithm\": \"RING\"") != NULL);
  cmd_free(&r);
}

/* Plugin only, v5 (NCCL 2.28 on) or v4 (the releases before), NCCL linked into the program. */
static void test_plugin_only(int version) {
  const char *dir = ih_fresh_dir(version == 5 ? "plugin-v5" : "plugin-v4");
  cmd_result r = run_trainer(OVL_TEST_APP, 0, OVL_TEST_LIBOVL, dir,
                             version == 5 ? "FAKE_NCCL_SLOW_CHANNEL=2" : "FAKE_NCCL_PROFILER_VERSION=4");
  CHECK(run_ok(&r));
  CHECK_STR(r.err, "");
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  check_each_call_once(db);
  check_nccl_account(db);
  check_accounted(db);
  check_clock(db, version == 4);
  char want[32];
  snprintf(want, sizeof want, "v%d: %d communicators", version, 2 * THREADS);
  CHECK(strstr(dbq_text(db, "SELECT value FROM meta WHERE key = 'nccl_profiler'"), want) != NULL);
  if (version == 5) {  /* the user's groups are known, NCCL's implicit one around a call is not a group */
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'AllGather' AND group_id IS NOT NULL"),
              THREADS * GROUPS);
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'AllReduce' AND group_id IS NOT NULL"), 0);
    CHECK_I64(dbq_int(db, "SELECT COUNT(DISTINCT group_id) FROM collectives"), THREADS * GROUPS);
    /* Placed with the final offset (gpu_timer_offsets), the kernel starts after the call began
    ** (the fake: 20 us after the launch at least), within the offset's error. (v4 knows no
    ** call, only NCCL's task, which NCCL starts once the kernel is launched.) */
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collective_channels h JOIN collectives c ON c.id = h.collective"
                          " JOIN gpu_timer_offsets o ON o.device = h.device"
                          " WHERE h.timer_start + o.offset < c.host_start - o.error"), 0);
    /* seq follows the calls' order (NCCL launches a group's tasks in its own order). */
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives a JOIN collectives b ON a.comm = b.comm"
                          " AND b.seq = a.seq + 1 WHERE b.host_start < a.host_start"), 0);
    check_report(dir);
  }
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_ops"), 0);
  sqlite3_close(db);
  clean(dir);
}

/* Preloaded, NCCL linked statically: nothing goes through the dynamic symbol table. */
static void test_preload_sees_nothing(void) {
  const char *dir = ih_fresh_dir("preload-static");
  cmd_result r = run_trainer(OVL_TEST_APP, 1, NULL, dir, "");
  CHECK(run_ok(&r));
  cmd_free(&r);
  CHECK_I64(ih_count_traces(dir), 0);
  clean(dir);
}

/* Both ways: one instance, one trace, each call once. */
static void test_both(const char *trainer, int version, const char *plugin, const char *tag) {
  const char *dir = ih_fresh_dir(tag);
  cmd_result r = run_trainer(trainer, 1, plugin, dir, version == 5 ? "" : "FAKE_NCCL_PROFILER_VERSION=4");
  CHECK(run_ok(&r));
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  check_each_call_once(db);
  check_accounted(db);
  int dynamic = strcmp(trainer, OVL_TEST_APP) != 0;
  const char *meta = dbq_text(db, "SELECT value FROM meta WHERE key = 'nccl_profiler'");
  char want[96];
  if (dynamic && version == 5) {
    /* The hooks' facts (the operator only they see) and NCCL's (the algorithm) in one row. */
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE op = 'AllReduce' AND redop = 'Sum'"
                          " AND algorithm = 'RING'"), THREADS * STEPS);
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE algorithm IS NOT NULL"), COLLS);
    snprintf(want, sizeof want, "%d calls (%d joined to the NCCL hooks)", CALLS, CALLS);
    CHECK(strstr(meta, want) != NULL);
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collective_channels"), 4 * COLLS + P2P);
  } else if (dynamic) {
    /* v4: a call's task inside the call joins it; those NCCL starts in ncclGroupEnd stay the
    ** hooks' rows alone (AllGather, ReduceScatter, Send, Recv of the groups). */
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE redop = 'Sum' AND algorithm = 'RING'"),
              THREADS * STEPS);
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE algorithm IS NULL"), THREADS * GROUPS * 4);
    CHECK(strstr(meta, "left to the hooks") != NULL);
  } else {
    snprintf(want, sizeof want, "%d calls (0 joined", CALLS);
    CHECK(strstr(meta, want) != NULL);
    CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE nccl_seq IS NOT NULL"), COLLS);
  }
  sqlite3_close(db);
  clean(dir);
}

/* A copy of libovl named as the plugin beside the preloaded one forwards to it. */
static void test_copy_as_plugin(void) {
  const char *dir = ih_fresh_dir("copy");
  char copy[700], cmd[1600];
  snprintf(copy, sizeof copy, "%s.libovl-copy.so", dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", OVL_TEST_LIBOVL, copy);
  CHECK(system(cmd) == 0);
  test_both(OVL_TEST_DYNAMIC_TRAINER, 5, copy, "copy-run");
  remove(copy);
}

static void test_proxy(void) {
  const char *dir = ih_fresh_dir("proxy");
  cmd_result r = run_trainer(OVL_TEST_APP, 0, OVL_TEST_LIBOVL, dir, "OVL_NCCL_PROXY=1");
  CHECK(run_ok(&r));
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  int64_t channels = 4 * COLLS + P2P;
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_ops"), 2 * channels);  /* a send and a receive */
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_ops WHERE collective NOT IN (SELECT id FROM collectives)"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_steps"), 4 * channels);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_steps WHERE net_wait IS NULL OR bytes IS NULL OR end < start"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_steps WHERE is_send = 1 AND (gpu_wait IS NULL OR flush_wait"
                        " IS NOT NULL)"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM proxy_steps WHERE is_send = 0 AND flush_wait IS NULL"), 0);
  check_accounted(db);
  sqlite3_close(db);
  clean(dir);
}

/* `ovl run --nccl-profiler`: preloaded and named as the plugin, on the static trainer the
** plugin alone sees. */
static void test_ovl_run(void) {
  const char *dir = ih_fresh_dir("ovl-run");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "env %s%s '%s' run --lib '%s' --nccl-profiler -o '%s' -- '%s' %d %d",
           OVL_TEST_PRELOAD_FIRST[0] ? "LD_PRELOAD=" : "", OVL_TEST_PRELOAD_FIRST, OVL_TEST_OVL, OVL_TEST_LIBOVL, dir,
           OVL_TEST_APP, THREADS, STEPS);
  cmd_result r = run_cmd(cmd);
  CHECK(run_ok(&r));
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  check_each_call_once(db);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE algorithm IS NOT NULL"), COLLS);
  sqlite3_close(db);
  clean(dir);
}

/* Communicators created and destroyed round after round, NCCL closing its plugin when the last
** one is gone and loading it again for the next (tests/fakes/fake_nccl_core.c does as NCCL):
**   * plugin only: the library stays loaded (linked with -z nodelete: NCCL's dlclose would
**     unmap it under its writer thread), one trace holds every round;
**   * both ways, more communicators over the run than the communicator table has room for at
**     once: each finalized communicator gives its place back, so the hooks' communicators
**     always find one (calls keep their communicator and NCCL's account). */
static void test_rounds(int preload, int steps, int rounds) {
  const char *dir = ih_fresh_dir(preload ? "rounds-both" : "rounds-plugin");
  cmd_result r = run_trainer_rounds(preload ? OVL_TEST_DYNAMIC_TRAINER : OVL_TEST_APP, preload, OVL_TEST_LIBOVL, dir,
                                    "", steps, rounds);
  int calls = rounds * THREADS * (steps + 5 * (steps / 3)), p2p = rounds * THREADS * 2 * (steps / 3);
  char expect[128];
  snprintf(expect, sizeof expect, "calls %d collectives %d p2p %d\n", calls, calls - p2p, p2p);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, expect);
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives"), calls);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE comm IS NULL"), 0);
  /* The second communicator of each thread is used only from the third step on. */
  CHECK_I64(dbq_int(db, "SELECT COUNT(DISTINCT comm) FROM collectives"), rounds * (steps >= 3 ? 2 : 1) * THREADS);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM (SELECT 1 FROM collectives GROUP BY comm, seq HAVING COUNT(*) > 1)"), 0);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives WHERE nccl_seq IS NOT NULL AND algorithm IS NOT NULL"),
            calls - p2p);
  char want[96];
  snprintf(want, sizeof want, "v5: %d communicators, %d calls (%d joined", rounds * 2 * THREADS, calls,
           preload ? calls : 0);
  CHECK(strstr(dbq_text(db, "SELECT value FROM meta WHERE key = 'nccl_profiler'"), want) != NULL);
  check_accounted(db);
  sqlite3_close(db);
  clean(dir);
}

/* A faulty NCCL that never stops its channel events: the plugin's channel handles run out,
** and every channel it could not take is counted as dropped (meta.nccl_profiler and
** meta.dropped_host_events say the same number); the calls are all there. */
static void test_handles_run_out(void) {
  const char *dir = ih_fresh_dir("leak");
  int steps = 3000;  /* 3 threads x 26 channels every 3 steps: 78,000 channels, over 65,536 handles */
  cmd_result r = run_trainer_rounds(OVL_TEST_APP, 0, OVL_TEST_LIBOVL, dir, "FAKE_NCCL_FAST=1 FAKE_NCCL_LEAK_CHANNELS=1",
                                    steps, 1);
  int calls = THREADS * (steps + 5 * (steps / 3));
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collectives"), calls);
  CHECK_I64(dbq_int(db, "SELECT COUNT(*) FROM collective_channels"), 0);  /* never stopped: never written */
  int64_t dropped = dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_host_events'");
  CHECK(dropped > 0);
  CHECK_I64(dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'host_events'"), calls + dropped);
  char want[96];
  snprintf(want, sizeof want, "; %" PRId64 " events dropped", dropped);
  CHECK(strstr(dbq_text(db, "SELECT value FROM meta WHERE key = 'nccl_profiler'"), want) != NULL);
  sqlite3_close(db);
  clean(dir);
}

/* Loaded by NCCL alone, libovl attaches CUPTI at NCCL's first communicator where CUDA is in the
** process (the fake driver, tests/fakes/fake_libcuda.c, loaded before; the fake CUPTI named by
** OVL_CUPTI_LIBRARY), and never where it is not. */
static void test_late_cupti(int driver) {
  const char *dir = ih_fresh_dir(driver ? "late-cupti" : "no-cuda");
  char env[2400];
  snprintf(env, sizeof env, "OVL_CUPTI_LIBRARY='%s' %s%s%s%s%s", OVL_TEST_FAKE_CUPTI, driver ? "LD_PRELOAD='" : "",
           driver ? OVL_TEST_PRELOAD_FIRST : "", driver && OVL_TEST_PRELOAD_FIRST[0] ? ":" : "",
           driver ? OVL_TEST_FAKE_DRIVER : "", driver ? "'" : "");
  cmd_result r = run_trainer(OVL_TEST_APP, 0, OVL_TEST_LIBOVL, dir, env);
  CHECK(run_ok(&r));
  cmd_free(&r);
  sqlite3 *db = open_db(dir);
  if (!db) return;
  CHECK_STR(dbq_text(db, "SELECT value FROM meta WHERE key = 'cupti'"),
            driver ? "attached (late, from NCCL's profiler plugin init)" : "not attached: no CUDA use seen");
  check_each_call_once(db);
  sqlite3_close(db);
  clean(dir);
}

static void test_disabled(void) {
  const char *dir = ih_fresh_dir("disabled");
  cmd_result r = run_trainer(OVL_TEST_APP, 0, OVL_TEST_LIBOVL, dir, "OVL_DISABLE=1");
  CHECK(run_ok(&r));
  CHECK_STR(r.err, "");
  cmd_free(&r);
  CHECK_I64(ih_count_traces(dir), 0);
  clean(dir);
}

int main(void) {
  test_plugin_only(5);
  test_plugin_only(4);
  test_preload_sees_nothing();
  test_both(OVL_TEST_APP, 5, OVL_TEST_LIBOVL, "both-static");
  test_both(OVL_TEST_DYNAMIC_TRAINER, 5, OVL_TEST_LIBOVL, "both-dynamic-v5");
  test_both(OVL_TEST_DYNAMIC_TRAINER, 4, OVL_TEST_LIBOVL, "both-dynamic-v4");
  test_copy_as_plugin();
  test_proxy();
  test_ovl_run();
  test_rounds(0, 3, 20);
  test_rounds(1, 1, 800);  /* 4,800 communicators, each in the table twice (the hooks' and the plugin's): 4,096 slots */
  test_handles_run_out();
  test_late_cupti(1);
  test_late_cupti(0);
  test_disabled();
  return check_summary();
}
