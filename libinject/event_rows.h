/*
** Host events (host_events.h) -> trace rows, on the writer thread. Also keeps the evidence
** for meta.rank / meta.world_size: the largest communicator the process joined wins over
** the launcher's environment.
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
  uint64_t collectives, nvtx, comms;
  int64_t rank, world_size;    /* from the largest communicator; OVL_NONE until one is seen */
  int64_t nccl_version;        /* 0 until known */
  int meta_changed;            /* rank, world_size or nccl_version changed since last cleared */
  ovl_nccl_rows nccl;          /* the NCCL profiler plugin's events */
} ovl_event_rows;

void ovl_event_rows_init(ovl_event_rows *e, ovl_trace_writer *w);
/* An ovl_event_fn (host_buffer.h): ctx is an ovl_event_rows. */
void ovl_event_rows_add(void *ctx, const ovl_event_header *ev);

#endif
