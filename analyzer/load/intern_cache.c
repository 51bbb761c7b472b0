/* The interned-name cache: see intern_cache.h. */
#include "intern_cache.h"

#include <stdlib.h>
#include <string.h>

_Static_assert((OVL_INTERN_CACHE_SLOTS & (OVL_INTERN_CACHE_SLOTS - 1)) == 0, "slots: a power of two");

static uint64_t mix(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0xff51afd7ed558ccdULL;
  return h ^ (h >> 32);
}

static uint64_t word_at(const char *s, size_t i) {
  uint64_t w;
  memcpy(&w, s + i, 8);
  return w;
}

/* The length and some of the words: the slot only has to spread names, and the full
** comparison on a hit decides. A long name is read at its start, its middle and its end
** (kernel names that share a template's prefix differ further on); reading every word of a
** 150-byte name cost more than the rest of the lookup. */
static uint64_t hash_text(const char *s, size_t n) {
  uint64_t h = n * 0x9e3779b97f4a7c15ULL;
  if (n >= 32) {
    size_t mid = n / 2 - 4;
    h = mix(mix(mix(h, word_at(s, 0)), word_at(s, 8)), word_at(s, mid));
    h = mix(mix(h, word_at(s, n - 16)), word_at(s, n - 8));
  } else {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) h = mix(h, word_at(s, i));
    uint64_t tail = 0;
    memcpy(&tail, s + i, n - i);
    h = mix(h, tail);
  }
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 29);
}

int ovl_intern_cached(ovl_intern_cache *c, ovl_trace_writer *w, const char *text, int64_t *id, ovl_err *err) {
  size_t n = strlen(text);
  uint64_t h = hash_text(text, n);
  ovl_intern_slot *s = &c->slots[h & (OVL_INTERN_CACHE_SLOTS - 1)];
  if (s->text && s->hash == h && s->len == n && memcmp(s->text, text, n) == 0) {
    *id = s->id;
    return OVL_OK;
  }
  int rc = ovl_tw_intern(w, text, id, err);
  if (rc) return rc;
  char *copy = malloc(n + 1);
  if (!copy) return OVL_OK;  /* only the cache goes without */
  memcpy(copy, text, n + 1);
  free(s->text);
  *s = (ovl_intern_slot){copy, n, h, *id};
  return OVL_OK;
}

void ovl_intern_cache_free(ovl_intern_cache *c) {
  for (size_t i = 0; i < OVL_INTERN_CACHE_SLOTS; i++) {
    free(c->slots[i].text);
    c->slots[i].text = NULL;
  }
}
