/*
** CUPTI activity records -> trace rows. Pure conversion on the writer thread: buffers in,
** kernels / memops / api / collective_launches rows out, through the function table only
** (ActivityGetNextRecord to walk a buffer, GetCallbackName for API names).
**
** GPU work and API rows of each add() are held in a batch that flush() sorts by start and
** writes, so rows reach the file close to start order (the analyzer restores order within
** a window and falls back to a slower sort beyond it). Records with a zero timestamp or
** end < start are counted in `bad` and not stored. External correlation records of
** libovl's own kind become collective_launches rows (collective_ids.h).
*/
#ifndef OVL_INJECT_CUPTI_RECORDS_H
#define OVL_INJECT_CUPTI_RECORDS_H

#include "base/i64map.h"
#include "base/vec.h"
#include "cupti_api.h"
#include "store/trace_writer.h"

/* The external correlation kind libovl pushes around NCCL calls (Kineto uses CUSTOM0/1). */
#define OVL_EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

typedef struct ovl_record_counts {
  uint64_t records;   /* every record seen */
  uint64_t kernels, memops, api, links;
  uint64_t bad;       /* zero timestamp or end < start: dropped */
  uint64_t ignored;   /* kinds libovl does not store, and other tools' external ids */
} ovl_record_counts;

typedef struct ovl_name_cache_entry {
  const char *seen;   /* the record's pointer */
  char *copy;         /* its text when first seen, to detect a reused address */
  int64_t id;         /* strings.id */
} ovl_name_cache_entry;

typedef struct ovl_cupti_records {
  const ovl_cupti_api *api;
  ovl_trace_writer *w;
  ovl_i64map kernel_name_slot;             /* name pointer -> index in kernel_names */
  OVL_VEC(ovl_name_cache_entry) kernel_names;
  ovl_i64map api_name_id;                  /* activity kind << 32 | cbid -> strings.id */
  OVL_VEC(ovl_kernel_row) kernels;
  OVL_VEC(ovl_memop_row) memops;
  OVL_VEC(ovl_api_row) apis;
  ovl_record_counts counts;
} ovl_cupti_records;

void ovl_cupti_records_init(ovl_cupti_records *r, const ovl_cupti_api *api, ovl_trace_writer *w);
/* Converts every record of a completed buffer (valid bytes) into the batch. */
int ovl_cupti_records_add(ovl_cupti_records *r, uint8_t *buffer, size_t valid, ovl_err *err);
/* Writes the batch, each table sorted by start. */
int ovl_cupti_records_flush(ovl_cupti_records *r, ovl_err *err);
void ovl_cupti_records_free(ovl_cupti_records *r);

#endif
