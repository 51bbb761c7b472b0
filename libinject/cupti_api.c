/* Loading CUPTI into the function table: see cupti_api.h. */
#define _GNU_SOURCE
#include "cupti_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* The soname of the CUPTI whose structs libovl was compiled against, then the library the
** build found (for toolkits outside the loader's search path). */
static void *open_cupti(void) {
  static const char *const names[] = {
    "libcupti.so." STR(OVL_CUPTI_MAJOR),
#ifdef OVL_CUPTI_BUILD_PATH
    OVL_CUPTI_BUILD_PATH,
#endif
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h) return h;
  }
  return NULL;
}

int ovl_cupti_api_load(ovl_cupti_api *api, char *why, size_t why_size) {
  memset(api, 0, sizeof *api);
  void *h = open_cupti();
  if (!h) {
    snprintf(why, why_size, "libcupti.so.%d not found (%s)", OVL_CUPTI_MAJOR, dlerror());
    return -1;
  }
  /* No dlclose, ever: CUPTI keeps threads and callbacks into this process. */
#define LOAD(field, sym)                                               \
  do {                                                                 \
    *(void **)&api->field = dlsym(h, #sym);                            \
    if (!api->field) {                                                 \
      snprintf(why, why_size, "libcupti has no %s", #sym);             \
      return -1;                                                       \
    }                                                                  \
  } while (0)
  LOAD(GetVersion, cuptiGetVersion);
  LOAD(GetResultString, cuptiGetResultString);
  LOAD(Subscribe, cuptiSubscribe);
  LOAD(GetCallbackName, cuptiGetCallbackName);
  LOAD(SetThreadIdType, cuptiSetThreadIdType);
  LOAD(ActivityRegisterTimestampCallback, cuptiActivityRegisterTimestampCallback);
  LOAD(ActivityRegisterCallbacks, cuptiActivityRegisterCallbacks);
  LOAD(ActivityEnable, cuptiActivityEnable);
  LOAD(ActivityEnableAndDump, cuptiActivityEnableAndDump);
  LOAD(ActivityEnableRuntimeApi, cuptiActivityEnableRuntimeApi);
  LOAD(ActivityEnableDriverApi, cuptiActivityEnableDriverApi);
  LOAD(ActivityGetNextRecord, cuptiActivityGetNextRecord);
  LOAD(ActivityGetNumDroppedRecords, cuptiActivityGetNumDroppedRecords);
  LOAD(ActivityFlushAll, cuptiActivityFlushAll);
  LOAD(ActivityPushExternalCorrelationId, cuptiActivityPushExternalCorrelationId);
  LOAD(ActivityPopExternalCorrelationId, cuptiActivityPopExternalCorrelationId);
  LOAD(GetStreamIdEx, cuptiGetStreamIdEx);
#undef LOAD
  return 0;
}

const char *ovl_cupti_error(const ovl_cupti_api *api, CUptiResult rc) {
  const char *s = NULL;
  if (api && api->GetResultString && api->GetResultString(rc, &s) == CUPTI_SUCCESS && s) return s;
  static __thread char buf[32];
  snprintf(buf, sizeof buf, "CUPTI error %d", (int)rc);
  return buf;
}
