/*
** A diagnostic NCCL profiler plugin for the GPU kit: NCCL_PROFILER_PLUGIN=libovl_nccl_event_log.so
** makes NCCL report to it, and it prints one line per event on stderr: start (type, its id, its
** parent's id, the thread), state records and stops. It shows what a given NCCL actually
** reports, and in what order and on which thread, where libovl's plugin (nccl_profiler.c)
** relies on it. Nothing of ovl; the interface from libinject/nccl_profiler_abi.h.
*/
#define _GNU_SOURCE
#include "nccl_profiler_abi.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct logged_event {
  uint64_t id;
  uint64_t type;
} logged_event;

static atomic_uint_fast64_t next_id = 1;
static atomic_int lines;
#define MAX_LINES 400 /* enough for a few steps; the kit's log stays short */

static const char *type_name(uint64_t t) {
  switch (t) {
    case OVL_NCCLP_GROUP: return "Group";
    case OVL_NCCLP_COLL: return "Coll";
    case OVL_NCCLP_P2P: return "P2p";
    case OVL_NCCLP_PROXY_OP: return "ProxyOp";
    case OVL_NCCLP_PROXY_STEP: return "ProxyStep";
    case OVL_NCCLP_PROXY_CTRL: return "ProxyCtrl";
    case OVL_NCCLP_KERNEL_CH: return "KernelCh";
    case OVL_NCCLP_NET_PLUGIN: return "NetPlugin";
    case OVL_NCCLP_GROUP_API: return "GroupApi";
    case OVL_NCCLP_COLL_API: return "CollApi";
    case OVL_NCCLP_P2P_API: return "P2pApi";
    case OVL_NCCLP_KERNEL_LAUNCH: return "KernelLaunch";
    default: return "?";
  }
}

static int may_print(void) { return atomic_fetch_add(&lines, 1) < MAX_LINES; }
static long tid(void) { return (long)syscall(SYS_gettid); }

static ovl_ncclp_result log_init(void **context, uint64_t comm_id, int *mask, const char *name, int nnodes,
                                 int nranks, int rank, ovl_ncclp_logger logger) {
  (void)name, (void)nnodes, (void)logger;
  *mask = (2 * OVL_NCCLP_KERNEL_LAUNCH - 1) & ~(OVL_NCCLP_PROXY_STEP | OVL_NCCLP_PROXY_CTRL | OVL_NCCLP_NET_PLUGIN);
  *context = (void *)(uintptr_t)1;
  fprintf(stderr, "nccl-event-log: init comm %llx rank %d of %d, mask 0x%x\n", (unsigned long long)comm_id, rank,
          nranks, *mask);
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result log_start(void *context, void **handle, ovl_ncclp_descr_v5 *d) {
  (void)context;
  logged_event *e = malloc(sizeof *e);  /* never freed: NCCL may name a stopped parent */
  *handle = e;
  if (!e) return OVL_NCCLP_SUCCESS;
  e->id = atomic_fetch_add(&next_id, 1);
  e->type = d->type;
  const logged_event *p = d->parent;
  if (may_print())
    fprintf(stderr, "nccl-event-log: start %s #%llu parent %s #%llu tid %ld\n", type_name(e->type),
            (unsigned long long)e->id, p ? type_name(p->type) : "-", p ? (unsigned long long)p->id : 0ULL, tid());
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result log_stop(void *handle) {
  const logged_event *e = handle;
  if (e && may_print())
    fprintf(stderr, "nccl-event-log: stop %s #%llu tid %ld\n", type_name(e->type), (unsigned long long)e->id, tid());
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result log_record(void *handle, int state, ovl_ncclp_state_args *args) {
  (void)args;
  const logged_event *e = handle;
  if (e && may_print())
    fprintf(stderr, "nccl-event-log: state %d of %s #%llu tid %ld\n", state, type_name(e->type),
            (unsigned long long)e->id, tid());
  return OVL_NCCLP_SUCCESS;
}

static ovl_ncclp_result log_finalize(void *context) {
  (void)context;
  fprintf(stderr, "nccl-event-log: finalize, %d lines\n", atomic_load(&lines));
  return OVL_NCCLP_SUCCESS;
}

__attribute__((visibility("default"))) const ovl_ncclp_v5 ncclProfiler_v5 = {
    "ovl-event-log", log_init, log_start, log_stop, log_record, log_finalize};
