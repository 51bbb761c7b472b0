/* The CUPTI attach sequence: see cupti_attach.h. */
#include "cupti_attach.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const struct {
  CUpti_ActivityKind kind;
  const char *name;
} kinds[OVL_KIND_COUNT] = {
  [OVL_KIND_KERNEL] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
  [OVL_KIND_MEMCPY] = {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
  [OVL_KIND_MEMCPY_P2P] = {CUPTI_ACTIVITY_KIND_MEMCPY2, "memcpy_p2p"},
  [OVL_KIND_MEMSET] = {CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
  [OVL_KIND_EXTERNAL_CORRELATION] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external_correlation"},
};


CUpti_ActivityKind ovl_cupti_kind(int ovl_kind) {
  assert(ovl_kind >= 0 && ovl_kind < OVL_KIND_COUNT);
  return kinds[ovl_kind].kind;
}

const char *ovl_cupti_kind_name(int ovl_kind) {
  assert(ovl_kind >= 0 && ovl_kind < OVL_KIND_COUNT);
  return kinds[ovl_kind].name;
}

void ovl_cupti_kinds_text(unsigned mask, char *buf, size_t size) {
  size_t at = 0;
  if (size) buf[0] = 0;
  for (int k = 0; k < OVL_KIND_COUNT; k++) {
    if (!(mask & (1u << k)) || at >= size) continue;
    int n = snprintf(buf + at, size - at, "%s%s", at ? "," : "", kinds[k].name);
    if (n > 0) at += (size_t)n;
  }
}

/* Appends "; <text>" (or "<text>" first) to out->degraded. */
static void note_loss(ovl_cupti_attach_result *out, const char *what, const ovl_cupti_api *api, CUptiResult rc) {
  size_t at = strlen(out->degraded);
  if (at < sizeof out->degraded)
    snprintf(out->degraded + at, sizeof out->degraded - at, "%s%s refused (%s)", at ? "; " : "", what,
             ovl_cupti_error(api, rc));
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

/* Switches the launch APIs' records on or off; returns how many calls CUPTI accepted. */
static int set_launch_apis(const ovl_cupti_api *api, uint8_t on) {
  int n = 0;
  const char *name;
  for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++)
    if (api->GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name &&
        launches_gpu_work(name) && api->ActivityEnableRuntimeApi(cbid, on) == CUPTI_SUCCESS)
      n++;
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
    if (api->GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name &&
        launches_gpu_work(name) && api->ActivityEnableDriverApi(cbid, on) == CUPTI_SUCCESS)
      n++;
  return n;
}

void ovl_cupti_release_kinds(const ovl_cupti_api *api, unsigned mask) {
  for (int k = 0; k < OVL_KIND_COUNT; k++)
    if (mask & (1u << k)) api->ActivityDisable(kinds[k].kind);
  set_launch_apis(api, 0);
}

/* cuptiSubscribe_v2 when CUPTI has it: it names libovl to other clients and names the
** client that holds CUPTI when libovl is refused. */
static CUptiResult subscribe(const ovl_cupti_api *api, const ovl_cupti_hooks *h, ovl_cupti_attach_result *out,
                             char *holder, size_t holder_size) {
  holder[0] = 0;
  if (!api->Subscribe_v2) return api->Subscribe(&out->subscriber, h->on_callback, NULL);
  CUpti_SubscriberParams p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  p.subscriberName = "ovl";
  p.oldSubscriberName = holder;
  p.oldSubscriberSize = holder_size;
  return api->Subscribe_v2(&out->subscriber, h->on_callback, NULL, &p);
}

/* Leaves CUPTI as it was found: kinds enabled so far disabled, the subscription given back. */
static int give_up(const ovl_cupti_api *api, ovl_cupti_attach_result *out) {
  for (int k = 0; k < OVL_KIND_COUNT; k++)
    if (out->kinds & (1u << k)) api->ActivityDisable(kinds[k].kind);
  out->kinds = 0;
  api->Unsubscribe(out->subscriber);
  out->attached = 0;
  return 0;
}

int ovl_cupti_attach_sequence(const ovl_cupti_api *api, const ovl_cupti_hooks *h, ovl_cupti_attach_result *out) {
  memset(out, 0, sizeof *out);
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
  CUptiResult rc = subscribe(api, h, out, holder, sizeof holder - 1);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof holder - 1] = 0;
    snprintf(out->why, sizeof out->why, "another CUPTI client is active (%s)",
             holder[0] ? holder : "Nsight Systems, torch.profiler, ...");
    return 0;
  }
  if (rc != CUPTI_SUCCESS) {
    snprintf(out->why, sizeof out->why, "cuptiSubscribe failed: %s", ovl_cupti_error(api, rc));
    return 0;
  }
  /* The clock first, before any kind is enabled, so that every record uses it. */
  if ((rc = api->ActivityRegisterTimestampCallback(h->clock)) != CUPTI_SUCCESS) {
    snprintf(out->why, sizeof out->why, "cuptiActivityRegisterTimestampCallback failed (%s): GPU times could "
             "not be put on the host clock", ovl_cupti_error(api, rc));
    return give_up(api, out);
  }
  if ((rc = api->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS)
    note_loss(out, "system thread ids (api.tid)", api, rc);
  if ((rc = api->ActivityRegisterCallbacks(h->buffer_requested, h->buffer_completed)) != CUPTI_SUCCESS) {
    snprintf(out->why, sizeof out->why, "cuptiActivityRegisterCallbacks failed: %s", ovl_cupti_error(api, rc));
    return give_up(api, out);
  }
  for (int k = 0; k < OVL_KIND_COUNT; k++) {
    if ((rc = api->ActivityEnable(kinds[k].kind)) == CUPTI_SUCCESS) out->kinds |= 1u << k;
    else note_loss(out, kinds[k].name, api, rc);
  }
  if (!(out->kinds & OVL_GPU_WORK_KINDS)) {
    snprintf(out->why, sizeof out->why, "CUPTI refused every kind of GPU work record (%.200s)", out->degraded);
    return give_up(api, out);
  }
  out->launch_apis = set_launch_apis(api, 1);
  if (!out->launch_apis) {
    size_t at = strlen(out->degraded);
    if (at < sizeof out->degraded)
      snprintf(out->degraded + at, sizeof out->degraded - at, "%slaunch API records refused (kernels are not linked to their launches nor to NCCL calls)",
               at ? "; " : "");
  }
  out->attached = 1;
  return 1;
}
