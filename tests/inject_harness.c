/* Running inject_app under libovl: see inject_harness.h. */
#include "inject_harness.h"

#include "trace_builder.h"

#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *ih_fresh_dir(const char *tag) {
  static char path[4][512];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s", tb_temp_path(tag));
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
  if (system(cmd) != 0) fprintf(stderr, "cannot clean %s\n", p);
  return p;
}

const char *ih_preload(void) {
  static char value[2048];
  snprintf(value, sizeof value, "%s%s%s", OVL_TEST_PRELOAD_FIRST, OVL_TEST_PRELOAD_FIRST[0] ? ":" : "",
           OVL_TEST_LIBOVL);
  return value;
}

cmd_result ih_run_app(int preload, const char *dir, const char *env, const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "env %s%s%s OVL_OUTPUT='%s' %s '%s' %s", preload ? "LD_PRELOAD='" : "",
           preload ? ih_preload() : "", preload ? "'" : "", dir, env ? env : "", OVL_TEST_APP, args);
  return run_cmd(cmd);
}

static int is_trace(const char *name) {
  size_t n = strlen(name);
  return n > 7 && strcmp(name + n - 7, ".sqlite") == 0;
}

int ih_count_traces(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += is_trace(e->d_name);
  closedir(d);
  return n;
}

const char *ih_trace_in(const char *dir) {
  static char path[1024];
  DIR *d = opendir(dir);
  if (!d) return NULL;
  const char *found = NULL;
  for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
    if (!is_trace(e->d_name)) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    found = path;
  }
  closedir(d);
  return found;
}

int64_t ih_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

ih_app ih_start_app(int preload, const char *dir, int flush_ms, const char *const *argv) {
  ih_app a = {-1, -1};
  const char *args[9] = {OVL_TEST_APP};
  for (int i = 0; argv[i] && i < 7; i++) args[i + 1] = argv[i];
  int p[2];
  if (pipe(p) != 0) return a;
  a.pid = fork();
  if (a.pid == 0) {
    dup2(p[1], STDOUT_FILENO);
    close(p[0]);
    if (preload) setenv("LD_PRELOAD", ih_preload(), 1);
    setenv("OVL_OUTPUT", dir, 1);
    char ms[16];
    snprintf(ms, sizeof ms, "%d", flush_ms);
    setenv("OVL_FLUSH_MS", ms, 1);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    execv(OVL_TEST_APP, (char *const *)args);
    _exit(127);
  }
  close(p[1]);
  if (a.pid < 0) close(p[0]);
  else a.out = p[0];
  return a;
}

int ih_app_ready(const ih_app *a) {
  struct pollfd p = {a->out, POLLIN, 0};
  char buf[16] = "";
  return a->out >= 0 && poll(&p, 1, 30000) == 1 && read(a->out, buf, sizeof buf - 1) > 0 && strncmp(buf, "ready", 5) == 0;
}
