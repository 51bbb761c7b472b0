/* Host events -> rows: see event_rows.h. */
#include "event_rows.h"

#include "nccl_names.h"

#include <string.h>

void ovl_event_rows_init(ovl_event_rows *e, ovl_trace_writer *w) {
  memset(e, 0, sizeof *e);
  e->w = w;
  e->rank = e->world_size = OVL_NONE;
  ovl_nccl_rows_init(&e->nccl);
}

static int add_collective(ovl_event_rows *e, const ovl_coll_event *c) {
  ovl_collective_row row = {
    c->id, c->comm, c->rank, c->nranks, c->seq, ovl_nccl_call_name(c->op), c->count,
    ovl_nccl_dtype_name(c->dtype), c->bytes, ovl_nccl_redop_name(c->redop), c->peer,
    c->device, c->stream, c->host_start, c->host_end, c->tid, c->group_id,
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

static void add_comm(ovl_event_rows *e, const ovl_comm_event *c) {
  e->comms++;
  if (c->nccl_version && c->nccl_version != e->nccl_version) {
    e->nccl_version = c->nccl_version;
    e->meta_changed = 1;
  }
  /* The largest communicator is the job's world; the first one of that size decides. */
  if (c->nranks != OVL_NONE && c->rank != OVL_NONE && (e->world_size == OVL_NONE || c->nranks > e->world_size)) {
    e->world_size = c->nranks;
    e->rank = c->rank;
    e->meta_changed = 1;
  }
}

void ovl_event_rows_add(void *ctx, const ovl_event_header *ev) {
  ovl_event_rows *e = ctx;
  if (e->rc) return;
  switch (ev->kind) {
    case OVL_EV_COLLECTIVE: e->rc = add_collective(e, (const ovl_coll_event *)ev); break;
    case OVL_EV_NVTX: e->rc = add_nvtx(e, (const ovl_nvtx_event *)ev); break;
    case OVL_EV_COMM: add_comm(e, (const ovl_comm_event *)ev); break;
    default:
      if (ovl_nccl_rows_takes(ev)) e->rc = ovl_nccl_rows_add(&e->nccl, e->w, ev, &e->err);
      break;
  }
}
