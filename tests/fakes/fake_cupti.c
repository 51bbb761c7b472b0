/*
** Fake CUPTI (test double): see fake_cupti.h. Buffer layout: for each record an 8-byte
** header holding its size, then the record, padded to 8 bytes.
*/
#include "fake_cupti.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KINDS 64
#define MAX_REFUSALS 16
#define MAX_PUSHED 16
#define LOG_BYTES 16384

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

void *fake_buffer_add(fake_buffer *b, const void *record, size_t size) {
  size_t need = b->used + 8 + pad8(size);
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < need) cap *= 2;
    uint8_t *d = aligned_alloc(8, cap);
    if (!d) abort();
    if (b->used) memcpy(d, b->data, b->used);
    free(b->data);
    b->data = d;
    b->cap = cap;
  }
  uint64_t header = size;
  memcpy(b->data + b->used, &header, 8);
  memset(b->data + b->used + 8, 0, pad8(size));
  memcpy(b->data + b->used + 8, record, size);
  void *copy = b->data + b->used + 8;
  b->used = need;
  return copy;
}

void fake_buffer_free(fake_buffer *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------------------------- */
/* The process-wide state                                                             */
/* ---------------------------------------------------------------------------------- */

typedef struct refusal {
  char call[48];
  int kind;
  CUptiResult rc;
} refusal;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  int subscribed;
  char holder[64];                /* the subscriber's name, when another client holds it */
  CUpti_BuffersCallbackRequestFunc requested;
  CUpti_BuffersCallbackCompleteFunc completed;
  CUpti_TimestampCallbackFunc clock;
  unsigned char enabled[MAX_KINDS];
  unsigned char runtime_api_enabled, driver_api_enabled;
  uint64_t pushed[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][MAX_PUSHED];
  int npushed[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
  refusal refusals[MAX_REFUSALS];
  int nrefusals;
  fake_buffer pending;
  size_t npending, ncompleted;
  int lazy_timestamps;            /* fake_cupti_lazy_timestamps */
  char log[LOG_BYTES];
  size_t log_used;
} s;
static FILE *log_file;  /* fake_cupti_log_to */

static struct fake_subscriber { int id; } the_subscriber;

void fake_cupti_lazy_timestamps(int on) {
  pthread_mutex_lock(&lock);
  s.lazy_timestamps = on;
  pthread_mutex_unlock(&lock);
}

void fake_cupti_reset(void) {
  pthread_mutex_lock(&lock);
  fake_buffer_free(&s.pending);
  memset(&s, 0, sizeof s);
  pthread_mutex_unlock(&lock);
}

void fake_cupti_refuse(const char *call, int kind, CUptiResult rc) {
  pthread_mutex_lock(&lock);
  if (s.nrefusals < MAX_REFUSALS) {
    refusal *r = &s.refusals[s.nrefusals++];
    snprintf(r->call, sizeof r->call, "%s", call);
    r->kind = kind;
    r->rc = rc;
  }
  pthread_mutex_unlock(&lock);
}

const char *fake_cupti_log(void) { return s.log; }

void fake_cupti_log_to(const char *path) {
  pthread_mutex_lock(&lock);
  if (log_file) fclose(log_file);
  log_file = path && *path ? fopen(path, "w") : NULL;
  pthread_mutex_unlock(&lock);
}

void fake_cupti_hold_subscription(const char *name) {
  pthread_mutex_lock(&lock);
  snprintf(s.holder, sizeof s.holder, "%s", name ? name : "");
  s.subscribed = name != NULL;
  pthread_mutex_unlock(&lock);
}

int fake_cupti_kind_enabled(CUpti_ActivityKind kind) { return (unsigned)kind < MAX_KINDS && s.enabled[kind]; }
uint64_t fake_cupti_now(void) { return s.clock ? s.clock() : 0; }
size_t fake_cupti_pending(void) { return s.npending; }
size_t fake_cupti_buffers_completed(void) { return s.ncompleted; }

/* Under lock: logs the call and returns what it must answer (CUPTI_SUCCESS unless refused). */
static CUptiResult called(const char *call, int kind) {
  CUptiResult rc = CUPTI_SUCCESS;
  for (int i = 0; i < s.nrefusals; i++)
    if (strcmp(s.refusals[i].call, call) == 0 && (s.refusals[i].kind < 0 || s.refusals[i].kind == kind))
      rc = s.refusals[i].rc;
  if (s.log_used + 96 < LOG_BYTES) {
    int n = kind >= 0 ? snprintf(s.log + s.log_used, LOG_BYTES - s.log_used, "%s %d%s\n", call, kind,
                                 rc ? " refused" : "")
                      : snprintf(s.log + s.log_used, LOG_BYTES - s.log_used, "%s%s\n", call, rc ? " refused" : "");
    if (n > 0) {
      if (log_file) fputs(s.log + s.log_used, log_file), fflush(log_file);
      s.log_used += (size_t)n;
    }
  }
  return rc;
}

#define LOCKED(call, kind, body)           \
  do {                                     \
    pthread_mutex_lock(&lock);             \
    CUptiResult rc_ = called(call, kind);  \
    if (rc_ == CUPTI_SUCCESS) { body; }    \
    pthread_mutex_unlock(&lock);           \
    return rc_;                            \
  } while (0)

/* ---------------------------------------------------------------------------------- */
/* The functions                                                                      */
/* ---------------------------------------------------------------------------------- */

static CUptiResult get_version(uint32_t *v) {
  *v = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

static CUptiResult result_string(CUptiResult rc, const char **str) {
  *str = rc == CUPTI_SUCCESS ? "CUPTI_SUCCESS"
         : rc == CUPTI_ERROR_NOT_SUPPORTED ? "CUPTI_ERROR_NOT_SUPPORTED (fake)"
         : rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (fake)"
                                                             : "CUPTI_ERROR (fake)";
  return CUPTI_SUCCESS;
}

static CUptiResult subscribe_v2(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *userdata,
                                CUpti_SubscriberParams *p) {
  (void)cb, (void)userdata;
  pthread_mutex_lock(&lock);
  CUptiResult rc = called(p ? "Subscribe_v2" : "Subscribe", -1);
  if (rc == CUPTI_SUCCESS && s.subscribed) {
    rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (p && p->oldSubscriberName && p->oldSubscriberSize)
      snprintf(p->oldSubscriberName, p->oldSubscriberSize, "CUPTI for %s", s.holder[0] ? s.holder : "someone");
  }
  if (rc == CUPTI_SUCCESS) {
    s.subscribed = 1;
    snprintf(s.holder, sizeof s.holder, "%s", p && p->subscriberName ? p->subscriberName : "");
    *sub = (CUpti_SubscriberHandle)&the_subscriber;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

static CUptiResult subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *userdata) {
  return subscribe_v2(sub, cb, userdata, NULL);
}

/* With lazy timestamps, the records still waiting for theirs lose them with the subscriber
** that made them (the H200 behaviour libovl must flush around). */
static void orphan_pending_kernels(void) {
  for (size_t at = 0; s.lazy_timestamps && at < s.pending.used;) {
    uint64_t rsize;
    memcpy(&rsize, s.pending.data + at, 8);
    CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(void *)(s.pending.data + at + 8);
    if (k->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) k->start = k->end = 0;
    at += 8 + pad8(rsize);
  }
}

static CUptiResult unsubscribe(CUpti_SubscriberHandle sub) {
  (void)sub;
  LOCKED("Unsubscribe", -1, s.subscribed = 0; s.holder[0] = 0; orphan_pending_kernels());
}

static CUptiResult callback_name(CUpti_CallbackDomain domain, uint32_t cbid, const char **name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == FAKE_RUNTIME_LAUNCH_CBID) *name = "cudaLaunchKernel_v7000";
  else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == FAKE_DRIVER_LAUNCH_CBID) *name = "cuLaunchKernelEx";
  else return CUPTI_ERROR_INVALID_PARAMETER;
  return CUPTI_SUCCESS;
}

static CUptiResult set_thread_id_type(CUpti_ActivityThreadIdType type) {
  LOCKED("SetThreadIdType", (int)type, (void)0);
}

static CUptiResult register_timestamp(CUpti_TimestampCallbackFunc fn) {
  LOCKED("ActivityRegisterTimestampCallback", -1, s.clock = fn);
}

static CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc comp) {
  LOCKED("ActivityRegisterCallbacks", -1, s.requested = req; s.completed = comp);
}

static CUptiResult enable(CUpti_ActivityKind kind) {
  LOCKED("ActivityEnable", (int)kind, if ((unsigned)kind < MAX_KINDS) s.enabled[kind] = 1);
}

static CUptiResult disable(CUpti_ActivityKind kind) {
  LOCKED("ActivityDisable", (int)kind, if ((unsigned)kind < MAX_KINDS) s.enabled[kind] = 0);
}

static CUptiResult enable_and_dump(CUpti_ActivityKind kind) { return enable(kind); }

static CUptiResult enable_runtime_api(CUpti_CallbackId cbid, uint8_t on) {
  LOCKED("ActivityEnableRuntimeApi", (int)cbid, if (cbid == FAKE_RUNTIME_LAUNCH_CBID) s.runtime_api_enabled = on);
}

static CUptiResult enable_driver_api(CUpti_CallbackId cbid, uint8_t on) {
  LOCKED("ActivityEnableDriverApi", (int)cbid, if (cbid == FAKE_DRIVER_LAUNCH_CBID) s.driver_api_enabled = on);
}

static CUptiResult next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record) {
  size_t at = 0;
  if (*record) {
    uint8_t *cur = (uint8_t *)*record;
    uint64_t size;
    memcpy(&size, cur - 8, 8);
    at = (size_t)(cur - buffer) + pad8(size);
  }
  if (at + 8 > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = (CUpti_Activity *)(buffer + at + 8);
  return CUPTI_SUCCESS;
}

static CUptiResult dropped(CUcontext ctx, uint32_t stream, size_t *n) {
  (void)ctx, (void)stream;
  *n = 0;
  return CUPTI_SUCCESS;
}

/* Hands the pending records to the registered callbacks, one buffer at a time (outside the
** lock: the callbacks may call back into CUPTI, as libovl's do). Without callbacks, or when
** the program's callback gives no buffer, the records are lost (CUPTI counts them). */
static CUptiResult flush_all(uint32_t flag) {
  pthread_mutex_lock(&lock);
  CUptiResult rc = called("ActivityFlushAll", (int)flag);
  fake_buffer records = s.pending;
  memset(&s.pending, 0, sizeof s.pending);
  s.npending = 0;
  CUpti_BuffersCallbackRequestFunc req = s.requested;
  CUpti_BuffersCallbackCompleteFunc comp = s.completed;
  int lazy = s.lazy_timestamps;
  pthread_mutex_unlock(&lock);
  size_t at = 0;
  while (rc == CUPTI_SUCCESS && req && comp && at < records.used) {
    uint8_t *buf = NULL;
    size_t size = 0, max_records = 0;
    req(&buf, &size, &max_records);
    if (!buf) break;
    size_t valid = 0;
    while (at < records.used) {  /* whole records only */
      uint64_t rsize;
      memcpy(&rsize, records.data + at, 8);
      size_t n = 8 + pad8(rsize);
      if (valid + n > size) break;
      memcpy(buf + valid, records.data + at, n);
      if (lazy && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) {  /* handed over before completion */
        CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(void *)(buf + valid + 8);
        if (k->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) k->start = k->end = 0;
      }
      valid += n, at += n;
    }
    comp(NULL, 0, buf, size, valid);
    pthread_mutex_lock(&lock);
    s.ncompleted++;
    pthread_mutex_unlock(&lock);
    if (!valid) break;  /* a buffer too small for one record */
  }
  fake_buffer_free(&records);
  return rc;
}

static CUptiResult push_external(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  LOCKED("ActivityPushExternalCorrelationId", (int)kind,
         if ((unsigned)kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE && s.npushed[kind] < MAX_PUSHED)
           s.pushed[kind][s.npushed[kind]++] = id);
}

static CUptiResult pop_external(CUpti_ExternalCorrelationKind kind, uint64_t *id) {
  LOCKED("ActivityPopExternalCorrelationId", (int)kind,
         if ((unsigned)kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE && s.npushed[kind] > 0) {
           *id = s.pushed[kind][--s.npushed[kind]];
         });
}

static CUptiResult stream_id(CUcontext ctx, CUstream stream, uint8_t per_thread, uint32_t *id) {
  (void)ctx, (void)per_thread;
  *id = (uint32_t)(uintptr_t)stream;  /* the test's stream handle is its id */
  return CUPTI_SUCCESS;
}

void fake_cupti_table(ovl_cupti_api *api) {
  memset(api, 0, sizeof *api);
  api->GetVersion = get_version;
  api->GetResultString = result_string;
  api->Subscribe = subscribe;
  api->Subscribe_v2 = subscribe_v2;
  api->Unsubscribe = unsubscribe;
  api->GetCallbackName = callback_name;
  api->SetThreadIdType = set_thread_id_type;
  api->ActivityRegisterTimestampCallback = register_timestamp;
  api->ActivityRegisterCallbacks = register_callbacks;
  api->ActivityEnable = enable;
  api->ActivityDisable = disable;
  api->ActivityEnableAndDump = enable_and_dump;
  api->ActivityEnableRuntimeApi = enable_runtime_api;
  api->ActivityEnableDriverApi = enable_driver_api;
  api->ActivityGetNextRecord = next_record;
  api->ActivityGetNumDroppedRecords = dropped;
  api->ActivityFlushAll = flush_all;
  api->ActivityPushExternalCorrelationId = push_external;
  api->ActivityPopExternalCorrelationId = pop_external;
  api->GetStreamIdEx = stream_id;
}

/* ---------------------------------------------------------------------------------- */
/* Emitted records                                                                    */
/* ---------------------------------------------------------------------------------- */

/* Kernel names must outlive the buffer, as CUPTI's do. */
static const char *kept_name(const char *name) {
  static char *names[256];
  static int n;
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return names[i];
  if (n == 256) return "fake_kernel";
  return names[n++] = strdup(name);
}

void fake_cupti_emit_kernel(uint64_t start, uint64_t end, uint32_t stream, uint32_t correlation, const char *name) {
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start, k.end = end, k.streamId = stream, k.correlationId = correlation;
  k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
  pthread_mutex_lock(&lock);
  k.name = kept_name(name);
  if (s.enabled[k.kind]) fake_buffer_add(&s.pending, &k, sizeof k), s.npending++;
  pthread_mutex_unlock(&lock);
}

void fake_cupti_emit_memcpy(uint64_t start, uint64_t end, uint32_t stream, uint32_t correlation, uint64_t bytes) {
  CUpti_ActivityMemcpy6 m;
  memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.start = start, m.end = end, m.streamId = stream, m.correlationId = correlation, m.bytes = bytes;
  pthread_mutex_lock(&lock);
  if (s.enabled[m.kind]) fake_buffer_add(&s.pending, &m, sizeof m), s.npending++;
  pthread_mutex_unlock(&lock);
}

void fake_cupti_emit_launch(uint64_t start, uint64_t end, uint32_t correlation) {
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = FAKE_RUNTIME_LAUNCH_CBID;
  a.start = start, a.end = end, a.correlationId = correlation, a.threadId = 1;
  pthread_mutex_lock(&lock);
  if (s.runtime_api_enabled) {
    fake_buffer_add(&s.pending, &a, sizeof a), s.npending++;
    for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; kind++) {
      if (!s.npushed[kind] || !s.enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]) continue;
      CUpti_ActivityExternalCorrelation x;
      memset(&x, 0, sizeof x);
      x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      x.externalKind = (CUpti_ExternalCorrelationKind)kind;
      x.externalId = s.pushed[kind][s.npushed[kind] - 1];
      x.correlationId = correlation;
      fake_buffer_add(&s.pending, &x, sizeof x), s.npending++;
    }
  }
  pthread_mutex_unlock(&lock);
}

CUptiResult fake_cupti_finalize(void) {
  pthread_mutex_lock(&lock);
  CUptiResult rc = called("Finalize", -1);
  if (rc == CUPTI_SUCCESS) {
    s.subscribed = 0, s.holder[0] = 0;
    s.requested = NULL, s.completed = NULL, s.clock = NULL;
    memset(s.enabled, 0, sizeof s.enabled);
    s.runtime_api_enabled = s.driver_api_enabled = 0;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}
