/*
** Progress on stderr (docs/cli.md, "Progress"): the sink of base/progress.h and the job's count
** of traces analysed. Shown when stderr is a terminal and the command has run 2 s (quick
** commands stay quiet), as one line rewritten in place at most 5 times a second and cleared
** before anything else is printed and at exit. OVL_PROGRESS=0 turns it off; OVL_PROGRESS=1
** shows it from the start even when stderr is not a terminal (CI logs), one line per update,
** at most one a second, the first of each kind of work at once.
*/
#include "cli.h"

#include "base/progress.h"
#include "base/text_clean.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SHOW_AFTER_S 2.0
#define TERMINAL_EVERY_S 0.2
#define LOG_EVERY_S 1.0

static struct {
  int on, terminal, forced;
  double start, last;
  int shown;                   /* a terminal line is on screen */
  const char *seen[16];        /* the kinds of work shown so far (forced mode: the first of each at once) */
  size_t nseen;
  size_t traces_done, traces_total;
  pthread_mutex_t lock;        /* the job's count comes from its workers */
} pg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Draws one update; called under a lock (base/progress.h's or pg.lock). */
static void draw(const char *what, const char *file, double fraction) {
  double t = now_s();
  if (!pg.forced && t - pg.start < SHOW_AFTER_S) return;
  int new_kind = 1;
  for (size_t i = 0; i < pg.nseen; i++) new_kind &= pg.seen[i] != what;
  if (!(pg.forced && new_kind) && t - pg.last < (pg.terminal ? TERMINAL_EVERY_S : LOG_EVERY_S)) return;
  if (new_kind && pg.nseen < sizeof pg.seen / sizeof *pg.seen) pg.seen[pg.nseen++] = what;
  pg.last = t;
  char line[512], clean[1536], pct[16] = "", count[48] = "";
  if (!isnan(fraction)) snprintf(pct, sizeof pct, " %.0f%%", 100.0 * (fraction < 0 ? 0 : fraction > 1 ? 1 : fraction));
  if (pg.traces_total > 1)
    snprintf(count, sizeof count, "%s%zu of %zu traces analysed%s", file ? " (" : "", pg.traces_done, pg.traces_total,
             file ? ")" : "");
  if (file) snprintf(line, sizeof line, "%s: %s%s%s", file, what, pct, count);
  else snprintf(line, sizeof line, "%s", count);
  ovl_text_clean_into(line, clean, sizeof clean);
  if (pg.terminal) {
    fprintf(stderr, "\r\033[Kovl: %.150s", clean);
    pg.shown = 1;
  } else {
    fprintf(stderr, "ovl: %s\n", clean);
  }
  fflush(stderr);
}

/* Work reported without a file (a quick look at a file's first bytes) is not shown. */
static void sink(const char *what, const char *file, double fraction) {
  if (file) draw(what, file, fraction);
}

void ovl_cli_progress_clear(void) {
  if (!pg.shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  pg.shown = 0;
}

void ovl_cli_progress_install(void) {
  const char *env = getenv("OVL_PROGRESS");
  pg.terminal = isatty(STDERR_FILENO);
  pg.forced = env && strcmp(env, "1") == 0;
  pg.on = pg.forced || (pg.terminal && !(env && strcmp(env, "0") == 0));
  if (!pg.on) return;
  pg.start = now_s();
  pg.last = -1e9;
  ovl_progress_set_sink(sink);
  atexit(ovl_cli_progress_clear);
}

void ovl_cli_progress(void *ctx, size_t done, size_t total, const char *path) {
  (void)ctx;
  (void)path;
  if (!pg.on) return;
  pthread_mutex_lock(&pg.lock);
  pg.traces_done = done;
  pg.traces_total = total;
  if (total > 1) draw("traces", NULL, NAN);
  pthread_mutex_unlock(&pg.lock);
}
