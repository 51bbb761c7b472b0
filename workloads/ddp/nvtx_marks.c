/* NVTX annotations in the "ovl" domain: see nvtx_marks.h. */
#include "nvtx_marks.h"

#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static nvtxDomainHandle_t ovl_domain;
static int nvtx_on;

void ovl_nvtx_enable(int enabled) {
  nvtx_on = enabled;
  if (enabled && !ovl_domain) ovl_domain = nvtxDomainCreateA("ovl");
}

static nvtxEventAttributes_t attributes(const char *message) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

static void push(const char *message) {
  nvtxEventAttributes_t a = attributes(message);
  nvtxDomainRangePushEx(ovl_domain, &a);
}

void ovl_nvtx_step_begin(void) {
  if (nvtx_on) push("step");
}

void ovl_nvtx_step_end(void) {
  if (nvtx_on) nvtxDomainRangePop(ovl_domain);
}

void ovl_nvtx_grad_ready(int bucket, int64_t bytes, const char *param) {
  if (!nvtx_on) return;
  char text[160];
  if (bucket >= 0) snprintf(text, sizeof text, "grad_ready bucket=%d bytes=%lld param=%s", bucket, (long long)bytes, param);
  else snprintf(text, sizeof text, "grad_ready bytes=%lld param=%s", (long long)bytes, param);
  nvtxEventAttributes_t a = attributes(text);
  nvtxDomainMarkEx(ovl_domain, &a);
}

void ovl_nvtx_bucket_begin(int bucket) {
  if (!nvtx_on) return;
  char text[32];
  snprintf(text, sizeof text, "bucket %d", bucket);
  push(text);
}

void ovl_nvtx_bucket_end(void) {
  if (nvtx_on) nvtxDomainRangePop(ovl_domain);
}

void ovl_nvtx_dim_begin(const char *dim) {
  if (!nvtx_on) return;
  char text[32];
  snprintf(text, sizeof text, "dim %s", dim);
  push(text);
}

void ovl_nvtx_dim_end(void) {
  if (nvtx_on) nvtxDomainRangePop(ovl_domain);
}
