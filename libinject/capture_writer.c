/*
** The writer thread: see capture_writer.h.
**
** Requests from other threads (and signal handlers) go through atomics and a semaphore,
** the only primitives that are async-signal-safe: `requested` counts flush requests,
** `completed` the last one served, `finished` says the trace is closed.
**
** One cycle: drain the host events, convert the CUPTI buffers completed so far (GPU rows
** sorted by start within the cycle), commit. Host rows and CUPTI rows need no particular
** order between them: links carry collective ids assigned on the host.
**
** Every commit, wherever it happens (end of a cycle, a long drain's periodic one, the
** trace writer's automatic one, close), goes through the commit hooks: meta's counts are
** written in the same transaction as the rows they describe, and disk space for the
** database is held before the transaction commits (reserve_space), so that what the
** write-ahead log holds can always be moved into the database. When a write fails (a full
** disk), the transaction is rolled back, its rows become dropped, the log is emptied into
** the database, and the capture goes on COUNTING: hooks count calls as dropped, the writer
** keeps meta's counts up to date in place (no journal, no new space) and closes at exit.
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
#include "nccl_comms.h"
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
#include <sys/statvfs.h>
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
#define TIGHT_BYTES (64ll << 20) /* less free disk than this (or than 8 commits): disk nearly full, */
#define TIGHT_EVENTS 2048        /* ... so commit every this many events and empty the log each time */
#define CLOCK_CHECK_EVENTS 256  /* events drained between two looks at the clock */
#define PATIENT_CAP_MS 60000    /* ovl_writer_finish: the longest it waits, however quiet */
#define STALL_MS 2000           /* ovl_writer_finish: no progress this long means stuck */

/* meta keys kept in step with the rows: the value last written of each. */
enum { M_HOST_EVENTS, M_DROPPED_HOST, M_UNWRITTEN_HOST, M_DROPPED_CUPTI, M_DROPPED, M_BAD, M_COUNT };
static const char *const meta_key[M_COUNT] = {"host_events", "dropped_host_events", "unwritten_host_events",
                                              "dropped_cupti_records", "dropped_records", "bad_records"};

/* Rows handed to the trace writer: as of the transaction being committed (pending) and of the
** last commit that succeeded (committed). */
typedef struct row_marks {
  uint64_t host, cupti;
} row_marks;

typedef struct writer {
  ovl_trace_writer *w;
  ovl_trace_file file;
  ovl_event_rows events;
  ovl_cupti_records records;
  uint64_t drained_calls;    /* host events of calls the drains handed out (written or not) */
  uint64_t discarded;        /* of those, left unwritten at the final deadline or after a stop */
  uint64_t cupti_lost;       /* CUPTI rows and records lost: rolled back, or never read */
  row_marks committed, pending;
  uint64_t host_rows_lost;   /* host rows rolled back (a failed commit) */
  int64_t meta_written[M_COUNT];
  int64_t world_written, version_written;  /* meta.world_size and nccl_version as written */
  int64_t commit_due;        /* capture clock ns: commit once a drain gets there */
  unsigned since_clock;      /* events since the last look at the clock */
  int cut_short;             /* the final deadline stopped the writing */
  int stopped;               /* a write failed: no more rows (COUNTING) */
  int unjournaled;           /* after the stop: the log is emptied, writes go in place */
  int meta_failing;          /* even meta could not be written at the last try */
  int stop_written;          /* meta.capture_stopped is in the transaction or committed */
  int no_reserve;            /* the file system holds no space (fallocate unsupported) */
  int tight;                 /* the disk is nearly full: small transactions */
  int64_t last_db_bytes, largest_commit;  /* database size at the last commit; its largest growth */
  unsigned events_in_txn;
  char stop_reason[1024];
  char last_clock[160];
  unsigned last_cupti_generation;
  int cupti_meta_written;    /* meta.cupti and its keys as of last_cupti_generation */
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
  if (!rc) rc = ovl_tw_commit(x->w, err);  /* the hooks add the counts */
  return rc;
}

static int before_commit(void *ctx, ovl_trace_writer *w, ovl_err *err);
static int reserve_space(void *ctx, int64_t db_bytes, ovl_err *err);
static void after_commit(void *ctx);
static int disk_tight(writer *x);

static int open_trace(writer *x) {
  ovl_err err = {0};
  ovl_trace_sqlite_setup();
  if (ovl_trace_file_create(cfg.output_dir, &x->file) != 0) return -1;
  for (int i = 0; i < M_COUNT; i++) x->meta_written[i] = -1;
  x->world_written = x->version_written = OVL_NONE;
  int rc = ovl_tw_open_created(&x->w, x->file.name, &err);
  if (!rc) {
    ovl_tw_commit_hooks hooks = {x, before_commit, reserve_space, after_commit};
    ovl_tw_set_commit_hooks(x->w, &hooks);
    ovl_event_rows_init(&x->events, x->w);
    ovl_cupti_records_init(&x->records, ovl_cupti_table(), x->w);
    rc = write_start_meta(x, &err);
  }
  if (rc) {
    /* A relative name's message lacks the directory: put it in front. */
    ovl_warn(NULL, "%s%s%s; the program runs without capture", x->file.name[0] == '/' ? "" : cfg.output_dir,
             x->file.name[0] == '/' ? "" : "/", err.msg);
    if (x->w) ovl_tw_close(x->w, &err);
    x->w = NULL;
    ovl_cupti_records_free(&x->records);
    ovl_trace_file_remove(&x->file);
    return -1;
  }
  x->tight = disk_tight(x);
  ovl_debug("writing %s", x->file.shown);
  return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Cycles                                                                             */
/* ---------------------------------------------------------------------------------- */

static uint64_t host_rows(const writer *x) { return ovl_event_rows_written(&x->events); }
static uint64_t cupti_rows(const writer *x) {
  const ovl_record_counts *c = &x->records.counts;
  return c->kernels + c->memops + c->api + c->links;
}

static int meta_count(writer *x, int key, int64_t value, ovl_err *err) {
  if (value == x->meta_written[key]) return OVL_OK;
  int rc = ovl_tw_meta_int(x->w, meta_key[key], value, err);
  if (!rc) x->meta_written[key] = value;
  return rc;
}

/* The counts of calls and records as of this transaction: every call the hooks counted is a
** row in it or counted in dropped_host_events (still in the buffers, dropped for want of
** room, let through while closing or stopped, or rolled back). */
static int write_counts(writer *x, ovl_err *err) {
  ovl_hostbuf_counts c;
  ovl_hostbuf_counts_now(&c);
  uint64_t rows = host_rows(x) - x->host_rows_lost;
  uint64_t dropped_host = c.calls > rows ? c.calls - rows : 0;
  uint64_t handed = c.calls - c.dropped, unwritten = handed > x->drained_calls ? handed - x->drained_calls : 0;
  uint64_t dropped_cupti = ovl_cupti_dropped() + x->cupti_lost;
  int rc = meta_count(x, M_HOST_EVENTS, (int64_t)c.calls, err);
  if (!rc) rc = meta_count(x, M_DROPPED_HOST, (int64_t)dropped_host, err);
  if (!rc) rc = meta_count(x, M_UNWRITTEN_HOST, (int64_t)unwritten, err);
  if (!rc) rc = meta_count(x, M_DROPPED_CUPTI, (int64_t)dropped_cupti, err);
  if (!rc) rc = meta_count(x, M_DROPPED, (int64_t)(dropped_host + dropped_cupti), err);
  if (!rc) rc = meta_count(x, M_BAD, (int64_t)x->records.counts.bad, err);
  return rc;
}

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
  int64_t rank, world, version = ovl_comms_nccl_version();
  ovl_comms_world(&rank, &world);
  if (world != OVL_NONE && world != x->world_written) {
    rc = ovl_tw_meta_int(x->w, "rank", rank, err);
    if (!rc) rc = ovl_tw_meta_int(x->w, "world_size", world, err);
    if (!rc) x->world_written = world;
  }
  if (!rc && version && version != x->version_written) {
    rc = ovl_tw_meta_int(x->w, "nccl_version", version, err);
    if (!rc) x->version_written = version;
  }
  if (!rc) rc = write_counts(x, err);
  if (!rc && x->stopped && !x->stop_written) {
    rc = ovl_tw_meta(x->w, "capture_stopped", x->stop_reason, err);
    x->stop_written = !rc;
  }
  unsigned gen = ovl_cupti_meta_generation();
  if (!rc && (!x->cupti_meta_written || gen != x->last_cupti_generation)) {
    rc = write_cupti_meta(x, err);
    x->last_cupti_generation = gen;
    x->cupti_meta_written = !rc;
  }
  char clock[sizeof x->last_clock];
  ovl_clock_describe(clock, sizeof clock);
  if (!rc && strcmp(clock, x->last_clock) != 0) {
    rc = ovl_tw_meta(x->w, "clock_source", clock, err);
    if (!rc) snprintf(x->last_clock, sizeof x->last_clock, "%s", clock);
  }
  if (!rc) rc = write_nccl_profiler_meta(x, err);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Commit hooks                                                                       */
/* ---------------------------------------------------------------------------------- */

/* meta in step with the rows of the transaction; what it holds counts as committed once
** COMMIT succeeds (after_commit). */
static int before_commit(void *ctx, ovl_trace_writer *w, ovl_err *err) {
  (void)w;
  writer *x = ctx;
  x->pending.host = host_rows(x);
  x->pending.cupti = cupti_rows(x);
  return update_meta(x, err);
}

/* Whether the disk is nearly full: then transactions stay small, so that a commit refused
** for want of space loses little, and the log is emptied after each, so that it reuses its
** own space instead of growing. */
static int disk_tight(writer *x) {
  struct statvfs v;
  if (x->file.fd < 0 || fstatvfs(x->file.fd, &v) != 0) return 0;
  long long free_bytes = (long long)v.f_bavail * (long long)v.f_frsize;
  return free_bytes < TIGHT_BYTES || free_bytes < 8 * x->largest_commit;
}

static void after_commit(void *ctx) {
  writer *x = ctx;
  x->committed = x->pending;
  x->events_in_txn = 0;
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  if (x->stopped) return;
  x->tight = disk_tight(x);
  ovl_err err = {0};
  if (x->tight && ovl_tw_checkpoint(x->w, &err)) ovl_debug("%s", err.msg);
}

/* Room on disk for every page the commit puts in the write-ahead log, in the database file
** itself: checkpoints then never need new space, and after a full disk the log can always
** be emptied into the database. Refusing rolls the transaction back (disk full). */
static int reserve_space(void *ctx, int64_t db_bytes, ovl_err *err) {
  writer *x = ctx;
  if (db_bytes - x->last_db_bytes > x->largest_commit) x->largest_commit = db_bytes - x->last_db_bytes;
  x->last_db_bytes = db_bytes;
  if (x->stopped || x->no_reserve) return OVL_OK;
  int e = ovl_trace_file_reserve(&x->file, db_bytes);
  if (e == 0) return OVL_OK;
  if (e == EOPNOTSUPP) {
    x->no_reserve = 1;
    ovl_debug("%s: the file system cannot hold disk space ahead: a full disk may leave the -wal file", x->file.shown);
    return OVL_OK;
  }
  return ovl_fail(err, OVL_EUSER, "%s: no room for the next commit (%lld bytes): %s", x->file.shown,
                  (long long)db_bytes, strerror(e));
}

/* ---------------------------------------------------------------------------------- */
/* After a write failure: counting                                                    */
/* ---------------------------------------------------------------------------------- */

/* After a rollback: meta's values are written again at the next commit. */
static void forget_meta(writer *x) {
  for (int i = 0; i < M_COUNT; i++) x->meta_written[i] = -1;
  x->world_written = x->version_written = OVL_NONE;
  x->cupti_meta_written = 0;
  x->last_clock[0] = 0;
  x->stop_written = 0;
}

/* The rows since the last commit are lost; from now on the hooks only count calls. */
static void stop_writing(writer *x, const ovl_err *err) {
  ovl_warn(NULL, "%s; capture stopped: the trace keeps what it committed, and counts the calls it cannot hold in "
           "meta.dropped_records", err->msg);
  ovl_capture_stop_writing();
  x->stopped = 1;
  snprintf(x->stop_reason, sizeof x->stop_reason, "%s", err->msg);
  ovl_tw_rollback(x->w);
  forget_meta(x);
  x->host_rows_lost += host_rows(x) - x->committed.host;
  x->cupti_lost += cupti_rows(x) - x->committed.cupti;
  x->committed.host = host_rows(x);
  x->committed.cupti = cupti_rows(x);
}

/* Empties the log into the database (once; retried while readers hold it), then writes meta
** in place: the reason, and the counts as of now. */
static int write_stopped_meta(writer *x) {
  ovl_err err = {0};
  if (!x->unjournaled) x->unjournaled = ovl_tw_unjournaled(x->w, &err) == OVL_OK;
  int rc = ovl_tw_commit(x->w, &err);  /* the hooks write the counts and the reason */
  if (rc) {
    ovl_tw_rollback(x->w);
    forget_meta(x);
  }
  if (rc && !x->meta_failing) ovl_debug("%s: the counts could not be written yet: %s", x->file.shown, err.msg);
  x->meta_failing = rc != 0;
  return rc;
}

/* The records of a CUPTI buffer, counted without being written. */
static uint64_t records_in(const ovl_cupti_buffer *b) {
  const ovl_cupti_api *api = ovl_cupti_table();
  uint64_t n = 0;
  CUpti_Activity *rec = NULL;
  while (api && api->ActivityGetNextRecord && api->ActivityGetNextRecord(b->data, b->valid, &rec) == CUPTI_SUCCESS) n++;
  return n;
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

/* Fills the producers' stock of warm chunks a slab at a time, each slab counted as progress:
** on a starved machine faulting memory in is slow, not stuck (a patient ovl_writer_finish gave
** up on a writer still warming its first stock, with every call of the flood unwritten). Not
** once the final flush was asked for: nobody appends any more. */
static void warm_stock(void) {
  while (!atomic_load_explicit(&final_requested, memory_order_relaxed) &&
         ovl_hostbuf_prepare(OVL_HOSTBUF_SLAB_CHUNKS) > 0)
    atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

/* One host event into rows. Every CLOCK_CHECK_EVENTS events: commit when a flush period has
** passed (a long drain never holds rows back longer), stop at the final deadline, and keep
** the producers' stock of warm chunks full. */
static int write_event(void *ctx, const ovl_event_header *ev, int64_t tid) {
  writer *x = ctx;
  x->drained_calls++;
  ovl_event_rows_add(&x->events, ev, tid);
  if (x->tight && ++x->events_in_txn >= TIGHT_EVENTS && !x->events.rc && ovl_tw_commit(x->w, &x->events.err))
    x->events.rc = x->events.err.code ? x->events.err.code : -1;
  if (x->events.rc) return 1;
  if (++x->since_clock < CLOCK_CHECK_EVENTS) return 0;
  x->since_clock = 0;
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  warm_stock();
  int64_t now = ovl_clock_ns();
  if (now >= x->commit_due && !x->events.rc) {
    x->commit_due = now + cfg.flush_ms * 1000000;
    if (ovl_tw_commit(x->w, &x->events.err)) x->events.rc = x->events.err.code ? x->events.err.code : -1;
  }
  if (x->events.rc) return 1;
  return x->cut_short = final_must_stop(now);
}

static int discard_event(void *ctx, const ovl_event_header *ev, int64_t tid) {
  (void)ev, (void)tid;
  writer *x = ctx;
  x->drained_calls++;
  x->discarded++;
  return 0;
}

static int cycle(writer *x, ovl_err *err) {
  ovl_cupti_buffer *buffers = ovl_cupti_take_completed();
  size_t drained = ovl_hostbuf_drain(write_event, x);
  /* The final cycle takes what was appended while its first drain ran too: once the capture
  ** is CLOSING nothing more comes, so this ends (or the deadline ends it). */
  while (drained && atomic_load(&final_requested) && !x->cut_short && !x->events.rc)
    drained = ovl_hostbuf_drain(write_event, x);
  int rc = x->events.rc;
  if (rc) *err = x->events.err;
  while (buffers) {
    ovl_cupti_buffer *next = buffers->next;
    if (!rc && !x->cut_short) rc = ovl_cupti_records_add(&x->records, buffers->data, buffers->valid, err);
    else x->cupti_lost += records_in(buffers);
    ovl_cupti_release(buffers);
    buffers = next;
    atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    if (!x->cut_short && final_must_stop(ovl_clock_ns())) x->cut_short = 1;  /* the rest is given back unread */
  }
  if (x->cut_short) ovl_hostbuf_drain(discard_event, x);  /* counted as dropped in meta */
  if (!rc) rc = ovl_cupti_records_flush(&x->records, err);
  if (!rc) rc = ovl_tw_commit(x->w, err);
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  x->commit_due = ovl_clock_ns() + cfg.flush_ms * 1000000;
  return rc;
}

/* A cycle after the stop: what the buffers still hold is counted, not written. */
static void stopped_cycle(writer *x) {
  ovl_hostbuf_drain(discard_event, x);
  for (ovl_cupti_buffer *b = ovl_cupti_take_completed(), *next; b; b = next) {
    next = b->next;
    x->cupti_lost += records_in(b);
    ovl_cupti_release(b);
  }
  write_stopped_meta(x);
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

static void close_trace(writer *x) {
  ovl_err err = {0};
  if (x->stopped) ovl_tw_rollback(x->w);  /* only meta, written in place, is left to commit */
  if (ovl_tw_close(x->w, &err)) ovl_warn(NULL, "%s", err.msg);
  ovl_trace_file_release(&x->file);
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

/* Waits for a wake-up or until `deadline` (ns on CLOCK_MONOTONIC); returns 1 when woken. */
static int wait_until(int64_t deadline) {
  struct timespec ts = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)};
  int rc;
  while ((rc = sem_clockwait(&wake, CLOCK_MONOTONIC, &ts)) != 0 && errno == EINTR) {
  }
  while (sem_trywait(&wake) == 0) {  /* several wake-ups make one cycle */
  }
  return rc == 0;
}

/* Refits the clock's TSC line when it is due; returns when the next refit is due. */
static int64_t calibrate(int64_t due) {
  int64_t now = ovl_clock_gettime_ns();
  if (now < due) return due;
  int64_t wait = ovl_clock_calibrate(cfg.tsc_clock);
  return wait == INT64_MAX ? INT64_MAX : now + wait;
}

static void *writer_main(void *arg) {
  (void)arg;
  static writer x;
  int64_t next_fit = calibrate(0);  /* the first fit, when the process ran 1 ms since loading libovl */
  /* Warm chunks for the threads calling already: one slab before the trace is opened (its
  ** first commit waits for no more than that), the rest of the stock after. */
  ovl_hostbuf_prepare(OVL_HOSTBUF_SLAB_CHUNKS);
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  if (open_trace(&x) != 0) {
    ovl_capture_stop();
    atomic_store(&finished, 1);
    return NULL;
  }
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
  warm_stock();
  int64_t period = cfg.flush_ms * 1000000, next_flush = ovl_clock_ns() + period;
  x.commit_due = next_flush;
  for (;;) {
    int woken = wait_until(next_fit < next_flush ? next_fit : next_flush);
    next_fit = calibrate(next_fit);
    warm_stock();
    long req = atomic_load(&requested);
    int final = atomic_load(&final_requested);
    int periodic = ovl_clock_ns() >= next_flush, asked = final || req != atomic_load(&completed);
    if (!periodic && !asked && !(woken && ovl_hostbuf_wants_drain())) continue;  /* the clock, or warm chunks */
    if (periodic || asked) ovl_cupti_flush(final);
    ovl_err err = {0};
    if (x.stopped) {
      stopped_cycle(&x);
    } else if (cycle(&x, &err) != 0) {
      stop_writing(&x, &err);
      stopped_cycle(&x);
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
