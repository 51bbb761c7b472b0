/*
** NCCL interposers: the ncclX functions the program calls resolve here first (LD_PRELOAD),
** and each calls the real NCCL found with dlsym(RTLD_NEXT), or in whichever loaded object
** defines it when NCCL sits in a local dlopen scope under any name (Python wheels). The
** exports are indirect functions that bind to nothing while no NCCL is loaded (interpose.h).
**
** Per call: host start/end on the capture clock, the communicator's stable id, rank, size
** and per-communicator sequence number, and an external correlation id pushed around the
** call so that CUPTI links the GPU work it launches (collective_ids.h). Calls that NCCL
** makes into its own API from inside a hooked call (ncclBcast -> ncclBroadcast,
** ncclCommInitAll -> ncclGroupStart, ...) pass straight through: one row per program call.
*/
#define _GNU_SOURCE
#include "capture.h"
#include "clock.h"
#include "collective_ids.h"
#include "cupti_session.h"
#include "host_buffer.h"
#include "log.h"
#include "nccl_comms.h"
#include "nccl_join.h"
#include "interpose.h"
#include "nccl_names.h"
#include "store/trace_rows.h"

#include <dlfcn.h>
#include <nccl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* A thread's hook state, one thread-local block (one lookup per call). */
typedef struct hook_thread {
  int depth;              /* > 0 inside a hooked call on this thread */
  int group_depth;        /* ncclGroupStart nesting */
  uint32_t group_members;
  uint64_t group_id;      /* the current outermost group */
  int64_t next_id, end_id;  /* the thread's block of collective ids: [next_id, end_id) */
  ovl_nccl_join *join;    /* the recorded call in progress (nccl_join.h) */
} hook_thread;
static __thread hook_thread me;

atomic_int ovl_nccl_hooks_recording;

ovl_nccl_join *ovl_nccl_join_current(void) { return me.join; }

/* Collective ids come in blocks, so that threads calling at once share no counter. */
#define ID_BLOCK 1024
static atomic_int_fast64_t next_id_block = 1;
static atomic_uint_fast64_t next_group_id = 1;
static atomic_uint_fast64_t next_init_all = 1;
static atomic_int first_call_seen;
static atomic_int nccl_version;

/* ---------------------------------------------------------------------------------- */
/* The real NCCL                                                                      */
/* ---------------------------------------------------------------------------------- */

static int real_missing_warned;

#define REAL_SLOT(fn) static _Atomic(__typeof__(&fn)) real_##fn
/* No real function can only mean NCCL was unloaded after the call was bound to the hook. */
#define RESOLVE(fn)                                                             \
  __typeof__(&fn) real = atomic_load_explicit(&real_##fn, memory_order_relaxed); \
  if (!real) {                                                                  \
    real = (__typeof__(&fn))ovl_find_real(#fn);                                     \
    if (!real) {                                                                \
      ovl_warn(&real_missing_warned, "%s: no NCCL library defines it any more", #fn); \
      return ncclSystemError;                                                   \
    }                                                                           \
    atomic_store_explicit(&real_##fn, real, memory_order_relaxed);              \
  }

REAL_SLOT(ncclAllReduce);
REAL_SLOT(ncclReduceScatter);
REAL_SLOT(ncclAllGather);
REAL_SLOT(ncclBroadcast);
REAL_SLOT(ncclBcast);
REAL_SLOT(ncclReduce);
REAL_SLOT(ncclAlltoAll);
REAL_SLOT(ncclGather);
REAL_SLOT(ncclScatter);
REAL_SLOT(ncclSend);
REAL_SLOT(ncclRecv);
REAL_SLOT(ncclGroupStart);
REAL_SLOT(ncclGroupEnd);
REAL_SLOT(ncclCommInitRank);
REAL_SLOT(ncclCommInitRankConfig);
REAL_SLOT(ncclCommInitRankScalable);
REAL_SLOT(ncclCommInitAll);
REAL_SLOT(ncclCommSplit);
REAL_SLOT(ncclCommShrink);
REAL_SLOT(ncclCommDestroy);
REAL_SLOT(ncclCommAbort);

/* Queries NCCL about a communicator (best effort: a non-blocking one may still be
** initialising, and old NCCLs may lack a query). */
static int64_t query(const char *fn, ncclComm_t comm) {
  static _Atomic(void *) fns[3];
  static const char *const names[3] = {"ncclCommCount", "ncclCommUserRank", "ncclCommCuDevice"};
  int i = strcmp(fn, names[0]) == 0 ? 0 : strcmp(fn, names[1]) == 0 ? 1 : 2;
  ncclResult_t (*f)(const ncclComm_t, int *) = (ncclResult_t(*)(const ncclComm_t, int *))atomic_load(&fns[i]);
  if (!f) {
    f = (ncclResult_t(*)(const ncclComm_t, int *))ovl_find_real(names[i]);
    atomic_store(&fns[i], (void *)f);
  }
  int v;
  return f && f(comm, &v) == ncclSuccess ? v : OVL_NONE;
}

static int64_t version_of_nccl(void) {
  int v = atomic_load(&nccl_version);
  if (!v) {
    ncclResult_t (*get)(int *) = (ncclResult_t(*)(int *))ovl_find_real("ncclGetVersion");
    if (get && get(&v) == ncclSuccess) atomic_store(&nccl_version, v);
  }
  return v;
}

/* ---------------------------------------------------------------------------------- */
/* Communicators                                                                      */
/* ---------------------------------------------------------------------------------- */

static ovl_comm_info *register_comm(ncclComm_t comm, int64_t id, int64_t rank, int64_t nranks) {
  if (!comm) return NULL;
  if (rank < 0 || rank == OVL_NONE) rank = query("ncclCommUserRank", comm);
  if (nranks <= 0 || nranks == OVL_NONE) nranks = query("ncclCommCount", comm);
  int64_t device = query("ncclCommCuDevice", comm);
  ovl_comms_set_nccl_version(version_of_nccl());
  return ovl_comms_add(comm, id, rank, nranks, device);
}

/* A communicator libovl did not see created (made through an entry point it does not hook):
** its id is only unique within this process. */
static ovl_comm_info *comm_of(ncclComm_t comm) {
  ovl_comm_info *info = ovl_comms_find(comm);
  if (info || !comm) return info;
  struct { const void *comm; int64_t pid; } key = {comm, getpid()};
  return register_comm(comm, ovl_comm_id_hash(&key, sizeof key, 2), OVL_NONE, OVL_NONE);
}

/* ---------------------------------------------------------------------------------- */
/* Calls                                                                              */
/* ---------------------------------------------------------------------------------- */

typedef struct pending_call {
  ovl_coll_event ev;
  ovl_comm_info *comm;
  hook_thread *t;
  int recording, pushed, unrecorded;
  ovl_nccl_join join;  /* NCCL's profiler plugin may join its account to this call */
} pending_call;

/* The communicator's next sequence number. NCCL forbids calls on one communicator from two
** threads at once, so a load and a store do (a read-modify-write costs ~10 ns a call); calls
** from several threads taking turns under the program's own lock are ordered by that lock. */
static int64_t next_seq(ovl_comm_info *c) {
  int64_t seq = atomic_load_explicit(&c->next_seq, memory_order_relaxed);
  atomic_store_explicit(&c->next_seq, seq + 1, memory_order_relaxed);
  return seq;
}

static int64_t next_collective_id(hook_thread *t) {
  if (t->next_id == t->end_id) {
    t->next_id = atomic_fetch_add_explicit(&next_id_block, ID_BLOCK, memory_order_relaxed);
    t->end_id = t->next_id + ID_BLOCK;
  }
  return t->next_id++;
}

static void call_begin(pending_call *p, int call, ncclComm_t comm, cudaStream_t stream, size_t count, int dtype,
                       int redop, int64_t peer) {
  hook_thread *t = p->t = &me;
  p->recording = p->pushed = p->unrecorded = 0;
  if (t->depth++ > 0) return;
  if (!ovl_capture_activate()) {
    p->unrecorded = ovl_capture_counts_unrecorded();
    return;
  }
  if (!atomic_load_explicit(&first_call_seen, memory_order_relaxed) &&
      !atomic_exchange_explicit(&first_call_seen, 1, memory_order_relaxed))
    ovl_cupti_attach_late(ovl_nccl_call_name(call));
  ovl_comm_info *info = p->comm = comm_of(comm);
  ovl_coll_event *e = &p->ev;
  e->h = (ovl_event_header){OVL_EV_COLLECTIVE, sizeof *e, (uint8_t)call, (uint8_t)(dtype >= 0 && dtype < 255 ? dtype : 255),
                            (int8_t)(redop < -1 ? -1 : redop > 127 ? 127 : redop), t->group_depth > 0 ? OVL_EV_IN_GROUP : 0};
  e->comm = info;
  e->count = (int64_t)count;
  e->peer = (int32_t)peer;
  int64_t s = ovl_cupti_stream_id(stream);
  e->stream = s >= 0 && s < OVL_COLL_NO_STREAM ? (uint32_t)s : OVL_COLL_NO_STREAM;
  if (t->group_depth > 0 && t->group_members < OVL_GROUP_MAX_MEMBERS) {
    e->id = ovl_group_member_id(t->group_id, t->group_members++);  /* launched by ncclGroupEnd */
  } else {
    e->id = next_collective_id(t);
    if (t->group_depth == 0) p->pushed = ovl_cupti_push((uint64_t)e->id);
  }
  p->recording = 1;
  e->host_start = ovl_clock_ns();
  p->join.claim = NULL;
  if (atomic_load_explicit(&ovl_nccl_plugin_loaded, memory_order_relaxed)) {  /* else nobody to join */
    if (!atomic_load_explicit(&ovl_nccl_hooks_recording, memory_order_relaxed))
      atomic_store_explicit(&ovl_nccl_hooks_recording, 1, memory_order_relaxed);
    p->join = (ovl_nccl_join){e->id, info, e->host_start, NULL};
    t->join = &p->join;
  }
}

static void call_end(pending_call *p, ncclResult_t rc) {
  p->t->depth--;
  int launched = rc == ncclSuccess || rc == ncclInProgress;  /* a failed call launched nothing */
  if (!p->recording) {
    if (p->unrecorded && launched) ovl_hostbuf_count_unrecorded();
    return;
  }
  p->t->join = NULL;
  int64_t end = ovl_clock_ns();
  p->ev.host_end = end >= p->ev.host_start ? end : p->ev.host_start;
  if (p->pushed) ovl_cupti_pop();
  if (launched) p->ev.seq = p->comm ? next_seq(p->comm) : OVL_NONE;
  if (p->join.claim) ovl_nccl_plugin_join_end(p->join.claim, &p->ev, launched);  /* one row, the plugin's */
  else if (launched) ovl_hostbuf_append(&p->ev, sizeof p->ev);
}

#define NO_REDOP (-1)
#define NO_PEER (-1)

/* The body of every collective hook: record around the real call with these arguments. */
#define RECORD_CALL(fn, call, count, dtype, redop, peer, ...)            \
  RESOLVE(fn);                                                          \
  pending_call p;                                                       \
  call_begin(&p, call, comm, stream, count, dtype, redop, peer);        \
  ncclResult_t rc = real(__VA_ARGS__);                                  \
  call_end(&p, rc);                                                     \
  return rc

static ncclResult_t hook_ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclAllReduce, OVL_NCCL_ALLREDUCE, count, datatype, op, NO_PEER,
              sendbuff, recvbuff, count, datatype, op, comm, stream);
}
OVL_INTERPOSE(ncclAllReduce)

static ncclResult_t hook_ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclReduceScatter, OVL_NCCL_REDUCESCATTER, recvcount, datatype, op, NO_PEER,
              sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}
OVL_INTERPOSE(ncclReduceScatter)

static ncclResult_t hook_ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                                  ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclAllGather, OVL_NCCL_ALLGATHER, sendcount, datatype, NO_REDOP, NO_PEER,
              sendbuff, recvbuff, sendcount, datatype, comm, stream);
}
OVL_INTERPOSE(ncclAllGather)

static ncclResult_t hook_ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclBroadcast, OVL_NCCL_BROADCAST, count, datatype, NO_REDOP, root,
              sendbuff, recvbuff, count, datatype, root, comm, stream);
}
OVL_INTERPOSE(ncclBroadcast)

static ncclResult_t hook_ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                              cudaStream_t stream) {
  RECORD_CALL(ncclBcast, OVL_NCCL_BROADCAST, count, datatype, NO_REDOP, root, buff, count, datatype, root, comm, stream);
}
OVL_INTERPOSE(ncclBcast)

static ncclResult_t hook_ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclReduce, OVL_NCCL_REDUCE, count, datatype, op, root,
              sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}
OVL_INTERPOSE(ncclReduce)

static ncclResult_t hook_ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclAlltoAll, OVL_NCCL_ALLTOALL, count, datatype, NO_REDOP, NO_PEER,
              sendbuff, recvbuff, count, datatype, comm, stream);
}
OVL_INTERPOSE(ncclAlltoAll)

static ncclResult_t hook_ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                               ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclGather, OVL_NCCL_GATHER, count, datatype, NO_REDOP, root,
              sendbuff, recvbuff, count, datatype, root, comm, stream);
}
OVL_INTERPOSE(ncclGather)

static ncclResult_t hook_ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream) {
  RECORD_CALL(ncclScatter, OVL_NCCL_SCATTER, count, datatype, NO_REDOP, root,
              sendbuff, recvbuff, count, datatype, root, comm, stream);
}
OVL_INTERPOSE(ncclScatter)

static ncclResult_t hook_ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                             cudaStream_t stream) {
  RECORD_CALL(ncclSend, OVL_NCCL_SEND, count, datatype, NO_REDOP, peer, sendbuff, count, datatype, peer, comm, stream);
}
OVL_INTERPOSE(ncclSend)

static ncclResult_t hook_ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                             cudaStream_t stream) {
  RECORD_CALL(ncclRecv, OVL_NCCL_RECV, count, datatype, NO_REDOP, peer, recvbuff, count, datatype, peer, comm, stream);
}
OVL_INTERPOSE(ncclRecv)

/* ---------------------------------------------------------------------------------- */
/* Groups                                                                             */
/* ---------------------------------------------------------------------------------- */

static ncclResult_t hook_ncclGroupStart(void) {
  RESOLVE(ncclGroupStart);
  hook_thread *t = &me;
  if (t->depth == 0 && ovl_capture_activate() && t->group_depth++ == 0) {
    t->group_id = atomic_fetch_add_explicit(&next_group_id, 1, memory_order_relaxed);
    t->group_members = 0;
  }
  return real();
}
OVL_INTERPOSE(ncclGroupStart)

/* The outermost ncclGroupEnd launches the group's work: its external id names the group. */
static ncclResult_t hook_ncclGroupEnd(void) {
  RESOLVE(ncclGroupEnd);
  hook_thread *t = &me;
  if (t->depth > 0 || t->group_depth == 0 || --t->group_depth > 0) return real();
  int pushed = t->group_members > 0 && ovl_cupti_push(ovl_group_ext_id(t->group_id, t->group_members));
  t->depth++;
  ncclResult_t rc = real();
  t->depth--;
  if (pushed) ovl_cupti_pop();
  return rc;
}
OVL_INTERPOSE(ncclGroupEnd)

/* ---------------------------------------------------------------------------------- */
/* Communicator life                                                                  */
/* ---------------------------------------------------------------------------------- */

/* Enters a communicator hook; returns 1 when this call should be recorded. CUPTI is
** attached first (late, if the driver did not) so that NCCL's set-up work is captured. */
static int init_begin(const char *hook) {
  if (me.depth++ > 0 || !ovl_capture_activate()) return 0;
  ovl_cupti_attach_late(hook);
  return 1;
}

static int succeeded(ncclResult_t rc) { return rc == ncclSuccess || rc == ncclInProgress; }

static ncclResult_t hook_ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  RESOLVE(ncclCommInitRank);
  int rec = init_begin("ncclCommInitRank");
  ncclResult_t rc = real(comm, nranks, commId, rank);
  if (rec && succeeded(rc) && comm) register_comm(*comm, ovl_comm_id_hash(&commId, sizeof commId, 0), rank, nranks);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommInitRank)

static ncclResult_t hook_ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                           ncclConfig_t *config) {
  RESOLVE(ncclCommInitRankConfig);
  int rec = init_begin("ncclCommInitRankConfig");
  ncclResult_t rc = real(comm, nranks, commId, rank, config);
  if (rec && succeeded(rc) && comm) register_comm(*comm, ovl_comm_id_hash(&commId, sizeof commId, 0), rank, nranks);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommInitRankConfig)

static ncclResult_t hook_ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                             ncclUniqueId *commIds, ncclConfig_t *config) {
  RESOLVE(ncclCommInitRankScalable);
  int rec = init_begin("ncclCommInitRankScalable");
  ncclResult_t rc = real(newcomm, nranks, myrank, nId, commIds, config);
  if (rec && succeeded(rc) && newcomm && commIds && nId > 0)
    register_comm(*newcomm, ovl_comm_id_hash(commIds, (size_t)nId * sizeof *commIds, 0), myrank, nranks);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommInitRankScalable)

/* One communicator of ndev ranks, all in this process. */
static ncclResult_t hook_ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  RESOLVE(ncclCommInitAll);
  int rec = init_begin("ncclCommInitAll");
  ncclResult_t rc = real(comms, ndev, devlist);
  if (rec && succeeded(rc) && comms) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct { char host[256]; int64_t pid; uint64_t n; } key;
    memset(&key, 0, sizeof key);
    memcpy(key.host, host, sizeof host);
    key.pid = getpid();
    key.n = atomic_fetch_add(&next_init_all, 1);
    int64_t id = ovl_comm_id_hash(&key, sizeof key, 1);
    for (int i = 0; i < ndev; i++) register_comm(comms[i], id, i, ndev);
  }
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommInitAll)

/* A child communicator's id: the parent's id and how many children the parent had before,
** which every rank of the parent sees alike (splits are collective), plus the color. */
static int64_t child_id(ncclComm_t parent, int64_t color, int64_t kind) {
  ovl_comm_info *p = comm_of(parent);
  struct { int64_t parent, color, kind; uint64_t n; } key = {p ? p->id : 0, color, kind, 0};
  key.n = p ? atomic_fetch_add(&p->children, 1) : 0;
  return ovl_comm_id_hash(&key, sizeof key, 3);
}

static ncclResult_t hook_ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config) {
  RESOLVE(ncclCommSplit);
  int rec = init_begin("ncclCommSplit");
  int64_t id = rec ? child_id(comm, color, 0) : 0;
  ncclResult_t rc = real(comm, color, key, newcomm, config);
  if (rec && succeeded(rc) && newcomm && *newcomm) register_comm(*newcomm, id, OVL_NONE, OVL_NONE);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommSplit)

static ncclResult_t hook_ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                   ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags) {
  RESOLVE(ncclCommShrink);
  int rec = init_begin("ncclCommShrink");
  int64_t id = rec ? child_id(comm, 0, 1) : 0;
  ncclResult_t rc = real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  if (rec && succeeded(rc) && newcomm && *newcomm) register_comm(*newcomm, id, OVL_NONE, OVL_NONE);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommShrink)

static ncclResult_t hook_ncclCommDestroy(ncclComm_t comm) {
  RESOLVE(ncclCommDestroy);
  ovl_comms_remove(comm);
  me.depth++;
  ncclResult_t rc = real(comm);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommDestroy)

static ncclResult_t hook_ncclCommAbort(ncclComm_t comm) {
  RESOLVE(ncclCommAbort);
  ovl_comms_remove(comm);
  me.depth++;
  ncclResult_t rc = real(comm);
  me.depth--;
  return rc;
}
OVL_INTERPOSE(ncclCommAbort)
