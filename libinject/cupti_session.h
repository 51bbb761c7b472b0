/*
** libovl's CUPTI session: attaching (from InitializeInjection, or late from an NCCL hook when
** the driver did not call it), the bounded pool of activity buffers, external correlation
** ids around NCCL calls, and flushing. CUPTI is reached only through the function table.
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
int ovl_cupti_attached(void);
/* meta.cupti: "attached (injection)", "not attached: <reason>", ... */
void ovl_cupti_status(char *buf, size_t size);
/* CUPTI version, or 0 when not loaded. */
uint32_t ovl_cupti_version(void);

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
