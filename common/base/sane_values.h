/*
** Checked arithmetic and the ranges a value read from a trace must lie in before anything is
** computed from it. A trace is input like any other: a corrupt or hostile file must give a
** skipped row (counted, warned about) or one clear error, never an overflowed number.
*/
#ifndef OVL_SANE_VALUES_H
#define OVL_SANE_VALUES_H

#include <stdint.h>

/* Times are integer nanoseconds; a reading beyond +-2^62 ns (146 years from its clock's zero)
** is no clock's. Within it, the difference of any two times fits in int64. */
#define OVL_TIME_LIMIT_NS ((int64_t)1 << 62)
/* The longest single interval (a kernel, a call, a copy): 2^50 ns, about 13 days. Sums of
** millions of such intervals still fit in int64 (2^50 * 2^12 = 2^62). */
#define OVL_SPAN_LIMIT_NS ((int64_t)1 << 50)
/* The largest message or copy: 2^50 bytes (1 PiB). */
#define OVL_BYTES_LIMIT ((int64_t)1 << 50)

static inline int ovl_time_ok(int64_t t) { return t >= -OVL_TIME_LIMIT_NS && t <= OVL_TIME_LIMIT_NS; }

/* start <= end, both sane times, and at most OVL_SPAN_LIMIT_NS apart. */
static inline int ovl_interval_ok(int64_t start, int64_t end) {
  return ovl_time_ok(start) && ovl_time_ok(end) && start <= end && end - start <= OVL_SPAN_LIMIT_NS;
}

/* a * b into *out; returns 0 when it overflows (then *out is unspecified). */
static inline int ovl_mul_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
/* a + b into *out; returns 0 when it overflows. */
static inline int ovl_add_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }

/* a + b, clamped to [INT64_MIN, INT64_MAX]: for accumulators over many sane values. */
static inline int64_t ovl_sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

#endif
