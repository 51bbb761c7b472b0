/*
** ovl_sort_inplace against qsort on orders where no two elements compare equal: random keys,
** the worst inputs of a naive quicksort (sorted, reversed, organ pipe, one repeated key told
** apart only by its index) and elements of several sizes. Every result must be the order
** qsort gives, element for element.
*/
#include "base/sort_inplace.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct wide {  /* the shape of a cross-rank participant: two keys and two indices */
  int64_t key, seq;
  uint32_t index, pad;
} wide;

static int cmp_wide(const void *pa, const void *pb) {
  const wide *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return (a > b) - (a < b);
}

static uint64_t rng = 12345;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

enum { RANDOM, SORTED, REVERSED, ORGAN_PIPE, ONE_KEY, FEW_KEYS, NSHAPES };

static void fill(wide *v, size_t n, int shape) {
  for (size_t i = 0; i < n; i++) {
    int64_t k;
    switch (shape) {
    case RANDOM: k = (int64_t)(next() % 1000000007u); break;
    case SORTED: k = (int64_t)i; break;
    case REVERSED: k = (int64_t)(n - i); break;
    case ORGAN_PIPE: k = (int64_t)(i < n / 2 ? i : n - i); break;
    case ONE_KEY: k = 7; break;
    default: k = (int64_t)(next() % 3); break;
    }
    v[i] = (wide){k, shape == ONE_KEY ? 0 : (int64_t)(next() % 4), (uint32_t)i, 0};
  }
}

static int same_as_qsort(size_t n, int shape) {
  wide *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
  if (!a || !b) return 0;
  fill(a, n, shape);
  memcpy(b, a, n * sizeof *a);
  if (n) qsort(a, n, sizeof *a, cmp_wide);
  ovl_sort_inplace(b, n, sizeof *b, cmp_wide);
  int same = memcmp(a, b, n * sizeof *a) == 0;
  free(a);
  free(b);
  return same;
}

int main(void) {
  static const size_t sizes[] = {0, 1, 2, 3, 15, 16, 17, 100, 1000, 65537, 300000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int shape = 0; shape < NSHAPES; shape++) CHECK(same_as_qsort(sizes[s], shape));

  /* plain 8-byte keys, with repeats (equal int64s are indistinguishable: any order is the order) */
  size_t n = 100000;
  int64_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  CHECK(x && y);
  for (size_t i = 0; i < n; i++) x[i] = y[i] = (int64_t)(next() % 5000) - 2500;
  qsort(x, n, sizeof *x, cmp_i64);
  ovl_sort_inplace(y, n, sizeof *y, cmp_i64);
  CHECK(memcmp(x, y, n * sizeof *x) == 0);
  free(x);
  free(y);
  return check_summary();
}
