/*
** NCCL's own timing of a collective's kernel channels (collective_channels, written by libovl as
** NCCL's profiler plugin), as measured facts.
**
** Per collective: how many channels NCCL timed, their hull, and their spread: the latest
** channel end minus the earliest, i.e. how long the slowest channel kept the collective going
** after the fastest was done (a slow channel, a slow link). Its channels either are its GPU time
** (no kernel or copy linked to it: a trace without CUPTI; work_stream.h) or are checked against
** the kernels CUPTI linked to it: they must lie within them, give or take the GPU-timer offset's
** error and OVL_CHANNEL_AGREE_NS.
** Per rank: how many collectives had channels, were timed by them, were checked and agreed, the
** farthest the channels fell outside their kernels, and the widest spread (and its collective).
*/
#ifndef OVL_NCCL_CHANNELS_H
#define OVL_NCCL_CHANNELS_H

#include "../load/trace_reader.h"

#include <stdint.h>

/* Channels may start this much before, or end this much after, the kernels that run them and
** still agree (beside the offset's error): the GPU timer ticks in microseconds on some GPUs,
** and a kernel's own launch and teardown take a few. */
#define OVL_CHANNEL_AGREE_NS 5000

typedef struct ovl_coll_channels {
  int64_t n;                 /* channels NCCL timed; 0: none (the rest is then OVL_NONE / 0) */
  int64_t start, end;        /* their hull on the trace clock */
  int64_t spread;            /* the latest channel end minus the earliest */
  int64_t outside;           /* checked: how far they fall outside the linked GPU work; else OVL_NONE */
  int timed;                 /* 1: they are the collective's GPU time */
  int agree;                 /* checked and within OVL_CHANNEL_AGREE_NS plus the offset's error */
} ovl_coll_channels;

typedef struct ovl_channel_facts {
  long collectives, timed, checked, agree;
  int64_t max_outside;       /* over the checked ones; OVL_NONE when none was */
  int64_t max_spread;        /* OVL_NONE when no collective had channels */
  int64_t max_spread_id;     /* collectives.id of the widest spread */
} ovl_channel_facts;

/* A collective's channel facts from its span (NULL: none) and the hull of its GPU work
** (gpu_start, gpu_end), which is the span itself when timed_by_channels. */
void ovl_coll_channels_measure(ovl_coll_channels *out, const ovl_channel_span *span, int timed_by_channels,
                               int64_t gpu_start, int64_t gpu_end);
void ovl_channel_facts_init(ovl_channel_facts *f);
void ovl_channel_facts_add(ovl_channel_facts *f, const ovl_coll_channels *c, int64_t coll_id);

#endif
