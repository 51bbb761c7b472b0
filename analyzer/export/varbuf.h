/*
** A growing buffer of varint records for the export's captures (gpu_facts.h, api_capture.h):
** 1 MiB chunks in a list, so that growing never copies what is held; a record never
** straddles two chunks (ovl_varbuf_room gives room for a whole one). Numbers are LEB128
** varints; differences are taken modulo 2^64 (OVL_NONE included) and zigzagged, so small
** steps either way take a byte or two.
*/
#ifndef OVL_VARBUF_H
#define OVL_VARBUF_H

#include <stddef.h>
#include <stdint.h>

#define OVL_VARBUF_RECORD_MAX 64  /* the longest record: a flags byte and six varints */

typedef struct ovl_varbuf_chunk {
  struct ovl_varbuf_chunk *next;
  size_t len, cap;
  unsigned char data[];
} ovl_varbuf_chunk;

typedef struct ovl_varbuf {
  ovl_varbuf_chunk *head, *tail;
  size_t bytes;            /* chunk memory held */
} ovl_varbuf;

/* Where the next record (at most OVL_VARBUF_RECORD_MAX bytes) goes, or NULL when memory runs
** out; ovl_varbuf_commit(b, end) keeps it. */
unsigned char *ovl_varbuf_room(ovl_varbuf *b);
static inline void ovl_varbuf_commit(ovl_varbuf *b, const unsigned char *end) {
  b->tail->len = (size_t)(end - b->tail->data);
}
void ovl_varbuf_free(ovl_varbuf *b);

/* Reading the records back in order. */
typedef struct ovl_varbuf_reader {
  const ovl_varbuf_chunk *chunk;
  size_t pos;
} ovl_varbuf_reader;

static inline void ovl_varbuf_reader_init(ovl_varbuf_reader *r, const ovl_varbuf *b) {
  r->chunk = b->head;
  r->pos = 0;
}
/* The next record's first byte; the caller knows how many records there are. */
static inline const unsigned char *ovl_varbuf_next(ovl_varbuf_reader *r) {
  while (r->pos == r->chunk->len) {
    r->chunk = r->chunk->next;
    r->pos = 0;
  }
  return r->chunk->data + r->pos;
}
/* The record read ends at end. */
static inline void ovl_varbuf_done(ovl_varbuf_reader *r, const unsigned char *end) {
  r->pos = (size_t)(end - r->chunk->data);
}

static inline unsigned char *ovl_put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

static inline uint64_t ovl_get_varint(const unsigned char **pp) {
  const unsigned char *p = *pp;
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    unsigned char b = *p++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) break;
  }
  *pp = p;
  return v;
}

/* A difference b - a as a varint's value, and back. */
static inline uint64_t ovl_zigzag_diff(int64_t a, int64_t b) {
  uint64_t d = (uint64_t)b - (uint64_t)a;
  return d << 1 ^ (uint64_t)-(int64_t)(d >> 63);
}
static inline int64_t ovl_zigzag_add(int64_t a, uint64_t z) {
  return (int64_t)((uint64_t)a + (z >> 1 ^ (uint64_t)-(int64_t)(z & 1)));
}

#endif
