/* NCCL profiler plugin events -> rows: see nccl_plugin_rows.h. */
#include "nccl_plugin_rows.h"

#include "nccl_names.h"
#include "nccl_plugin_events.h"

#include <stdio.h>
#include <string.h>

void ovl_nccl_rows_init(ovl_nccl_rows *n) {
  memset(n, 0, sizeof *n);
  for (int d = 0; d <= OVL_NCCL_ROWS_DEVICES; d++) ovl_gpu_timer_init(&n->timers[d]);
}

int ovl_nccl_rows_takes(const ovl_event_header *ev) {
  return ev->kind >= OVL_EV_NCCL_COLL && ev->kind <= OVL_EV_NCCL_PROXY_STEP;
}

static ovl_gpu_timer *timer_of(ovl_nccl_rows *n, int64_t device) {
  return &n->timers[device >= 0 && device < OVL_NCCL_ROWS_DEVICES ? device : OVL_NCCL_ROWS_DEVICES];
}

static int add_collective(ovl_nccl_rows *n, ovl_trace_writer *w, const ovl_nccl_coll_event *c, ovl_err *err) {
  ovl_collective_row row = {
    c->id, c->comm, c->rank, c->nranks, c->seq, ovl_nccl_call_name(c->op), c->count,
    c->dtype >= 0 ? ovl_nccl_dtype_name(c->dtype) : NULL, c->bytes, ovl_nccl_redop_name(c->redop), c->peer,
    c->device, c->stream, c->host_start, c->host_end, c->tid, c->group_id,
  };
  ovl_collective_nccl extra = {
    c->algorithm[0] ? c->algorithm : NULL, c->protocol[0] ? c->protocol : NULL,
    c->nchannels >= 0 ? c->nchannels : OVL_NONE, c->nwarps >= 0 ? c->nwarps : OVL_NONE, c->nccl_seq,
  };
  n->collectives++;
  return ovl_tw_collective_nccl(w, &row, &extra, NULL, err);
}

/* The channel's stamps bound the offset, which then places them on the capture clock. */
static int add_channel(ovl_nccl_rows *n, ovl_trace_writer *w, const ovl_nccl_channel_event *c, ovl_err *err) {
  ovl_gpu_timer *t = timer_of(n, c->device);
  ovl_gpu_timer_note(t, c->host_before, c->gpu_start, c->seen_start);
  ovl_gpu_timer_note(t, c->host_before, c->gpu_end, c->seen_end);
  int64_t offset = 0, error = 0;
  int known = ovl_gpu_timer_offset(t, &offset, &error) == 0 && c->gpu_start > 0 && c->gpu_end >= c->gpu_start;
  ovl_channel_row row = {
    c->collective, c->channel, c->device >= 0 ? c->device : OVL_NONE,
    known ? c->gpu_start + offset : OVL_NONE, known ? c->gpu_end + offset : OVL_NONE,
    c->gpu_start > 0 ? c->gpu_start : OVL_NONE, c->gpu_end > 0 ? c->gpu_end : OVL_NONE,
  };
  n->channels++;
  return ovl_tw_channel(w, &row, err);
}

static int add_proxy_op(ovl_nccl_rows *n, ovl_trace_writer *w, const ovl_nccl_proxy_op_event *p, ovl_err *err) {
  ovl_proxy_op_row row = {p->collective, p->channel, p->peer, p->is_send, p->nsteps, p->chunk_size, p->start, p->end};
  n->proxy_ops++;
  return ovl_tw_proxy_op(w, &row, err);
}

static int add_proxy_step(ovl_nccl_rows *n, ovl_trace_writer *w, const ovl_nccl_proxy_step_event *p, ovl_err *err) {
  ovl_proxy_step_row row = {p->collective, p->channel, p->is_send, p->step, p->bytes, p->start, p->end,
                            p->gpu_wait, p->peer_wait, p->net_wait, p->flush_wait};
  n->proxy_steps++;
  return ovl_tw_proxy_step(w, &row, err);
}

int ovl_nccl_rows_add(ovl_nccl_rows *n, ovl_trace_writer *w, const ovl_event_header *ev, ovl_err *err) {
  switch (ev->kind) {
    case OVL_EV_NCCL_COLL: return add_collective(n, w, (const ovl_nccl_coll_event *)ev, err);
    case OVL_EV_NCCL_CHANNEL: return add_channel(n, w, (const ovl_nccl_channel_event *)ev, err);
    case OVL_EV_NCCL_PROXY_OP: return add_proxy_op(n, w, (const ovl_nccl_proxy_op_event *)ev, err);
    case OVL_EV_NCCL_PROXY_STEP: return add_proxy_step(n, w, (const ovl_nccl_proxy_step_event *)ev, err);
    default: return OVL_OK;
  }
}

/* "device 0: offset 1699...ns +/- 850 ns from 1234 stamps; ..." for every device with one. */
static void describe(const ovl_nccl_rows *n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = 0;
  for (int d = 0; d <= OVL_NCCL_ROWS_DEVICES && used < size; d++) {
    int64_t offset, error;
    if (ovl_gpu_timer_offset(&n->timers[d], &offset, &error) != 0) continue;
    char dev[24];
    snprintf(dev, sizeof dev, d < OVL_NCCL_ROWS_DEVICES ? "device %d" : "other devices", d);
    int k = snprintf(buf + used, size - used, "%s%s: offset %lld ns +/- %lld ns from %llu stamps%s",
                     used ? "; " : "", dev, (long long)offset, (long long)error,
                     (unsigned long long)n->timers[d].stamps,
                     n->timers[d].contradictions ? " (some bounds contradicted: the upper one kept)" : "");
    used += k > 0 ? (size_t)k : 0;
  }
}

/* gpu_timer_offsets: one row per device with stamps (replaced as the estimate improves). */
static int write_offsets(ovl_nccl_rows *n, ovl_trace_writer *w, ovl_err *err) {
  int rc = OVL_OK;
  for (int d = 0; !rc && d <= OVL_NCCL_ROWS_DEVICES; d++) {
    int64_t offset, error;
    if (n->timers[d].stamps == n->stamps_written[d] || ovl_gpu_timer_offset(&n->timers[d], &offset, &error) != 0)
      continue;
    n->stamps_written[d] = n->timers[d].stamps;
    rc = ovl_tw_gpu_timer_offset(w, d < OVL_NCCL_ROWS_DEVICES ? d : -1, offset, error >= 0 ? error : OVL_NONE,
                                 (int64_t)n->timers[d].stamps, err);
  }
  return rc;
}

int ovl_nccl_rows_meta(ovl_nccl_rows *n, ovl_trace_writer *w, ovl_err *err) {
  uint64_t stamps = 0;
  const ovl_gpu_timer *first = NULL;
  for (int d = 0; d <= OVL_NCCL_ROWS_DEVICES; d++) {
    stamps += n->timers[d].stamps;
    if (!first && n->timers[d].stamps) first = &n->timers[d];
  }
  if (!first || stamps == n->stamps_in_meta) return OVL_OK;
  n->stamps_in_meta = stamps;
  int64_t offset, error;
  if (ovl_gpu_timer_offset(first, &offset, &error) != 0) return OVL_OK;
  char text[1024];
  describe(n, text, sizeof text);
  int rc = ovl_tw_meta_int(w, "gpu_timer_offset_ns", offset, err);
  if (!rc) rc = ovl_tw_meta_int(w, "gpu_timer_offset_error_ns", error, err);
  if (!rc) rc = ovl_tw_meta(w, "gpu_timer", text, err);
  if (!rc) rc = write_offsets(n, w, err);
  return rc;
}
