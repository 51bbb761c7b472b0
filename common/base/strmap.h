/*
** Hash map from NUL-terminated strings to int64 values; the map keeps its own copies of
** the keys. Used to intern repeated text (kernel names) while writing traces.
*/
#ifndef OVL_STRMAP_H
#define OVL_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_strmap {
  char **keys;
  int64_t *vals;
  uint64_t *hashes;
  size_t mask;  /* table size - 1; 0 when unallocated */
  size_t len;
} ovl_strmap;

/* Inserts or replaces. Returns 0, or -1 when memory runs out (map unchanged). */
int ovl_strmap_put(ovl_strmap *m, const char *key, int64_t val);
/* Returns 1 and sets *val when found, else 0. */
int ovl_strmap_get(const ovl_strmap *m, const char *key, int64_t *val);
/* The map's own copy of key (put with value 0 when absent): a pointer that stays valid until
** ovl_strmap_free, so equal texts share one copy. NULL when memory runs out. */
const char *ovl_strmap_intern(ovl_strmap *m, const char *key);
void ovl_strmap_free(ovl_strmap *m);

#endif
