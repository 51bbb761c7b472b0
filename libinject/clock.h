/*
** The one clock of a capture. Every timestamp libovl writes (NVTX, NCCL host times, and,
** through CUPTI's timestamp callback, CUDA API calls and GPU work) comes from
** ovl_clock_ns(), so host and GPU times in one trace compare directly.
**
** The clock is CLOCK_MONOTONIC. Where the CPU has an invariant time-stamp counter (x86-64
** with constant_tsc and nonstop_tsc), it is read from the TSC once the writer thread has
** calibrated it: ns = ns0 + (tsc - tsc0) * mult / 2^32, a line fitted to CLOCK_MONOTONIC
** and refitted at least every OVL_CLOCK_CALIBRATE_MS (sooner at first). A refit keeps the line continuous
** (timestamps never go back) and corrects the drift it finds over the next period by
** adjusting the slope; a jump of more than a millisecond (a migrated virtual machine)
** re-bases the line, and a third one switches the TSC off for good. Before calibration,
** without an invariant TSC, and with OVL_CLOCK=monotonic, it is clock_gettime.
** docs/capture.md gives the measured error.
*/
#ifndef OVL_INJECT_CLOCK_H
#define OVL_INJECT_CLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define OVL_CLOCK_NAME "CLOCK_MONOTONIC"
#define OVL_CLOCK_CALIBRATE_MS 1000

/* The TSC line, published without a lock: `gen` is 0 while the TSC is not used; otherwise
** slot[gen & 1] holds the current line. The writer fills the other slot, then bumps `gen`;
** a reader that finds `gen` changed after reading its slot (a line replaced meanwhile)
** reads again: the slot it then reads was complete before `gen` named it, so no reader
** waits for the writer or sees a torn line, and readers stay on the line (never mixing in
** clock_gettime, which the line may lead by a few ns: time would step back). */
typedef struct ovl_clock_slot {
  _Atomic uint64_t tsc0, mult;  /* mult: ns per tick * 2^32 */
  _Atomic int64_t ns0;
} ovl_clock_slot;
typedef struct ovl_clock_line {
  atomic_uint gen;
  ovl_clock_slot slot[2];
} ovl_clock_line;
extern ovl_clock_line ovl_clock_tsc_line;

/* CLOCK_MONOTONIC from the kernel (vDSO). */
static inline int64_t ovl_clock_gettime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds on CLOCK_MONOTONIC, never going back. Async-signal-safe; any thread; never
** waits (a read races a refit at most every 10 ms, and then reads once more). */
static inline int64_t ovl_clock_ns(void) {
#if defined(__x86_64__)
  ovl_clock_line *l = &ovl_clock_tsc_line;
  for (unsigned g; (g = atomic_load_explicit(&l->gen, memory_order_acquire)) != 0;) {
    const ovl_clock_slot *s = &l->slot[g & 1];
    int64_t d = (int64_t)(__rdtsc() - atomic_load_explicit(&s->tsc0, memory_order_relaxed));
    int64_t ns = atomic_load_explicit(&s->ns0, memory_order_relaxed) +
                 (int64_t)(((__int128)d * (__int128)atomic_load_explicit(&s->mult, memory_order_relaxed)) >> 32);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&l->gen, memory_order_relaxed) == g) return ns;
  }
#endif
  return ovl_clock_gettime_ns();
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns: add it to a timestamp to get wall-clock time. */
int64_t ovl_clock_realtime_offset_ns(void);

/* Takes the first calibration sample (cheap: the constructor calls it, so that the first
** fit has a baseline as long as the time to activation). */
void ovl_clock_start(void);
/* Fits (or refits) the TSC line to CLOCK_MONOTONIC and returns the ns until it wants to be
** called again: the first fit needs 1 ms of baseline, refits follow after 10 ms, 100 ms,
** then every OVL_CLOCK_CALIBRATE_MS; INT64_MAX once the TSC is off. `allowed` = 0
** (OVL_CLOCK=monotonic) keeps clock_gettime. One caller at a time (the writer thread). */
int64_t ovl_clock_calibrate(int allowed);
/* What meta.clock_source says: "tsc (...)" with the frequency and the largest correction a
** refit made, or "clock_gettime" and why. */
void ovl_clock_describe(char *buf, size_t size);

#endif
