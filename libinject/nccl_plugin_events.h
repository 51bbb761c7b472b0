/*
** Events that libovl as NCCL's profiler plugin (nccl_profiler.c) hands to the writer thread
** through the host buffers (host_buffer.h), beside the hooks' events (host_events.h). Like
** those, each is self-contained (sizes are multiples of 8; header.size counts the record) and
** becomes rows without looking anything up (nccl_plugin_rows.h). Their kinds start at 16,
** clear of host_events.h's.
*/
#ifndef OVL_INJECT_NCCL_PLUGIN_EVENTS_H
#define OVL_INJECT_NCCL_PLUGIN_EVENTS_H

#include "host_events.h"

#include <stdint.h>

enum {
  OVL_EV_NCCL_COLL = 16,   /* a collectives row with NCCL's account (ovl_nccl_coll_event) */
  OVL_EV_NCCL_CHANNEL,     /* one channel's GPU interval: a collective_channels row */
  OVL_EV_NCCL_PROXY_OP,    /* a proxy_ops row (OVL_NCCL_PROXY=1) */
  OVL_EV_NCCL_PROXY_STEP,  /* a proxy_steps row (OVL_NCCL_PROXY=1) */
};

/* A whole collectives row: the API call as the hooks saw it (when they did) or as NCCL
** reported it, and what only NCCL knows. */
typedef struct ovl_nccl_coll_event {
  ovl_event_header h;
  int64_t id, comm, rank, nranks, seq, count, bytes, peer, device, stream;
  int64_t host_start, host_end, tid, group_id;  /* OVL_NONE when unknown / not grouped */
  int64_t nccl_seq;                             /* OVL_NONE: NCCL gave none (point-to-point) */
  int32_t op;                                   /* ovl_nccl_call (nccl_names.h) */
  int32_t dtype;                                /* ncclDataType_t value, -1 when unknown */
  int32_t redop;                                /* ncclRedOp_t value, -1 when unknown or none */
  int16_t nchannels, nwarps;                    /* -1 when unknown */
  char algorithm[16], protocol[8];              /* "" when unknown */
} ovl_nccl_coll_event;

/* One channel of a collective's kernel: two GPU global-timer stamps, each with the host times
** that bracket it (gpu_timer.h). */
typedef struct ovl_nccl_channel_event {
  ovl_event_header h;
  int64_t collective, device, channel;
  int64_t gpu_start, gpu_end;          /* GPU global timer, ns */
  int64_t host_before;                 /* a host time before the kernel was launched */
  int64_t seen_start, seen_end;        /* host times NCCL reported the two stamps */
} ovl_nccl_channel_event;

typedef struct ovl_nccl_proxy_op_event {
  ovl_event_header h;
  int64_t collective, channel, peer, is_send, nsteps, chunk_size, start, end;
} ovl_nccl_proxy_op_event;

typedef struct ovl_nccl_proxy_step_event {
  ovl_event_header h;
  int64_t collective, channel, is_send, step, bytes, start, end;
  int64_t gpu_wait, peer_wait, net_wait, flush_wait;
} ovl_nccl_proxy_step_event;

#endif
