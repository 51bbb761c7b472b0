/* String -> int64 hash map: see strmap.h. */
#include "strmap.h"

#include "hash.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s) { return ovl_hash_str(OVL_HASH_SEED, s); }

static int grow(ovl_strmap *m) {
  size_t ncap = m->mask ? (m->mask + 1) * 2 : 64;
  char **keys = calloc(ncap, sizeof *keys);
  int64_t *vals = malloc(ncap * sizeof *vals);
  uint64_t *hashes = malloc(ncap * sizeof *hashes);
  if (!keys || !vals || !hashes) {
    free(keys);
    free(vals);
    free(hashes);
    return -1;
  }
  for (size_t i = 0; m->mask && i <= m->mask; i++) {
    if (!m->keys[i]) continue;
    size_t s = (size_t)m->hashes[i] & (ncap - 1);
    while (keys[s]) s = (s + 1) & (ncap - 1);
    keys[s] = m->keys[i];
    vals[s] = m->vals[i];
    hashes[s] = m->hashes[i];
  }
  free(m->keys);
  free(m->vals);
  free(m->hashes);
  m->keys = keys;
  m->vals = vals;
  m->hashes = hashes;
  m->mask = ncap - 1;
  return 0;
}

/* Slot holding `key`, or the empty slot where it would go. Requires an allocated table. */
static size_t find_slot(const ovl_strmap *m, const char *key, uint64_t h) {
  size_t s = (size_t)h & m->mask;
  while (m->keys[s] && (m->hashes[s] != h || strcmp(m->keys[s], key) != 0)) s = (s + 1) & m->mask;
  return s;
}

int ovl_strmap_put(ovl_strmap *m, const char *key, int64_t val) {
  if ((m->len + 1) * 2 > (m->mask ? m->mask + 1 : 0) && grow(m)) return -1;
  uint64_t h = hash_str(key);
  size_t s = find_slot(m, key, h);
  if (!m->keys[s]) {
    char *copy = strdup(key);
    if (!copy) return -1;
    m->keys[s] = copy;
    m->hashes[s] = h;
    m->len++;
  }
  m->vals[s] = val;
  return 0;
}

int ovl_strmap_get(const ovl_strmap *m, const char *key, int64_t *val) {
  if (!m->mask) return 0;
  size_t s = find_slot(m, key, hash_str(key));
  if (!m->keys[s]) return 0;
  *val = m->vals[s];
  return 1;
}

const char *ovl_strmap_intern(ovl_strmap *m, const char *key) {
  if (m->mask) {
    size_t s = find_slot(m, key, hash_str(key));
    if (m->keys[s]) return m->keys[s];
  }
  if (ovl_strmap_put(m, key, 0)) return NULL;
  return m->keys[find_slot(m, key, hash_str(key))];  /* grow() moves the pointers, not the copies */
}

void ovl_strmap_free(ovl_strmap *m) {
  for (size_t i = 0; m->mask && i <= m->mask; i++) free(m->keys[i]);
  free(m->keys);
  free(m->vals);
  free(m->hashes);
  memset(m, 0, sizeof *m);
}
