/* The --verify criterion: see verify.h. */
#include "verify.h"

#include <assert.h>
#include <math.h>

double ovl_float_ulp(double x) {
  float f = fabsf((float)x);
  return (double)nextafterf(f, INFINITY) - (double)f;
}

void ovl_verify_compare(const ovl_model *m, const float *init, const float *gpu, const double *ref, int ulps,
                        const double *allowance, ovl_verify_result *out) {
  assert(ulps >= 0);
  ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
  ovl_model_params(m, ps);
  out->max_rel_err = 0;
  out->worst_param = 0;
  for (int p = 0; p < ovl_model_nparams(m); p++) {
    double diff = 0, change = 0;
    for (int64_t i = ps[p].offset; i < ps[p].offset + ps[p].count; i++) {
      double d = fabs((double)gpu[i] - ref[i]), c = fabs(ref[i] - (double)init[i]);
      double forgiven = ulps * ovl_float_ulp(ref[i]) + (allowance ? allowance[i] : 0);
      d = d > forgiven ? d - forgiven : 0;
      if (isnan((double)gpu[i])) d = INFINITY;  /* a NaN weight is the worst possible result */
      if (d > diff) diff = d;
      if (c > change) change = c;
    }
    double rel = change > 0 ? diff / change : (diff > 0 ? INFINITY : 0);
    out->param_err[p] = rel;
    if (rel > out->max_rel_err) {
      out->max_rel_err = rel;
      out->worst_param = p;
    }
  }
}
