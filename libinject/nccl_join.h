/*
** Where the two NCCL paths meet in one process: the NCCL hooks (nccl_hooks.c, LD_PRELOAD)
** and libovl as NCCL's profiler plugin (nccl_profiler.c). When both are there, NCCL reports
** each call the hooks intercept to the plugin from inside that very call, on the calling
** thread: the plugin then joins its account to the hooks' call, and the one row written
** carries the hooks' id, communicator and sequence number with NCCL's algorithm, protocol,
** channels and GPU intervals. One source of truth per (communicator, sequence number).
**
** The hooks offer (ovl_nccl_join_current) the call they record around its real call; the plugin
** claims it (at most once) and is told when the call ended. A claim is the plugin's; the
** hooks only hand it back.
*/
#ifndef OVL_INJECT_NCCL_JOIN_H
#define OVL_INJECT_NCCL_JOIN_H

#include "host_events.h"

#include <stdatomic.h>
#include <stdint.h>

struct ovl_comm_info;

typedef struct ovl_nccl_join {
  int64_t id;                   /* the collective id the hooks gave the call */
  struct ovl_comm_info *comm;   /* the hooks' communicator entry, NULL when unknown */
  int64_t host_start;           /* when the call began (before anything it launched) */
  void *claim;                  /* set by the plugin when NCCL reported this call to it */
} ovl_nccl_join;

/* The recorded hooked call in progress on this thread, NULL outside one. */
ovl_nccl_join *ovl_nccl_join_current(void);
/* Set once NCCL loaded libovl as its profiler plugin (its first init): only then do the hooks
** offer their calls (nothing else costs the hooks' hot path). */
extern atomic_int ovl_nccl_plugin_loaded;
/* Set once the hooks recorded a call in this process since then (they see the program's NCCL
** calls). */
extern atomic_int ovl_nccl_hooks_recording;

/* Plugin side, called by the hooks when a claimed call returns: `ev` is the row the hooks
** would have written (host_end and seq filled), `launched` 0 when the call failed. */
void ovl_nccl_plugin_join_end(void *claim, const ovl_coll_event *ev, int launched);

#endif
