/* The capture clock: see clock.h. */
#include "clock.h"

#include <time.h>

static int64_t read_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ovl_clock_ns(void) { return read_ns(CLOCK_MONOTONIC); }

int64_t ovl_clock_realtime_offset_ns(void) {
  /* The sample whose monotonic bracket is tightest gives the best estimate. */
  int64_t best = 0, best_width = INT64_MAX;
  for (int i = 0; i < 5; i++) {
    int64_t a = read_ns(CLOCK_MONOTONIC);
    int64_t r = read_ns(CLOCK_REALTIME);
    int64_t b = read_ns(CLOCK_MONOTONIC);
    if (b - a < best_width) {
      best_width = b - a;
      best = r - (a + (b - a) / 2);
    }
  }
  return best;
}
