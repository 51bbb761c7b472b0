/* CUPTI records -> rows: see cupti_records.h. */
#include "cupti_records.h"

#include "collective_ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ovl_cupti_records_init(ovl_cupti_records *r, const ovl_cupti_api *api, ovl_trace_writer *w) {
  memset(r, 0, sizeof *r);
  r->api = api;
  r->w = w;
}

void ovl_cupti_records_free(ovl_cupti_records *r) {
  for (size_t i = 0; i < r->kernel_names.len; i++) free(r->kernel_names.items[i].copy);
  OVL_VEC_FREE(&r->kernel_names);
  ovl_i64map_free(&r->kernel_name_slot);
  ovl_i64map_free(&r->api_name_id);
  OVL_VEC_FREE(&r->kernels);
  OVL_VEC_FREE(&r->memops);
  OVL_VEC_FREE(&r->apis);
}

static int valid_times(uint64_t start, uint64_t end) { return start != 0 && end != 0 && end >= start; }

/* strings.id of a kernel name. CUPTI shares one name pointer among all records of a kernel,
** so the pointer is the cache key; the cached copy guards against an address reused for
** another name after a module unload (strcmp of equal strings is cheap next to interning). */
static int kernel_name_id(ovl_cupti_records *r, const char *name, int64_t *id, ovl_err *err) {
  if (!name) name = "(unknown kernel)";
  int64_t slot;
  if (ovl_i64map_get(&r->kernel_name_slot, (int64_t)(uintptr_t)name, &slot)) {
    ovl_name_cache_entry *e = &r->kernel_names.items[slot];
    if (strcmp(e->copy, name) == 0) {
      *id = e->id;
      return OVL_OK;
    }
    int rc = ovl_tw_intern(r->w, name, id, err);
    if (rc) return rc;
    char *copy = strdup(name);
    if (!copy) return ovl_oom(err, "kernel names");
    free(e->copy);
    e->copy = copy;
    e->id = *id;
    return OVL_OK;
  }
  int rc = ovl_tw_intern(r->w, name, id, err);
  if (rc) return rc;
  ovl_name_cache_entry e = {name, strdup(name), *id};
  if (!e.copy || OVL_VEC_PUSH(&r->kernel_names, e) ||
      ovl_i64map_put(&r->kernel_name_slot, (int64_t)(uintptr_t)name, (int64_t)r->kernel_names.len - 1)) {
    free(e.copy);
    return ovl_oom(err, "kernel names");
  }
  return OVL_OK;
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names carry the version
** the signature was introduced in, which says nothing to a reader. */
static void strip_version(char *s) {
  char *v = strrchr(s, '_');
  if (!v || v[1] != 'v' || !v[2]) return;
  for (const char *p = v + 2; *p; p++)
    if (*p < '0' || *p > '9') return;
  *v = 0;
}

static int api_name_id(ovl_cupti_records *r, CUpti_ActivityKind kind, uint32_t cbid, int64_t *id, ovl_err *err) {
  int64_t key = (int64_t)kind << 32 | cbid;
  if (ovl_i64map_get(&r->api_name_id, key, id)) return OVL_OK;
  CUpti_CallbackDomain domain = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                                    : CUPTI_CB_DOMAIN_DRIVER_API;
  const char *name = NULL;
  char buf[256];
  if (r->api->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) {
    snprintf(buf, sizeof buf, "%s API %u", domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", cbid);
  } else {
    snprintf(buf, sizeof buf, "%s", name);
    strip_version(buf);
  }
  int rc = ovl_tw_intern(r->w, buf, id, err);
  if (rc) return rc;
  return ovl_i64map_put(&r->api_name_id, key, *id) ? ovl_oom(err, "API names") : OVL_OK;
}

static const char *memcpy_kind(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "DtoD";  /* DtoD, DtoA, AtoD, AtoA: device-side copies */
  }
}

static int add_kernel(ovl_cupti_records *r, const CUpti_ActivityKernel10 *k, ovl_err *err) {
  if (!valid_times(k->start, k->end)) {
    r->counts.bad++;
    return OVL_OK;
  }
  ovl_kernel_row row = {(int64_t)k->start, (int64_t)k->end, k->deviceId, k->streamId, k->correlationId, 0,
                        {k->gridX, k->gridY, k->gridZ}, {k->blockX, k->blockY, k->blockZ}};
  int rc = kernel_name_id(r, k->name, &row.name, err);
  if (rc) return rc;
  if (OVL_VEC_PUSH(&r->kernels, row)) return ovl_oom(err, "kernel batch");
  r->counts.kernels++;
  return OVL_OK;
}

static int add_memop(ovl_cupti_records *r, uint64_t start, uint64_t end, uint32_t device, uint32_t stream,
                     uint32_t correlation, const char *kind, uint64_t bytes, ovl_err *err) {
  if (!valid_times(start, end)) {
    r->counts.bad++;
    return OVL_OK;
  }
  ovl_memop_row row = {(int64_t)start, (int64_t)end, device, stream, correlation, kind, (int64_t)bytes};
  if (OVL_VEC_PUSH(&r->memops, row)) return ovl_oom(err, "memop batch");
  r->counts.memops++;
  return OVL_OK;
}

static int add_api(ovl_cupti_records *r, const CUpti_ActivityAPI *a, ovl_err *err) {
  if (!valid_times(a->start, a->end)) {
    r->counts.bad++;
    return OVL_OK;
  }
  ovl_api_row row = {(int64_t)a->start, (int64_t)a->end, a->threadId, a->correlationId, 0};
  int rc = api_name_id(r, a->kind, a->cbid, &row.name, err);
  if (rc) return rc;
  if (OVL_VEC_PUSH(&r->apis, row)) return ovl_oom(err, "API batch");
  r->counts.api++;
  return OVL_OK;
}

static int add_external(ovl_cupti_records *r, const CUpti_ActivityExternalCorrelation *x, ovl_err *err) {
  if (x->externalKind != OVL_EXT_KIND) {
    r->counts.ignored++;
    return OVL_OK;
  }
  if (!ovl_ext_is_group(x->externalId)) {
    r->counts.links++;
    return ovl_tw_launch(r->w, (int64_t)x->externalId, x->correlationId, err);
  }
  uint64_t g = ovl_ext_group(x->externalId);
  uint32_t n = ovl_ext_members(x->externalId);
  for (uint32_t k = 0; k < n; k++) {
    int rc = ovl_tw_launch(r->w, ovl_group_member_id(g, k), x->correlationId, err);
    if (rc) return rc;
    r->counts.links++;
  }
  return OVL_OK;
}

static int add_record(ovl_cupti_records *r, const CUpti_Activity *rec, ovl_err *err) {
  r->counts.records++;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return add_kernel(r, (const CUpti_ActivityKernel10 *)rec, err);
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
      return add_memop(r, m->start, m->end, m->deviceId, m->streamId, m->correlationId, memcpy_kind(m->copyKind),
                       m->bytes, err);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
      return add_memop(r, m->start, m->end, m->deviceId, m->streamId, m->correlationId, "PtoP", m->bytes, err);
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
      return add_memop(r, m->start, m->end, m->deviceId, m->streamId, m->correlationId, "memset", m->bytes, err);
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return add_api(r, (const CUpti_ActivityAPI *)rec, err);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return add_external(r, (const CUpti_ActivityExternalCorrelation *)rec, err);
    default:
      r->counts.ignored++;
      return OVL_OK;
  }
}

int ovl_cupti_records_add(ovl_cupti_records *r, uint8_t *buffer, size_t valid, ovl_err *err) {
  CUpti_Activity *rec = NULL;
  while (r->api->ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    int rc = add_record(r, rec, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* Sorts a batch by start. CUPTI delivers records nearly in order (streams interleave and
** finish a little out of order), which insertion sort handles in close to linear time; a
** batch in real disorder goes to qsort once insertion has moved 8 rows per row. */
#define SORT_BY_START(type)                                                 \
  static int cmp_##type(const void *pa, const void *pb) {                   \
    const type *a = pa, *b = pb;                                            \
    return (a->start > b->start) - (a->start < b->start);                   \
  }                                                                         \
  static void sort_##type(type *rows, size_t n) {                           \
    size_t budget = 8 * n;                                                  \
    for (size_t i = 1; i < n; i++) {                                        \
      if (rows[i].start >= rows[i - 1].start) continue;                     \
      type row = rows[i];                                                   \
      size_t j = i;                                                         \
      while (j > 0 && rows[j - 1].start > row.start && budget > 0) {        \
        rows[j] = rows[j - 1];                                              \
        j--, budget--;                                                      \
      }                                                                     \
      rows[j] = row;                                                        \
      if (budget == 0) {                                                    \
        qsort(rows, n, sizeof *rows, cmp_##type);                           \
        return;                                                             \
      }                                                                     \
    }                                                                       \
  }
SORT_BY_START(ovl_kernel_row)
SORT_BY_START(ovl_memop_row)
SORT_BY_START(ovl_api_row)

int ovl_cupti_records_flush(ovl_cupti_records *r, ovl_err *err) {
  int rc = OVL_OK;
  sort_ovl_kernel_row(r->kernels.items, r->kernels.len);
  sort_ovl_memop_row(r->memops.items, r->memops.len);
  sort_ovl_api_row(r->apis.items, r->apis.len);
  for (size_t i = 0; !rc && i < r->kernels.len; i++) rc = ovl_tw_kernel(r->w, &r->kernels.items[i], err);
  for (size_t i = 0; !rc && i < r->memops.len; i++) rc = ovl_tw_memop(r->w, &r->memops.items[i], err);
  for (size_t i = 0; !rc && i < r->apis.len; i++) rc = ovl_tw_api(r->w, &r->apis.items[i], err);
  r->kernels.len = r->memops.len = r->apis.len = 0;
  return rc;
}
