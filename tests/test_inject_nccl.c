/*
** libovl.so around NCCL calls, with the stub NCCL (tests/stubs/stub_nccl.c) and no GPU:
** every call recorded with the right fields, sequence numbers and groups; 8 threads x 10,000
** calls lose nothing, also when the process shares one CPU with busy processes at exit; the program's stdout and exit status are unchanged; an unwritable
** OVL_OUTPUT costs one warning and nothing else; SIGTERM leaves a readable trace with every
** call made; a fork() child neither hangs nor writes; OVL_DISABLE=1 and processes without
** NCCL write nothing; `ovl run` does what LD_PRELOAD does and names the traces written; a
** launcher's rank leads each trace's name.
*/
#define _GNU_SOURCE  /* sched_setaffinity */
#include "check.h"
#include "inject_app.h"
#include "inject_harness.h"
#include "load/trace_reader.h"

#include <nccl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GROUP_BASE (INT64_C(1) << 62)

static ovl_trace *open_trace(const char *dir) {
  const char *path = ih_trace_in(dir);
  CHECK(path != NULL);
  if (!path) return NULL;
  ovl_trace *t = NULL;
  ovl_err err = {0};
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) fprintf(stderr, "%s\n", err.msg);
  return t;
}

/* Every collectives row of the trace in dir (NULL when there is none to read). */
static ovl_coll_rec *read_colls(const char *dir, size_t *n, ovl_trace **keep) {
  *n = 0;
  ovl_trace *t = open_trace(dir);
  if (!t) return NULL;
  ovl_coll_rec *c = NULL;
  ovl_err err = {0};
  CHECK(ovl_trace_read_collectives(t, &c, n, &err) == OVL_OK);
  if (keep) *keep = t;
  else ovl_trace_close(t);
  return c;
}

static int by_seq(const void *pa, const void *pb) {
  const ovl_coll_rec *a = pa, *b = pb;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

static void basic_calls(void) {
  const char *dir = ih_fresh_dir("basic");
  cmd_result plain = ih_run_app(0, dir, NULL, "basic 3");
  CHECK_I64(ih_count_traces(dir), 0);
  cmd_result r = ih_run_app(1, dir, NULL, "basic 3");
  /* The program's own behaviour is untouched. */
  CHECK_I64(plain.status, 3);
  CHECK_I64(r.status, 3);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_STR(r.out, plain.out);
  CHECK_STR(r.err, "");
  CHECK_I64(ih_count_traces(dir), 1);
  cmd_free(&plain);
  cmd_free(&r);
  ovl_trace *t = NULL;
  size_t n = 0;
  ovl_coll_rec *c = read_colls(dir, &n, &t);
  if (!t) return;

  CHECK_STR(ovl_trace_meta(t, "schema_version"), "1");
  CHECK_STR(ovl_trace_meta(t, "clock"), "CLOCK_MONOTONIC");
  CHECK(ovl_trace_meta(t, "hostname") && ovl_trace_meta(t, "hostname")[0]);
  CHECK(ovl_trace_meta_int(t, "pid", 0) > 0);
  CHECK(ovl_trace_meta(t, "realtime_offset_ns") != NULL);
  CHECK(ovl_trace_meta(t, "cmdline") && strstr(ovl_trace_meta(t, "cmdline"), "basic 3"));
  /* rank and size of the largest communicator */
  CHECK_I64(ovl_trace_meta_int(t, "rank", -1), APP_RANK);
  CHECK_I64(ovl_trace_meta_int(t, "world_size", -1), APP_NRANKS);
  CHECK_I64(ovl_trace_meta_int(t, "nccl_version", -1), NCCL_VERSION_CODE);
  CHECK_I64(ovl_trace_meta_int(t, "dropped_records", -1), 0);
  CHECK_I64(n, APP_NCALLS + 1);  /* + the AllReduce on the split communicator */
  if (n != APP_NCALLS + 1) {
    free(c);
    ovl_trace_close(t);
    return;
  }
  /* The split communicator's single call is the one whose comm differs from the rest. */
  int64_t main_comm = c[0].comm == c[1].comm ? c[0].comm : c[2].comm;
  ovl_coll_rec child = {.op = ""}, *calls = malloc(APP_NCALLS * sizeof *calls);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (c[i].comm == main_comm && k < APP_NCALLS) calls[k++] = c[i];
    else child = c[i];
  }
  CHECK_I64(k, APP_NCALLS);
  qsort(calls, k, sizeof *calls, by_seq);
  int64_t group_ids[3] = {0, 0, 0};
  for (size_t i = 0; i < k; i++) {
    const app_call *want = &app_calls[i];
    const ovl_coll_rec *got = &calls[i];
    CHECK_I64(got->seq, (int64_t)i);
    CHECK_STR(got->op, strcmp(want->op, "Bcast") == 0 ? "Broadcast" : want->op);
    CHECK_I64(got->count, want->count);
    CHECK_STR(got->dtype, want->dtype_name);
    CHECK_I64(got->bytes, want->bytes);
    if (want->redop_name) CHECK_STR(got->redop, want->redop_name);
    else CHECK_STR(got->redop, "");
    CHECK_I64(got->peer, want->peer);
    CHECK_I64(got->rank, APP_RANK);
    CHECK_I64(got->nranks, APP_NRANKS);
    CHECK_I64(got->device, 0);
    CHECK_I64(got->stream, OVL_NONE);  /* no CUPTI without a GPU */
    CHECK(got->tid > 0);
    CHECK(got->host_start > 0 && got->host_end >= got->host_start);
    if (i > 0) CHECK(got->host_start >= calls[i - 1].host_end);
    if (!want->group) {
      CHECK_I64(got->group_id, OVL_NONE);
      CHECK(got->id > 0 && got->id < GROUP_BASE);
    } else {
      CHECK(got->group_id != OVL_NONE);
      if (!group_ids[want->group]) group_ids[want->group] = got->group_id;
      CHECK_I64(got->group_id, group_ids[want->group]);
      CHECK(got->id >= GROUP_BASE);
    }
  }
  /* Two groups (the nested ncclGroupStart opened none), each numbering its calls from 0. */
  CHECK(group_ids[1] != 0 && group_ids[2] != 0 && group_ids[1] != group_ids[2]);
  CHECK_I64(calls[12].id, calls[11].id + 1);
  CHECK_I64(calls[13].id, calls[11].id + 2);
  CHECK_I64(calls[14].id - GROUP_BASE, group_ids[2] << 20);
  CHECK_I64(child.seq, 0);
  CHECK_STR(child.op, "AllReduce");
  CHECK(child.comm != main_comm && child.comm >= 0);
  free(calls);
  free(c);
  ovl_trace_close(t);
}

/* 8 threads x 10,000 calls, each thread on its own communicator: every call is there, and
** each communicator's sequence numbers are exactly 0..9999. */
static void check_many_threads(const char *dir, cmd_result *r) {
  enum { THREADS = 8, CALLS = 10000 };
  CHECK_I64(r->status, 0);
  CHECK_STR(r->err, "");
  ovl_trace *t = NULL;
  size_t n = 0;
  ovl_coll_rec *c = read_colls(dir, &n, &t);
  if (!t) return;
  CHECK_I64(n, THREADS * CALLS);
  CHECK_I64(ovl_trace_meta_int(t, "dropped_records", -1), 0);
  if (n > 0) qsort(c, n, sizeof *c, by_seq);  /* c may be NULL when nothing was read */
  size_t comms = 0, bad = 0;
  for (size_t i = 0; i < n; i++) {
    int first = i == 0 || c[i].comm != c[i - 1].comm;
    comms += first;
    int64_t want_seq = first ? 0 : c[i - 1].seq + 1;
    if (c[i].seq != want_seq || c[i].count != c[i].seq) bad++;  /* call i passes count i */
  }
  CHECK_I64(comms, THREADS);
  CHECK_I64(bad, 0);
  free(c);
  ovl_trace_close(t);
}

static void many_threads(void) {
  const char *dir = ih_fresh_dir("threads");
  cmd_result r = ih_run_app(1, dir, NULL, "threads 8 10000");
  check_many_threads(dir, &r);
  cmd_free(&r);
}

/* The same on one CPU shared with STARVE_HOGS busy processes, so that the writer gets a
** small share of it (a loaded machine): once the threads are done, nothing else calls, so
** the exit flush writes all that is left however long that takes, never cutting it at the
** time limit that bounds an exit while threads keep calling (test_inject_hostile). */
#define STARVE_HOGS 12
static void many_threads_starved(void) {
  cpu_set_t mine, one;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
    CHECK(!"sched_getaffinity");
    return;
  }
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine)) cpu++;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  CHECK(sched_setaffinity(0, sizeof one, &one) == 0);  /* inherited by the hogs and the app */
  pid_t hogs[STARVE_HOGS];
  for (int i = 0; i < STARVE_HOGS; i++) {
    hogs[i] = fork();
    if (hogs[i] == 0) {
      for (volatile unsigned long spin = 0;; spin++) {
      }
    }
    CHECK(hogs[i] > 0);
  }
  const char *dir = ih_fresh_dir("threads-starved");
  int64_t t0 = ih_now_ns();
  cmd_result r = ih_run_app(1, dir, "OVL_LOG=info", "threads 8 10000");
  double took = (ih_now_ns() - t0) / 1e9;
  for (int i = 0; i < STARVE_HOGS; i++) {
    if (hogs[i] <= 0) continue;
    kill(hogs[i], SIGKILL);
    waitpid(hogs[i], NULL, 0);
  }
  CHECK(sched_setaffinity(0, sizeof mine, &mine) == 0);
  printf("8 x 10,000 calls on one CPU shared with %d busy processes: %.2f s in all\n", STARVE_HOGS, took);
  check_many_threads(dir, &r);
  cmd_free(&r);
}

static void unwritable_output(void) {
  cmd_result r = ih_run_app(1, "/dev/null/ovl-trace", NULL, "basic 0");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strncmp(r.err, "ovl: ", 5) == 0);
  CHECK(strstr(r.err, "/dev/null/ovl-trace") != NULL);
  cmd_free(&r);
}

/* A bad setting is reported once, when the capture starts, and the default is used. */
static void bad_setting(void) {
  const char *dir = ih_fresh_dir("badflush");
  cmd_result r = ih_run_app(1, dir, "OVL_FLUSH_MS=soon", "basic 0");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strstr(r.err, "ovl: OVL_FLUSH_MS='soon'") == r.err);
  CHECK_I64(ih_count_traces(dir), 1);
  cmd_free(&r);
  r = ih_run_app(1, dir, "OVL_FLUSH_MS=soon OVL_LOG=quiet", "basic 0");
  CHECK_STR(r.err, "");
  cmd_free(&r);
}

static void writes_nothing(const char *tag, const char *env, const char *args, const char *out) {
  const char *dir = ih_fresh_dir(tag);
  cmd_result r = ih_run_app(1, dir, env, args);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, out);
  CHECK_STR(r.err, "");
  CHECK_I64(ih_count_traces(dir), 0);
  CHECK(access(dir, F_OK) != 0);  /* not even the directory */
  cmd_free(&r);
}

static void forked_child(void) {
  const char *dir = ih_fresh_dir("fork");
  /* LeakSanitizer cannot stop the world in the fork() child of a threaded process (it can
  ** hang there); the sanitized build checks leaks in every other run. */
  cmd_result r = ih_run_app(1, dir, "ASAN_OPTIONS=detect_leaks=0", "fork");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, "app: child exited 0\n");
  CHECK_STR(r.err, "");
  cmd_free(&r);
  CHECK_I64(ih_count_traces(dir), 1);
  size_t n = 0;
  ovl_coll_rec *c = read_colls(dir, &n, NULL);
  CHECK_I64(n, 20);  /* the parent's 10 before and 10 after the fork */
  size_t child_calls = 0;
  for (size_t i = 0; i < n; i++) child_calls += c[i].count == 2;
  CHECK_I64(child_calls, 0);
  free(c);
}

/* SIGTERM while the program is busy: the trace is closed and holds every call made. The
** close has 0.8 s: on a loaded machine a try may miss it (the trace then keeps its -wal and
** every commit), so it is the best of three. Returns 1 when the trace was closed. */
static int sigterm_once(int try) {
  char tag[32];
  snprintf(tag, sizeof tag, "sigterm-%d", try);
  const char *dir = ih_fresh_dir(tag);
  ih_app app = ih_start_app(1, dir, 50, (const char *const[]){"loop", "500", NULL});
  CHECK(app.pid > 0);
  if (app.pid <= 0) return 0;
  pid_t pid = app.pid;
  CHECK(ih_app_ready(&app));
  struct timespec pause = {0, 200000000};
  nanosleep(&pause, NULL);  /* a few more calls and flushes */
  kill(pid, SIGTERM);
  int st = 0, waited = 0;
  while (waitpid(pid, &st, WNOHANG) == 0 && waited++ < 3000) nanosleep(&(struct timespec){0, 10000000}, NULL);
  if (waited >= 3000) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  close(app.out);
  CHECK(waited < 3000);                            /* no hang */
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);  /* the default action still happens */
  char wal[1100];
  const char *path = ih_trace_in(dir);
  snprintf(wal, sizeof wal, "%s-wal", path ? path : "");
  int closed = access(wal, F_OK) != 0;  /* one self-contained file */
  if (!closed) {
    printf("SIGTERM try %d: the close did not finish in time (a loaded machine)\n", try);
    return 0;
  }
  size_t n = 0;
  ovl_coll_rec *c = read_colls(dir, &n, NULL);
  CHECK(n > 500);
  if (n > 0) qsort(c, n, sizeof *c, by_seq);
  size_t gaps = 0;
  for (size_t i = 0; i < n; i++) gaps += c[i].seq != (int64_t)i;
  CHECK_I64(gaps, 0);
  free(c);
  return 1;
}

static void sigterm(void) {
  int closed = 0;
  for (int try = 0; try < 3 && !closed; try++) closed = sigterm_once(try);
  CHECK(closed);
}

/* `ovl run` sets the variables, says which traces were written and returns the command's
** status; a missing command is 127, as in a shell. */
static void ovl_run(void) {
  const char *dir = ih_fresh_dir("run");
  char cmd[4096];
  /* (a sanitizer runtime already in LD_PRELOAD stays in front of libovl.so) */
  snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' '%s' run -o '%s' -- '%s' basic 5", OVL_TEST_PRELOAD_FIRST,
           OVL_TEST_OVL, dir, OVL_TEST_APP);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 5);
  CHECK_STR(r.out, APP_STDOUT);
  /* one line naming the trace, in the directory given */
  const char *trace = ih_trace_in(dir);
  const char *base = trace ? strrchr(trace, '/') + 1 : "(none)";
  char want[2048];
  snprintf(want, sizeof want, "ovl: run: wrote 1 trace in %s: %s\n", dir, base);
  CHECK_STR(r.err, want);
  cmd_free(&r);
  CHECK_I64(ih_count_traces(dir), 1);
  size_t n = 0;
  free(read_colls(dir, &n, NULL));
  CHECK_I64(n, APP_NCALLS + 1);
  snprintf(cmd, sizeof cmd, "'%s' run --help", OVL_TEST_OVL);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "usage: ovl run") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' run -o '%s'", OVL_TEST_OVL, dir);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strncmp(r.err, "ovl: run: ", 10) == 0);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' run -- /nonexistent/program", OVL_TEST_OVL);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 127);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strstr(r.err, "/nonexistent/program") != NULL);
  cmd_free(&r);
}

/* A launcher's rank leads the trace's name (issue 33): rank<R>-<host>-<pid>-<random>.sqlite,
** each name still unique; without one, <host>-<pid>-<random>.sqlite. */
static void rank_names(void) {
  static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *dir = ih_fresh_dir("rankname");
    char env[64], want[32];
    snprintf(env, sizeof env, "%s=%zu", vars[i], 3 + i);
    for (int k = 0; k < 2; k++) {  /* two processes of one rank: two files */
      cmd_result r = ih_run_app(1, dir, env, "basic 0");
      CHECK_I64(r.status, 0);
      cmd_free(&r);
    }
    CHECK_I64(ih_count_traces(dir), 2);
    snprintf(want, sizeof want, "rank%zu-", 3 + i);
    const char *trace = ih_trace_in(dir);
    CHECK(trace && strncmp(strrchr(trace, '/') + 1, want, strlen(want)) == 0);
    if (!trace || strncmp(strrchr(trace, '/') + 1, want, strlen(want)) != 0)
      fprintf(stderr, "  %s: trace %s\n", env, trace ? trace : "(none)");
  }
  const char *dir = ih_fresh_dir("norank");
  cmd_result r = ih_run_app(1, dir, NULL, "basic 0");
  cmd_free(&r);
  const char *trace = ih_trace_in(dir);
  CHECK(trace && strncmp(strrchr(trace, '/') + 1, "rank", 4) != 0);
}

/* libovl.so exports only its entry points (the injection functions, the NCCL interposers, and
** the CUPTI calls by which another profiler takes CUPTI), needs no CUDA, CUPTI, NCCL or SQLite library, and
** leaves a program with its own SQLite (the sqlite3 shell) exactly as it was. */
static void library_hygiene(void) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s' | awk '{ print $3 }'", OVL_TEST_LIBOVL);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  int exported = 0, unexpected = 0;
  for (char *save = NULL, *sym = strtok_r(r.out, "\n", &save); sym; sym = strtok_r(NULL, "\n", &save)) {
    exported++;
    static const char *const cupti[] = {"cuptiActivityRegisterCallbacks", "cuptiActivityDisable", "cuptiFinalize",
                                        "cuptiSubscribe", "cuptiSubscribe_v2"};
    int known = !strcmp(sym, "InitializeInjection") || !strcmp(sym, "InitializeInjectionNvtx2") || !strncmp(sym, "nccl", 4);
    for (size_t i = 0; i < sizeof cupti / sizeof cupti[0]; i++) known |= !strcmp(sym, cupti[i]);
    if (!known) {
      fprintf(stderr, "unexpected export: %s\n", sym);
      unexpected++;
    }
  }
  CHECK(exported >= 20);
  CHECK_I64(unexpected, 0);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "readelf -d '%s' | grep NEEDED", OVL_TEST_LIBOVL);
  r = run_cmd(cmd);
  CHECK(strstr(r.out, "libc.so") != NULL);
  CHECK(strstr(r.out, "sqlite") == NULL && strstr(r.out, "cupti") == NULL && strstr(r.out, "nccl") == NULL &&
        strstr(r.out, "cuda") == NULL);
  cmd_free(&r);
  const char *sql = "sqlite3 :memory: 'SELECT sqlite_version(); CREATE TABLE t(x); INSERT INTO t VALUES (42);"
                    " SELECT x FROM t;'";
  snprintf(cmd, sizeof cmd, "%s", sql);
  cmd_result plain = run_cmd(cmd);
  snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' OVL_OUTPUT=/nonexistent/dir %s", ih_preload(), sql);
  r = run_cmd(cmd);
  CHECK_I64(plain.status, 0);
  CHECK_I64(r.status, 0);
  CHECK(strstr(plain.out, "42") != NULL);
  CHECK_STR(r.out, plain.out);
  CHECK_STR(r.err, "");
  cmd_free(&plain);
  cmd_free(&r);
}

int main(void) {
  library_hygiene();
  basic_calls();
  many_threads();
  many_threads_starved();
  unwritable_output();
  bad_setting();
  writes_nothing("disabled", "OVL_DISABLE=1", "basic 0", APP_STDOUT);
  writes_nothing("none", NULL, "none", "app: nothing to do\n");
  forked_child();
  sigterm();
  ovl_run();
  rank_names();
  return check_summary();
}
