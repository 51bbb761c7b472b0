/* Reproducible data and weights: see data.h. */
#include "data.h"

#include <math.h>
#include <stdlib.h>

/* splitmix64's finaliser: a bijective 64-bit mix with good avalanche. */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

float ovl_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t h = mix64(mix64(seed ^ 0x9e3779b97f4a7c15ULL) + stream * 0xd1b54a32d192ed03ULL + index);
  h = mix64(h + 0x9e3779b97f4a7c15ULL);
  /* 24 random bits -> [0, 1) exactly representable in float, then [-1, 1). */
  return (float)((double)(h >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

/* Streams keep the generated families independent. */
enum { STREAM_TEACHER = 1, STREAM_FEATURES = 2, STREAM_PARAMS = 1000 };

int ovl_dataset_init(ovl_dataset *d, uint64_t seed, int64_t nsamples, int features, int classes, ovl_err *err) {
  d->seed = seed;
  d->nsamples = nsamples;
  d->features = features;
  d->classes = classes;
  d->teacher = malloc((size_t)features * (size_t)classes * sizeof(float));
  if (!d->teacher) return ovl_oom(err, "teacher weights");
  for (int64_t i = 0; i < (int64_t)features * classes; i++) d->teacher[i] = ovl_uniform(seed, STREAM_TEACHER, (uint64_t)i);
  return OVL_OK;
}

void ovl_dataset_free(ovl_dataset *d) {
  free(d->teacher);
  d->teacher = NULL;
}

void ovl_dataset_sample(const ovl_dataset *d, int64_t index, float *x, int32_t *label) {
  uint64_t base = (uint64_t)index * (uint64_t)d->features;
  for (int f = 0; f < d->features; f++) x[f] = ovl_uniform(d->seed, STREAM_FEATURES, base + (uint64_t)f);
  int best = 0;
  double best_score = -INFINITY;
  for (int c = 0; c < d->classes; c++) {
    const float *t = d->teacher + (int64_t)c * d->features;
    double score = 0;
    for (int f = 0; f < d->features; f++) score += (double)t[f] * x[f];
    if (score > best_score) {
      best_score = score;
      best = c;
    }
  }
  *label = best;
}

int ovl_shard_rows(const ovl_sharding *sh) { return sh->global_batch / sh->nranks; }

int64_t ovl_shard_sample(const ovl_sharding *sh, int64_t step, int rank, int i) {
  int64_t slot = step % ovl_steps_per_epoch(sh);
  int64_t g = slot * sh->global_batch + (int64_t)rank * ovl_shard_rows(sh) + i;
  return g % sh->nsamples;
}

int64_t ovl_steps_per_epoch(const ovl_sharding *sh) {
  int64_t steps = sh->nsamples / sh->global_batch;
  return steps < 1 ? 1 : steps;
}

void ovl_init_params(const ovl_model *m, uint64_t seed, float *params) {
  int64_t offset = 0;
  for (int l = 0; l < m->nlayers; l++) {
    float bound = (float)(1.0 / sqrt((double)m->width[l]));
    int64_t count = (int64_t)m->width[l + 1] * (m->width[l] + 1);  /* weight then bias */
    for (int64_t i = 0; i < count; i++)
      params[offset + i] = bound * ovl_uniform(seed, STREAM_PARAMS + (uint64_t)l, (uint64_t)i);
    offset += count;
  }
}
