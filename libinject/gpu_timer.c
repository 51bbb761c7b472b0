/* GPU global timer -> capture clock: see gpu_timer.h. */
#include "gpu_timer.h"

#include "base/none.h"

#include <assert.h>

static const ovl_gpu_bounds no_bounds = {INT64_MIN, INT64_MAX};

void ovl_gpu_timer_init(ovl_gpu_timer *t) {
  t->cur = t->prev = no_bounds;
  t->window_end = 0;
  t->stamps = t->contradictions = 0;
}

/* Starts a new window when `now` is past the current one (the current becomes the previous). */
static void roll(ovl_gpu_timer *t, int64_t now) {
  if (t->window_end == 0) {
    t->window_end = now + OVL_GPU_TIMER_WINDOW_NS;
  } else if (now >= t->window_end) {
    t->prev = t->cur;
    t->cur = no_bounds;
    t->window_end = now + OVL_GPU_TIMER_WINDOW_NS;
  }
}

void ovl_gpu_timer_note(ovl_gpu_timer *t, int64_t host_before, int64_t gpu, int64_t host_after) {
  if (gpu <= 0 || (host_before == OVL_NONE && host_after == OVL_NONE)) return;
  roll(t, host_after != OVL_NONE ? host_after : host_before);
  int crossed = t->cur.lo > t->cur.hi;
  if (host_before != OVL_NONE && host_before - gpu > t->cur.lo) t->cur.lo = host_before - gpu;
  if (host_after != OVL_NONE && host_after - gpu < t->cur.hi) t->cur.hi = host_after - gpu;
  t->stamps++;
  if (!crossed && t->cur.lo > t->cur.hi) t->contradictions++;
}

/* One side of the estimate: the current window's bound, else the previous one's. */
static int64_t side(int64_t cur, int64_t prev, int64_t unknown) { return cur != unknown ? cur : prev; }

int ovl_gpu_timer_offset(const ovl_gpu_timer *t, int64_t *offset, int64_t *error) {
  ovl_gpu_bounds b = {side(t->cur.lo, t->prev.lo, INT64_MIN), side(t->cur.hi, t->prev.hi, INT64_MAX)};
  /* Both windows agree where their intervals overlap: use the overlap, the tighter bounds. */
  if (t->cur.lo != INT64_MIN && t->prev.lo != INT64_MIN && t->prev.lo > b.lo && t->prev.lo <= b.hi) b.lo = t->prev.lo;
  if (t->cur.hi != INT64_MAX && t->prev.hi != INT64_MAX && t->prev.hi < b.hi && t->prev.hi >= b.lo) b.hi = t->prev.hi;
  if (b.lo == INT64_MIN && b.hi == INT64_MAX) return -1;
  if (b.lo == INT64_MIN || b.hi == INT64_MAX) {
    *offset = b.lo != INT64_MIN ? b.lo : b.hi;
    *error = -1;
    return 0;
  }
  if (b.lo > b.hi) {
    *offset = b.hi;
    *error = b.lo - b.hi;
    return 0;
  }
  *offset = b.lo + (b.hi - b.lo) / 2;
  *error = (b.hi - b.lo + 1) / 2;
  assert(*offset >= b.lo && *offset <= b.hi);
  return 0;
}
