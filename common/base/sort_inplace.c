/* In-place introsort: see sort_inplace.h. */
#include "sort_inplace.h"

#include <assert.h>
#include <string.h>

typedef int (*cmp_fn)(const void *, const void *);

#define AT(i) (b + (i) * size)
#define SHORT_RUN 16

static void swap(unsigned char *x, unsigned char *y, size_t size) {
  unsigned char t[OVL_SORT_MAX_SIZE];
  memcpy(t, x, size);
  memcpy(x, y, size);
  memcpy(y, t, size);
}

static void insertion(unsigned char *b, size_t n, size_t size, cmp_fn cmp) {
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0 && cmp(AT(k - 1), AT(k)) > 0; k--) swap(AT(k - 1), AT(k), size);
}

static void sift_down(unsigned char *b, size_t root, size_t n, size_t size, cmp_fn cmp) {
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && cmp(AT(child), AT(child + 1)) < 0) child++;
    if (cmp(AT(root), AT(child)) >= 0) return;
    swap(AT(root), AT(child), size);
    root = child;
  }
}

static void heapsort_run(unsigned char *b, size_t n, size_t size, cmp_fn cmp) {
  for (size_t i = n / 2; i-- > 0;) sift_down(b, i, n, size, cmp);
  for (size_t end = n; end-- > 1;) {
    swap(AT(0), AT(end), size);
    sift_down(b, 0, end, size, cmp);
  }
}

/* Moves the median of the first, middle and last elements to the front: the pivot. */
static void median_to_front(unsigned char *b, size_t n, size_t size, cmp_fn cmp) {
  unsigned char *lo = AT(0), *mid = AT(n / 2), *hi = AT(n - 1);
  if (cmp(mid, lo) < 0) swap(mid, lo, size);
  if (cmp(hi, mid) < 0) {
    swap(hi, mid, size);
    if (cmp(mid, lo) < 0) swap(mid, lo, size);
  }
  swap(lo, mid, size);
}

static void introsort(unsigned char *b, size_t n, size_t size, cmp_fn cmp, int depth) {
  while (n > SHORT_RUN) {
    if (depth-- == 0) {
      heapsort_run(b, n, size, cmp);
      return;
    }
    median_to_front(b, n, size, cmp);
    /* Hoare partition around the pivot at b[0] */
    size_t i = 0, j = n;
    for (;;) {
      do i++; while (i < n && cmp(AT(i), AT(0)) < 0);
      do j--; while (cmp(AT(j), AT(0)) > 0);
      if (i >= j) break;
      swap(AT(i), AT(j), size);
    }
    swap(AT(0), AT(j), size);
    /* recurse into the smaller side, loop on the larger: the stack stays O(log n) */
    size_t left = j, right = n - j - 1;
    if (left < right) {
      introsort(b, left, size, cmp, depth);
      b = AT(j + 1);
      n = right;
    } else {
      introsort(AT(j + 1), right, size, cmp, depth);
      n = left;
    }
  }
  insertion(b, n, size, cmp);
}

void ovl_sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  assert(size > 0 && size <= OVL_SORT_MAX_SIZE);
  if (n < 2) return;
  int depth = 0;
  for (size_t m = n; m > 1; m >>= 1) depth += 2;
  introsort(base, n, size, cmp, depth);
}
