/* Id sets: see idset.h. */
#include "idset.h"
#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

int ovl_idset_add_slow(ovl_idset *s, int64_t id) {
  if (id == INT64_MIN) return 0;  /* OVL_NONE: never a member */
  if (id < 0 || id >= OVL_IDSET_BITMAP_LIMIT) return ovl_i64map_put(&s->outliers, id, 1);
  size_t word = (size_t)(id >> 6);
  if (ovl_grow_zeroed((void **)&s->words, &s->nwords, word, sizeof *s->words, 1024)) return -1;
  s->words[word] |= (uint64_t)1 << (id & 63);
  return 0;
}

int ovl_idset_has_slow(const ovl_idset *s, int64_t id) {
  if (id == INT64_MIN) return 0;
  if (id < 0 || id >= OVL_IDSET_BITMAP_LIMIT) {
    int64_t v;
    return ovl_i64map_get(&s->outliers, id, &v);
  }
  size_t word = (size_t)(id >> 6);
  return word < s->nwords && (s->words[word] >> (id & 63) & 1);
}

void ovl_idset_free(ovl_idset *s) {
  free(s->words);
  ovl_i64map_free(&s->outliers);
  memset(s, 0, sizeof *s);
}
