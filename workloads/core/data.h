/*
** The training data and initial weights, reproducible from a seed on any machine: every
** value is a pure function of (seed, stream, index) through a counter-based generator, so a
** rank generates only its own samples and the CPU reference regenerates the same ones.
**
** Samples: `features` values uniform in [-1, 1); the label is the class a fixed random
** linear "teacher" scores highest, so the task is learnable and the loss falls.
** Initial weights and biases: uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch.nn.Linear.
**
** Sharding (data parallelism): an epoch is floor(nsamples / global_batch) steps (at least
** one); step s uses the global batch of samples (e*global_batch + i) mod nsamples, with
** e = s mod steps-per-epoch and i < global_batch (the samples left over by the last full
** batch are not used, as with drop_last); rank r of n takes the contiguous slice
** i in [r*global_batch/n, (r+1)*global_batch/n). Every epoch sees the same batches.
*/
#ifndef OVL_WL_DATA_H
#define OVL_WL_DATA_H

#include "model.h"

#include <stdint.h>

/* Uniform float in [-1, 1) for (seed, stream, index). */
float ovl_uniform(uint64_t seed, uint64_t stream, uint64_t index);

typedef struct ovl_dataset {
  uint64_t seed;
  int64_t nsamples;
  int features, classes;
  float *teacher;  /* [classes][features] */
} ovl_dataset;

int ovl_dataset_init(ovl_dataset *d, uint64_t seed, int64_t nsamples, int features, int classes, ovl_err *err);
void ovl_dataset_free(ovl_dataset *d);
/* Features of sample `index` (x[features]) and its label. */
void ovl_dataset_sample(const ovl_dataset *d, int64_t index, float *x, int32_t *label);

typedef struct ovl_sharding {
  int64_t nsamples;
  int global_batch;
  int nranks;  /* must divide global_batch */
} ovl_sharding;

/* Samples per rank and step. */
int ovl_shard_rows(const ovl_sharding *sh);
/* Index of row i of rank r's slice in step s. */
int64_t ovl_shard_sample(const ovl_sharding *sh, int64_t step, int rank, int i);
/* Steps in one pass over the samples (at least 1). */
int64_t ovl_steps_per_epoch(const ovl_sharding *sh);

/* Initial parameters, flat in registration order (ovl_model_params layout). */
void ovl_init_params(const ovl_model *m, uint64_t seed, float *params);

#endif
