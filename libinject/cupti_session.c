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
#include "cupti_attach.h"
#include "clock.h"
#include "cupti_records.h"
#include "log.h"
#include "store/trace_rows.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUFFER_BYTES (8u << 20)
#define MAX_BUFFERS 12
#define HEADER_BYTES 64  /* ovl_cupti_buffer in front of the data CUPTI sees; keeps it aligned */

static ovl_cupti_api api;
static atomic_int attach_state;   /* 0: not tried, 1: attached, -1: failed */
static atomic_int owns_records;   /* 1 while libovl's buffer callbacks receive the records */
static atomic_int finalized;      /* another client called cuptiFinalize: libovl calls CUPTI no more */
static atomic_int subscribed;     /* libovl holds the subscription */
static atomic_int foreign_first;  /* a client registered buffer callbacks before libovl attached */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;  /* attaching, and the texts below */
static ovl_cupti_meta texts = {0, "not attached: no CUDA use seen", "", "", "", "", 0};
static atomic_uint generation = 1;  /* the writer starts from 0: the first cycle writes the texts */
static char foreign_first_who[64];
static unsigned kinds_enabled;    /* bit per OVL_KIND_x, under attach_lock */
static uint32_t version;
static CUpti_SubscriberHandle subscriber;

static atomic_int outstanding;
static atomic_uint_fast64_t dropped;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static ovl_cupti_buffer *done_head, *done_tail;

const ovl_cupti_api *ovl_cupti_table(void) { return &api; }
int ovl_cupti_attached(void) { return atomic_load_explicit(&owns_records, memory_order_acquire); }
int ovl_cupti_was_attached(void) { return atomic_load_explicit(&attach_state, memory_order_acquire) == 1; }
uint32_t ovl_cupti_version(void) { return version; }
uint64_t ovl_cupti_dropped(void) { return atomic_load(&dropped); }
unsigned ovl_cupti_meta_generation(void) { return atomic_load(&generation); }

void ovl_cupti_status(char *buf, size_t size) {
  pthread_mutex_lock(&attach_lock);
  snprintf(buf, size, "%s", texts.status);
  pthread_mutex_unlock(&attach_lock);
}

void ovl_cupti_meta_read(ovl_cupti_meta *m) {
  pthread_mutex_lock(&attach_lock);
  *m = texts;
  m->generation = atomic_load(&generation);
  pthread_mutex_unlock(&attach_lock);
}

/* Under attach_lock. */
static void texts_changed(void) { atomic_fetch_add(&generation, 1); }

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

/* A forced flush hands over the records as they are, and CUPTI gives a kernel its GPU
** timestamps only when a plain flush (or a full buffer) completes it: forced alone, the
** kernels of the last second came back with start = end = 0 (an H200, libovl handing CUPTI
** to torch.profiler: 290 of 298 records). So a plain flush first, then the forced one for
** what is really still running. */
static void flush_all(int forced) {
  api.ActivityFlushAll(0);
  if (forced) api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void ovl_cupti_flush(int forced) {
  if (ovl_cupti_attached() && !atomic_load(&finalized)) flush_all(forced);
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

/* Under attach_lock. Returns NULL when attached, else why not. */
static const char *attach(char *why, size_t size) {
  if (atomic_load(&foreign_first)) {
    snprintf(why, size, "another CUPTI client (%s) receives CUPTI's activity records", foreign_first_who);
    return why;
  }
  ovl_cupti_origin origin;
  if (ovl_cupti_api_load(&api, ovl_capture_settings()->cupti_library, &origin, why, size)) return why;
  api.GetVersion(&version);
  snprintf(texts.library, sizeof texts.library, "%s (%s)", origin.path, origin.how);
  ovl_debug("CUPTI %s, found as %s", origin.path, origin.how);
  ovl_cupti_hooks hooks = {on_callback, cupti_clock, buffer_requested, buffer_completed};
  ovl_cupti_attach_result r;
  int ok = ovl_cupti_attach_sequence(&api, &hooks, &r);
  snprintf(texts.degraded, sizeof texts.degraded, "%s", r.degraded);
  if (!ok) {
    snprintf(why, size, "%s", r.why);
    return why;
  }
  subscriber = r.subscriber;
  atomic_store(&subscribed, 1);
  kinds_enabled = r.kinds;
  ovl_cupti_kinds_text(r.kinds, texts.kinds, sizeof texts.kinds);
  return NULL;
}

int ovl_cupti_attach(const char *how) {
  if (atomic_load(&attach_state)) return ovl_cupti_was_attached();
  if (ovl_capture_settings()->cupti_off) {  /* asked for: no warning */
    pthread_mutex_lock(&attach_lock);
    if (!atomic_load(&attach_state)) {
      snprintf(texts.status, sizeof texts.status, "not attached: OVL_CUPTI=0");
      atomic_store(&attach_state, -1);
      texts_changed();
    }
    pthread_mutex_unlock(&attach_lock);
    return 0;
  }
  pthread_mutex_lock(&attach_lock);
  if (!atomic_load(&attach_state)) {
    char why[256];
    const char *problem = attach(why, sizeof why);
    if (problem) {
      snprintf(texts.status, sizeof texts.status, "not attached: %.230s", problem);
      atomic_store(&attach_state, -1);
    } else {
      snprintf(texts.status, sizeof texts.status, "attached (%s)", how);
      atomic_store(&owns_records, 1);
      atomic_store(&attach_state, 1);
    }
    texts_changed();
  }
  int ok = ovl_cupti_was_attached();
  char line[256], degraded[256];
  snprintf(line, sizeof line, "%s", texts.status);
  snprintf(degraded, sizeof degraded, "%s", texts.degraded);
  pthread_mutex_unlock(&attach_lock);
  static int once, degraded_once;
  if (!ok)
    ovl_warn(&once, "CUPTI %s; GPU kernels and memory operations are not captured (NCCL calls and NVTX ranges are)",
             line);
  else
    ovl_debug("CUPTI %s", line);
  if (ok && degraded[0]) ovl_warn(&degraded_once, "CUPTI attached with losses: %s (meta.cupti_degraded)", degraded);
  return ok;
}

static int is_cuda_driver(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  const char *base = strrchr(name, '/');
  return strncmp(base ? base + 1 : name, "libcuda.so", 10) == 0;
}

void ovl_cupti_attach_late(const char *hook) {
  if (atomic_load(&attach_state) || !ovl_capture_owns_cuda_injection()) return;
  /* Only where CUDA is already in the process: never load CUPTI into one that has none. The
  ** loaded objects are looked at in memory (dlopen(RTLD_NOLOAD) searched the loader's paths
  ** whenever the driver was absent: at every communicator NCCL created). */
  if (!dl_iterate_phdr(is_cuda_driver, NULL)) return;
  char how[96];
  snprintf(how, sizeof how, "late, from %s", hook);
  ovl_cupti_attach(how);
}

/* ---------------------------------------------------------------------------------- */
/* Other CUPTI clients                                                                */
/* ---------------------------------------------------------------------------------- */

static int conflict_warned;

/* Under attach_lock: one more fact in meta.cupti_conflict. */
static void add_conflict(int64_t t, const char *fmt, const char *who, const char *what) {
  size_t at = strlen(texts.conflict);
  if (at + 1 < sizeof texts.conflict) {
    char fact[256];
    snprintf(fact, sizeof fact, fmt, who, what);
    snprintf(texts.conflict + at, sizeof texts.conflict - at, "%s%lld ns: %s", at ? "; " : "", (long long)t, fact);
  }
  texts_changed();
}

/* Under attach_lock: the GPU capture ends now. */
static void capture_ends(int64_t t, const char *who, const char *why) {
  if (!atomic_exchange(&owns_records, 0)) return;
  texts.capture_ended_ns = t;
  ovl_warn(&conflict_warned, "%s (another CUPTI client, such as torch.profiler) %s: GPU kernels and copies after "
           "that are not in the trace; NCCL calls and NVTX ranges still are (meta.cupti_conflict)", who, why);
}

static int ovl_kind_of(CUpti_ActivityKind kind) {
  for (int k = 0; k < OVL_KIND_COUNT; k++)
    if (ovl_cupti_kind(k) == kind) return k;
  return -1;
}


void ovl_cupti_note_foreign(ovl_cupti_foreign what, const char *who, CUpti_ActivityKind kind) {
  pthread_mutex_lock(&attach_lock);
  int state = atomic_load(&attach_state);
  int64_t t = ovl_clock_ns();
  if (state == 0 && what == OVL_FOREIGN_BUFFERS && !atomic_load(&foreign_first)) {
    snprintf(foreign_first_who, sizeof foreign_first_who, "%s", who);
    atomic_store(&foreign_first, 1);  /* libovl will not attach: the records are that client's */
  } else if (state == 1) {
    if (what == OVL_FOREIGN_BUFFERS) {
      /* It gets the records of the kinds it enables, not of libovl's. */
      if (kinds_enabled && !atomic_load(&finalized)) ovl_cupti_release_kinds(&api, kinds_enabled);
      kinds_enabled = 0;
      add_conflict(t, "%s registered its own activity buffers%s", who, " (libovl's kinds disabled)");
      capture_ends(t, who, "took CUPTI's activity records");
    } else if (what == OVL_FOREIGN_DISABLE) {
      int k = ovl_kind_of(kind);
      if (k >= 0 && (kinds_enabled & (1u << k))) {
        kinds_enabled &= ~(1u << k);
        add_conflict(t, "%s disabled %s records", who, ovl_cupti_kind_name(k));
        if (!(kinds_enabled & OVL_GPU_WORK_KINDS)) capture_ends(t, who, "disabled CUPTI's kernel and copy records");
      }
    } else {
      atomic_store(&finalized, 1);
      add_conflict(t, "%s finalized CUPTI%s", who, "");
      capture_ends(t, who, "detached CUPTI (cuptiFinalize)");
    }
  }
  pthread_mutex_unlock(&attach_lock);
}

void ovl_cupti_before_foreign_takeover(void) {
  if (ovl_cupti_attached() && !atomic_load(&finalized)) flush_all(1);
}

int ovl_cupti_yield_subscription(const char *who) {
  if (!atomic_exchange(&subscribed, 0)) return 0;
  /* Records still waiting for their GPU timestamps lose them with the subscriber: complete
  ** them first (on an H200, yielding to torch.profiler without this flush left every kernel
  ** of the steps before it untimed: 292 of 298 records). Outside attach_lock: CUPTI may
  ** wait inside the flush for threads that are in libovl's callbacks. */
  ovl_cupti_flush(0);
  pthread_mutex_lock(&attach_lock);
  if (!atomic_load(&finalized)) api.Unsubscribe(subscriber);
  add_conflict(ovl_clock_ns(), "gave the CUPTI subscription to %s%s", who, " (its cuptiSubscribe was retried)");
  pthread_mutex_unlock(&attach_lock);
  ovl_debug("gave the CUPTI subscription to %s, whose cuptiSubscribe found it taken", who);
  return 1;
}

/* ---------------------------------------------------------------------------------- */
/* Hooks' helpers                                                                     */
/* ---------------------------------------------------------------------------------- */

int ovl_cupti_push(uint64_t external_id) {
  return ovl_cupti_attached() && !atomic_load(&finalized) &&
         api.ActivityPushExternalCorrelationId(OVL_EXT_KIND, external_id) == CUPTI_SUCCESS;
}

void ovl_cupti_pop(void) {
  uint64_t last;
  if (!atomic_load(&finalized)) api.ActivityPopExternalCorrelationId(OVL_EXT_KIND, &last);
}

int64_t ovl_cupti_stream_id(void *stream) {
  uint32_t id;
  if (ovl_cupti_was_attached() && !atomic_load(&finalized) &&
      api.GetStreamIdEx(NULL, (CUstream)stream, 0, &id) == CUPTI_SUCCESS)
    return id;
  return OVL_NONE;
}

/* Called by the CUDA driver at initialisation when CUDA_INJECTION64_PATH names libovl. */
__attribute__((visibility("default"))) int InitializeInjection(void) {
  if (ovl_capture_owns_cuda_injection() && ovl_capture_activate()) ovl_cupti_attach("injection");
  return 1;
}
