/* Kernel slowdown statistics: see kernel_stats.h. */
#include "kernel_stats.h"

#include "base/hash.h"


#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t sig_hash(int64_t name, const int64_t grid[3], const int64_t block[3]) {
  uint64_t h = OVL_HASH_SEED;
  int64_t v[7] = {name, grid[0], grid[1], grid[2], block[0], block[1], block[2]};
  for (int i = 0; i < 7; i++) h = ovl_hash_word(h, (uint64_t)v[i]);
  return h ^ (h >> 29);
}

static int same_sig(const ovl_kstat *s, int64_t name, const int64_t grid[3], const int64_t block[3]) {
  return s->name == name && memcmp(s->grid, grid, sizeof s->grid) == 0 && memcmp(s->block, block, sizeof s->block) == 0;
}

static int rehash(ovl_kstats *k, size_t nslots) {
  int32_t *slots = calloc(nslots, sizeof *slots);
  if (!slots) return -1;
  for (size_t i = 0; i < k->len; i++) {
    size_t j = sig_hash(k->items[i].name, k->items[i].grid, k->items[i].block) & (nslots - 1);
    while (slots[j]) j = (j + 1) & (nslots - 1);
    slots[j] = (int32_t)i + 1;
  }
  free(k->slots);
  k->slots = slots;
  k->nslots = nslots;
  return 0;
}

int32_t ovl_kstats_index(ovl_kstats *k, int64_t name, const int64_t grid[3], const int64_t block[3]) {
  int32_t *recent = &k->recent[(uint64_t)name & (OVL_KSTATS_RECENT - 1)];
  assert(*recent >= 0 && (size_t)*recent <= k->len);
  if (*recent && same_sig(&k->items[*recent - 1], name, grid, block)) return *recent - 1;
  uint64_t h = sig_hash(name, grid, block);
  if (k->nslots) {
    for (size_t j = h & (k->nslots - 1); k->slots[j]; j = (j + 1) & (k->nslots - 1))
      if (same_sig(&k->items[k->slots[j] - 1], name, grid, block)) return (*recent = k->slots[j]) - 1;
  }
  if (k->len >= INT32_MAX - 1) return -1;
  /* Keep the load factor at most 1/2. */
  if ((k->len + 1) * 2 > k->nslots && rehash(k, k->nslots ? k->nslots * 2 : 128)) return -1;
  if (k->len == k->cap) {
    size_t cap = k->cap ? k->cap * 2 : 64;
    ovl_kstat *items = realloc(k->items, cap * sizeof *items);
    if (!items) return -1;
    k->items = items;
    k->cap = cap;
  }
  ovl_kstat *s = &k->items[k->len];
  memset(s, 0, sizeof *s);
  s->name = name;
  memcpy(s->grid, grid, sizeof s->grid);
  memcpy(s->block, block, sizeof s->block);
  size_t j = h & (k->nslots - 1);
  while (k->slots[j]) j = (j + 1) & (k->nslots - 1);
  k->slots[j] = (int32_t)++k->len;
  *recent = (int32_t)k->len;
  return (int32_t)k->len - 1;
}

/* One more value of a running mean and sum of squared deviations. */
static void welford(long *n, double *mean, double *m2, double x) {
  ++*n;
  double dx = x - *mean;
  *mean += dx / (double)*n;
  *m2 += dx * (x - *mean);
}

void ovl_kstats_add(ovl_kstats *k, int32_t index, int64_t duration, int64_t overlapped) {
  ovl_kstat *s = &k->items[index];
  double d = (double)duration, o = (double)overlapped;
  s->n++;
  /* Divisions, not products: no value read from a trace can make these overflow. */
  if (duration > 0 && overlapped <= duration / 10) welford(&s->n_alone, &s->mean_alone, &s->m2_alone, d);
  if (duration > 0 && overlapped >= duration - duration / 2) welford(&s->n_over, &s->mean_over, &s->m2_over, d);
  double dxo = o - s->mean_o, dxd = d - s->mean_d;
  s->mean_o += dxo / (double)s->n;
  s->mean_d += dxd / (double)s->n;
  s->c_oo += dxo * (o - s->mean_o);
  s->c_od += dxo * (d - s->mean_d);
  s->c_dd += dxd * (d - s->mean_d);
}

void ovl_kstats_free(ovl_kstats *k) {
  free(k->items);
  free(k->slots);
  memset(k, 0, sizeof *k);
}

static double sd_of(long n, double m2) { return n > 1 ? sqrt(m2 / (double)(n - 1)) : 0; }

int ovl_kstat_fit(const ovl_kstat *k, ovl_slowdown *out) {
  memset(out, 0, sizeof *out);
  out->name = k->name;
  memcpy(out->grid, k->grid, sizeof out->grid);
  memcpy(out->block, k->block, sizeof out->block);
  out->runs = k->n;
  out->runs_alone = k->n_alone;
  out->runs_overlapped = k->n_over;
  out->alone_mean_ns = k->mean_alone;
  out->alone_sd_ns = sd_of(k->n_alone, k->m2_alone);
  out->over_mean_ns = k->mean_over;
  out->over_sd_ns = sd_of(k->n_over, k->m2_over);
  if (k->n < 2 || !(k->c_oo > 0) || k->n_alone == 0 || k->n_over == 0) return 0;
  double slope = k->c_od / k->c_oo;
  if (!(slope < 1)) return 0;
  out->slope = slope;
  out->alone_ns = k->mean_d - slope * k->mean_o;
  out->factor = 1.0 / (1.0 - slope);
  out->cost_ns = slope * k->mean_o * (double)k->n;
  /* Residual variance of the line; exact data (a simulation) has none. */
  double resid = k->c_dd - slope * k->c_od;
  out->t_stat = INFINITY;
  if (k->n > 2 && resid > 1e-9 * k->c_dd) out->t_stat = slope / sqrt(resid / (double)(k->n - 2) / k->c_oo);
  return 1;
}
