/*
** CUPTI interposers: the calls by which another CUPTI client in the process (torch.profiler's
** Kineto, above all) takes CUPTI's shared state from libovl. Each forwards to the real CUPTI
** and tells the session what happened (cupti_session.h says how libovl gives way). libovl's
** own calls never come here: it calls CUPTI through the function table it loaded.
**
** They are exported like the NCCL hooks (interpose.h): bound only where a loaded object
** defines the real function, so a process without CUPTI sees no cupti* symbol. They see the
** calls that go through the dynamic symbol table: a client linked against a shared libcupti
** (PyTorch's wheels), not one with CUPTI linked in statically (then nothing is detected, and
** libovl's GPU capture may end without a word: docs/capture.md).
*/
#define _GNU_SOURCE
#include "capture.h"
#include "cupti_session.h"
#include "interpose.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The object that made the call ("libtorch_cuda.so"), for the messages. */
static void caller_name(const void *return_address, char *buf, size_t size) {
  Dl_info info;
  const char *name = "an unknown caller";
  if (dladdr(return_address, &info) && info.dli_fname && info.dli_fname[0]) {
    const char *slash = strrchr(info.dli_fname, '/');
    name = slash ? slash + 1 : info.dli_fname;
  }
  snprintf(buf, size, "%s", name);
}

/* Whether libovl watches at all (OVL_DISABLE=1, or a capture that has ended: it does not). */
static int watching(void) { return ovl_capture_state() != OVL_CAPTURE_OFF; }

#define REAL(fn)                                                                  \
  static _Atomic(__typeof__(&fn)) real_slot_##fn;                                 \
  __typeof__(&fn) real = atomic_load_explicit(&real_slot_##fn, memory_order_relaxed); \
  if (!real) {                                                                    \
    real = (__typeof__(&fn))ovl_find_real(#fn);                                   \
    if (!real) return CUPTI_ERROR_NOT_INITIALIZED; /* CUPTI unloaded: cannot happen */ \
    atomic_store_explicit(&real_slot_##fn, real, memory_order_relaxed);           \
  }

static CUptiResult hook_cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                       CUpti_BuffersCallbackCompleteFunc completed) {
  REAL(cuptiActivityRegisterCallbacks);
  if (!watching()) return real(requested, completed);
  char who[96];
  caller_name(__builtin_return_address(0), who, sizeof who);
  ovl_cupti_before_foreign_takeover();
  CUptiResult rc = real(requested, completed);
  if (rc == CUPTI_SUCCESS) ovl_cupti_note_foreign(OVL_FOREIGN_BUFFERS, who, CUPTI_ACTIVITY_KIND_INVALID);
  return rc;
}
OVL_INTERPOSE(cuptiActivityRegisterCallbacks)

static CUptiResult hook_cuptiActivityDisable(CUpti_ActivityKind kind) {
  REAL(cuptiActivityDisable);
  CUptiResult rc = real(kind);
  if (rc == CUPTI_SUCCESS && watching()) {
    char who[96];
    caller_name(__builtin_return_address(0), who, sizeof who);
    ovl_cupti_note_foreign(OVL_FOREIGN_DISABLE, who, kind);
  }
  return rc;
}
OVL_INTERPOSE(cuptiActivityDisable)

static CUptiResult hook_cuptiFinalize(void) {
  REAL(cuptiFinalize);
  if (watching()) {
    char who[96];
    caller_name(__builtin_return_address(0), who, sizeof who);
    ovl_cupti_before_foreign_takeover();
    ovl_cupti_note_foreign(OVL_FOREIGN_FINALIZE, who, CUPTI_ACTIVITY_KIND_INVALID);  /* before: libovl stops calling */
  }
  return real();
}
OVL_INTERPOSE(cuptiFinalize)

/* A client refused because libovl holds the subscription gets it: libovl needs none. */
static CUptiResult hook_cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                       void *userdata) {
  REAL(cuptiSubscribe);
  CUptiResult rc = real(subscriber, callback, userdata);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && watching()) {
    char who[96];
    caller_name(__builtin_return_address(0), who, sizeof who);
    if (ovl_cupti_yield_subscription(who)) rc = real(subscriber, callback, userdata);
  }
  return rc;
}
OVL_INTERPOSE(cuptiSubscribe)

static CUptiResult hook_cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                          void *userdata, CUpti_SubscriberParams *params) {
  REAL(cuptiSubscribe_v2);
  CUptiResult rc = real(subscriber, callback, userdata, params);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && watching()) {
    char who[96];
    caller_name(__builtin_return_address(0), who, sizeof who);
    if (ovl_cupti_yield_subscription(who)) rc = real(subscriber, callback, userdata, params);
  }
  return rc;
}
OVL_INTERPOSE(cuptiSubscribe_v2)
