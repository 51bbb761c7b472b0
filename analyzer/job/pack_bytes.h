/*
** Bytes written and read back exactly: the primitives of rank_pack.h.
**
** Integers are little-endian base-128 varints; signed ones zig-zagged first. A value may be
** written as its difference from a predicted value (ovl_put_i64_near): the arithmetic wraps,
** so every int64 (OVL_NONE included) round-trips, and a good prediction (the previous
** collective's time) makes a time 2-4 bytes instead of 8. Doubles are their 8 bytes (NaN
** payloads kept), strings their length and bytes (NULL is written apart from "").
**
** Writing: an ovl_bytes grows as needed; a failed allocation sets oom and later writes do
** nothing, so a caller checks once at the end. Reading: an ovl_bytes_reader never reads past
** its end; a read beyond it, or a malformed varint, sets bad and returns zeros, so a caller
** checks once at the end too.
*/
#ifndef OVL_PACK_BYTES_H
#define OVL_PACK_BYTES_H

#include "base/none.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_bytes {
  unsigned char *data;
  size_t len, cap;
  int oom;                 /* an allocation failed: the content is incomplete */
} ovl_bytes;

void ovl_put_u64(ovl_bytes *b, uint64_t v);
void ovl_put_i64(ovl_bytes *b, int64_t v);
/* v written as its (wrapping) difference from predicted. */
void ovl_put_i64_near(ovl_bytes *b, int64_t v, int64_t predicted);
/* An int64 that is often OVL_NONE (one byte then), else near predicted. */
void ovl_put_opt_near(ovl_bytes *b, int64_t v, int64_t predicted);
void ovl_put_f64(ovl_bytes *b, double v);
void ovl_put_raw(ovl_bytes *b, const void *p, size_t n);
/* s may be NULL (read back as NULL). */
void ovl_put_str(ovl_bytes *b, const char *s);
void ovl_bytes_free(ovl_bytes *b);

typedef struct ovl_bytes_reader {
  const unsigned char *p, *end;
  int bad;                 /* read past the end or a malformed value */
} ovl_bytes_reader;

uint64_t ovl_get_u64(ovl_bytes_reader *r);
int64_t ovl_get_i64(ovl_bytes_reader *r);
int64_t ovl_get_i64_near(ovl_bytes_reader *r, int64_t predicted);
int64_t ovl_get_opt_near(ovl_bytes_reader *r, int64_t predicted);
double ovl_get_f64(ovl_bytes_reader *r);
void ovl_get_raw(ovl_bytes_reader *r, void *p, size_t n);
/* A string written by ovl_put_str: malloc'ed (caller frees), NULL when NULL was written or on
** error (*oom set when memory ran out). */
char *ovl_get_str(ovl_bytes_reader *r, int *oom);
/* A string into a fixed buffer of size cap (truncated to fit, always terminated). */
void ovl_get_str_into(ovl_bytes_reader *r, char *buf, size_t cap);
/* A count of items of at least min_bytes each: bad (and 0) when the rest cannot hold them, so
** a corrupt count never makes a huge allocation. */
size_t ovl_get_count(ovl_bytes_reader *r, size_t min_bytes);

#endif
