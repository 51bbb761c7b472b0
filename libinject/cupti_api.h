/*
** Every CUPTI function libovl uses, as a table of function pointers. In production the
** table is filled from libcupti with dlsym (ovl_cupti_api_load); tests fill it with a fake
** (tests/fakes/fake_cupti.c) to drive the record-handling path without a GPU. Nothing in
** libinject calls a cupti* symbol directly, and libovl.so has no link-time dependency on
** libcupti: processes that never use CUDA never load it.
*/
#ifndef OVL_INJECT_CUPTI_API_H
#define OVL_INJECT_CUPTI_API_H

#include <cupti.h>
#include <stddef.h>

typedef struct ovl_cupti_api {
  CUptiResult (*GetVersion)(uint32_t *version);
  CUptiResult (*GetResultString)(CUptiResult result, const char **str);
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata);
  /* NULL where CUPTI lacks it (then Subscribe is used). */
  CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                              CUpti_SubscriberParams *params);
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle subscriber);
  CUptiResult (*GetCallbackName)(CUpti_CallbackDomain domain, uint32_t cbid, const char **name);
  CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType type);
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc fn);
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc requested,
                                           CUpti_BuffersCallbackCompleteFunc completed);
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind kind);
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind kind);
  CUptiResult (*ActivityEnableAndDump)(CUpti_ActivityKind kind);
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId cbid, uint8_t enable);
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId cbid, uint8_t enable);
  CUptiResult (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid, CUpti_Activity **record);
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext context, uint32_t stream, size_t *dropped);
  CUptiResult (*ActivityFlushAll)(uint32_t flag);
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind kind, uint64_t id);
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind kind, uint64_t *id);
  CUptiResult (*GetStreamIdEx)(CUcontext context, CUstream stream, uint8_t per_thread, uint32_t *id);
} ovl_cupti_api;

/* CUPTI major version whose record layouts (CUpti_ActivityKernel10, ...) libovl reads. */
#define OVL_CUPTI_MAJOR (CUPTI_API_VERSION / 10000)

/* Where the loaded CUPTI came from (meta.cupti_library). */
typedef struct ovl_cupti_origin {
  char path[1024];  /* the file, as the loader resolved it */
  char how[160];    /* the rule that found it (cupti_locate.h): "beside libcudart.so.13", ... */
} ovl_cupti_origin;

/* Loads the first CUPTI of the right major version from the places cupti_locate.h lists
** (explicit is OVL_CUPTI_LIBRARY or ""), never unloads it, and fills *api and *origin.
** Returns 0, or -1 with a reason in why ("libcupti.so.13 not found in 9 places: ...",
** "libcupti has no cuptiFoo", ...) and *api zeroed. */
int ovl_cupti_api_load(ovl_cupti_api *api, const char *explicit_path, ovl_cupti_origin *origin, char *why,
                       size_t why_size);

/* "CUPTI_ERROR_..." text for a result, through the table when it can. */
const char *ovl_cupti_error(const ovl_cupti_api *api, CUptiResult rc);

#endif
