/* Periodic step inference: see step_infer.h. */
#include "step_infer.h"

#include "base/sort_inplace.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Smallest gap counted as long, or INT64_MAX when gaps do not split clearly in two. gaps:
** scratch for n - 1 of them (sorted in place: equal gaps are alike). */
static int64_t long_gap_threshold(const ovl_seq_item *items, size_t n, int64_t *gaps) {
  if (n < 3) return INT64_MAX;
  for (size_t i = 1; i < n; i++) gaps[i - 1] = items[i].launch - items[i - 1].launch;
  ovl_sort_inplace(gaps, n - 1, sizeof *gaps, cmp_i64);
  int64_t threshold = INT64_MAX;
  double best = 2.0;
  for (size_t k = 0; k + 1 < n - 1; k++) {
    double lo = gaps[k] > 0 ? (double)gaps[k] : 1.0;
    double ratio = (double)gaps[k + 1] / lo;
    if (ratio >= best) {
      best = ratio;
      threshold = gaps[k + 1];
    }
  }
  return threshold;
}

static uint64_t mix(uint64_t sig, int long_gap) {
  uint64_t x = sig ^ (long_gap ? 0x9e3779b97f4a7c15ULL : 0);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  return x ^ (x >> 29);
}

size_t ovl_infer_periodic_steps(const ovl_seq_item *items, size_t n, ovl_periodic_steps *out) {
  memset(out, 0, sizeof *out);
  if (n < 2) return 0;
  /* one block: the gaps while the threshold is found, then the tokens */
  void *scratch = malloc(n * sizeof(uint64_t));
  if (!scratch) return 0;
  int64_t threshold = long_gap_threshold(items, n, scratch);
  uint64_t *tok = scratch;
  for (size_t i = 0; i < n; i++) {
    int long_gap = i > 0 && items[i].launch - items[i - 1].launch >= threshold;
    tok[i] = mix(items[i].signature, long_gap);
  }

  /* Smallest period whose repetition covers a suffix of at least two periods. */
  size_t p = 0, region = 0;
  for (size_t cand = 1; cand <= n / 2 && !p; cand++) {
    size_t s = n - cand;                 /* tok[i] == tok[i + cand] for i in [s, n - cand) */
    while (s > 0 && tok[s - 1] == tok[s - 1 + cand]) s--;
    if (n - s >= 2 * cand) {
      p = cand;
      region = s;
    }
  }
  free(tok);
  if (!p) return 0;

  /* Phase: where in the period a step begins. Prefer a long gap; else the largest mean gap. */
  size_t phase = 0;
  double best = -1.0;
  for (size_t ph = 0; ph < p; ph++) {
    double sum = 0;
    size_t cnt = 0, longs = 0;
    for (size_t i = region + ph; i < n; i += p) {
      if (i == 0) continue;
      int64_t g = items[i].launch - items[i - 1].launch;
      sum += (double)g;
      cnt++;
      if (g >= threshold) longs++;
    }
    double score = (cnt ? sum / (double)cnt : 0) + (longs == cnt && cnt ? 1e30 : 0);
    if (score > best) {
      best = score;
      phase = ph;
    }
  }
  /* A step begins at every item i > 0 of [first, n) with (i - first) % p == 0. */
  out->first = region + phase;
  out->period = p;
  out->nsteps = ovl_periodic_step_of(out, n - 1) + 1;
  return out->nsteps;
}
