/*
** The --verify criterion: GPU weights after a short run against the float64 reference.
** Compared are the weight changes, tensor by tensor, because the weights themselves are
** dominated by their initial values: for each parameter tensor,
**   error = max |gpu - ref| / max |ref - init|     (over the tensor's elements)
** and the run passes when the largest error is at most the tolerance.
*/
#ifndef OVL_WL_VERIFY_H
#define OVL_WL_VERIFY_H

#include "model.h"

typedef struct ovl_verify_result {
  double max_rel_err;
  int worst_param;  /* parameter index of the largest error */
} ovl_verify_result;

void ovl_verify_compare(const ovl_model *m, const float *init, const float *gpu, const double *ref,
                        ovl_verify_result *out);

#endif
