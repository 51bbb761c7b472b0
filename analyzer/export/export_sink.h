/*
** What the export layout hands to a file format (Perfetto protobuf, Chrome JSON).
**
** The layout (export_job.c and friends) decides processes, tracks, lanes, slices, flows and
** counters; a sink only encodes them. Invariants the layout guarantees to every sink:
**   - a process is declared before its tracks, a track before anything on it;
**   - on each track, slices and instants arrive in non-decreasing start order and nest:
**     a slice either lies inside every earlier slice still open at its start, or starts
**     after they ended (end <= start); counters arrive in non-decreasing time order;
**   - a track receives nothing after ovl_export_sink.close_track;
**   - every flow id appears once in a slice's flows_out and once, later in time, in
**     another slice's flows_in.
**   - OVL_XARG_DOUBLE values are finite: unknown values are left out of args (sinks drop a
**     non-finite one rather than write NaN).
** Times are ns, already shifted by the process's clock offset.
*/
#ifndef OVL_EXPORT_SINK_H
#define OVL_EXPORT_SINK_H

#include "base/status.h"

#include <stddef.h>
#include <stdint.h>

#define OVL_NO_PROCESS UINT32_MAX

typedef struct ovl_xprocess {
  uint32_t index;          /* position in rank order, from 0 */
  int64_t rank;            /* OVL_NONE when unknown */
  int64_t chrome_pid;      /* rank when ranks are known and unique, else index */
  const char *name;
} ovl_xprocess;

typedef enum ovl_xtrack_kind {
  OVL_XTRACK_SLICES,
  OVL_XTRACK_COUNTER,
  OVL_XTRACK_COUNTER_BYTES
} ovl_xtrack_kind;

typedef struct ovl_xtrack {
  uint32_t id;             /* dense from 0, in declaration order */
  uint32_t process;        /* owner, or OVL_NO_PROCESS for a trace-wide track */
  ovl_xtrack_kind kind;
  const char *name;        /* lanes of one stream or thread share the name */
  int32_t order;           /* rank among the process's tracks, ascending */
  int64_t chrome_tid;      /* thread id for Chrome JSON, or -1 to let the sink choose */
} ovl_xtrack;

typedef enum ovl_xarg_type { OVL_XARG_INT, OVL_XARG_DOUBLE, OVL_XARG_STRING } ovl_xarg_type;

typedef struct ovl_xarg {
  const char *key;         /* a string that stays, unchanged, as long as the sink (the exporters
                              pass literals): the Perfetto sink remembers its interned name by
                              address */
  ovl_xarg_type type;
  int64_t i;
  double d;
  const char *s;
} ovl_xarg;

typedef struct ovl_xslice {
  int64_t start, end;      /* instants: start only */
  uint32_t name_iid;       /* > 0; equal names have equal iids in one exporter (a child sink's,
                              ovl_perfetto_sink_fork, has iids of its own) */
  const char *name;
  const char *category;    /* GPU: "kernel", "nccl", "memcpy"; host: "nccl_call", "cuda_api", "nvtx";
                              "step", "finding" */
  const ovl_xarg *args;
  size_t nargs;
  const uint64_t *flows_out;  /* flows that start at this slice */
  size_t nflows_out;
  const uint64_t *flows_in;   /* flows that end at this slice */
  size_t nflows_in;
} ovl_xslice;

typedef struct ovl_export_sink {
  void *self;
  int (*process)(void *self, const ovl_xprocess *p, ovl_err *err);
  int (*track)(void *self, const ovl_xtrack *t, ovl_err *err);
  int (*slice)(void *self, uint32_t track, const ovl_xslice *s, ovl_err *err);
  int (*instant)(void *self, uint32_t track, const ovl_xslice *s, ovl_err *err);
  int (*counter)(void *self, uint32_t track, int64_t t, int64_t value, ovl_err *err);
  /* Ends whatever is open on the track and releases its state. */
  int (*close_track)(void *self, uint32_t track, ovl_err *err);
  /* Completes the file; the sink is then destroyed either way. */
  int (*finish)(void *self, ovl_err *err);
  void (*destroy)(void *self);  /* after an error: removes the partial file */
} ovl_export_sink;

/* Sinks writing to `path` (".gz" suffix: gzip-compressed). Chrome JSON writes times as
** microseconds after `time_origin` (ns, stated in the file's otherData): readers parse them
** as doubles, which hold 3 decimals exactly only for small values, not for epoch times. */
int ovl_perfetto_sink_open(const char *path, ovl_export_sink *sink, ovl_err *err);
int ovl_chrome_sink_open(const char *path, int64_t time_origin, ovl_export_sink *sink, ovl_err *err);

/* Perfetto: n child sinks (n < 8) that draw tracks of their own, each on a thread of its own,
** while the sink draws its own (the host pass and the counters beside the GPU pass,
** export_file.c). Processes are declared before the fork; a child's track ids count from 0
** in its own space, and its packets reach the file in chunks of whole packets, between the
** sink's own buffers (the file differs from one drawn on one thread in the order of its
** packets and in the tracks' uuids and sequence ids). Each child's thread ends it with
** ovl_perfetto_sink_child_done (ok: every track closed); then, on the sink's thread,
** ovl_perfetto_sink_join writes what is left (drops it when cancel: the children are told
** to stop), waiting for every child_done, and frees the children. join returns non-zero
** when a child's output failed (cancelled, or out of memory). */
int ovl_perfetto_sink_fork(ovl_export_sink *sink, ovl_export_sink *children, size_t n, ovl_err *err);
void ovl_perfetto_sink_child_done(ovl_export_sink *child, int ok);
int ovl_perfetto_sink_join(ovl_export_sink *sink, ovl_export_sink *children, size_t n, int cancel);

#endif
