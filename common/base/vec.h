/*
** A growable array for plain structs: `OVL_VEC(T) v = {0}; OVL_VEC_PUSH(&v, x)`.
** Capacity doubles, so pushes are amortised O(1). OVL_VEC_PUSH evaluates to 0 on success
** and -1 when memory runs out (the vector is then unchanged).
*/
#ifndef OVL_VEC_H
#define OVL_VEC_H

#include <stdlib.h>
#include <string.h>

#define OVL_VEC(T) struct { T *items; size_t len, cap; }

/* Ensures room for `extra` more items; returns 0 or -1. */
#define OVL_VEC_RESERVE(v, extra) \
  ovl_vec_reserve((void **)&(v)->items, &(v)->cap, (v)->len + (extra), sizeof *(v)->items)

#define OVL_VEC_PUSH(v, x) \
  (OVL_VEC_RESERVE(v, 1) ? -1 : ((v)->items[(v)->len++] = (x), 0))

#define OVL_VEC_FREE(v) (free((v)->items), (v)->items = NULL, (v)->len = (v)->cap = 0)

static inline int ovl_vec_reserve(void **items, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*items, ncap * size);
  if (!p) return -1;
  *items = p;
  *cap = ncap;
  return 0;
}

/* Ensures index < *cap for an array indexed by id: capacity doubles from `first` (> 0), the
** added items are zeroed (an id not seen yet reads as zero); returns 0 or -1 (unchanged). */
static inline int ovl_grow_zeroed(void **items, size_t *cap, size_t index, size_t size, size_t first) {
  if (index < *cap) return 0;
  size_t ncap = *cap ? *cap : first;
  while (ncap <= index) ncap *= 2;
  unsigned char *p = realloc(*items, ncap * size);
  if (!p) return -1;
  memset(p + *cap * size, 0, (ncap - *cap) * size);
  *items = p;
  *cap = ncap;
  return 0;
}

/* qsort that accepts an empty (possibly NULL) array: C leaves qsort(NULL, 0, ...) undefined. */
static inline void ovl_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  if (n > 1) qsort(base, n, size, cmp);
}

#endif
