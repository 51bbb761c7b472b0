/*
** libovl's CUPTI session: see cupti_session.h.
**
** Activity buffers: CUPTI asks for a buffer whenever it needs one and hands it back full
** (or at a flush) on one of its threads. At most MAX_BUFFERS are out at once; beyond that
** CUPTI is given none and drops records itself (it counts them; so do we). Completed
** buffers wait in a FIFO for the writer thread.
*/
#define _GNU_SOURCE
#include "cupti_session.h"

#include "capture.h"
#include "capture_writer.h"
#include "clock.h"
#include "cupti_records.h"
#include "log.h"
#include "store/trace_rows.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_BYTES (8u << 20)
#define MAX_BUFFERS 12
#define HEADER_BYTES 64  /* ovl_cupti_buffer in front of the data CUPTI sees; keeps it aligned */

static ovl_cupti_api api;
static atomic_int attach_state;  /* 0: not tried, 1: attached, -1: failed */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static char status[256] = "not attached: no CUDA use seen";
static uint32_t version;
static CUpti_SubscriberHandle subscriber;

static atomic_int outstanding;
static atomic_uint_fast64_t dropped;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static ovl_cupti_buffer *done_head, *done_tail;

const ovl_cupti_api *ovl_cupti_table(void) { return &api; }
int ovl_cupti_attached(void) { return atomic_load_explicit(&attach_state, memory_order_acquire) == 1; }
uint32_t ovl_cupti_version(void) { return version; }
uint64_t ovl_cupti_dropped(void) { return atomic_load(&dropped); }

void ovl_cupti_status(char *buf, size_t size) {
  pthread_mutex_lock(&attach_lock);
  snprintf(buf, size, "%s", status);
  pthread_mutex_unlock(&attach_lock);
}

/* ---------------------------------------------------------------------------------- */
/* Buffers                                                                            */
/* ---------------------------------------------------------------------------------- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *max_records = 0;
  *buffer = NULL;
  *size = 0;
  if (atomic_fetch_add(&outstanding, 1) >= MAX_BUFFERS) {
    atomic_fetch_sub(&outstanding, 1);
    return;  /* CUPTI drops and counts */
  }
  ovl_cupti_buffer *b = aligned_alloc(HEADER_BYTES, HEADER_BYTES + BUFFER_BYTES);
  if (!b) {
    atomic_fetch_sub(&outstanding, 1);
    return;
  }
  b->next = NULL;
  b->valid = 0;
  b->data = (uint8_t *)b + HEADER_BYTES;
  *buffer = b->data;
  *size = BUFFER_BYTES;
}

void ovl_cupti_release(ovl_cupti_buffer *b) {
  free(b);
  atomic_fetch_sub(&outstanding, 1);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  size_t lost = 0;
  if (api.ActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS && lost) atomic_fetch_add(&dropped, lost);
  if (!buffer) return;
  ovl_cupti_buffer *b = (ovl_cupti_buffer *)(buffer - HEADER_BYTES);
  int s = ovl_capture_state();
  if (!valid || (s != OVL_CAPTURE_ACTIVE && s != OVL_CAPTURE_CLOSING)) {  /* nobody left to write it */
    ovl_cupti_release(b);
    return;
  }
  b->valid = valid;
  b->next = NULL;
  pthread_mutex_lock(&done_lock);
  if (done_tail) done_tail->next = b;
  else done_head = b;
  done_tail = b;
  pthread_mutex_unlock(&done_lock);
  ovl_writer_wake();
}

ovl_cupti_buffer *ovl_cupti_take_completed(void) {
  pthread_mutex_lock(&done_lock);
  ovl_cupti_buffer *list = done_head;
  done_head = done_tail = NULL;
  pthread_mutex_unlock(&done_lock);
  return list;
}

void ovl_cupti_flush(int forced) {
  if (ovl_cupti_attached()) api.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

/* ---------------------------------------------------------------------------------- */
/* Attaching                                                                          */
/* ---------------------------------------------------------------------------------- */

/* CUPTI's timestamps on the capture clock, so that host and GPU times compare. */
static uint64_t CUPTIAPI cupti_clock(void) { return (uint64_t)ovl_clock_ns(); }

/* The subscription only claims CUPTI (one subscriber per process); no callback is enabled. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data) {
  (void)userdata, (void)domain, (void)cbid, (void)data;
}

/* API calls that put work on the GPU: their records carry the correlation ids of that work,
** and external correlation records attach only to traced API calls. */
static int launches_gpu_work(const char *name) {
  static const char *const prefixes[] = {"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch",
                                         "cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"};
  if (strstr(name, "HostFunc")) return 0;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

static int enable_launch_apis(void) {
  int n = 0;
  const char *name;
  for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++)
    if (api.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name &&
        launches_gpu_work(name) && api.ActivityEnableRuntimeApi(cbid, 1) == CUPTI_SUCCESS)
      n++;
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
    if (api.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name &&
        launches_gpu_work(name) && api.ActivityEnableDriverApi(cbid, 1) == CUPTI_SUCCESS)
      n++;
  return n;
}

/* Returns NULL when attached, else why not. */
static const char *attach(char *why, size_t size) {
  if (ovl_cupti_api_load(&api, why, size)) return why;
  CUptiResult rc = api.GetVersion(&version);
  if (rc != CUPTI_SUCCESS || version / 10000 != OVL_CUPTI_MAJOR) {
    snprintf(why, size, "libcupti reports version %u, libovl reads CUPTI %d records", version, OVL_CUPTI_MAJOR);
    return why;
  }
  rc = api.Subscribe(&subscriber, on_callback, NULL);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    snprintf(why, size, "another CUPTI client is active (Nsight Systems, torch.profiler, ...)");
    return why;
  }
#define CHECK_CUPTI(call, what)                                                         \
  if ((rc = (call)) != CUPTI_SUCCESS) {                                                 \
    snprintf(why, size, "%s failed: %s", what, ovl_cupti_error(&api, rc));              \
    return why;                                                                         \
  }
  CHECK_CUPTI(rc, "cuptiSubscribe");
  /* The clock first, before any kind is enabled, so that every record uses it. */
  CHECK_CUPTI(api.ActivityRegisterTimestampCallback(cupti_clock), "cuptiActivityRegisterTimestampCallback");
  CHECK_CUPTI(api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType");
  CHECK_CUPTI(api.ActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  /* CONCURRENT_KERNEL, never KERNEL: KERNEL serialises the GPU. */
  static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                                             CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    CHECK_CUPTI(api.ActivityEnable(kinds[i]), "cuptiActivityEnable");
#undef CHECK_CUPTI
  if (enable_launch_apis() == 0) {
    snprintf(why, size, "no CUDA launch API could be traced");
    return why;
  }
  return NULL;
}

int ovl_cupti_attach(const char *how) {
  if (atomic_load(&attach_state)) return ovl_cupti_attached();
  pthread_mutex_lock(&attach_lock);
  if (!atomic_load(&attach_state)) {
    char why[200];
    const char *problem = attach(why, sizeof why);
    if (problem) {
      snprintf(status, sizeof status, "not attached: %s", problem);
      atomic_store(&attach_state, -1);
    } else {
      snprintf(status, sizeof status, "attached (%s)", how);
      atomic_store(&attach_state, 1);
    }
  }
  int ok = ovl_cupti_attached();
  char line[256];
  snprintf(line, sizeof line, "%s", status);
  pthread_mutex_unlock(&attach_lock);
  static int once;
  if (!ok)
    ovl_warn(&once, "CUPTI %s; GPU kernels and memory operations are not captured (NCCL calls and NVTX ranges are)",
             line);
  else
    ovl_debug("CUPTI %s", line);
  return ok;
}

void ovl_cupti_attach_late(const char *hook) {
  if (atomic_load(&attach_state) || !ovl_capture_owns_cuda_injection()) return;
  /* Only where CUDA is already in the process: never load CUPTI into one that has none. */
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda) return;
  dlclose(cuda);
  char how[96];
  snprintf(how, sizeof how, "late, from %s", hook);
  ovl_cupti_attach(how);
}

/* ---------------------------------------------------------------------------------- */
/* Hooks' helpers                                                                     */
/* ---------------------------------------------------------------------------------- */

int ovl_cupti_push(uint64_t external_id) {
  return ovl_cupti_attached() && api.ActivityPushExternalCorrelationId(OVL_EXT_KIND, external_id) == CUPTI_SUCCESS;
}

void ovl_cupti_pop(void) {
  uint64_t last;
  api.ActivityPopExternalCorrelationId(OVL_EXT_KIND, &last);
}

int64_t ovl_cupti_stream_id(void *stream) {
  uint32_t id;
  if (ovl_cupti_attached() && api.GetStreamIdEx(NULL, (CUstream)stream, 0, &id) == CUPTI_SUCCESS) return id;
  return OVL_NONE;
}

/* Called by the CUDA driver at initialisation when CUDA_INJECTION64_PATH names libovl. */
__attribute__((visibility("default"))) int InitializeInjection(void) {
  if (ovl_capture_owns_cuda_injection() && ovl_capture_activate()) ovl_cupti_attach("injection");
  return 1;
}
