/*
** The CUPTI attach sequence, over a function table (cupti_api.h) and nothing else, so that a
** fake CUPTI drives it in tests (tests/fakes/fake_cupti.c):
**
**   1. subscribe (cuptiSubscribe_v2 named "ovl" where CUPTI has it): one subscriber per
**      process; refused when another client holds CUPTI, whose name is kept;
**   2. the timestamp callback, before any kind is enabled, so that every record is on the
**      capture clock;
**   3. the thread id type (system tids, as the host events use);
**   4. the buffer callbacks;
**   5. each activity kind on its own: a refused kind degrades that kind only (its records
**      are missing and the refusal is reported), unless no kind of GPU work is left;
**   6. the launch APIs' records (each runtime and driver call that puts work on the GPU).
**
** Failure contract: a step that cannot be done without (1, 2, 4, all GPU-work kinds) stops
** the sequence: the result says why, the subscription is given back, and every kind that
** was enabled is disabled again, so CUPTI is left as it was found. Steps 3, 5 (some kinds)
** and 6 degrade: attached, with the loss named in the result.
*/
#ifndef OVL_INJECT_CUPTI_ATTACH_H
#define OVL_INJECT_CUPTI_ATTACH_H

#include "cupti_api.h"

#include <stddef.h>

/* The activity kinds libovl enables, in the order it enables them. */
enum {
  OVL_KIND_KERNEL,                /* CONCURRENT_KERNEL (never KERNEL: it serialises the GPU) */
  OVL_KIND_MEMCPY,
  OVL_KIND_MEMCPY_P2P,            /* MEMCPY2 */
  OVL_KIND_MEMSET,
  OVL_KIND_EXTERNAL_CORRELATION,  /* links NCCL calls to their GPU work */
  OVL_KIND_COUNT
};

/* Kinds that record GPU work: without any of them there is nothing to capture. */
#define OVL_GPU_WORK_KINDS \
  ((1u << OVL_KIND_KERNEL) | (1u << OVL_KIND_MEMCPY) | (1u << OVL_KIND_MEMCPY_P2P) | (1u << OVL_KIND_MEMSET))

/* CUPTI's kind for one of libovl's, and the name libovl reports it by ("kernel", ...). */
CUpti_ActivityKind ovl_cupti_kind(int ovl_kind);
const char *ovl_cupti_kind_name(int ovl_kind);

/* What libovl registers with CUPTI. */
typedef struct ovl_cupti_hooks {
  CUpti_CallbackFunc on_callback;
  CUpti_TimestampCallbackFunc clock;
  CUpti_BuffersCallbackRequestFunc buffer_requested;
  CUpti_BuffersCallbackCompleteFunc buffer_completed;
} ovl_cupti_hooks;

typedef struct ovl_cupti_attach_result {
  int attached;                       /* 1: libovl receives CUPTI's activity records */
  CUpti_SubscriberHandle subscriber;  /* valid when attached */
  unsigned kinds;                     /* bit (1 << OVL_KIND_x) per kind enabled */
  int launch_apis;                    /* launch APIs whose records are enabled */
  char why[256];                      /* not attached: why ("another CUPTI client ...") */
  char degraded[256];                 /* attached with losses: "memcpy_p2p refused (...)"; else "" */
} ovl_cupti_attach_result;

/* Runs the sequence above. Returns 1 when attached, 0 otherwise; *out says what happened
** either way. */
int ovl_cupti_attach_sequence(const ovl_cupti_api *api, const ovl_cupti_hooks *hooks,
                              ovl_cupti_attach_result *out);

/* Gives CUPTI back what the sequence enabled: the kinds in `kinds` and the launch APIs' records
** (another client took the buffer callbacks: it gets only the records it asks for). */
void ovl_cupti_release_kinds(const ovl_cupti_api *api, unsigned kinds);

/* "kernel,memcpy,memcpy_p2p,memset,external_correlation" for a kinds mask (meta.cupti_kinds). */
void ovl_cupti_kinds_text(unsigned kinds, char *buf, size_t size);

#endif
