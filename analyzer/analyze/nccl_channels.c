/* NCCL's channel timing as facts: see nccl_channels.h. */
#include "nccl_channels.h"

#include "base/none.h"

#include <string.h>

void ovl_coll_channels_measure(ovl_coll_channels *out, const ovl_channel_span *span, int timed_by_channels,
                               int64_t gpu_start, int64_t gpu_end) {
  memset(out, 0, sizeof *out);
  out->start = out->end = out->spread = out->outside = OVL_NONE;
  if (!span) return;
  out->n = span->nchannels;
  out->start = span->start;
  out->end = span->end;
  out->spread = span->end - span->first_end;
  out->timed = timed_by_channels;
  if (timed_by_channels || gpu_start == OVL_NONE || gpu_end == OVL_NONE) return;
  int64_t before = gpu_start - span->start, after = span->end - gpu_end;
  out->outside = (before > 0 ? before : 0) + (after > 0 ? after : 0);
  out->agree = out->outside <= OVL_CHANNEL_AGREE_NS + (span->error != OVL_NONE ? span->error : 0);
}

void ovl_channel_facts_init(ovl_channel_facts *f) {
  memset(f, 0, sizeof *f);
  f->max_outside = f->max_spread = f->max_spread_id = OVL_NONE;
}

void ovl_channel_facts_add(ovl_channel_facts *f, const ovl_coll_channels *c, int64_t coll_id) {
  if (c->n <= 0) return;
  f->collectives++;
  f->timed += c->timed;
  if (c->outside != OVL_NONE) {
    f->checked++;
    f->agree += c->agree;
    if (f->max_outside == OVL_NONE || c->outside > f->max_outside) f->max_outside = c->outside;
  }
  if (f->max_spread == OVL_NONE || c->spread > f->max_spread) {
    f->max_spread = c->spread;
    f->max_spread_id = coll_id;
  }
}
