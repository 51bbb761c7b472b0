/* Host events -> rows: see event_rows.h. */
#include "event_rows.h"

#include "nccl_names.h"

#include <string.h>

void ovl_event_rows_init(ovl_event_rows *e, ovl_trace_writer *w) {
  memset(e, 0, sizeof *e);
  e->w = w;
}

static int add_collective(ovl_event_rows *e, const ovl_coll_event *c) {
  ovl_collective_row row = {
    c->id, c->comm, c->rank, c->nranks, c->seq, ovl_nccl_call_name(c->op), c->count,
    ovl_nccl_dtype_name(c->dtype), ovl_nccl_send_bytes(c->op, c->count, c->dtype, c->nranks),
    ovl_nccl_redop_name(c->redop), c->peer, c->device, c->stream, c->host_start, c->host_end, c->tid, c->group_id,
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

void ovl_event_rows_add(void *ctx, const ovl_event_header *ev) {
  ovl_event_rows *e = ctx;
  if (e->rc) return;
  switch (ev->kind) {
    case OVL_EV_COLLECTIVE: e->rc = add_collective(e, (const ovl_coll_event *)ev); break;
    case OVL_EV_NVTX: e->rc = add_nvtx(e, (const ovl_nvtx_event *)ev); break;
    default: break;
  }
}
