/*
** libovl.so as NCCL's profiler plugin: NCCL_PROFILER_PLUGIN=/path/to/libovl.so makes NCCL
** (whatever way it is linked) load libovl and report to it, through the exported
** ncclProfiler_v5 table (NCCL 2.28 on; ncclProfiler_v4 for the releases before), its own account of
** every call: the API call, the task with NCCL's sequence number, algorithm, protocol and
** channels, the kernel launch, each channel's GPU start and stop from the GPU global timer,
** and (OVL_NCCL_PROXY=1) proxy operations and their network steps. docs/capture.md says when
** to use it; nccl_profiler_abi.h gives the interface.
**
** One collective = one record (coll_rec), created by the API event (v5) or the task event (v4),
** whose row is written once every part has arrived: the API call's end, the task with NCCL's
** details and, when the NCCL hooks intercepted the same call (nccl_join.h), the hooks' end of
** it. Whichever part comes last appends the row, on whatever thread it comes. Channel and
** proxy events become their own rows, keyed by the collective's id.
**
** Threads: API events come on the calling thread, tasks and launches on the launching one
** (the caller, or NCCL's thread for non-blocking communicators), channels and proxy events on
** NCCL's proxy thread. Handles go back to NCCL and come back as parents, possibly after they
** were stopped: records live in pools that quarantine what is released (nccl_plugin_pool.h),
** and a child takes a reference only while its parent still holds one.
**
** Never fails NCCL: every function returns success but init, which declines (and NCCL runs
** without a plugin) when capture is off; events that find no memory are dropped and counted.
** A second libovl (another file) loaded as the plugin beside a preloaded one forwards to it.
*/
#define _GNU_SOURCE
#include "nccl_profiler.h"

#include "capture.h"
#include "clock.h"
#include "collective_ids.h"
#include "cupti_session.h"
#include "host_buffer.h"
#include "interpose.h"
#include "log.h"
#include "nccl_comms.h"
#include "nccl_join.h"
#include "nccl_names.h"
#include "nccl_plugin_events.h"
#include "nccl_plugin_pool.h"
#include "nccl_profiler_abi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN_NAME "ovl"

/* The first word of every handle libovl gives NCCL. */
enum {
  H_GROUP_API = 0x6f760001,  /* group_rec */
  H_API,                     /* coll_rec, its API half */
  H_TASK,                    /* coll_rec, its task half */
  H_CHANNEL,                 /* channel_h */
  H_PROXY_OP,                /* proxy_op_h */
  H_PROXY_STEP,              /* proxy_step_h */
  H_LAUNCH,                  /* launch_handle[] */
  H_PLAN_GROUP,              /* plan_group_handle */
  H_DROPPED_OP,              /* dropped_op_handle: a proxy operation that found no handle */
};

/* Plugin groups take ids with bit 40 set, clear of the hooks' groups (counted from 1). */
#define PLUGIN_GROUP_BIT (UINT64_C(1) << 40)
/* Calls outside a numbered group: ids from here (the hooks' ids stay far below, their groups
** above: collective_ids.h). */
#define PLUGIN_SINGLE_BASE (INT64_C(1) << 61)

typedef struct plugin_comm {
  struct plugin_comm *next;    /* all of them, newest first (never freed) */
  int version;                 /* 4 or 5: the interface NCCL called init through */
  int64_t id, rank, nranks, device;
  atomic_int_fast64_t next_seq;  /* calls counted while no hooks' communicator is bound (v4 tasks
                                 ** may come from NCCL's host-stream thread) */
  _Atomic(ovl_comm_info *) bound;  /* the hooks' entry for the same communicator, once known */
} plugin_comm;

static _Atomic(plugin_comm *) comms;

typedef struct group_rec {
  uint32_t kind;
  int depth;                   /* NCCL's group depth: 1 its implicit group around one call */
  uint64_t g;
  atomic_uint members;         /* calls under it whose rows the plugin writes */
} group_rec;

typedef struct coll_rec {
  uint32_t api_kind, task_kind;  /* the two handles NCCL holds: &api_kind, &task_kind */
  atomic_int refs;               /* handles and children that may still use it */
  atomic_int parts;              /* parts of the row still to come */
  atomic_int failed;             /* the hooks' call failed: no row */
  int owned;                     /* the plugin writes the row (0: joined to the hooks' call) */
  plugin_comm *comm;
  group_rec *group;
  int64_t device;                /* for the channel rows (ev.device may be rewritten by the hooks) */
  int64_t host_before;           /* before the kernel launch (a lower bound for the clock), or OVL_NONE */
  ovl_nccl_coll_event ev;
} coll_rec;

typedef struct channel_h {
  uint32_t kind;
  int took_ref;
  coll_rec *rec;
  int64_t channel, gpu_start, seen_start, gpu_end, seen_end;
} channel_h;

typedef struct proxy_op_h {
  uint32_t kind;
  int took_ref;
  coll_rec *rec;
  ovl_nccl_proxy_op_event ev;
} proxy_op_h;

typedef struct proxy_step_h {
  uint32_t kind;
  ovl_nccl_proxy_step_event ev;
} proxy_step_h;

static ovl_pool recs = OVL_POOL_INIT(sizeof(coll_rec), 1u << 18, 16384);
static ovl_pool groups = OVL_POOL_INIT(sizeof(group_rec), 1u << 16, 4096);
static ovl_pool channels = OVL_POOL_INIT(sizeof(channel_h), 1u << 16, 0);
static ovl_pool proxy_ops = OVL_POOL_INIT(sizeof(proxy_op_h), 1u << 16, 4096);
static ovl_pool proxy_steps = OVL_POOL_INIT(sizeof(proxy_step_h), 1u << 18, 0);

static uint32_t launch_handle[2] = {H_LAUNCH, H_LAUNCH};  /* [1]: an external id was pushed */
static uint32_t plan_group_handle = H_PLAN_GROUP;
static uint32_t dropped_op_handle = H_DROPPED_OP;  /* its steps are counted as dropped too */

static atomic_int loaded_version;       /* the interface of the first init */
atomic_int ovl_nccl_plugin_loaded;
static atomic_uint ncomms;
static atomic_uint_fast64_t next_group = 1, next_single, owned_calls, joined_calls, channel_events;
static atomic_uint_fast64_t dropped, unmatched;

/* Another libovl (a different file) that NCCL did not load: the plugin forwards to it. */
static _Atomic(const ovl_ncclp_v5 *) delegate_v5;
static _Atomic(const ovl_ncclp_v4 *) delegate_v4;

/* ---------------------------------------------------------------------------------- */
/* Records                                                                            */
/* ---------------------------------------------------------------------------------- */

static coll_rec *from_api(void *h) { return (coll_rec *)((char *)h - offsetof(coll_rec, api_kind)); }
static coll_rec *from_task(void *h) { return (coll_rec *)((char *)h - offsetof(coll_rec, task_kind)); }
static uint32_t kind_of(const void *h) { return h ? *(const uint32_t *)h : 0; }

static void release(coll_rec *r) {
  if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) ovl_pool_put(&recs, r);
}

/* A reference for a child, taken only while the record still holds one (once released it is
** quarantined: still readable, but no longer counted). */
static int retain_if_live(coll_rec *r) {
  int n = atomic_load_explicit(&r->refs, memory_order_relaxed);
  while (n > 0)
    if (atomic_compare_exchange_weak_explicit(&r->refs, &n, n + 1, memory_order_acq_rel, memory_order_relaxed))
      return 1;
  return 0;
}

/* Hands a channel's or a proxy's event to the writer while capturing; one let through while
** the capture closes or counts is counted as dropped (host_buffer.h). Returns 0 once handed. */
static int hand_over(const void *ev, size_t size) {
  if (ovl_capture_state() == OVL_CAPTURE_ACTIVE) return ovl_hostbuf_append(ev, size);
  if (ovl_capture_counts_unrecorded()) ovl_hostbuf_count_unrecorded();
  return -1;
}

/* An event the plugin found no handle for (a pool at its bound): counted in meta.nccl_profiler
** and, when it was to be a row, as a dropped host event, so that meta.host_events still
** accounts for it (host_buffer.h). */
static void drop_event(int row) {
  atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
  if (row) ovl_hostbuf_count_unrecorded();
}

/* One part of the row arrived; the last one writes it. */
static void part_done(coll_rec *r) {
  if (atomic_fetch_sub_explicit(&r->parts, 1, memory_order_acq_rel) != 1) return;
  if (atomic_load_explicit(&r->failed, memory_order_relaxed)) return;
  group_rec *g = r->group;
  if (r->owned && g && g->depth <= 1 && atomic_load_explicit(&g->members, memory_order_relaxed) <= 1)
    r->ev.group_id = OVL_NONE;  /* NCCL's implicit group around a single call */
  if (ovl_hostbuf_append(&r->ev, sizeof r->ev) != 0) return;
  atomic_fetch_add_explicit(r->owned ? &owned_calls : &joined_calls, 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------------------------- */
/* Names NCCL passes as text                                                          */
/* ---------------------------------------------------------------------------------- */

/* ncclDataType_t of "ncclFloat32" (NCCL's spelling), -1 when unknown. */
static int dtype_of(const char *name) {
  if (!name) return -1;
  if (strncmp(name, "nccl", 4) == 0) name += 4;
  for (int t = 0; t < 32; t++) {
    const char *n = ovl_nccl_dtype_name(t);
    if (n && strcmp(n, name) == 0) return t;
  }
  return -1;
}

static int op_of(const char *func) {
  ovl_op op = func ? ovl_op_from_name(func) : OVL_OP_UNKNOWN;
  return op == OVL_OP_SENDRECV ? OVL_OP_UNKNOWN : (int)op;
}

static int has_root(int op) {
  return op == OVL_OP_BROADCAST || op == OVL_OP_REDUCE || op == OVL_OP_GATHER || op == OVL_OP_SCATTER;
}

static void copy_text(char *dst, size_t size, const char *src) {
  size_t n = 0;
  while (src && n + 1 < size && src[n]) {
    dst[n] = src[n];
    n++;
  }
  dst[n] = 0;
}

/* ---------------------------------------------------------------------------------- */
/* Communicators                                                                      */
/* ---------------------------------------------------------------------------------- */

/* The CUDA device current on the thread initialising the communicator (NCCL sets it). */
static int64_t current_device(void) {
  static _Atomic(void *) fn;
  int (*get)(int *) = (int (*)(int *))atomic_load(&fn);
  if (!get) {
    get = (int (*)(int *))ovl_find_real("cuCtxGetDevice");
    atomic_store(&fn, (void *)get);
  }
  int dev;
  return get && get(&dev) == 0 ? dev : OVL_NONE;
}

/* A stream's id: CUPTI's when CUPTI is attached; else libovl numbers the streams it is told
** of from 1, in order of first use (the trace then has no CUPTI ids to confuse them with). */
#define STREAM_SLOTS 256
static _Atomic(void *) stream_keys[STREAM_SLOTS];
static atomic_int stream_count;
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t stream_id(void *stream) {
  int64_t id = ovl_cupti_stream_id(stream);
  if (id != OVL_NONE) return id;
  void *key = stream ? stream : (void *)&stream_keys;  /* the default stream: a key of its own */
  int n = atomic_load_explicit(&stream_count, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (atomic_load_explicit(&stream_keys[i], memory_order_relaxed) == key) return i + 1;
  pthread_mutex_lock(&stream_lock);
  n = atomic_load_explicit(&stream_count, memory_order_relaxed);
  int i = 0;
  while (i < n && atomic_load_explicit(&stream_keys[i], memory_order_relaxed) != key) i++;
  if (i == n && n < STREAM_SLOTS) {
    atomic_store_explicit(&stream_keys[n], key, memory_order_relaxed);
    atomic_store_explicit(&stream_count, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&stream_lock);
  return i < STREAM_SLOTS ? i + 1 : OVL_NONE;
}

static int64_t comm_id(plugin_comm *c) {
  ovl_comm_info *b = atomic_load_explicit(&c->bound, memory_order_relaxed);
  return b ? b->id : c->id;
}

/* The next call on the communicator: one counter with the hooks' once bound to them. */
static int64_t next_seq(plugin_comm *c) {
  ovl_comm_info *b = atomic_load_explicit(&c->bound, memory_order_relaxed);
  return atomic_fetch_add_explicit(b ? &b->next_seq : &c->next_seq, 1, memory_order_relaxed);
}

/* meta.nccl_version when the hooks did not note it: ncclGetVersion of a dynamically loaded
** NCCL (a statically linked one exports nothing: then it stays unknown). */
static void note_nccl_version(void) {
  if (ovl_comms_nccl_version()) return;
  int (*get)(int *) = (int (*)(int *))ovl_find_real("ncclGetVersion");
  int v = 0;
  if (get && get(&v) == 0 && v > 0) ovl_comms_set_nccl_version(v);
}

static int activation_mask(int version) {
  int mask = OVL_NCCLP_COLL | OVL_NCCLP_P2P | OVL_NCCLP_KERNEL_CH;
  if (version >= 5) mask |= OVL_NCCLP_GROUP_API | OVL_NCCLP_COLL_API | OVL_NCCLP_P2P_API | OVL_NCCLP_KERNEL_LAUNCH;
  if (ovl_capture_settings()->nccl_proxy) mask |= OVL_NCCLP_PROXY_OP | OVL_NCCLP_PROXY_STEP;
  return mask;
}

static ovl_ncclp_result plugin_init(int version, void **context, uint64_t hash, int *mask, int nranks, int rank) {
  *context = NULL;
  if (!ovl_capture_activate()) return OVL_NCCLP_INTERNAL_ERROR;  /* NCCL goes on without a plugin */
  /* At the first communicator (CUDA is up by then): looking for CUDA again at every one costs
  ** a search of the loader's paths each time where there is none. */
  static atomic_int attach_tried;
  if (!atomic_exchange(&attach_tried, 1)) ovl_cupti_attach_late("NCCL's profiler plugin init");
  plugin_comm *c = calloc(1, sizeof *c);  /* never freed (records may outlive finalize): on `comms` */
  if (!c) return OVL_NCCLP_INTERNAL_ERROR;
  c->version = version;
  atomic_init(&c->next_seq, 0);
  atomic_init(&c->bound, NULL);
  c->id = ovl_comm_id_hash(&hash, sizeof hash, 4);
  c->rank = rank;
  c->nranks = nranks;
  c->device = current_device();
  c->next = atomic_load(&comms);
  while (!atomic_compare_exchange_weak(&comms, &c->next, c)) {
  }
  int expected = 0;
  atomic_compare_exchange_strong(&loaded_version, &expected, version);
  atomic_store(&ovl_nccl_plugin_loaded, 1);
  atomic_fetch_add(&ncomms, 1);
  /* Known to the communicator table under its own key (no ncclComm_t ever has this address),
  ** so that meta.rank and world_size come also when no hook sees the communicator. */
  ovl_comms_add(c, c->id, rank, nranks, c->device);
  note_nccl_version();
  ovl_debug("NCCL loaded libovl as its profiler plugin (v%d): communicator rank %d of %d", version, rank, nranks);
  *mask = activation_mask(version);
  *context = c;
  return OVL_NCCLP_SUCCESS;
}

/* ---------------------------------------------------------------------------------- */
/* Calls: API events (v5) and tasks                                                   */
/* ---------------------------------------------------------------------------------- */

/* Joins the hooks' call in progress on this thread, if there is one to join. */
static int join_hooks(coll_rec *r) {
  ovl_nccl_join *j = ovl_nccl_join_current();
  if (!j || j->claim) return 0;
  j->claim = r;
  r->ev.id = j->id;
  r->host_before = j->host_start;
  if (j->comm) {
    ovl_comm_info *none = NULL;
    atomic_compare_exchange_strong(&r->comm->bound, &none, j->comm);
  }
  atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);  /* until the hooks hand it back */
  atomic_fetch_add_explicit(&r->parts, 1, memory_order_relaxed);
  return 1;
}

/* The fields of a row the plugin writes itself, from what NCCL reports of the call. */
static void own_row(coll_rec *r, group_rec *g, int op, size_t count, const char *dtype, int64_t peer, int has_stream,
                    void *stream) {
  plugin_comm *c = r->comm;
  ovl_nccl_coll_event *e = &r->ev;
  r->owned = 1;
  uint32_t k = g ? atomic_fetch_add_explicit(&g->members, 1, memory_order_relaxed) : OVL_GROUP_MAX_MEMBERS;
  e->id = k < OVL_GROUP_MAX_MEMBERS ? ovl_group_member_id(g->g, k)
                                    : PLUGIN_SINGLE_BASE + (int64_t)atomic_fetch_add(&next_single, 1);
  e->group_id = g ? (int64_t)g->g : OVL_NONE;
  e->comm = comm_id(c);
  e->rank = c->rank;
  e->nranks = c->nranks;
  e->seq = next_seq(c);
  e->op = op;
  e->count = (int64_t)count;
  e->dtype = dtype_of(dtype);
  e->bytes = ovl_nccl_send_bytes(op, e->count, e->dtype, e->nranks);
  e->peer = peer;
  e->stream = has_stream ? stream_id(stream) : OVL_NONE;
  e->tid = ovl_capture_tid();
}

static coll_rec *new_record(plugin_comm *c, group_rec *g, int refs, int parts) {
  if (!c) return NULL;
  if (!ovl_capture_activate()) {
    /* A call let through while the capture closes or counts: counted as dropped, by the
    ** hooks when they see calls, else here. */
    if (!atomic_load_explicit(&ovl_nccl_hooks_recording, memory_order_relaxed) && ovl_capture_counts_unrecorded())
      ovl_hostbuf_count_unrecorded();
    return NULL;
  }
  coll_rec *r = ovl_pool_get(&recs);
  if (!r) {
    drop_event(!ovl_nccl_join_current());  /* a call the hooks record keeps their row */
    return NULL;
  }
  r->api_kind = H_API;
  r->task_kind = H_TASK;
  r->comm = c;
  r->group = g;
  atomic_init(&r->refs, refs);
  atomic_init(&r->parts, parts);
  ovl_nccl_coll_event *e = &r->ev;
  e->h.kind = OVL_EV_NCCL_COLL;
  e->h.size = sizeof *e;
  e->id = e->comm = e->rank = e->nranks = e->seq = e->count = e->bytes = e->peer = OVL_NONE;
  e->stream = e->host_start = e->host_end = e->tid = e->group_id = e->nccl_seq = OVL_NONE;
  ovl_comm_info *b = atomic_load_explicit(&c->bound, memory_order_relaxed);
  e->device = r->device = b && b->device != OVL_NONE ? b->device : c->device;
  e->dtype = e->redop = -1;
  e->nchannels = e->nwarps = -1;
  r->host_before = ovl_clock_ns();
  return r;
}

/* v5: the collective or send/receive API call. Parts: its end, its task (and the hooks').
** References: the API handle, and one for the task to come (in a group, NCCL starts it at
** ncclGroupEnd, after this call ended), which the task's handle takes over. A call NCCL
** rejects before making its task keeps its record: the pool's bound covers such leaks. */
static void *start_api(plugin_comm *c, const ovl_ncclp_descr_v5 *d) {
  group_rec *g = kind_of(d->parent) == H_GROUP_API ? (group_rec *)d->parent : NULL;
  coll_rec *r = new_record(c, g, 2, 2);
  if (!r) return NULL;
  if (!join_hooks(r)) {
    if (d->type == OVL_NCCLP_COLL_API) {
      int op = op_of(d->u.coll_api.func);
      own_row(r, g, op, d->u.coll_api.count, d->u.coll_api.dtype, has_root(op) ? d->u.coll_api.root : -1, 1,
              d->u.coll_api.stream);
    } else {
      own_row(r, g, op_of(d->u.p2p_api.func), d->u.p2p_api.count, d->u.p2p_api.dtype, -1, 1, d->u.p2p_api.stream);
    }
    r->ev.host_start = r->host_before;
  }
  return &r->api_kind;
}

static void stop_api(coll_rec *r) {
  if (r->owned) r->ev.host_end = ovl_clock_ns();
  part_done(r);
  release(r);
}

/* NCCL's details of a task, into its record. */
static void task_details(coll_rec *r, int is_coll, const ovl_ncclp_coll_fields *cf, const ovl_ncclp_p2p_fields *pf) {
  ovl_nccl_coll_event *e = &r->ev;
  if (is_coll) {
    e->nccl_seq = cf->seq <= (uint64_t)INT64_MAX ? (int64_t)cf->seq : OVL_NONE;
    copy_text(e->algorithm, sizeof e->algorithm, cf->algorithm);
    copy_text(e->protocol, sizeof e->protocol, cf->protocol);
    e->nchannels = cf->nchannels;
    e->nwarps = cf->nwarps;
  } else {
    e->nchannels = pf->nchannels;
    if (r->owned) e->peer = pf->peer;
  }
}

/* v5: the task of an API call (its parent), launched now or at the group's end. */
static void *start_task_v5(void *parent, int is_coll, const ovl_ncclp_coll_fields *cf, const ovl_ncclp_p2p_fields *pf) {
  if (kind_of(parent) != H_API) return NULL;
  coll_rec *r = from_api(parent);  /* holds the reference start_api kept for its task */
  task_details(r, is_coll, cf, pf);
  part_done(r);
  return &r->task_kind;
}

/* v4: no API events; the task is the call (its end: the task's stop). Calls the hooks see but
** whose task NCCL starts outside them (inside ncclGroupEnd) cannot be joined: left to the hooks.
** NCCL starts tasks once the kernel is launched (hostStreamPlanTask): no bound for the clock
** before it, but the hooks' start of the call. */
static void *start_task_v4(plugin_comm *c, int is_coll, const ovl_ncclp_coll_fields *cf, const ovl_ncclp_p2p_fields *pf) {
  if (!ovl_nccl_join_current() && atomic_load_explicit(&ovl_nccl_hooks_recording, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&unmatched, 1, memory_order_relaxed);
    return NULL;
  }
  coll_rec *r = new_record(c, NULL, 1, 1);
  if (!r) return NULL;
  if (!join_hooks(r)) {
    if (is_coll) {
      int op = op_of(cf->func);
      own_row(r, NULL, op, cf->count, cf->dtype, has_root(op) ? cf->root : -1, 0, NULL);
    } else {
      own_row(r, NULL, op_of(pf->func), pf->count, pf->dtype, pf->peer, 0, NULL);
    }
    r->ev.host_start = r->host_before;
    r->host_before = OVL_NONE;
  }
  task_details(r, is_coll, cf, pf);
  return &r->task_kind;
}

static void stop_task(int version, coll_rec *r) {
  if (version < 5) {
    if (r->owned) r->ev.host_end = ovl_clock_ns();
    part_done(r);
  }
  release(r);
}

void ovl_nccl_plugin_join_end(void *claim, const ovl_coll_event *ev, int launched) {
  coll_rec *r = claim;
  if (!launched) {
    atomic_store_explicit(&r->failed, 1, memory_order_relaxed);
  } else {
    ovl_nccl_coll_event *e = &r->ev;  /* its id is the hooks' since the claim */
    const ovl_comm_info *comm = ev->comm;
    e->comm = comm ? comm->id : OVL_NONE;
    e->rank = comm ? comm->rank : OVL_NONE;
    e->nranks = comm ? comm->nranks : OVL_NONE;
    e->seq = ev->seq;
    e->op = ev->h.op;
    e->count = ev->count;
    e->dtype = ev->h.dtype;
    e->redop = ev->h.redop;
    e->bytes = ovl_nccl_send_bytes(e->op, e->count, e->dtype, e->nranks);
    e->peer = ev->peer;
    if (comm && comm->device != OVL_NONE) e->device = comm->device;
    e->stream = ev->stream == OVL_COLL_NO_STREAM ? OVL_NONE : (int64_t)ev->stream;
    e->host_start = ev->host_start;
    e->host_end = ev->host_end;
    e->tid = ovl_capture_tid();  /* the hooks call this on the calling thread */
    e->group_id = (ev->h.flags & OVL_EV_IN_GROUP) && ev->id >= OVL_COLL_GROUP_BASE ? ovl_member_group(ev->id) : OVL_NONE;
  }
  part_done(r);
  release(r);
}

/* ---------------------------------------------------------------------------------- */
/* Groups and launches (v5)                                                           */
/* ---------------------------------------------------------------------------------- */

static void *start_group_api(plugin_comm *c, int depth) {
  if (!c || !ovl_capture_activate()) return NULL;
  group_rec *g = ovl_pool_get(&groups);
  if (!g) {
    drop_event(0);  /* its calls are rows without a group */
    return NULL;
  }
  g->kind = H_GROUP_API;
  g->depth = depth;
  g->g = PLUGIN_GROUP_BIT | (atomic_fetch_add_explicit(&next_group, 1, memory_order_relaxed) & (PLUGIN_GROUP_BIT - 1));
  return g;
}

/* The kernel launch of a plan whose calls the plugin records itself: CUPTI links the launch
** to them through the group's external id (collective_ids.h). */
static void *start_launch(void *parent) {
  group_rec *g = kind_of(parent) == H_GROUP_API ? parent : NULL;
  unsigned members = g ? atomic_load_explicit(&g->members, memory_order_relaxed) : 0;
  int pushed = members > 0 && ovl_cupti_attached() && ovl_cupti_push(ovl_group_ext_id(g->g, members));
  return &launch_handle[pushed];
}

/* ---------------------------------------------------------------------------------- */
/* Kernel channels and proxy activity                                                 */
/* ---------------------------------------------------------------------------------- */

static void *start_channel(void *parent, int channel, uint64_t gpu_start) {
  if (kind_of(parent) != H_TASK) return NULL;
  channel_h *ch = ovl_pool_get(&channels);
  if (!ch) {
    drop_event(1);
    return NULL;
  }
  ch->kind = H_CHANNEL;
  ch->rec = from_task(parent);
  ch->took_ref = retain_if_live(ch->rec);
  ch->channel = channel;
  ch->gpu_start = gpu_start <= (uint64_t)INT64_MAX ? (int64_t)gpu_start : 0;
  ch->seen_start = ovl_clock_ns();
  return ch;
}

static void stop_channel(channel_h *ch) {
  coll_rec *r = ch->rec;
  if (ch->gpu_end > 0) {
    ovl_nccl_channel_event ev = {
      {OVL_EV_NCCL_CHANNEL, sizeof ev, 0, 0, 0, 0}, r->ev.id, r->device, ch->channel,
      ch->gpu_start, ch->gpu_end, r->host_before, ch->seen_start, ch->seen_end,
    };
    if (hand_over(&ev, sizeof ev) == 0) atomic_fetch_add_explicit(&channel_events, 1, memory_order_relaxed);
  }
  if (ch->took_ref) release(r);
  ovl_pool_put(&channels, ch);
}

static void *start_proxy_op(void *parent, const ovl_ncclp_proxy_op_fields *f) {
  if (kind_of(parent) != H_TASK || f->pid != getpid()) return NULL;  /* PXN: another process's parent */
  proxy_op_h *op = ovl_pool_get(&proxy_ops);
  if (!op) {
    drop_event(1);
    return &dropped_op_handle;
  }
  op->kind = H_PROXY_OP;
  op->rec = from_task(parent);
  op->took_ref = retain_if_live(op->rec);
  op->ev = (ovl_nccl_proxy_op_event){{OVL_EV_NCCL_PROXY_OP, sizeof op->ev, 0, 0, 0, 0},
                                     op->rec->ev.id, f->channel, f->peer, f->is_send, f->nsteps, f->chunk_size,
                                     ovl_clock_ns(), OVL_NONE};
  return op;
}

static void stop_proxy_op(proxy_op_h *op) {
  op->ev.end = ovl_clock_ns();
  hand_over(&op->ev, sizeof op->ev);
  if (op->took_ref) release(op->rec);
  ovl_pool_put(&proxy_ops, op);
}

static void *start_proxy_step(void *parent, int step) {
  if (kind_of(parent) == H_DROPPED_OP) drop_event(1);
  if (kind_of(parent) != H_PROXY_OP) return NULL;
  const proxy_op_h *op = parent;
  proxy_step_h *s = ovl_pool_get(&proxy_steps);
  if (!s) {
    drop_event(1);
    return NULL;
  }
  s->kind = H_PROXY_STEP;
  s->ev = (ovl_nccl_proxy_step_event){{OVL_EV_NCCL_PROXY_STEP, sizeof s->ev, 0, 0, 0, 0},
                                      op->ev.collective, op->ev.channel, op->ev.is_send, step, OVL_NONE,
                                      ovl_clock_ns(), OVL_NONE, OVL_NONE, OVL_NONE, OVL_NONE, OVL_NONE};
  return s;
}

/* A step's state: when it entered each phase (the first time), and its size. */
static void step_state(proxy_step_h *s, int state, const ovl_ncclp_state_args *args) {
  int64_t *at = NULL;
  switch (state) {
    case OVL_NCCLP_STEP_SEND_GPU_WAIT:
    case OVL_NCCLP_STEP_RECV_GPU_WAIT: at = &s->ev.gpu_wait; break;
    case OVL_NCCLP_STEP_SEND_PEER_WAIT: at = &s->ev.peer_wait; break;
    case OVL_NCCLP_STEP_SEND_WAIT:
    case OVL_NCCLP_STEP_RECV_WAIT: at = &s->ev.net_wait; break;
    case OVL_NCCLP_STEP_RECV_FLUSH_WAIT: at = &s->ev.flush_wait; break;
    default: return;
  }
  if (*at == OVL_NONE) *at = ovl_clock_ns();
  if (args && args->proxy_step.bytes > 0 && args->proxy_step.bytes <= (size_t)INT64_MAX)
    s->ev.bytes = (int64_t)args->proxy_step.bytes;
}

static void stop_proxy_step(proxy_step_h *s) {
  s->ev.end = ovl_clock_ns();
  hand_over(&s->ev, sizeof s->ev);
  ovl_pool_put(&proxy_steps, s);
}

/* ---------------------------------------------------------------------------------- */
/* The interface                                                                      */
/* ---------------------------------------------------------------------------------- */

/* Looks for another libovl instance loaded before this one (a copy of libovl named as the
** plugin while another is preloaded): the first one captures, later ones forward to it. */
static void look_for_delegate(void) {
  const ovl_ncclp_v5 *v5 = ovl_symbol_lookup_data_before_self("ncclProfiler_v5");
  const ovl_ncclp_v4 *v4 = ovl_symbol_lookup_data_before_self("ncclProfiler_v4");
  if (!v5 || !v5->name || strcmp(v5->name, PLUGIN_NAME) != 0 || !v4) return;
  atomic_store(&delegate_v4, v4);
  atomic_store(&delegate_v5, v5);
  ovl_debug("another libovl in the process captures: NCCL's profiler events go to it");
}

/* Once, before the first init goes anywhere (other threads' inits wait for the answer). */
static void find_delegate(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, look_for_delegate);
}

static ovl_ncclp_result common_stop(int version, void *handle) {
  switch (kind_of(handle)) {
    case H_GROUP_API: ovl_pool_put(&groups, handle); break;
    case H_API: stop_api(from_api(handle)); break;
    case H_TASK: stop_task(version, from_task(handle)); break;
    case H_CHANNEL: stop_channel(handle); break;
    case H_PROXY_OP: stop_proxy_op(handle); break;
    case H_PROXY_STEP: stop_proxy_step(handle); break;
    case H_LAUNCH:
      if (handle == &launch_handle[1]) ovl_cupti_pop();
      break;
    default: break;
  }
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result common_record(void *handle, int state, ovl_ncclp_state_args *args) {
  uint32_t kind = kind_of(handle);
  if (kind == H_CHANNEL && state == OVL_NCCLP_KERNEL_CH_STOP && args) {
    channel_h *ch = handle;
    ch->gpu_end = args->kernel_ch.gpu_timer <= (uint64_t)INT64_MAX ? (int64_t)args->kernel_ch.gpu_timer : 0;
    ch->seen_end = ovl_clock_ns();
  } else if (kind == H_PROXY_STEP) {
    step_state(handle, state, args);
  }
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result v5_init(void **context, uint64_t comm_hash, int *mask, const char *comm_name, int nnodes,
                                int nranks, int rank, ovl_ncclp_logger log) {
  find_delegate();
  const ovl_ncclp_v5 *d = atomic_load(&delegate_v5);
  if (d) return d->init(context, comm_hash, mask, comm_name, nnodes, nranks, rank, log);
  return plugin_init(5, context, comm_hash, mask, nranks, rank);
}

static ovl_ncclp_result v5_start(void *context, void **handle, ovl_ncclp_descr_v5 *d) {
  const ovl_ncclp_v5 *del = atomic_load_explicit(&delegate_v5, memory_order_relaxed);
  if (del) return del->start_event(context, handle, d);
  plugin_comm *c = context;
  void *h = NULL;
  switch (d->type) {
    case OVL_NCCLP_GROUP_API: h = start_group_api(c, d->u.group_api.depth); break;
    case OVL_NCCLP_COLL_API:
    case OVL_NCCLP_P2P_API: h = start_api(c, d); break;
    case OVL_NCCLP_KERNEL_LAUNCH: h = c ? start_launch(d->parent) : NULL; break;
    case OVL_NCCLP_GROUP: h = &plan_group_handle; break;
    case OVL_NCCLP_COLL: h = start_task_v5(d->parent, 1, &d->u.coll.f, NULL); break;
    case OVL_NCCLP_P2P: h = start_task_v5(d->parent, 0, NULL, &d->u.p2p.f); break;
    case OVL_NCCLP_KERNEL_CH: h = start_channel(d->parent, d->u.kernel_ch.channel, d->u.kernel_ch.gpu_timer); break;
    case OVL_NCCLP_PROXY_OP: h = start_proxy_op(d->parent, &d->u.proxy_op); break;
    case OVL_NCCLP_PROXY_STEP: h = start_proxy_step(d->parent, d->u.proxy_step.step); break;
    default: break;
  }
  *handle = h;
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result v5_stop(void *handle) {
  const ovl_ncclp_v5 *d = atomic_load_explicit(&delegate_v5, memory_order_relaxed);
  return d ? d->stop_event(handle) : common_stop(5, handle);
}

static ovl_ncclp_result v5_record(void *handle, int state, ovl_ncclp_state_args *args) {
  const ovl_ncclp_v5 *d = atomic_load_explicit(&delegate_v5, memory_order_relaxed);
  return d ? d->record_event_state(handle, state, args) : common_record(handle, state, args);
}

/* NCCL makes no call about a communicator after finalizing it; its record stays (records of
** its last calls may still point to it while the writer has their rows), but its place in the
** communicator table is given back (a program that creates and destroys communicators would
** fill the table, and the hooks' communicators would find no room). */
static ovl_ncclp_result plugin_finalize(void *context) {
  if (context) ovl_comms_remove(context);
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result v5_finalize(void *context) {
  const ovl_ncclp_v5 *d = atomic_load_explicit(&delegate_v5, memory_order_relaxed);
  return d ? d->finalize(context) : plugin_finalize(context);
}

static ovl_ncclp_result v4_init(void **context, int *mask, const char *comm_name, uint64_t comm_hash, int nnodes,
                                int nranks, int rank, ovl_ncclp_logger log) {
  find_delegate();
  const ovl_ncclp_v4 *d = atomic_load(&delegate_v4);
  if (d) return d->init(context, mask, comm_name, comm_hash, nnodes, nranks, rank, log);
  return plugin_init(4, context, comm_hash, mask, nranks, rank);
}

static ovl_ncclp_result v4_start(void *context, void **handle, ovl_ncclp_descr_v4 *d) {
  const ovl_ncclp_v4 *del = atomic_load_explicit(&delegate_v4, memory_order_relaxed);
  if (del) return del->start_event(context, handle, d);
  plugin_comm *c = context;
  void *h = NULL;
  switch (d->type) {
    case OVL_NCCLP_GROUP: h = &plan_group_handle; break;
    case OVL_NCCLP_COLL: h = start_task_v4(c, 1, &d->u.coll, NULL); break;
    case OVL_NCCLP_P2P: h = start_task_v4(c, 0, NULL, &d->u.p2p); break;
    case OVL_NCCLP_KERNEL_CH: h = start_channel(d->parent, d->u.kernel_ch.channel, d->u.kernel_ch.gpu_timer); break;
    case OVL_NCCLP_PROXY_OP: h = start_proxy_op(d->parent, &d->u.proxy_op); break;
    case OVL_NCCLP_PROXY_STEP: h = start_proxy_step(d->parent, d->u.proxy_step.step); break;
    default: break;
  }
  *handle = h;
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result v4_stop(void *handle) {
  const ovl_ncclp_v4 *d = atomic_load_explicit(&delegate_v4, memory_order_relaxed);
  return d ? d->stop_event(handle) : common_stop(4, handle);
}

static ovl_ncclp_result v4_record(void *handle, int state, ovl_ncclp_state_args *args) {
  const ovl_ncclp_v4 *d = atomic_load_explicit(&delegate_v4, memory_order_relaxed);
  return d ? d->record_event_state(handle, state, args) : common_record(handle, state, args);
}

static ovl_ncclp_result v4_finalize(void *context) {
  const ovl_ncclp_v4 *d = atomic_load_explicit(&delegate_v4, memory_order_relaxed);
  return d ? d->finalize(context) : plugin_finalize(context);
}

OVL_EXPORT const ovl_ncclp_v5 ncclProfiler_v5 = {PLUGIN_NAME, v5_init, v5_start, v5_stop, v5_record, v5_finalize};
OVL_EXPORT const ovl_ncclp_v4 ncclProfiler_v4 = {PLUGIN_NAME, v4_init, v4_start, v4_stop, v4_record, v4_finalize};

void ovl_nccl_profiler_describe(char *buf, size_t size) {
  int version = atomic_load(&loaded_version);
  if (!version) {
    snprintf(buf, size, "%s", "");
    return;
  }
  unsigned long long owned = atomic_load(&owned_calls), joined = atomic_load(&joined_calls);
  int n = snprintf(buf, size, "v%d: %u communicators, %llu calls (%llu joined to the NCCL hooks), %llu channel intervals",
                   version, atomic_load(&ncomms), owned + joined, joined, (unsigned long long)atomic_load(&channel_events));
  unsigned long long lost = atomic_load(&dropped), left = atomic_load(&unmatched);
  if (n > 0 && (size_t)n < size && lost)
    n += snprintf(buf + n, size - (size_t)n, "; %llu events dropped (no memory)", lost);
  if (n > 0 && (size_t)n < size && left)
    snprintf(buf + n, size - (size_t)n, "; %llu tasks launched by ncclGroupEnd left to the hooks' rows (v4)", left);
}
