/*
** Open-addressing hash map from int64 keys to int64 values (linear probing, power-of-two
** table, load factor <= 1/2). Used for correlation id -> collective lookups, where the key
** space is sparse and lookups sit on the per-kernel hot path.
** INT64_MIN is reserved as the empty-slot marker and cannot be used as a key.
*/
#ifndef OVL_I64MAP_H
#define OVL_I64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_i64map {
  int64_t *keys;
  int64_t *vals;
  size_t mask;  /* table size - 1; 0 when unallocated */
  size_t len;
} ovl_i64map;

/* Inserts or replaces. Returns 0, or -1 when memory runs out (map unchanged). */
int ovl_i64map_put(ovl_i64map *m, int64_t key, int64_t val);
/* Returns 1 and sets *val when found, else 0. */
int ovl_i64map_get(const ovl_i64map *m, int64_t key, int64_t *val);
void ovl_i64map_free(ovl_i64map *m);

#endif
