/*
** Fake CUPTI (test double): see fake_cupti.h. Buffer layout: for each record an 8-byte
** header holding its size, then the record, padded to 8 bytes.
*/
#include "fake_cupti.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static CUptiResult callback_name(CUpti_CallbackDomain domain, uint32_t cbid, const char **name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == FAKE_RUNTIME_LAUNCH_CBID) *name = "cudaLaunchKernel_v7000";
  else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == FAKE_DRIVER_LAUNCH_CBID) *name = "cuLaunchKernelEx";
  else return CUPTI_ERROR_INVALID_PARAMETER;
  return CUPTI_SUCCESS;
}

static CUptiResult result_string(CUptiResult rc, const char **s) {
  *s = rc == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (fake)";
  return CUPTI_SUCCESS;
}

static CUptiResult dropped(CUcontext ctx, uint32_t stream, size_t *n) {
  (void)ctx, (void)stream;
  *n = 0;
  return CUPTI_SUCCESS;
}

void fake_cupti_table(ovl_cupti_api *api) {
  memset(api, 0, sizeof *api);
  api->ActivityGetNextRecord = next_record;
  api->GetCallbackName = callback_name;
  api->GetResultString = result_string;
  api->ActivityGetNumDroppedRecords = dropped;
}
