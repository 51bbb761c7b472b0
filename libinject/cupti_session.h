/*
** libovl's CUPTI session: attaching (from InitializeInjection, or late from an NCCL hook when
** the driver did not call it), the bounded pool of activity buffers, external correlation
** ids around NCCL calls, flushing, and what other CUPTI clients in the process do to it.
** CUPTI is reached only through the function table.
**
** Other clients (torch.profiler's Kineto, above all) share CUPTI's process-wide state: one
** subscriber, one pair of buffer callbacks, one set of enabled kinds. cupti_hooks.c reports
** their calls here. libovl gives way to them, never the other way round:
**   - a client that registers its buffer callbacks before libovl attaches: libovl does not
**     attach (it would take that client's records);
**   - a client whose cuptiSubscribe is refused because libovl holds the subscription: libovl
**     gives the subscription up and the client's call is made again (libovl needs none);
**   - a client that registers its buffer callbacks while libovl is attached: libovl's buffers
**     are flushed home first, then the GPU capture ends (its records go to that client);
**   - a client that disables a kind libovl enabled: that kind's capture ends;
**   - a client that calls cuptiFinalize: the GPU capture ends and libovl calls CUPTI no more.
** Each is said once on stderr and kept in meta.cupti_conflict with its time.
*/
#ifndef OVL_INJECT_CUPTI_SESSION_H
#define OVL_INJECT_CUPTI_SESSION_H

#include "cupti_api.h"

#include <stddef.h>
#include <stdint.h>

/* Attaches CUPTI once per process (later calls return the first result): subscribe (fails
** when another CUPTI client such as Nsight Systems or torch.profiler is active), the shared
** timestamp clock, buffer callbacks, the activity kinds and the launch APIs. `how` is kept
** for meta.cupti. Returns 1 when attached. */
int ovl_cupti_attach(const char *how);
/* The fallback when the driver never called InitializeInjection: attaches if CUDA is
** already loaded in the process and CUDA_INJECTION64_PATH is not another tool's. */
void ovl_cupti_attach_late(const char *hook);
/* 1 while libovl receives CUPTI's activity records (attached, not taken by another client). */
int ovl_cupti_attached(void);
/* 1 once CUPTI attached, whatever other clients did since. */
int ovl_cupti_was_attached(void);
/* meta.cupti: "attached (injection)", "not attached: <reason>", ... */
void ovl_cupti_status(char *buf, size_t size);
/* CUPTI version, or 0 when not loaded. */
uint32_t ovl_cupti_version(void);

/* The CUPTI part of meta; `generation` changes whenever any text does. */
typedef struct ovl_cupti_meta {
  unsigned generation;
  char status[256];    /* meta.cupti */
  char library[1200];  /* meta.cupti_library: "<path> (<rule>)", or "" */
  char kinds[160];     /* meta.cupti_kinds: the kinds enabled, or "" */
  char degraded[256];  /* meta.cupti_degraded: refusals at attach, or "" */
  char conflict[512];  /* meta.cupti_conflict: what other clients did, with times, or "" */
  int64_t capture_ended_ns;  /* meta.cupti_capture_ended_ns: when GPU capture ended early, or 0 */
} ovl_cupti_meta;
unsigned ovl_cupti_meta_generation(void);
void ovl_cupti_meta_read(ovl_cupti_meta *m);

/* What another CUPTI client did (cupti_hooks.c calls these after the real call, with the
** caller's object name, e.g. "libtorch_cuda.so"). */
typedef enum ovl_cupti_foreign {
  OVL_FOREIGN_BUFFERS,    /* cuptiActivityRegisterCallbacks succeeded */
  OVL_FOREIGN_DISABLE,    /* cuptiActivityDisable(kind) succeeded */
  OVL_FOREIGN_FINALIZE,   /* cuptiFinalize is about to run */
} ovl_cupti_foreign;
void ovl_cupti_note_foreign(ovl_cupti_foreign what, const char *who, CUpti_ActivityKind kind);
/* Before a foreign cuptiActivityRegisterCallbacks or cuptiFinalize runs: while libovl owns the
** callbacks, its outstanding buffers are flushed home (forced), so that no other client is
** handed a buffer of libovl's. */
void ovl_cupti_before_foreign_takeover(void);
/* A foreign cuptiSubscribe was refused: returns 1 when the refusal was libovl's subscription,
** which is then given up (the caller retries the call), 0 otherwise. */
int ovl_cupti_yield_subscription(const char *who);

/* External correlation around a host call; push returns 1 when pushed (pop only then). */
int ovl_cupti_push(uint64_t external_id);
void ovl_cupti_pop(void);
/* CUPTI stream id of a cudaStream_t, or OVL_NONE. */
int64_t ovl_cupti_stream_id(void *stream);

/* Writer side. */
typedef struct ovl_cupti_buffer {
  struct ovl_cupti_buffer *next;
  size_t valid;
  uint8_t *data;
} ovl_cupti_buffer;

void ovl_cupti_flush(int forced);
/* The buffers CUPTI has completed, oldest first; give each back with ovl_cupti_release. */
ovl_cupti_buffer *ovl_cupti_take_completed(void);
void ovl_cupti_release(ovl_cupti_buffer *b);
/* Records CUPTI dropped for want of buffers. */
uint64_t ovl_cupti_dropped(void);
const ovl_cupti_api *ovl_cupti_table(void);

#endif
