/*
** Fake CUPTI: a TEST DOUBLE of the CUPTI functions libinject uses (libinject/cupti_api.h),
** with no GPU. Two ways in:
**   - in process: fake_cupti_table fills libovl's function table (tests link this file);
**   - as a library: tests/fakes/fake_libcupti.c exports the same functions under CUPTI's
**     names, built as a libcupti.so.13 that libovl.so finds and loads like the real one.
**
** What it models of CUPTI's process-wide state: one subscriber (a second is refused with
** CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), one pair of buffer callbacks (the last
** registered wins), the set of enabled kinds, the timestamp callback, a stack of external
** correlation ids per kind, and finalisation (which clears it all). Records:
**   - hand-built buffers, in the fake's own layout (fake_buffer_add), walked by the fake's
**     ActivityGetNextRecord;
**   - or emitted as a program would cause them (fake_cupti_emit_*): kept only if their kind is
**     enabled, with an external correlation record when an id is pushed, and handed to the
**     registered callbacks (buffer requested, filled, completed) by ActivityFlushAll.
** Calls can be refused (fake_cupti_refuse) and are logged, one line each (fake_cupti_log),
** so tests check the order libovl calls CUPTI in. Not thread-safe beyond one lock around the
** state: enough for the tests.
*/
#ifndef OVL_TEST_FAKE_CUPTI_H
#define OVL_TEST_FAKE_CUPTI_H

#include "cupti_api.h"

#define FAKE_RUNTIME_LAUNCH_CBID 211  /* "cudaLaunchKernel_v7000" */
#define FAKE_DRIVER_LAUNCH_CBID 307   /* "cuLaunchKernelEx" */

void fake_cupti_table(ovl_cupti_api *api);
/* cuptiFinalize (not in libovl's table: libovl never calls it): CUPTI detaches, forgetting
** the subscriber, callbacks and enabled kinds. */
CUptiResult fake_cupti_finalize(void);

typedef struct fake_buffer {
  uint8_t *data;
  size_t used, cap;
} fake_buffer;

/* Appends a copy of a record (8-byte aligned in the buffer, as CUPTI's are). Returns a
** pointer to the copy, so a test can change it between two reads. */
void *fake_buffer_add(fake_buffer *b, const void *record, size_t size);
void fake_buffer_free(fake_buffer *b);

/* Back to a fresh process's CUPTI: nothing subscribed, registered, enabled, refused or logged. */
void fake_cupti_reset(void);
/* Makes `call` (a CUPTI function name without "cupti": "Subscribe", "ActivityEnable", ...)
** return rc; for ActivityEnable and ActivityDisable only when its kind is `kind` (-1: any). */
void fake_cupti_refuse(const char *call, int kind, CUptiResult rc);
/* The calls made so far, one line each: "Subscribe", "ActivityEnable 10", ... A refused call's
** line ends with " refused". */
const char *fake_cupti_log(void);
/* Also appends each line to this file as it is logged (NULL: stop). */
void fake_cupti_log_to(const char *path);
/* Another client already holds the subscription, named so (NULL: free again). */
void fake_cupti_hold_subscription(const char *name);
/* As CUPTI does: a kernel record gets its GPU timestamps when a flush without
** CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (or a full buffer) completes it; a forced flush hands the
** records over as they are, here with start = end = 0, and cuptiUnsubscribe leaves the
** records still waiting without them for good (seen on an H200: 290 of 298). */
void fake_cupti_lazy_timestamps(int on);
int fake_cupti_kind_enabled(CUpti_ActivityKind kind);
/* The timestamp callback's time (what CUPTI would stamp), or 0 when none is registered. */
uint64_t fake_cupti_now(void);

/* Records of work the program put on the GPU, kept when their kind is enabled. */
void fake_cupti_emit_kernel(uint64_t start, uint64_t end, uint32_t stream, uint32_t correlation, const char *name);
void fake_cupti_emit_memcpy(uint64_t start, uint64_t end, uint32_t stream, uint32_t correlation, uint64_t bytes);
/* A cudaLaunchKernel runtime API record (when its cbid is enabled) and, while an id of any
** kind is pushed, an external correlation record for it (when that kind is enabled). */
void fake_cupti_emit_launch(uint64_t start, uint64_t end, uint32_t correlation);
/* How many emitted records are waiting for a flush, and how many buffers the callbacks got. */
size_t fake_cupti_pending(void);
size_t fake_cupti_buffers_completed(void);

#endif
