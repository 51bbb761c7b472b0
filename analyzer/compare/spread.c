/* Medians, spreads and significant changes: see spread.h. */
#include "spread.h"

#include "base/vec.h"

#include <assert.h>
#include <math.h>

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

double ovl_quantile(const double *sorted, size_t n, double p) {
  assert(n > 0 && p >= 0.0 && p <= 1.0);
  double pos = p * (double)(n - 1);
  size_t lo = (size_t)pos;
  if (lo + 1 >= n) return sorted[n - 1];
  double frac = pos - (double)lo;
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void ovl_dist_of(double *values, size_t n, ovl_dist *out) {
  out->n = n;
  if (n == 0) {
    out->median = out->spread = out->lo = out->hi = NAN;
    return;
  }
  ovl_qsort(values, n, sizeof *values, cmp_double);
  out->median = ovl_quantile(values, n, 0.5);
  out->spread = ovl_quantile(values, n, 0.75) - ovl_quantile(values, n, 0.25);
  out->lo = values[0];
  out->hi = values[n - 1];
}

static double floor_of(ovl_quantity q) {
  return q == OVL_Q_NS ? OVL_DIFF_MIN_NS : q == OVL_Q_RATIO ? OVL_DIFF_MIN_RATIO : OVL_DIFF_MIN_COUNT;
}

static double spread_or_zero(const ovl_dist *d) { return d->n > 0 && !isnan(d->spread) ? d->spread : 0.0; }

void ovl_change_between(double from, double to, const ovl_dist *before, const ovl_dist *after, ovl_quantity q,
                        ovl_change *out) {
  out->before = *before;
  out->after = *after;
  out->from = from;
  out->to = to;
  if (isnan(from) || isnan(to)) {
    out->delta = out->relative = out->noise = NAN;
    out->significant = 0;
    return;
  }
  out->delta = to - from;
  out->relative = from != 0.0 ? out->delta / fabs(from) : NAN;
  double noise = fmax(spread_or_zero(before), spread_or_zero(after));
  noise = fmax(noise, OVL_DIFF_MIN_REL * fmax(fabs(from), fabs(to)));
  noise = fmax(noise, floor_of(q));
  out->noise = noise;
  out->significant = fabs(out->delta) > noise;
}

void ovl_change_of(const ovl_dist *before, const ovl_dist *after, ovl_quantity q, ovl_change *out) {
  double from = before->n ? before->median : (after->n ? 0.0 : NAN);  /* absent on one side: 0 there */
  double to = after->n ? after->median : (before->n ? 0.0 : NAN);
  ovl_change_between(from, to, before, after, q, out);
}
