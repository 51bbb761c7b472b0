/* int64 -> int64 hash map: see i64map.h. */
#include "i64map.h"

#include <stdlib.h>

#define EMPTY INT64_MIN

static size_t slot_of(int64_t key, size_t mask) {
  /* splitmix64 finaliser: correlation ids are dense and sequential, so mix the bits. */
  uint64_t x = (uint64_t)key;
  x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27; x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return (size_t)x & mask;
}

static int grow(ovl_i64map *m) {
  size_t ncap = m->mask ? (m->mask + 1) * 2 : 64;
  int64_t *keys = malloc(ncap * sizeof *keys);
  int64_t *vals = malloc(ncap * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  for (size_t i = 0; i < ncap; i++) keys[i] = EMPTY;
  size_t nmask = ncap - 1;
  for (size_t i = 0; m->mask && i <= m->mask; i++) {
    if (m->keys[i] == EMPTY) continue;
    size_t s = slot_of(m->keys[i], nmask);
    while (keys[s] != EMPTY) s = (s + 1) & nmask;
    keys[s] = m->keys[i];
    vals[s] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->mask = nmask;
  return 0;
}

int ovl_i64map_put(ovl_i64map *m, int64_t key, int64_t val) {
  if ((m->len + 1) * 2 > (m->mask ? m->mask + 1 : 0) && grow(m)) return -1;
  size_t s = slot_of(key, m->mask);
  while (m->keys[s] != EMPTY && m->keys[s] != key) s = (s + 1) & m->mask;
  if (m->keys[s] == EMPTY) m->len++;
  m->keys[s] = key;
  m->vals[s] = val;
  return 0;
}

int ovl_i64map_get(const ovl_i64map *m, int64_t key, int64_t *val) {
  if (!m->mask || key == EMPTY) return 0;
  size_t s = slot_of(key, m->mask);
  while (m->keys[s] != EMPTY) {
    if (m->keys[s] == key) {
      *val = m->vals[s];
      return 1;
    }
    s = (s + 1) & m->mask;
  }
  return 0;
}

void ovl_i64map_free(ovl_i64map *m) {
  free(m->keys);
  free(m->vals);
  m->keys = m->vals = NULL;
  m->mask = m->len = 0;
}
