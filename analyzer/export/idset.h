/*
** A set of int64 ids (correlation ids) for the exporter's flow bookkeeping. Ids are dense
** and small in practice, so the set is a bitmap over [0, OVL_IDSET_BITMAP_LIMIT) grown on
** demand (1.25 MB per 10 million ids); ids outside that range go to a hash map.
*/
#ifndef OVL_IDSET_H
#define OVL_IDSET_H

#include "base/i64map.h"

#include <stddef.h>
#include <stdint.h>

#define OVL_IDSET_BITMAP_LIMIT ((int64_t)1 << 30)

typedef struct ovl_idset {
  uint64_t *words;
  size_t nwords;
  ovl_i64map outliers;
} ovl_idset;

/* Adds id. Returns 0, or -1 when memory runs out. */
int ovl_idset_add_slow(ovl_idset *s, int64_t id);
int ovl_idset_has_slow(const ovl_idset *s, int64_t id);

/* Inline for the ids the bitmap already covers (the export asks once or twice a slice);
** the bitmap never reaches past OVL_IDSET_BITMAP_LIMIT. */
static inline int ovl_idset_add(ovl_idset *s, int64_t id) {
  if (id >= 0 && (uint64_t)(id >> 6) < s->nwords) {
    s->words[id >> 6] |= (uint64_t)1 << (id & 63);
    return 0;
  }
  return ovl_idset_add_slow(s, id);
}

static inline int ovl_idset_has(const ovl_idset *s, int64_t id) {
  if (id >= 0 && (uint64_t)(id >> 6) < s->nwords) return (int)(s->words[id >> 6] >> (id & 63) & 1);
  return ovl_idset_has_slow(s, id);
}
void ovl_idset_free(ovl_idset *s);

#endif
