/*
** The --verify criterion: GPU weights after a short run against the float64 reference.
** Compared are the weight changes, tensor by tensor, because the weights themselves are
** dominated by their initial values. The reference stores its weights in float after each
** step as the GPU does (ovl_ref_run.fp32_weights); forgiven are `ulps` float ulps of each
** weight (a rounding decision may go the other way once per step) and, where given, the
** allowance of ovl_ref_train_bounded (ReLU inputs whose sign float32 cannot decide):
**   error = max over the tensor of max(0, |gpu - ref| - ulps * ulp(ref) - allowance)
**           / max |ref - init|
** and the run passes when the largest error is at most the tolerance.
*/
#ifndef OVL_WL_VERIFY_H
#define OVL_WL_VERIFY_H

#include "model.h"

typedef struct ovl_verify_result {
  double max_rel_err;
  int worst_param;  /* parameter index of the largest error */
  double param_err[2 * OVL_MODEL_MAX_LAYERS];  /* each tensor's error, registration order */
} ovl_verify_result;

/* The spacing of floats at |x| (x a float value): 2^(e-23) for normal x. */
double ovl_float_ulp(double x);

void ovl_verify_compare(const ovl_model *m, const float *init, const float *gpu, const double *ref, int ulps,
                        const double *allowance, ovl_verify_result *out);

#endif
