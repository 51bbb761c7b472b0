/*
** Read-only access to one ovl trace file (schema/ovl.sql).
**
** Small tables (meta, strings, collectives, collective_launches) are read into memory;
** large ones are streamed: GPU work (kernels and memops, merged) in start order, NVTX and
** API rows through callbacks. Memory does not grow with the number of kernels.
**
** Rows with NULL in a required field, a non-integer in an integer column, end < start, or a
** value out of base/sane_values.h's ranges (times, durations, sizes, ranks) are skipped and
** counted in ovl_trace_bad_rows(); they are warnings, not errors. Everything else that is wrong with
** the file (not a trace, newer schema, corrupt pages) is an error "<path>: <problem>".
*/
#ifndef OVL_TRACE_READER_H
#define OVL_TRACE_READER_H

#include "base/status.h"
#include "store/trace_rows.h"

#include <stddef.h>
#include <stdint.h>

/* ovl_work_next fails with OVL_EUNSORTED (base/status.h) when rows are further out of start
** order than the reorder window allows: reopen the cursor with reorder_window = 0 (sorted
** by SQLite). */

typedef struct ovl_trace ovl_trace;

typedef struct ovl_bad_rows {
  long kernels, memops, collectives, launches, nvtx, api, strings, channels;
} ovl_bad_rows;

/* A collectives row. Text fields are truncated to fit (names are short). */
typedef struct ovl_coll_rec {
  int64_t id, comm, rank, nranks, seq, count, bytes, peer, device, stream;
  int64_t host_start, host_end, tid, group_id;
  /* Texts interned in the trace (valid until ovl_trace_close), "" when none, cut to at most
  ** OVL_COLL_TEXT_BYTES - 1 bytes (protocol OVL_COLL_PROTOCOL_BYTES - 1): a few distinct
  ** values repeated on every row, where copies in the record took 72 of its 184 bytes (the
  ** loading's peak on 1.37 M collectives: it holds them all). */
  const char *op, *dtype, *redop;
  const char *algorithm, *protocol;  /* NCCL's own account (profiler plugin); "" when unknown */
} ovl_coll_rec;

#define OVL_COLL_TEXT_BYTES 16
#define OVL_COLL_PROTOCOL_BYTES 8

/* A collective's kernel channels as NCCL timed them (collective_channels), on the trace clock:
** each stamp placed with its device's offset from gpu_timer_offsets when the trace has one (the
** writer's final estimate), else as written. */
typedef struct ovl_channel_span {
  int64_t collective;      /* collectives.id */
  int64_t device;          /* OVL_NONE when unknown */
  int64_t start, end;      /* the earliest channel start, the latest channel end */
  int64_t first_end;       /* the earliest channel end: end - first_end is the channels' spread */
  int64_t error;           /* how far the placement may be off (OVL_NONE: unknown or one-sided) */
  int64_t nchannels;
} ovl_channel_span;

typedef struct ovl_launch_rec {
  int64_t collective, correlation;
} ovl_launch_rec;

/* One piece of GPU work: a kernel or a memop. */
typedef struct ovl_work {
  int64_t start, end, device, stream, correlation;
  int64_t name;          /* kernels: strings.id (OVL_NONE when unknown); memops: OVL_NONE */
  int64_t bytes;         /* memops: bytes moved or set; kernels: OVL_NONE */
  int64_t grid[3];       /* kernels, when requested and stored; else OVL_NONE */
  int64_t block[3];      /* kernels: threads per block, likewise */
  int is_memop;
  char memkind[8];       /* memops: HtoD DtoH DtoD PtoP HtoH memset */
} ovl_work;

typedef struct ovl_work_cursor ovl_work_cursor;

typedef struct ovl_work_options {
  size_t reorder_window;  /* rows held to restore start order; 0 = let SQLite sort */
  int launch_dims;        /* also read grid and block dimensions (what kernels are compared by) */
} ovl_work_options;

#define OVL_DEFAULT_REORDER_WINDOW 65536

int ovl_trace_open(const char *path, ovl_trace **out, ovl_err *err);
void ovl_trace_close(ovl_trace *t);

const char *ovl_trace_path(const ovl_trace *t);
/* meta value for `key`, or NULL when absent. */
const char *ovl_trace_meta(const ovl_trace *t, const char *key);
/* Parses meta `key` as an integer; returns `fallback` when absent or empty. */
int64_t ovl_trace_meta_int(const ovl_trace *t, const char *key, int64_t fallback);
/* The meta key prefix of a process group's name: meta "comm_name.<comm>" = "default_pg"
** (written by the importers from the trace's own names; docs/schema.md). */
#define OVL_COMM_NAME_META "comm_name."
/* Calls fn(ctx, comm, name) for every process group the trace names. Returns the first
** non-zero value fn returns, else 0. */
int ovl_trace_comm_names(const ovl_trace *t, int (*fn)(void *ctx, int64_t comm, const char *name), void *ctx);
/* About how many rows table holds (its largest rowid: no scan), 0 when none or unknown: for
** progress displays only. */
int64_t ovl_trace_rows_estimate(const ovl_trace *t, const char *table);
/* strings.value for an id, or NULL. */
const char *ovl_trace_string(const ovl_trace *t, int64_t id);
/* Largest string id + 1 (for arrays indexed by string id), 0 when there are none. */
int64_t ovl_trace_string_limit(const ovl_trace *t);
/* Caches indexed by string id (kernel classes, export names, the importers' NCCL test) cover
** ids below this; larger ids (a broken or hostile table) are judged on every use, so such a
** cache never grows past 16 M entries. */
#define OVL_STRING_CACHE_LIMIT ((int64_t)1 << 24)
int ovl_trace_has_table(const ovl_trace *t, const char *table);
const ovl_bad_rows *ovl_trace_bad_rows(const ovl_trace *t);

/* Reads every collectives row (ordered by id) / collective_launches row. Caller frees *out. */
int ovl_trace_read_collectives(ovl_trace *t, ovl_coll_rec **out, size_t *n, ovl_err *err);
int ovl_trace_read_launches(ovl_trace *t, ovl_launch_rec **out, size_t *n, ovl_err *err);
/* One span per collective with channel rows, ordered by collective id; none (OVL_OK) in traces
** without collective_channels. Spans with a missing or out-of-range time, or end < start, are
** skipped and counted (bad rows: channels). Caller frees *out. */
int ovl_trace_read_channels(ovl_trace *t, ovl_channel_span **out, size_t *n, ovl_err *err);

/* Calls fn for every valid nvtx row in table order; the row's strings live until fn returns.
** A non-zero return from fn stops the scan and is returned. */
typedef int (*ovl_nvtx_fn)(void *ctx, const ovl_nvtx_row *row);
int ovl_trace_scan_nvtx(ovl_trace *t, ovl_nvtx_fn fn, void *ctx, ovl_err *err);

/* Calls fn for every valid api row in table order. With launches_only, only start and
** correlation are read (end, tid and name are OVL_NONE): faster for step projection. */
typedef int (*ovl_api_fn)(void *ctx, const ovl_api_row *row);
int ovl_trace_scan_api(ovl_trace *t, int launches_only, ovl_api_fn fn, void *ctx, ovl_err *err);
/* The same scan split into nparts rowid ranges read concurrently, each on its own thread
** and connection; part i calls fn with ctxs[i]. Rows reach each part in table order, but
** parts interleave: use it for order-independent work. Where reader threads do not pay
** (see OVL_READER_THREADS below), one scan hands every row to ctxs[0]. fn runs inside the
** scan: its read transaction, and its SQLite step when the rows come through SQL (rows are
** pushed out of SQLite or read from the table's pages, docs/architecture.md). */
int ovl_trace_scan_api_split(ovl_trace *t, int launches_only, size_t nparts, ovl_api_fn fn, void **ctxs,
                             ovl_err *err);

/* GPU work, kernels and memops merged, in non-decreasing start order. Each table is decoded
** on a reader thread of its own where that pays: by default when the process has two online
** CPUs for every trace it holds open (a reader and the analysis per trace; a job analyses
** several at once) and at least OVL_READER_THREAD_MIN_CPUS (on 2 CPUs, shared, the threads
** cost 7-30 % more CPU and won or lost wall time with the load: bench/results/report-3m.md);
** the environment variable OVL_READER_THREADS=1 or 0 forces threads on or off. Results are
** the same either way. */
#define OVL_READER_THREAD_MIN_CPUS 4
int ovl_work_open(ovl_trace *t, const ovl_work_options *opt, ovl_work_cursor **out, ovl_err *err);
/* Sets *has_row to 1 and fills *w, or sets it to 0 at the end. May fail with OVL_EUNSORTED
** (*has_row 0: the row out of order is not handed out). */
int ovl_work_next(ovl_work_cursor *c, ovl_work *w, int *has_row, ovl_err *err);
void ovl_work_close(ovl_work_cursor *c);

#endif
