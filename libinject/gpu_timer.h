/*
** The offset between a GPU's global timer and the capture clock, measured from NCCL's own
** kernel-channel events (the stamps NCCL's kernels take from %globaltimer, reported by the
** profiler plugin), so that a trace without CUPTI still places NCCL's GPU work on the host
** timeline. host = gpu + offset.
**
** The method (no GPU access needed): every stamp is bracketed by two host times.
**   * Before: the API call that enqueued the collective began before its kernel was launched,
**     so before the kernel (and any of its channels) started:  host_before <= gpu + offset.
**   * After: NCCL's proxy thread reports a stamp only once it has read it from the GPU, so the
**     plugin hears of it after the fact:  gpu + offset <= host_after.
** Each stamp bounds the offset: host_before - gpu <= offset <= host_after - gpu. The tightest
** bounds over many stamps (the largest lower, the smallest upper) close in on it: the lower
** from a kernel that started right after an idle launch, the upper from a proxy thread that
** polled right away. The estimate is the middle of the interval, its error half its width.
**
** Both clocks tick in nanoseconds but may drift apart (the driver steers the global timer),
** so bounds are kept per window of OVL_GPU_TIMER_WINDOW_NS of host time: the estimate uses
** the current window and the one before it. Bounds that contradict each other (lower above
** upper: a stamp broke an assumption) are counted and the upper bound, the observation, wins.
*/
#ifndef OVL_INJECT_GPU_TIMER_H
#define OVL_INJECT_GPU_TIMER_H

#include <stdint.h>

#define OVL_GPU_TIMER_WINDOW_NS INT64_C(10000000000)

typedef struct ovl_gpu_bounds {
  int64_t lo, hi;          /* INT64_MIN / INT64_MAX while unknown */
} ovl_gpu_bounds;

typedef struct ovl_gpu_timer {
  ovl_gpu_bounds cur, prev;
  int64_t window_end;      /* host time the current window closes; 0 before the first stamp */
  uint64_t stamps;         /* stamps noted */
  uint64_t contradictions; /* stamps that made a window's bounds cross */
} ovl_gpu_timer;

void ovl_gpu_timer_init(ovl_gpu_timer *t);
/* Notes one stamp `gpu` with the host times known to precede and follow it (either may be
** OVL_NONE when unknown). Stamps of 0 (the timer was not read) are ignored. */
void ovl_gpu_timer_note(ovl_gpu_timer *t, int64_t host_before, int64_t gpu, int64_t host_after);
/* The offset and its error (half the bounds' width; -1 when only one side is known). Returns 0,
** or -1 (nothing set) before any usable stamp. */
int ovl_gpu_timer_offset(const ovl_gpu_timer *t, int64_t *offset, int64_t *error);

#endif
