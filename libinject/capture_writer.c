/*
** The writer thread: see capture_writer.h.
**
** Requests from other threads (and signal handlers) go through atomics and a semaphore,
** the only primitives that are async-signal-safe: `requested` counts flush requests,
** `completed` the last one served, `finished` says the trace is closed.
**
** One cycle: drain the host events, convert the CUPTI buffers completed so far (GPU rows
** sorted by start within the cycle), update meta, commit. Host rows and CUPTI rows need no
** particular order between them: links carry collective ids assigned on the host.
*/
#define _GNU_SOURCE
#include "capture_writer.h"

#include "capture.h"
#include "clock.h"
#include "cupti_records.h"
#include "cupti_session.h"
#include "event_rows.h"
#include "host_buffer.h"
#include "log.h"
#include "nccl_profiler.h"
#include "trace_file.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static sem_t wake;
static atomic_long requested, completed;
static atomic_int final_requested, finished, started;
static atomic_llong final_asked, final_deadline = INT64_MAX;  /* capture clock ns: asked, stop writing */
static atomic_int patient;              /* the final flush is ovl_writer_finish's */
static atomic_ullong progress;          /* bumped by the writer as rows get written */
static ovl_capture_config cfg;

#define CLOSE_RESERVE_MS 500    /* of a final flush's wait, kept for closing the trace */
#define CLOCK_CHECK_EVENTS 256  /* events drained between two looks at the clock */
#define PATIENT_CAP_MS 60000    /* ovl_writer_finish: the longest it waits, however quiet */
#define STALL_MS 2000           /* ovl_writer_finish: no progress this long means stuck */

typedef struct writer {
  ovl_trace_writer *w;
  ovl_trace_file file;
  ovl_event_rows events;
  ovl_cupti_records records;
  uint64_t last_dropped_host, last_dropped_cupti, last_bad;
  uint64_t discarded;        /* host events left unwritten at the final deadline */
  int64_t commit_due;        /* capture clock ns: commit once a drain gets there */
  unsigned since_clock;      /* events since the last look at the clock */
  int cut_short;             /* the final deadline stopped the writing */
  unsigned last_cupti_generation;
  char nccl_profiler[256];   /* meta.nccl_profiler as last written */
} writer;

/* ---------------------------------------------------------------------------------- */
/* Opening                                                                            */
/* ---------------------------------------------------------------------------------- */

static void read_cmdline(char *buf, size_t size) {
  buf[0] = 0;
  FILE *f = fopen("/proc/self/cmdline", "rbe");
  if (!f) return;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  for (size_t i = 0; i < n; i++)
    if (buf[i] == 0) buf[i] = ' ';
  while (n > 0 && buf[n - 1] == ' ') n--;
  buf[n] = 0;
}

static int write_start_meta(writer *x, ovl_err *err) {
  char host[256] = "unknown", cmdline[4096];
  gethostname(host, sizeof host - 1);
  read_cmdline(cmdline, sizeof cmdline);
  long rank, world;
  ovl_launcher_rank(getenv, &rank, &world);
  char rank_s[32] = "", world_s[32] = "";
  if (rank >= 0) snprintf(rank_s, sizeof rank_s, "%ld", rank);
  if (world >= 0) snprintf(world_s, sizeof world_s, "%ld", world);
  int rc = ovl_tw_meta(x->w, "rank", rank_s, err);
  if (!rc) rc = ovl_tw_meta(x->w, "world_size", world_s, err);
  if (!rc) rc = ovl_tw_meta(x->w, "hostname", host, err);
  if (!rc) rc = ovl_tw_meta_int(x->w, "pid", getpid(), err);
  if (!rc) rc = ovl_tw_meta(x->w, "clock", OVL_CLOCK_NAME, err);
  if (!rc) rc = ovl_tw_meta_int(x->w, "realtime_offset_ns", ovl_clock_realtime_offset_ns(), err);
  if (!rc) rc = ovl_tw_meta(x->w, "ovl_version", OVL_VERSION_STRING, err);
  if (!rc) rc = ovl_tw_meta(x->w, "cmdline", cmdline, err);
  if (!rc) rc = ovl_tw_meta(x->w, "capture", "libovl", err);
  if (!rc) rc = ovl_tw_meta_int(x->w, "dropped_records", 0, err);
  if (!rc) rc = ovl_tw_commit(x->w, err);
  return rc;
}

static int open_trace(writer *x) {
  ovl_err err = {0};
  ovl_trace_sqlite_setup();
  if (ovl_trace_file_create(cfg.output_dir, &x->file) != 0) return -1;
  if (ovl_tw_open_created(&x->w, x->file.name, &err) || write_start_meta(x, &err)) {
    /* A relative name's message lacks the directory: put it in front. */
    ovl_warn(NULL, "%s%s%s; the program runs without capture", x->file.name[0] == '/' ? "" : cfg.output_dir,
             x->file.name[0] == '/' ? "" : "/", err.msg);
    if (x->w) ovl_tw_close(x->w, &err);
    x->w = NULL;
    ovl_trace_file_remove(&x->file);
    return -1;
  }
  ovl_event_rows_init(&x->events, x->w);
  ovl_cupti_records_init(&x->records, ovl_cupti_table(), x->w);
  ovl_debug("writing %s", x->file.shown);
  return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Cycles                                                                             */
/* ---------------------------------------------------------------------------------- */

/* meta.cupti and the keys beside it (cupti_session.h), written again whenever one changes:
** a key whose text became empty is left as it was (none ever does). */
static int write_cupti_meta(writer *x, ovl_err *err) {
  static ovl_cupti_meta m;  /* the writer thread's alone */
  ovl_cupti_meta_read(&m);
  int rc = ovl_tw_meta(x->w, "cupti", m.status, err);
  if (!rc && ovl_cupti_version()) rc = ovl_tw_meta_int(x->w, "cupti_version", ovl_cupti_version(), err);
  if (!rc && m.library[0]) rc = ovl_tw_meta(x->w, "cupti_library", m.library, err);
  if (!rc && m.kinds[0]) rc = ovl_tw_meta(x->w, "cupti_kinds", m.kinds, err);
  if (!rc && m.degraded[0]) rc = ovl_tw_meta(x->w, "cupti_degraded", m.degraded, err);
  if (!rc && m.conflict[0]) rc = ovl_tw_meta(x->w, "cupti_conflict", m.conflict, err);
  if (!rc && m.capture_ended_ns) rc = ovl_tw_meta_int(x->w, "cupti_capture_ended_ns", m.capture_ended_ns, err);
  return rc;
}

/* meta.nccl_profiler (when NCCL loaded libovl as its plugin) and the GPU timer's offset. */
static int write_nccl_profiler_meta(writer *x, ovl_err *err) {
  char text[sizeof x->nccl_profiler];
  ovl_nccl_profiler_describe(text, sizeof text);
  int rc = OVL_OK;
  if (text[0] && strcmp(text, x->nccl_profiler) != 0) {
    memcpy(x->nccl_profiler, text, sizeof text);
    rc = ovl_tw_meta(x->w, "nccl_profiler", text, err);
  }
  if (!rc) rc = ovl_nccl_rows_meta(&x->events.nccl, x->w, err);
  return rc;
}

static int update_meta(writer *x, ovl_err *err) {
  int rc = OVL_OK;
  ovl_event_rows *e = &x->events;
  if (e->meta_changed) {
    e->meta_changed = 0;
    if (e->rank != OVL_NONE) rc = ovl_tw_meta_int(x->w, "rank", e->rank, err);
    if (!rc && e->world_size != OVL_NONE) rc = ovl_tw_meta_int(x->w, "world_size", e->world_size, err);
    if (!rc && e->nccl_version) rc = ovl_tw_meta_int(x->w, "nccl_version", e->nccl_version, err);
  }
  uint64_t host = ovl_hostbuf_dropped() + x->discarded, cupti = ovl_cupti_dropped(), bad = x->records.counts.bad;
  if (!rc && (host != x->last_dropped_host || cupti != x->last_dropped_cupti)) {
    x->last_dropped_host = host;
    x->last_dropped_cupti = cupti;
    rc = ovl_tw_meta_int(x->w, "dropped_records", (int64_t)(host + cupti), err);
    if (!rc) rc = ovl_tw_meta_int(x->w, "dropped_host_events", (int64_t)host, err);
    if (!rc) rc = ovl_tw_meta_int(x->w, "dropped_cupti_records", (int64_t)cupti, err);
  }
  if (!rc && bad != x->last_bad) {
    x->last_bad = bad;
    rc = ovl_tw_meta_int(x->w, "bad_records", (int64_t)bad, err);
  }
  unsigned gen = ovl_cupti_meta_generation();
  if (!rc && gen != x->last_cupti_generation) {
    x->last_cupti_generation = gen;
    rc = write_cupti_meta(x, err);
  }
  if (!rc) rc = write_nccl_profiler_meta(x, err);
  return rc;
}

/* No thread called a hook after the final request: what is left to write is finite, and
** only a stuck writer or the cap ends a patient wait. */
static int quiet_since_final(void) { return !ovl_capture_called_while_closing(); }

/* Whether a final flush must stop writing rows now: past its deadline, unless it is patient,
** within the cap and no thread records anything more (threads still calling are bounded). */
static int final_must_stop(int64_t now) {
  if (!atomic_load_explicit(&final_requested, memory_order_relaxed) || now < atomic_load(&final_deadline)) return 0;
  if (!atomic_load(&patient) || now >= atomic_load(&final_asked) + (int64_t)PATIENT_CAP_MS * 1000000) return 1;
  return !quiet_since_final();
}

/* One host event into rows. Every CLOCK_CHECK_EVENTS events: commit when a flush period has
** passed (a long drain never holds rows back longer), stop at the final deadline. */
static int write_event(void *ctx, const ovl_event_header *ev) {
  writer *x = ctx;
  ovl_event_rows_add(&x->events, ev);
  if (++x->since_clock < CLOCK_CHECK_EVENTS) return 0;
  x->since_clock = 0;
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  int64_t now = ovl_clock_ns();
  if (now >= x->commit_due && !x->events.rc) {
    x->commit_due = now + cfg.flush_ms * 1000000;
    if (ovl_tw_commit(x->w, &x->events.err)) x->events.rc = x->events.err.code ? x->events.err.code : -1;
  }
  if (x->events.rc) return 1;
  return x->cut_short = final_must_stop(now);
}

static int discard_event(void *ctx, const ovl_event_header *ev) {
  (void)ev;
  ((writer *)ctx)->discarded++;
  return 0;
}

static int cycle(writer *x, ovl_err *err) {
  ovl_cupti_buffer *buffers = ovl_cupti_take_completed();
  ovl_hostbuf_drain(write_event, x);
  int rc = x->events.rc;
  if (rc) *err = x->events.err;
  while (buffers) {
    ovl_cupti_buffer *next = buffers->next;
    if (!rc && !x->cut_short) rc = ovl_cupti_records_add(&x->records, buffers->data, buffers->valid, err);
    ovl_cupti_release(buffers);
    buffers = next;
    atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    if (!x->cut_short && final_must_stop(ovl_clock_ns())) x->cut_short = 1;  /* the rest is given back unread */
  }
  if (x->cut_short) ovl_hostbuf_drain(discard_event, x);  /* counted as dropped in meta */
  if (!rc) rc = ovl_cupti_records_flush(&x->records, err);
  if (!rc) rc = update_meta(x, err);
  if (!rc) rc = ovl_tw_commit(x->w, err);
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  x->commit_due = ovl_clock_ns() + cfg.flush_ms * 1000000;
  return rc;
}

static void close_trace(writer *x) {
  ovl_err err = {0};
  if (ovl_tw_close(x->w, &err)) ovl_warn(NULL, "%s", err.msg);
  ovl_debug("closed %s: %llu kernels, %llu memops, %llu api, %llu collectives, %llu nvtx, %llu links, "
            "%llu channel intervals",
            x->file.shown, (unsigned long long)x->records.counts.kernels, (unsigned long long)x->records.counts.memops,
            (unsigned long long)x->records.counts.api,
            (unsigned long long)(x->events.collectives + x->events.nccl.collectives),
            (unsigned long long)x->events.nvtx, (unsigned long long)x->records.counts.links,
            (unsigned long long)x->events.nccl.channels);
  ovl_cupti_records_free(&x->records);
  x->w = NULL;
}

/* Waits for a wake-up or until `deadline` (ns on the capture clock). */
static void wait_until(int64_t deadline) {
  struct timespec ts = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)};
  while (sem_clockwait(&wake, CLOCK_MONOTONIC, &ts) != 0 && errno == EINTR) {
  }
  while (sem_trywait(&wake) == 0) {  /* several wake-ups make one cycle */
  }
}

static void *writer_main(void *arg) {
  (void)arg;
  static writer x;
  if (open_trace(&x) != 0) {
    ovl_capture_stop();
    atomic_store(&finished, 1);
    return NULL;
  }
  int64_t period = cfg.flush_ms * 1000000, next_flush = ovl_clock_ns() + period;
  x.commit_due = next_flush;
  for (;;) {
    wait_until(next_flush);
    long req = atomic_load(&requested);
    int final = atomic_load(&final_requested);
    int periodic = ovl_clock_ns() >= next_flush;
    if (periodic || final || req != atomic_load(&completed)) ovl_cupti_flush(final);
    ovl_err err = {0};
    if (cycle(&x, &err) != 0) {
      ovl_warn(NULL, "%s; capture stopped", err.msg);
      ovl_capture_stop();
      final = 1;
    }
    if (periodic) next_flush = ovl_clock_ns() + period;
    if (final) {
      if (x.cut_short)
        ovl_warn(NULL, "the trace writer stopped at its time limit: %llu host events and the GPU records not yet "
                 "written are left out (counted in meta.dropped_host_events)", (unsigned long long)x.discarded);
      close_trace(&x);
      ovl_debug("closed at %.3f s after the request", (ovl_clock_ns() - atomic_load(&final_asked)) / 1e9);
      ovl_capture_stop();
      atomic_store(&completed, req);
      atomic_store(&finished, 1);
      return NULL;
    }
    atomic_store(&completed, req);
  }
}

/* ---------------------------------------------------------------------------------- */
/* Control                                                                            */
/* ---------------------------------------------------------------------------------- */

int ovl_writer_start(const ovl_capture_config *c) {
  cfg = *c;
  if (sem_init(&wake, 0, 0) != 0) return -1;
  /* Block every signal the kernel may route to any thread, so that none of the program's
  ** handlers ever runs on this thread (and a flush request never waits on itself). */
  sigset_t all, old;
  sigfillset(&all);
  static const int synchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
  for (size_t i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++) sigdelset(&all, synchronous[i]);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t tid;
  int rc = pthread_create(&tid, &attr, writer_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  if (rc != 0) return -1;
  atomic_store(&started, 1);
  return 0;
}

void ovl_writer_wake(void) {
  if (atomic_load(&started)) sem_post(&wake);
}

/* A flush request, waited for until done or until the deadline; a patient final one waits
** on while the producers are quiet and the writer makes progress, up to the cap. */
static int request_and_wait(int final, int timeout_ms, int patient_wait) {
  if (!atomic_load(&started)) return 1;
  if (atomic_load(&finished)) return 1;
  int64_t start = ovl_clock_ns(), deadline = start + (int64_t)timeout_ms * 1000000;
  long ticket = atomic_fetch_add(&requested, 1) + 1;
  if (final) {
    /* The writer stops writing early enough to count what is left and close the file
    ** (measured: 0.05 to 0.2 s on two busy cores). */
    int64_t reserve = timeout_ms / 3 > CLOSE_RESERVE_MS ? timeout_ms / 3 : CLOSE_RESERVE_MS;
    long long stop = start + (timeout_ms - reserve) * 1000000;
    if (patient_wait) atomic_store(&patient, 1);
    if (stop < atomic_load(&final_deadline)) atomic_store(&final_deadline, stop);
    atomic_store(&final_asked, start);
    atomic_store(&final_requested, 1);
    ovl_capture_begin_close();
  }
  sem_post(&wake);
  struct timespec pause = {0, 1000000};
  unsigned long long seen = atomic_load(&progress);
  int64_t seen_at = start, cap = start + (int64_t)PATIENT_CAP_MS * 1000000;
  int said = 0;
  for (;;) {  /* elapsed time on the monotonic clock: sleeps overrun on a loaded machine */
    if (atomic_load(&finished) || atomic_load(&completed) >= ticket) return 1;
    int64_t now = ovl_clock_ns();
    unsigned long long p = atomic_load(&progress);
    if (p != seen) {
      seen = p;
      seen_at = now;
    }
    if (now >= deadline) {
      if (!patient_wait || now >= cap || now - seen_at >= (int64_t)STALL_MS * 1000000 || !quiet_since_final()) return 0;
      if (!said) ovl_debug("the trace writer is still writing what the program recorded before exit");
      said = 1;
    }
    nanosleep(&pause, NULL);
  }
}

int ovl_writer_sync(int final, int timeout_ms) { return request_and_wait(final, timeout_ms, 0); }

int ovl_writer_finish(int timeout_ms) { return request_and_wait(1, timeout_ms, 1); }
