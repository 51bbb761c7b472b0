/*
** Interval algebra over arrays of half-open intervals [start, end) in integer ns.
** A "normalized" array is sorted by start, with no zero-length, overlapping or touching
** intervals. These are the reference operations (unions, intersections, differences)
** behind the streaming sweep in sweep.c, and the building blocks for per-step analyses.
*/
#ifndef OVL_INTERVALS_H
#define OVL_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_interval {
  int64_t start, end;
} ovl_interval;

/* Sorts by start and merges overlapping or touching intervals in place, dropping
** zero-length and inverted ones; returns the new length. */
size_t ovl_intervals_normalize(ovl_interval *v, size_t n);
/* Total length of a normalized array. */
int64_t ovl_intervals_length(const ovl_interval *v, size_t n);
/* Length of the intersection of two normalized arrays. */
int64_t ovl_intervals_overlap(const ovl_interval *a, size_t na, const ovl_interval *b, size_t nb);
/* a minus b (both normalized) into out, which needs room for na + nb intervals; returns its
** length. The result is normalized. */
size_t ovl_intervals_subtract(const ovl_interval *a, size_t na, const ovl_interval *b, size_t nb,
                              ovl_interval *out);
/* Length of a normalized array clipped to [lo, hi). */
int64_t ovl_intervals_clip_length(const ovl_interval *v, size_t n, int64_t lo, int64_t hi);

#endif
