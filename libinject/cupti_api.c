/* Loading CUPTI into the function table: see cupti_api.h. */
#define _GNU_SOURCE
#include "cupti_api.h"

#include "cupti_locate.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOADED 512
#define MAX_CANDIDATES 64

typedef struct loaded_list {
  const char *paths[MAX_LOADED];
  size_t n;
} loaded_list;

/* dlpi_name stays valid while the object is loaded; the list is used at once. */
static int note_loaded(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  loaded_list *l = arg;
  if (info->dlpi_name && info->dlpi_name[0] && l->n < MAX_LOADED) l->paths[l->n++] = info->dlpi_name;
  return 0;
}

static uint32_t version_of(void *h) {
  CUptiResult (*get)(uint32_t *) = (CUptiResult(*)(uint32_t *))dlsym(h, "cuptiGetVersion");
  uint32_t v = 0;
  return get && get(&v) == CUPTI_SUCCESS ? v : 0;
}

/* Opens one candidate; keeps it (RTLD_NODELETE) only when its major version is libovl's. */
static void *open_candidate(const ovl_cupti_candidate *c, char *seen, size_t seen_size) {
  void *h = dlopen(c->path, RTLD_NOW | RTLD_LOCAL | (c->only_if_loaded ? RTLD_NOLOAD : 0));
  if (!h) return NULL;
  uint32_t v = version_of(h);
  if (v / 10000 != OVL_CUPTI_MAJOR) {
    snprintf(seen, seen_size, "%.160s reports CUPTI version %u, libovl reads CUPTI %d records", c->path, v,
             OVL_CUPTI_MAJOR);
    dlclose(h);
    return NULL;
  }
  void *kept = dlopen(c->path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
  dlclose(h);
  return kept;
}

static void *find_cupti(const char *explicit_path, ovl_cupti_origin *origin, char *why, size_t why_size) {
  loaded_list loaded = {{0}, 0};
  dl_iterate_phdr(note_loaded, &loaded);
  /* OVL_CUPTI_MAJOR is an expression (CUPTI_API_VERSION / 10000): printed, not stringified. */
  char soname[32];
  snprintf(soname, sizeof soname, "libcupti.so.%d", OVL_CUPTI_MAJOR);
  ovl_cupti_search s = {soname, explicit_path, loaded.paths, loaded.n,
                        getenv("CUDA_HOME"), getenv("CUDA_PATH"),
#ifdef OVL_CUPTI_BUILD_PATH
                        OVL_CUPTI_BUILD_PATH
#else
                        NULL
#endif
  };
  static ovl_cupti_candidate c[MAX_CANDIDATES];  /* 1 KiB each: not on a hook's stack */
  size_t n = ovl_cupti_candidates(&s, c, MAX_CANDIDATES);
  char mismatch[256] = "";
  for (size_t i = 0; i < n; i++) {
    void *h = open_candidate(&c[i], mismatch, sizeof mismatch);
    if (!h) continue;
    snprintf(origin->how, sizeof origin->how, "%s", c[i].how);
    return h;
  }
  if (explicit_path && explicit_path[0])
    snprintf(why, why_size, "OVL_CUPTI_LIBRARY=%s cannot be loaded%s%s", explicit_path, mismatch[0] ? ": " : "",
             mismatch);
  else
    snprintf(why, why_size, "%s not found in %zu places (set OVL_CUPTI_LIBRARY)%s%s", s.soname, n,
             mismatch[0] ? "; " : "", mismatch);
  return NULL;
}

int ovl_cupti_api_load(ovl_cupti_api *api, const char *explicit_path, ovl_cupti_origin *origin, char *why,
                       size_t why_size) {
  memset(api, 0, sizeof *api);
  memset(origin, 0, sizeof *origin);
  void *h = find_cupti(explicit_path, origin, why, why_size);
  if (!h) return -1;
  /* No dlclose, ever: CUPTI keeps threads and callbacks into this process. */
#define LOAD(field, sym)                                               \
  do {                                                                 \
    *(void **)&api->field = dlsym(h, #sym);                            \
    if (!api->field) {                                                 \
      snprintf(why, why_size, "libcupti has no %s", #sym);             \
      memset(api, 0, sizeof *api);                                     \
      return -1;                                                       \
    }                                                                  \
  } while (0)
  LOAD(GetVersion, cuptiGetVersion);
  LOAD(GetResultString, cuptiGetResultString);
  LOAD(Subscribe, cuptiSubscribe);
  LOAD(Unsubscribe, cuptiUnsubscribe);
  LOAD(GetCallbackName, cuptiGetCallbackName);
  LOAD(SetThreadIdType, cuptiSetThreadIdType);
  LOAD(ActivityRegisterTimestampCallback, cuptiActivityRegisterTimestampCallback);
  LOAD(ActivityRegisterCallbacks, cuptiActivityRegisterCallbacks);
  LOAD(ActivityEnable, cuptiActivityEnable);
  LOAD(ActivityDisable, cuptiActivityDisable);
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
  *(void **)&api->Subscribe_v2 = dlsym(h, "cuptiSubscribe_v2");  /* optional */
  Dl_info info;
  char real[PATH_MAX];
  if (dladdr(*(void **)&api->GetVersion, &info) && info.dli_fname)
    snprintf(origin->path, sizeof origin->path, "%.1000s", realpath(info.dli_fname, real) ? real : info.dli_fname);
  return 0;
}

const char *ovl_cupti_error(const ovl_cupti_api *api, CUptiResult rc) {
  const char *s = NULL;
  if (api && api->GetResultString && api->GetResultString(rc, &s) == CUPTI_SUCCESS && s) return s;
  static __thread char buf[32];
  snprintf(buf, sizeof buf, "CUPTI error %d", (int)rc);
  return buf;
}
