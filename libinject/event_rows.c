/* Host events -> rows: see event_rows.h. */
#include "event_rows.h"

#include "collective_ids.h"
#include "nccl_comms.h"
#include "nccl_names.h"

#include <string.h>

void ovl_event_rows_init(ovl_event_rows *e, ovl_trace_writer *w) {
  memset(e, 0, sizeof *e);
  e->w = w;
  ovl_nccl_rows_init(&e->nccl);
}

static int add_collective(ovl_event_rows *e, const ovl_coll_event *c, int64_t tid) {
  const ovl_comm_info *comm = c->comm;
  int64_t nranks = comm ? comm->nranks : OVL_NONE;
  int64_t group = (c->h.flags & OVL_EV_IN_GROUP) && c->id >= OVL_COLL_GROUP_BASE ? ovl_member_group(c->id) : OVL_NONE;
  ovl_collective_row row = {
    c->id, comm ? comm->id : OVL_NONE, comm ? comm->rank : OVL_NONE, nranks, c->seq, ovl_nccl_call_name(c->h.op),
    c->count, ovl_nccl_dtype_name(c->h.dtype), ovl_nccl_send_bytes(c->h.op, c->count, c->h.dtype, nranks),
    ovl_nccl_redop_name(c->h.redop), c->peer, comm ? comm->device : OVL_NONE,
    c->stream == OVL_COLL_NO_STREAM ? OVL_NONE : (int64_t)c->stream, c->host_start, c->host_end, tid, group,
  };
  e->collectives++;
  return ovl_tw_collective(e->w, &row, NULL, &e->err);
}

static int add_nvtx(ovl_event_rows *e, const ovl_nvtx_event *n) {
  char name[OVL_NVTX_NAME_MAX + 1];
  size_t len = n->name_len < OVL_NVTX_NAME_MAX ? n->name_len : OVL_NVTX_NAME_MAX;
  memcpy(name, n->name, len);
  name[len] = 0;
  ovl_nvtx_row row = {n->start, n->end, n->tid, n->domain, name};
  e->nvtx++;
  return ovl_tw_nvtx(e->w, &row, &e->err);
}

uint64_t ovl_event_rows_written(const ovl_event_rows *e) {
  const ovl_nccl_rows *n = &e->nccl;
  return e->collectives + e->nvtx + n->collectives + n->channels + n->proxy_ops + n->proxy_steps;
}

int ovl_event_rows_add(void *ctx, const ovl_event_header *ev, int64_t tid) {
  ovl_event_rows *e = ctx;
  if (e->rc) return 1;
  switch (ev->kind) {
    case OVL_EV_COLLECTIVE: e->rc = add_collective(e, (const ovl_coll_event *)ev, tid); break;
    case OVL_EV_NVTX: e->rc = add_nvtx(e, (const ovl_nvtx_event *)ev); break;
    default:
      if (ovl_nccl_rows_takes(ev)) e->rc = ovl_nccl_rows_add(&e->nccl, e->w, ev, &e->err);
      break;
  }
  return e->rc != 0;
}
