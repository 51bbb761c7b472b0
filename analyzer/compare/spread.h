/*
** Steps are distributions: a quantity measured once per step (step time, exposed time, a
** collective's duration, a kernel's time in the step) is summarised by its median and its
** spread, the interquartile range (75th - 25th percentile, linear interpolation between
** order statistics; 0 for a single step). A change between two runs is the difference of the
** medians, and it is significant only when it exceeds
**   - the step-to-step spread: the larger of the two runs' spreads, and
**   - a floor, so that identical schedules (spread 0) do not flag rounding: OVL_DIFF_MIN_REL of
**     the larger median and the absolute floor of the quantity's kind (below).
** docs/diff.md, "Noise".
*/
#ifndef OVL_SPREAD_H
#define OVL_SPREAD_H

#include <stddef.h>

/* Thresholds of a significant change (docs/diff.md): the reason beside each. */
#define OVL_DIFF_MIN_REL 0.01        /* 1% of the larger median: below, a change is no news */
#define OVL_DIFF_MIN_NS 1000.0       /* 1 us: under a kernel launch, timer resolution territory */
#define OVL_DIFF_MIN_RATIO 0.001     /* 0.1 point of overlap efficiency */
#define OVL_DIFF_MIN_COUNT 0.5       /* counts per step: half a call */

typedef struct ovl_dist {
  size_t n;                /* values (steps); 0: nothing measured */
  double median, spread;   /* spread: interquartile range */
  double lo, hi;           /* smallest and largest */
} ovl_dist;

/* Summarises values[0..n) (sorted in place). */
void ovl_dist_of(double *values, size_t n, ovl_dist *out);
/* The p-th quantile (0..1) of sorted values, linearly interpolated. */
double ovl_quantile(const double *sorted, size_t n, double p);

typedef enum ovl_quantity { OVL_Q_NS, OVL_Q_RATIO, OVL_Q_COUNT } ovl_quantity;

typedef struct ovl_change {
  ovl_dist before, after;
  double from, to;         /* the values compared (the medians, unless the caller set others) */
  double delta;            /* to - from */
  double relative;         /* delta / |from|; NAN when from is 0 */
  double noise;            /* what delta had to exceed */
  int significant;
} ovl_change;

/* Compares two distributions of quantity kind q (from, to = their medians). */
void ovl_change_of(const ovl_dist *before, const ovl_dist *after, ovl_quantity q, ovl_change *out);
/* The same with the values compared given (e.g. whole-run efficiencies), the distributions
** giving the spread. */
void ovl_change_between(double from, double to, const ovl_dist *before, const ovl_dist *after, ovl_quantity q,
                        ovl_change *out);

#endif
