/* Interval algebra: see intervals.h. */
#include "intervals.h"

#include "base/vec.h"

#include <stdlib.h>

static int cmp_start(const void *pa, const void *pb) {
  const ovl_interval *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return (a->end > b->end) - (a->end < b->end);
}

size_t ovl_intervals_normalize(ovl_interval *v, size_t n) {
  ovl_qsort(v, n, sizeof *v, cmp_start);
  size_t out = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].end <= v[i].start) continue;
    if (out > 0 && v[i].start <= v[out - 1].end) {
      if (v[i].end > v[out - 1].end) v[out - 1].end = v[i].end;
    } else {
      v[out++] = v[i];
    }
  }
  return out;
}

int64_t ovl_intervals_length(const ovl_interval *v, size_t n) {
  int64_t total = 0;
  for (size_t i = 0; i < n; i++) total += v[i].end - v[i].start;
  return total;
}

int64_t ovl_intervals_overlap(const ovl_interval *a, size_t na, const ovl_interval *b, size_t nb) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    int64_t lo = a[i].start > b[j].start ? a[i].start : b[j].start;
    int64_t hi = a[i].end < b[j].end ? a[i].end : b[j].end;
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) i++;
    else j++;
  }
  return total;
}

size_t ovl_intervals_subtract(const ovl_interval *a, size_t na, const ovl_interval *b, size_t nb,
                              ovl_interval *out) {
  size_t n = 0, j = 0;
  for (size_t i = 0; i < na; i++) {
    int64_t cur = a[i].start;
    while (j < nb && b[j].end <= cur) j++;
    size_t k = j;
    while (k < nb && b[k].start < a[i].end) {
      if (b[k].start > cur) out[n++] = (ovl_interval){cur, b[k].start};
      if (b[k].end > cur) cur = b[k].end;
      k++;
    }
    if (cur < a[i].end) out[n++] = (ovl_interval){cur, a[i].end};
  }
  return n;
}

int64_t ovl_intervals_clip_length(const ovl_interval *v, size_t n, int64_t lo, int64_t hi) {
  int64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t s = v[i].start > lo ? v[i].start : lo;
    int64_t e = v[i].end < hi ? v[i].end : hi;
    if (e > s) total += e - s;
  }
  return total;
}
