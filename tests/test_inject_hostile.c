/*
** libovl.so inside hostile hosts (issue 20), with the stub NCCL and no GPU:
**   D1  NCCL under a renamed soname in a local dlopen scope (as Python wheels vendor it):
**       every call reaches it and is recorded; results and exit status unchanged;
**   D6  a process without NCCL that probes dlsym(RTLD_DEFAULT, "ncclAllReduce") finds
**       nothing; NCCL dlopen'ed later with its dependents, or bound at start-up, is hooked;
**   D2  16 threads calling as fast as they can: SIGKILL loses at most about a flush period
**       of the writer's work, and what the trace kept accounts for its calls (meta committed
**       with the rows: rank, dropped, host_events = rows + dropped); a flood that stopped is
**       all accounted for before a SIGKILL; SIGTERM costs at most 1 s more than without
**       libovl and every call made before it is a row or counted; exit while they call at
**       most 2 s more, every call before the exit accounted for (each bound measured beside
**       the same program alone, best of up to three tries: a loaded machine delays a run,
**       never all three by chance);
**   D3  exec in the same pid, and two PID namespaces (pid 1 twice): both traces kept;
**   D4  a relative OVL_OUTPUT is where the program started, whatever its chdir;
**   D5  a trace that cannot be created leaves no file behind;
**   D7  with stdio closed, the program's descriptors keep their numbers; libovl's are CLOEXEC;
**   D8  a trace directory over 512 characters works, and warnings show the whole path.
*/
#define _GNU_SOURCE
#include "check.h"
#include "db_query.h"
#include "inject_app.h"
#include "inject_harness.h"
#include "trace_builder.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLOOD_THREADS "16"
#define FLOOD_NTHREADS 16
#define FLOOD_FLUSH_MS 250
#define FLOOD_COMMIT_SLACK_S 0.75  /* a commit's own time on two cores shared with 17 threads */
#define TRIES 3                    /* timing bounds: the best of this many runs */

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* Number of directory entries other than . and .. (-1 when dir does not exist). */
static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

static int64_t trace_int(const char *path, const char *sql) {
  sqlite3 *db = dbq_open(path);
  int64_t v = dbq_int(db, sql);
  sqlite3_close(db);
  return v;
}

/* The rows of every trace in dir, in ascending order, in counts[0..max). Returns the number of traces. */
static int trace_rows(const char *dir, int64_t *counts, int max, int64_t *pids) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len < 7 || strcmp(e->d_name + len - 7, ".sqlite") || n >= max) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    counts[n] = trace_int(path, "SELECT count(*) FROM collectives");
    pids[n] = trace_int(path, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid'");
    n++;
  }
  closedir(d);
  for (int i = 1; i < n; i++)  /* two or three: insertion sort */
    for (int j = i; j > 0 && counts[j] < counts[j - 1]; j--) {
      int64_t c = counts[j], p = pids[j];
      counts[j] = counts[j - 1], pids[j] = pids[j - 1];
      counts[j - 1] = c, pids[j - 1] = p;
    }
  return n;
}

/* ---------------------------------------------------------------------------------- */
/* D6, D1: probes, local scopes, renamed NCCL                                         */
/* ---------------------------------------------------------------------------------- */

static void probe_finds_nothing(void) {
  const char *dir = ih_fresh_dir("probe");
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' none", OVL_TEST_PROBE);
  cmd_result plain = run_cmd(cmd);
  snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' '%s' none", ih_preload(), dir, OVL_TEST_PROBE);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(plain.status, 0);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, "probe: no NCCL or CUPTI\n");
  CHECK_STR(r.out, plain.out);
  CHECK_STR(r.err, "");
  CHECK_I64(count_files(dir), -1);
  cmd_free(&plain);
  cmd_free(&r);
}

/* A library that uses NCCL, dlopen'ed RTLD_LOCAL after start-up: its NCCL (plain, or
** renamed as wheels ship it) is in no global scope, yet every call is hooked and works. */
static void local_scope(const char *tag, const char *user_lib) {
  const char *dir = ih_fresh_dir(tag);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' dlopen '%s'", OVL_TEST_PROBE, user_lib);
  cmd_result plain = run_cmd(cmd);
  snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' '%s' dlopen '%s'", ih_preload(), dir,
           OVL_TEST_PROBE, user_lib);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(plain.status, 0);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, "probe: no NCCL or CUPTI\nuser: 0 failed calls\n");
  CHECK_STR(r.out, plain.out);
  CHECK_STR(r.err, "");
  int64_t rows[2] = {0}, pids[2];
  CHECK_I64(trace_rows(dir, rows, 2, pids), 1);
  CHECK_I64(rows[0], 100);
  cmd_free(&plain);
  cmd_free(&r);
}

/* Hooks bound at start-up (LD_BIND_NOW, as -z now binaries are) reach NCCL too. A known
** limit (docs/capture.md): the stub NCCL calls its own exported functions, which glibc binds
** before it has relocated the preloaded libovl.so, and it notes that on stderr. */
static void bind_now(void) {
  const char *dir = ih_fresh_dir("bindnow");
  cmd_result r = ih_run_app(1, dir, "LD_BIND_NOW=1", "basic 0");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  int other = 0;
  for (char *save = NULL, *line = strtok_r(r.err, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    other += strstr(line, "Relink `") == NULL || strstr(line, "for IFUNC symbol `nccl") == NULL;
  CHECK_I64(other, 0);
  int64_t rows[2] = {0}, pids[2];
  CHECK_I64(trace_rows(dir, rows, 2, pids), 1);
  CHECK_I64(rows[0], APP_NCALLS + 1);
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */
/* D3: one pid, two images; two PID namespaces                                        */
/* ---------------------------------------------------------------------------------- */

static void exec_keeps_both(void) {
  const char *dir = ih_fresh_dir("exec");
  cmd_result r = ih_run_app(1, dir, "OVL_FLUSH_MS=50", "exec");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_STR(r.err, "");
  int64_t rows[3] = {0}, pids[3] = {0};
  CHECK_I64(trace_rows(dir, rows, 3, pids), 2);
  CHECK_I64(rows[0], 5);               /* before exec */
  CHECK_I64(rows[1], APP_NCALLS + 1);  /* the exec'ed image */
  CHECK(pids[0] > 0 && pids[0] == pids[1]);
  cmd_free(&r);
}

static void pid_namespaces_keep_both(void) {
  cmd_result can = run_cmd("unshare -Urpf true");
  int available = can.status == 0;
  cmd_free(&can);
  if (!available) {
    printf("SKIP pid_namespaces_keep_both: unshare -Urpf is not available here\n");
    fprintf(stderr, "SKIP pid_namespaces_keep_both: unshare -Urpf is not available here\n");
    return;
  }
  const char *dir = ih_fresh_dir("pidns");
  char cmd[4096];
  /* (LeakSanitizer cannot run as pid 1 of a namespace; the other runs check leaks) */
  snprintf(cmd, sizeof cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' ASAN_OPTIONS=detect_leaks=0 unshare -Urpf '%s' basic 0",
           ih_preload(), dir, OVL_TEST_APP);
  for (int i = 0; i < 2; i++) {
    cmd_result r = run_cmd(cmd);
    CHECK_I64(r.status, 0);
    CHECK_STR(r.out, APP_STDOUT);
    CHECK_STR(r.err, "");
    cmd_free(&r);
  }
  int64_t rows[3] = {0}, pids[3] = {0};
  CHECK_I64(trace_rows(dir, rows, 3, pids), 2);
  CHECK_I64(rows[0], APP_NCALLS + 1);
  CHECK_I64(rows[1], APP_NCALLS + 1);
  CHECK_I64(pids[0], 1);
  CHECK_I64(pids[1], 1);
}

/* ---------------------------------------------------------------------------------- */
/* D4, D5, D7, D8: where and how the file is made                                     */
/* ---------------------------------------------------------------------------------- */

static void relative_output_at_start(void) {
  const char *base = ih_fresh_dir("relative");
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "sh -c \"mkdir -p '%s/sub' && cd '%s' && exec env LD_PRELOAD='%s' OVL_OUTPUT=out/run1 '%s' chdir sub\"",
           base, base, ih_preload(), OVL_TEST_APP);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_STR(r.err, "");
  char where[1024];
  snprintf(where, sizeof where, "%s/out/run1", base);
  CHECK_I64(ih_count_traces(where), 1);
  snprintf(where, sizeof where, "%s/sub/out", base);
  CHECK_I64(count_files(where), -1);
  cmd_free(&r);
}

/* The file system refuses the trace part-way (file size limit): one warning, no file left. */
static void failed_start_leaves_nothing(void) {
  const char *dir = ih_fresh_dir("efbig");
  for (int blocks = 8; blocks <= 32; blocks *= 2) {  /* refused at different points of the start */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "sh -c \"trap '' XFSZ; ulimit -f %d; exec env LD_PRELOAD='%s' OVL_OUTPUT='%s' '%s' basic 0\"",
             blocks, ih_preload(), dir, OVL_TEST_APP);
    cmd_result r = run_cmd(cmd);
    CHECK_I64(r.status, 0);
    CHECK_STR(r.out, APP_STDOUT);
    CHECK_I64(count_lines(r.err), 1);
    CHECK(strncmp(r.err, "ovl: ", 5) == 0);
    CHECK_I64(count_files(dir), 0);  /* no trace, no -wal, no -shm, no -journal */
    cmd_free(&r);
  }
}

static void closed_stdio(void) {
  const char *dir = ih_fresh_dir("closedfd");
  cmd_result plain = ih_run_app(0, dir, NULL, "closed-stdio");
  cmd_result r = ih_run_app(1, dir, "OVL_FLUSH_MS=50", "closed-stdio");
  CHECK_I64(plain.status, 0);
  CHECK_I64(r.status, 0);  /* 1..3: an fd of 0..2 was taken; 5: an fd was inheritable */
  int64_t rows[2] = {0}, pids[2];
  CHECK_I64(trace_rows(dir, rows, 2, pids), 1);
  CHECK_I64(rows[0], 100);
  cmd_free(&plain);
  cmd_free(&r);
}

/* `parent` + as many 99-character components as make it longer than `len`. */
static void long_path(char *out, size_t size, const char *parent, size_t len) {
  snprintf(out, size, "%s", parent);
  while (strlen(out) <= len) {
    size_t n = strlen(out);
    snprintf(out + n, size - n, "/%.*s", 99, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
                                              "ddddddddddddddddddddddddddddddddddddddddddddddddddd");
  }
}

static void long_directory(void) {
  char dir[2048], cmd[8192];
  long_path(dir, sizeof dir, ih_fresh_dir("long"), 700);
  cmd_result r = ih_run_app(1, dir, NULL, "basic 0");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_STR(r.err, "");
  cmd_free(&r);
  /* Read a copy: SQLite readers have the same 512-character limit. */
  const char *trace = ih_trace_in(dir);
  CHECK(trace != NULL);
  const char *copy = ih_fresh_dir("long-copy");
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", trace ? trace : "/nonexistent", copy);
  cmd_result cp = run_cmd(cmd);
  CHECK_I64(cp.status, 0);
  cmd_free(&cp);
  if (trace) CHECK_I64(trace_int(copy, "SELECT count(*) FROM collectives"), APP_NCALLS + 1);
  unlink(copy);

  /* An unusable long directory: the warning carries all of it. */
  long_path(dir, sizeof dir, "/dev/null", 1500);
  r = ih_run_app(1, dir, NULL, "basic 0");
  CHECK_I64(r.status, 0);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strstr(r.err, dir) != NULL);
  cmd_free(&r);

  /* Longer than any path: one warning, only in a process that uses NCCL. */
  static char huge[5200], big_cmd[12000];
  long_path(huge, sizeof huge, "/tmp", 5000);
  snprintf(big_cmd, sizeof big_cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' '%s' basic 0", ih_preload(), huge, OVL_TEST_APP);
  r = run_cmd(big_cmd);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, APP_STDOUT);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strstr(r.err, "ovl: OVL_OUTPUT is longer than") == r.err);
  cmd_free(&r);
  snprintf(big_cmd, sizeof big_cmd, "env LD_PRELOAD='%s' OVL_OUTPUT='%s' '%s' none", ih_preload(), huge, OVL_TEST_APP);
  r = run_cmd(big_cmd);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.err, "");
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */
/* D2: floods                                                                         */
/* ---------------------------------------------------------------------------------- */

typedef struct flood {
  ih_app app;
  int64_t started;
  char counts[1024];  /* the app's call counters (inject_app.c: INJECT_APP_COUNTS) */
} flood;

static flood flood_start_mode(int preload, const char *dir, const char *mode, const char *seconds) {
  flood f = {{-1, -1}, ih_now_ns(), ""};
  snprintf(f.counts, sizeof f.counts, "%s", tb_temp_path("flood-counts"));
  setenv("INJECT_APP_COUNTS", f.counts, 1);
  f.app = ih_start_app(preload, dir, FLOOD_FLUSH_MS, (const char *const[]){mode, FLOOD_THREADS, seconds, NULL});
  unsetenv("INJECT_APP_COUNTS");
  return f;
}

static flood flood_start(int preload, const char *dir, const char *seconds) {
  return flood_start_mode(preload, dir, "flood", seconds);
}

/* Calls the flood's threads had completed (the app counts after each call returns). */
static int64_t flood_calls(const flood *f) {
  uint64_t slots[64 * 8] = {0};
  FILE *in = fopen(f->counts, "rb");
  size_t n = in ? fread(slots, 1, sizeof slots, in) : 0;
  if (in) fclose(in);
  int64_t total = 0;
  for (size_t i = 0; i < n / sizeof slots[0]; i += 8) total += (int64_t)slots[i];
  return total;
}

/* What a flood's trace says about its calls. */
typedef struct accounting {
  int64_t rows, host_events, dropped_host, dropped, unwritten;
  char rank[32];
} accounting;

/* One integer from a trace being written: -1 when it cannot be read now (not created yet, no
** schema committed yet, busy), -999 when the value is absent. Never exits the test: a flood
** may still be running. */
static int64_t read_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
    int src = sqlite3_step(st);
    v = src == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_int64(st, 0)
        : src == SQLITE_ROW || src == SQLITE_DONE                       ? -999
                                                                        : -1;
  }
  sqlite3_finalize(st);
  return v;
}

/* What a trace says about its calls, as far as its last commit goes (rows -1: nothing
** readable yet). */
static accounting account(const char *path) {
  accounting a = {-1, -1, -1, -1, -1, ""};
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 100);
    a.rows = read_int(db, "SELECT count(*) FROM collectives");
    a.host_events = read_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'host_events'");
    a.dropped_host = read_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_host_events'");
    a.dropped = read_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_records'");
    a.unwritten = read_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'unwritten_host_events'");
    int64_t rank = read_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'rank' AND value != ''");
    if (rank >= 0) snprintf(a.rank, sizeof a.rank, "%lld", (long long)rank);
  }
  sqlite3_close(db);
  return a;
}

/* The trace's counts agree with its rows: every call it counts is a row or dropped. */
static void check_consistent(const char *what, const accounting *a) {
  printf("%s: %lld rows, %lld dropped (%lld unwritten), %lld calls counted, rank '%s'\n", what, (long long)a->rows,
         (long long)a->dropped, (long long)a->unwritten, (long long)a->host_events, a->rank);
  CHECK(a->rows > 0);
  CHECK_I64(a->rows + a->dropped_host, a->host_events);
  CHECK_I64(a->dropped, a->dropped_host);  /* no GPU records here */
  CHECK_STR(a->rank, "0");                 /* the flood's communicator: rank 0 of 1 */
}

static int flood_ready(flood *f) { return ih_app_ready(&f->app); }

/* Waits for the process (at most 60 s, then kills it); returns the wait status. */
static int flood_reap(flood *f) {
  int st = 0;
  if (f->app.pid <= 0) return -1;  /* never started: kill(-1) would signal every process */
  for (int i = 0; i < 6000 && waitpid(f->app.pid, &st, WNOHANG) == 0; i++) sleep_s(0.01);
  if (waitpid(f->app.pid, &st, WNOHANG) == 0) {
    kill(f->app.pid, SIGKILL);
    waitpid(f->app.pid, &st, 0);
    st = -1;
  }
  close(f->app.out);
  return st;
}

/* Seconds from signal to exit; *calls: the calls completed when the signal was sent. */
static double flood_signal(int preload, const char *dir, int sig, double after, int *status, int64_t *calls) {
  flood f = flood_start(preload, dir, "0");
  CHECK(flood_ready(&f));
  sleep_s(after);
  *calls = flood_calls(&f);
  int64_t sent = ih_now_ns();
  if (f.app.pid > 0) kill(f.app.pid, sig);
  *status = flood_reap(&f);
  return (ih_now_ns() - sent) / 1e9;
}

/* Committed collectives rows of a trace being written, or -1 when it cannot be read now. */
static int64_t committed_rows(const char *path) {
  sqlite3 *db = NULL;
  int64_t n = -1;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 100);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM collectives", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

/* While 16 threads flood, the committed rows grow at least every flush period (plus the
** commit's own time), so SIGKILL loses no more than that of the writer's work; and each
** commit carries meta in step with its rows (rank, the calls dropped so far). Returns 1
** when the commits kept the bound. */
static int flood_sigkill_once(int try) {
  char tag[32];
  snprintf(tag, sizeof tag, "flood-kill-%d", try);
  const char *dir = ih_fresh_dir(tag);
  flood f = flood_start(1, dir, "0");
  CHECK(flood_ready(&f));
  int64_t start = ih_now_ns(), last_change = 0, worst = 0, rows = 0;
  char path[1024] = "";
  while (ih_now_ns() - start < INT64_C(3000000000)) {
    sleep_s(0.02);
    if (!path[0] && ih_trace_in(dir)) snprintf(path, sizeof path, "%s", ih_trace_in(dir));
    int64_t n = path[0] ? committed_rows(path) : -1;
    if (n > rows) {
      int64_t t = ih_now_ns();
      if (last_change && t - last_change > worst) worst = t - last_change;
      last_change = t;
      rows = n;
    }
  }
  int64_t killed = ih_now_ns();
  if (f.app.pid > 0) kill(f.app.pid, SIGKILL);
  int st = flood_reap(&f);
  int64_t calls = flood_calls(&f);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  int64_t since = last_change ? killed - last_change : killed - start;
  if (since > worst) worst = since;
  int64_t after = path[0] ? committed_rows(path) : -1;
  printf("flood SIGKILL: %lld rows committed of %lld calls made; commits at most %.2f s apart (flush period %.2f s)\n",
         (long long)after, (long long)calls, worst / 1e9, FLOOD_FLUSH_MS / 1000.0);
  CHECK(rows > 0);
  CHECK(after >= rows);
  if (path[0]) {
    accounting a = account(path);
    check_consistent("  its last commit", &a);
    CHECK(a.dropped > 0);  /* 16 threads outrun the writer: the excess was dropped, and meta says so */
    CHECK(a.host_events <= calls + FLOOD_NTHREADS);  /* (a call in progress is counted before it returns) */
  }
  return worst / 1e9 <= FLOOD_FLUSH_MS / 1000.0 + FLOOD_COMMIT_SLACK_S;
}

static void flood_sigkill(void) {
  int kept = 0;
  for (int try = 0; try < TRIES && !kept; try++) kept = flood_sigkill_once(try);
  CHECK(kept);
}

/* A flood that stops: once the writer has caught up, every call is in the trace's last
** commit, a row or counted as dropped, and a SIGKILL takes none of that away. */
static void flood_quiet_then_kill(void) {
  const char *dir = ih_fresh_dir("flood-quiet");
  flood f = flood_start_mode(1, dir, "flood-quiet", "1");
  CHECK(flood_ready(&f));
  char line[64] = "";
  struct pollfd p = {f.app.out, POLLIN, 0};
  ssize_t got = f.app.out >= 0 && poll(&p, 1, 60000) == 1 ? read(f.app.out, line, sizeof line - 1) : -1;
  long long quiet = -1;
  CHECK(got > 0 && sscanf(line, "quiet %lld", &quiet) == 1);
  char path[1024] = "";
  accounting a = {-1, -1, -1, -1, -1, ""};
  for (int i = 0; i < 600; i++) {  /* the writer drains what the buffers hold (60 s at most) */
    if (!path[0] && ih_trace_in(dir)) snprintf(path, sizeof path, "%s", ih_trace_in(dir));
    if (path[0]) a = account(path);
    if (a.host_events == quiet && a.unwritten == 0) break;
    sleep_s(0.1);
  }
  if (f.app.pid > 0) kill(f.app.pid, SIGKILL);
  int st = flood_reap(&f);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  CHECK(path[0] != 0);
  if (!path[0]) return;
  a = account(path);
  printf("flood stopped after %lld calls, then SIGKILL:\n", quiet);
  check_consistent("  the trace", &a);
  CHECK_I64(a.host_events, quiet);
  CHECK_I64(a.rows + a.dropped, quiet);
  CHECK_I64(a.unwritten, 0);
  CHECK(a.dropped > 0);
}

/* SIGTERM during a flood: the process ends at most 1 s later than without libovl (best of
** TRIES), and the closed trace accounts for every call made before the signal. */
static void flood_sigterm(void) {
  int kept = 0;
  for (int try = 0; try < TRIES && !kept; try++) {
    char tag[32];
    snprintf(tag, sizeof tag, "flood-term-%d", try);
    const char *dir = ih_fresh_dir(tag);
    int st_plain = 0, st = 0;
    int64_t calls_plain = 0, calls = 0;
    double plain = flood_signal(0, dir, SIGTERM, 1.0, &st_plain, &calls_plain);
    double with = flood_signal(1, dir, SIGTERM, 1.0, &st, &calls);
    printf("flood SIGTERM to exit: %.3f s alone, %.3f s with libovl (+%.3f s)\n", plain, with, with - plain);
    CHECK(WIFSIGNALED(st_plain) && WTERMSIG(st_plain) == SIGTERM);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    kept = with - plain <= 1.0;
    const char *trace = ih_trace_in(dir);
    CHECK(trace != NULL);
    if (!trace) continue;
    accounting a = account(trace);
    check_consistent("  the closed trace", &a);
    printf("  %lld calls made before the signal\n", (long long)calls);
    CHECK(a.host_events >= calls);  /* those made while it closed are counted too */
  }
  CHECK(kept);
}

/* exit() while 16 threads call: at most 2 s longer than without libovl (best of TRIES). */
static void flood_exit(void) {
  int kept = 0;
  for (int try = 0; try < TRIES && !kept; try++) {
    char tag[32];
    snprintf(tag, sizeof tag, "flood-exit-%d", try);
    const char *dir = ih_fresh_dir(tag);
    double took[2];
    int st[2];
    for (int preload = 0; preload < 2; preload++) {
      flood f = flood_start(preload, dir, "1.5");
      st[preload] = flood_reap(&f);
      took[preload] = (ih_now_ns() - f.started) / 1e9;
    }
    printf("flood, exit while 16 threads call: %.3f s alone, %.3f s with libovl (+%.3f s)\n", took[0], took[1],
           took[1] - took[0]);
    CHECK(WIFEXITED(st[0]) && WEXITSTATUS(st[0]) == 0);
    CHECK(WIFEXITED(st[1]) && WEXITSTATUS(st[1]) == 0);
    kept = took[1] - took[0] <= 2.0;
    const char *trace = ih_trace_in(dir);
    CHECK(trace != NULL);
    if (!trace) continue;
    accounting a = account(trace);
    check_consistent("  the closed trace", &a);
  }
  CHECK(kept);
}

int main(void) {
  probe_finds_nothing();
  local_scope("local", OVL_TEST_NCCL_USER);
  local_scope("vendored", OVL_TEST_NCCL_USER_VENDORED);
  bind_now();
  exec_keeps_both();
  pid_namespaces_keep_both();
  relative_output_at_start();
  failed_start_leaves_nothing();
  closed_stdio();
  long_directory();
  flood_sigkill();
  flood_quiet_then_kill();
  flood_sigterm();
  flood_exit();
  return check_summary();
}
