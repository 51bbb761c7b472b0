/* The --verify criterion: see verify.h. */
#include "verify.h"

#include <math.h>

void ovl_verify_compare(const ovl_model *m, const float *init, const float *gpu, const double *ref,
                        ovl_verify_result *out) {
  ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
  ovl_model_params(m, ps);
  out->max_rel_err = 0;
  out->worst_param = 0;
  for (int p = 0; p < ovl_model_nparams(m); p++) {
    double diff = 0, change = 0;
    for (int64_t i = ps[p].offset; i < ps[p].offset + ps[p].count; i++) {
      double d = fabs((double)gpu[i] - ref[i]), c = fabs(ref[i] - (double)init[i]);
      if (isnan(d)) d = INFINITY;  /* a NaN weight is the worst possible result */
      if (d > diff) diff = d;
      if (c > change) change = c;
    }
    double rel = change > 0 ? diff / change : (diff > 0 ? INFINITY : 0);
    if (rel > out->max_rel_err) {
      out->max_rel_err = rel;
      out->worst_param = p;
    }
  }
}
