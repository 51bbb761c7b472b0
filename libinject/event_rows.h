/*
** Host events (host_events.h) -> trace rows, on the writer thread.
*/
#ifndef OVL_INJECT_EVENT_ROWS_H
#define OVL_INJECT_EVENT_ROWS_H

#include "host_events.h"
#include "nccl_plugin_rows.h"
#include "store/trace_writer.h"

typedef struct ovl_event_rows {
  ovl_trace_writer *w;
  int rc;                 /* first error; later events are skipped */
  ovl_err err;
  uint64_t collectives, nvtx;  /* rows added */
  ovl_nccl_rows nccl;          /* the NCCL profiler plugin's events, and their rows */
} ovl_event_rows;

void ovl_event_rows_init(ovl_event_rows *e, ovl_trace_writer *w);
/* An ovl_event_fn (host_buffer.h): ctx is an ovl_event_rows; tid, the appending thread's. */
int ovl_event_rows_add(void *ctx, const ovl_event_header *ev, int64_t tid);
/* Rows added so far: one per host event written (the hooks' and the plugin's). */
uint64_t ovl_event_rows_written(const ovl_event_rows *e);

#endif
