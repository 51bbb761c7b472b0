/* Bytes written and read back exactly: see pack_bytes.h. */
#include "pack_bytes.h"

#include <stdlib.h>
#include <string.h>

static int reserve(ovl_bytes *b, size_t extra) {
  if (b->oom) return -1;
  if (b->len + extra <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra) cap *= 2;
  unsigned char *p = realloc(b->data, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->data = p;
  b->cap = cap;
  return 0;
}

void ovl_put_u64(ovl_bytes *b, uint64_t v) {
  if (reserve(b, 10)) return;
  while (v >= 0x80) {
    b->data[b->len++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  b->data[b->len++] = (unsigned char)v;
}

/* Zig-zag: small magnitudes of either sign give small unsigned values. */
static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0); }
static int64_t unzigzag(uint64_t u) { return (int64_t)((u >> 1) ^ (0 - (u & 1))); }

void ovl_put_i64(ovl_bytes *b, int64_t v) { ovl_put_u64(b, zigzag(v)); }

void ovl_put_i64_near(ovl_bytes *b, int64_t v, int64_t predicted) {
  ovl_put_u64(b, zigzag((int64_t)((uint64_t)v - (uint64_t)predicted)));
}

/* 0: OVL_NONE; 1: the value follows whole (a difference too large to shift by 2); else the
** zig-zagged difference + 2. */
void ovl_put_opt_near(ovl_bytes *b, int64_t v, int64_t predicted) {
  if (v == OVL_NONE) {
    ovl_put_u64(b, 0);
    return;
  }
  uint64_t z = zigzag((int64_t)((uint64_t)v - (uint64_t)predicted));
  if (z < UINT64_MAX - 1) {
    ovl_put_u64(b, z + 2);
  } else {
    ovl_put_u64(b, 1);
    ovl_put_i64(b, v);
  }
}

void ovl_put_raw(ovl_bytes *b, const void *p, size_t n) {
  if (n == 0 || reserve(b, n)) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

void ovl_put_f64(ovl_bytes *b, double v) { ovl_put_raw(b, &v, sizeof v); }

void ovl_put_str(ovl_bytes *b, const char *s) {
  if (!s) {
    ovl_put_u64(b, 0);
    return;
  }
  size_t n = strlen(s);
  ovl_put_u64(b, (uint64_t)n + 1);
  ovl_put_raw(b, s, n);
}

void ovl_bytes_free(ovl_bytes *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

uint64_t ovl_get_u64(ovl_bytes_reader *r) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) break;
    unsigned char c = *r->p++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  r->bad = 1;
  return 0;
}

int64_t ovl_get_i64(ovl_bytes_reader *r) { return unzigzag(ovl_get_u64(r)); }

int64_t ovl_get_i64_near(ovl_bytes_reader *r, int64_t predicted) {
  return (int64_t)((uint64_t)unzigzag(ovl_get_u64(r)) + (uint64_t)predicted);
}

int64_t ovl_get_opt_near(ovl_bytes_reader *r, int64_t predicted) {
  uint64_t tag = ovl_get_u64(r);
  if (tag == 0) return OVL_NONE;
  if (tag == 1) return ovl_get_i64(r);
  return (int64_t)((uint64_t)unzigzag(tag - 2) + (uint64_t)predicted);
}

void ovl_get_raw(ovl_bytes_reader *r, void *p, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = 1;
    memset(p, 0, n);
    return;
  }
  memcpy(p, r->p, n);
  r->p += n;
}

double ovl_get_f64(ovl_bytes_reader *r) {
  double v;
  ovl_get_raw(r, &v, sizeof v);
  return v;
}

/* Length + 1 of the next string (0: NULL), checked against what is left. */
static size_t str_len(ovl_bytes_reader *r) {
  uint64_t n = ovl_get_u64(r);
  if (n > 0 && n - 1 > (uint64_t)(r->end - r->p)) {
    r->bad = 1;
    return 0;
  }
  return (size_t)n;
}

char *ovl_get_str(ovl_bytes_reader *r, int *oom) {
  size_t n = str_len(r);
  if (n == 0 || r->bad) return NULL;
  char *s = malloc(n);
  if (!s) {
    *oom = 1;
    r->p += n - 1;
    return NULL;
  }
  memcpy(s, r->p, n - 1);
  s[n - 1] = 0;
  r->p += n - 1;
  return s;
}

void ovl_get_str_into(ovl_bytes_reader *r, char *buf, size_t cap) {
  size_t n = str_len(r);
  buf[0] = 0;
  if (n == 0 || r->bad) return;
  size_t keep = n - 1 < cap - 1 ? n - 1 : cap - 1;
  memcpy(buf, r->p, keep);
  buf[keep] = 0;
  r->p += n - 1;
}

size_t ovl_get_count(ovl_bytes_reader *r, size_t min_bytes) {
  uint64_t n = ovl_get_u64(r);
  if (min_bytes == 0) min_bytes = 1;
  if (r->bad || n > (uint64_t)(r->end - r->p) / min_bytes) {
    r->bad = 1;
    return 0;
  }
  return (size_t)n;
}
