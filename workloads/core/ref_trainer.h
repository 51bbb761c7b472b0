/*
** The float64 reference of the workloads' training, used by `ovl-ddp --verify`:
** data-parallel SGD with gradients averaged over N ranks equals single-device SGD on the
** whole global batch, so the reference trains on one device, in double precision, on the
** same samples and from the same initial weights, and the GPU's final weights must agree.
**
** The loss of a batch is the mean softmax cross-entropy of its rows; parameters and
** gradients are flat arrays in registration order (ovl_model_params layout).
*/
#ifndef OVL_WL_REF_TRAINER_H
#define OVL_WL_REF_TRAINER_H

#include "data.h"
#include "model.h"

/* Loss of `rows` samples (x[rows][features], labels[rows]) at `params`, and, when grad is
** not NULL, its gradient (same layout as params). */
int ovl_ref_loss_grad(const ovl_model *m, const double *params, const float *x, const int32_t *labels, int rows,
                      double *loss, double *grad, int nthreads, ovl_err *err);

typedef struct ovl_ref_run {
  const ovl_model *model;
  const ovl_dataset *data;
  ovl_sharding sharding;
  int shards;          /* slices of each global batch that are trained on: sharding.nranks for a
                       ** real data-parallel job; 1 for an emulated one (only rank 0 exists) */
  int64_t first_step;  /* global step index of the first step (selects its samples) */
  int64_t steps;
  double lr;
  int nthreads;
  int fp32_weights;    /* round the weights to float after each update, as the GPU stores them:
                       ** a weight change of 1e-4 of the weight is then exact to ~6e-4 only (one
                       ** float ulp), the same on both sides, so --verify compares arithmetic */
} ovl_ref_run;

/* Runs `steps` SGD steps, updating params in place; *last_loss is the last step's loss
** before its update. */
int ovl_ref_train(const ovl_ref_run *run, double *params, double *last_loss, ovl_err *err);

/* ovl_ref_train that also bounds what float32 may legitimately do differently at a ReLU: an
** input whose value is within float32 rounding of zero (relative to the sum of its terms'
** magnitudes) may take either sign on the GPU, and letting its gradient through or not moves
** the weights of that layer and of every layer below by up to one sample's term. Adds that
** bound, per parameter, to allowance[] (zeroed by the caller; the params layout) and sets
** *undecided to the number of such inputs over all steps (either may be NULL: not wanted). */
int ovl_ref_train_bounded(const ovl_ref_run *run, double *params, double *last_loss, double *allowance,
                          int64_t *undecided, ovl_err *err);

#endif
