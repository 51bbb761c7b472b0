/*
** Fake CUPTI as a shared library (TEST DOUBLE): the functions of fake_cupti.c exported under
** CUPTI's names, built as libcupti.so.13 (tests/CMakeLists.txt), so that libovl.so finds,
** loads and drives it exactly as it would the real one, and so that a test program linked
** against it calls "CUPTI" like torch.profiler's Kineto does (through libovl's interposers).
**
** Set up from the environment when loaded:
**   FAKE_CUPTI_REFUSE   "Call[:kind][=rc],..." calls to refuse (rc: CUptiResult number,
**                       default CUPTI_ERROR_NOT_SUPPORTED), e.g. "ActivityEnable:22"
**   FAKE_CUPTI_HOLDER   another client holds the subscription, under this name
**   FAKE_CUPTI_LOG      a file that receives fake_cupti_log()'s lines as the calls are made
*/
#include "fake_cupti.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static ovl_cupti_api t;

static void refuse_from_env(const char *spec) {
  char copy[512];
  snprintf(copy, sizeof copy, "%s", spec);
  for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    CUptiResult rc = CUPTI_ERROR_NOT_SUPPORTED;
    char *eq = strchr(item, '=');
    if (eq) *eq = 0, rc = (CUptiResult)atoi(eq + 1);
    int kind = -1;
    char *colon = strchr(item, ':');
    if (colon) *colon = 0, kind = atoi(colon + 1);
    fake_cupti_refuse(item, kind, rc);
  }
}

__attribute__((constructor)) static void fake_libcupti_load(void) {
  fake_cupti_table(&t);
  const char *v = getenv("FAKE_CUPTI_REFUSE");
  if (v && *v) refuse_from_env(v);
  v = getenv("FAKE_CUPTI_HOLDER");
  if (v && *v) fake_cupti_hold_subscription(v);
  fake_cupti_log_to(getenv("FAKE_CUPTI_LOG"));
  v = getenv("FAKE_CUPTI_LAZY_TIMESTAMPS");
  fake_cupti_lazy_timestamps(v && *v == '1');
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v) { return t.GetVersion(v); }
EXPORT CUptiResult cuptiGetResultString(CUptiResult rc, const char **s) { return t.GetResultString(rc, s); }
EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u) {
  return t.Subscribe(s, cb, u);
}
EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u,
                                     CUpti_SubscriberParams *p) {
  return t.Subscribe_v2(s, cb, u, p);
}
EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s) { return t.Unsubscribe(s); }
EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name) {
  return t.GetCallbackName(d, cbid, name);
}
EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) { return t.SetThreadIdType(type); }
EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
  return t.ActivityRegisterTimestampCallback(fn);
}
EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                  CUpti_BuffersCallbackCompleteFunc c) {
  return t.ActivityRegisterCallbacks(r, c);
}
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k) { return t.ActivityEnable(k); }
EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k) { return t.ActivityDisable(k); }
EXPORT CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind k) { return t.ActivityEnableAndDump(k); }
EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t on) {
  return t.ActivityEnableRuntimeApi(cbid, on);
}
EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t on) {
  return t.ActivityEnableDriverApi(cbid, on);
}
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *b, size_t valid, CUpti_Activity **r) {
  return t.ActivityGetNextRecord(b, valid, r);
}
EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n) {
  return t.ActivityGetNumDroppedRecords(c, s, n);
}
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) { return t.ActivityFlushAll(flag); }
EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t id) {
  return t.ActivityPushExternalCorrelationId(k, id);
}
EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t *id) {
  return t.ActivityPopExternalCorrelationId(k, id);
}
EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext c, CUstream s, uint8_t per_thread, uint32_t *id) {
  return t.GetStreamIdEx(c, s, per_thread, id);
}
EXPORT CUptiResult cuptiFinalize(void) { return fake_cupti_finalize(); }
