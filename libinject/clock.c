/* The capture clock: see clock.h. */
#include "clock.h"

#include <stdio.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

ovl_clock_line ovl_clock_tsc_line;

#define JUMP_NS 1000000        /* a refit further off than this re-bases the line */
#define MAX_JUMPS 3            /* ... and the third such jump switches the TSC off */
#define FIRST_BASELINE_NS 1000000  /* the first fit: two samples at least 1 ms apart ... */
#define FIRST_PERIOD_NS 10000000   /* ... refitted after 10 ms, then each period 10 times longer */
#define SLEW_LIMIT_PPM 500     /* a refit corrects at most this much of the slope */
#define MAX_BRACKET_NS 100000  /* a sample bracketed wider than this is not used */

int64_t ovl_clock_realtime_offset_ns(void) {
  /* The sample whose monotonic bracket is tightest gives the best estimate. */
  int64_t best = 0, best_width = INT64_MAX;
  for (int i = 0; i < 5; i++) {
    struct timespec r;
    int64_t a = ovl_clock_gettime_ns();
    clock_gettime(CLOCK_REALTIME, &r);
    int64_t b = ovl_clock_gettime_ns();
    if (b - a < best_width) {
      best_width = b - a;
      best = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec - (a + (b - a) / 2);
    }
  }
  return best;
}

#if defined(__x86_64__)

/* Calibration state: the writer thread's alone. */
static struct {
  int state;          /* 0: not tried, 1: fitting, 2: on, -1: off */
  const char *why_off;
  uint64_t tsc_first; /* the first sample: the long baseline of every refit */
  int64_t ns_first;
  int jumps;
  int64_t period;     /* ns until the next refit: from FIRST_PERIOD_NS up to OVL_CLOCK_CALIBRATE_MS */
  int64_t largest_correction;  /* ns, absolute, of the refits after the first second */
  double mhz;
} cal;

/* Invariant TSC: CPUID 0x80000007, EDX bit 8 (constant rate, runs in every C-state). */
static int tsc_invariant(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return 0;
  __cpuid(0x80000007, a, b, c, d);
  return (d >> 8) & 1;
}

/* A (tsc, CLOCK_MONOTONIC) pair: the tightest bracket of five, its middle in *ns and its
** end in *late (no earlier than the TSC reading). Returns 0 when even that bracket was wide
** (the thread was preempted each time): no sample. */
static int sample_late(uint64_t *tsc, int64_t *ns, int64_t *late) {
  int64_t best = INT64_MAX;
  for (int i = 0; i < 5; i++) {
    int64_t a = ovl_clock_gettime_ns();
    uint64_t t = __rdtsc();
    int64_t b = ovl_clock_gettime_ns();
    if (b - a < best) {
      best = b - a;
      *tsc = t;
      *ns = a + (b - a) / 2;
      *late = b;
    }
  }
  return best <= MAX_BRACKET_NS;
}

static int sample(uint64_t *tsc, int64_t *ns) {
  int64_t late;
  return sample_late(tsc, ns, &late);
}

static int64_t line_at(const ovl_clock_slot *s, uint64_t tsc) {
  int64_t d = (int64_t)(tsc - atomic_load_explicit(&s->tsc0, memory_order_relaxed));
  return atomic_load_explicit(&s->ns0, memory_order_relaxed) +
         (int64_t)(((__int128)d * (__int128)atomic_load_explicit(&s->mult, memory_order_relaxed)) >> 32);
}

/* Fills the slot readers do not use, then makes it current. */
static void publish(uint64_t tsc0, int64_t ns0, uint64_t mult) {
  ovl_clock_line *l = &ovl_clock_tsc_line;
  unsigned g = atomic_load_explicit(&l->gen, memory_order_relaxed);
  unsigned next = g ? g + 1 : 2;
  if (next == 0) next = 2;  /* (after 2^32 refits: never 0, which means "off") */
  ovl_clock_slot *s = &l->slot[next & 1];
  atomic_store_explicit(&s->tsc0, tsc0, memory_order_relaxed);
  atomic_store_explicit(&s->ns0, ns0, memory_order_relaxed);
  atomic_store_explicit(&s->mult, mult, memory_order_relaxed);
  atomic_store_explicit(&l->gen, next, memory_order_release);
}

static void switch_off(const char *why) {
  if (cal.state < 0) return;
  atomic_store_explicit(&ovl_clock_tsc_line.gen, 0, memory_order_release);
  cal.state = -1;
  cal.why_off = why;
}

/* ns per tick * 2^32 over the long baseline. */
static uint64_t fitted_mult(uint64_t tsc, int64_t ns) {
  return (uint64_t)(((unsigned __int128)(uint64_t)(ns - cal.ns_first) << 32) / (tsc - cal.tsc_first));
}

void ovl_clock_start(void) {
  if (cal.state == 0 && sample(&cal.tsc_first, &cal.ns_first)) cal.state = 1;
}

int64_t ovl_clock_calibrate(int allowed) {
  if (cal.state < 0) return INT64_MAX;
  if (!allowed) return switch_off("OVL_CLOCK=monotonic"), INT64_MAX;
  if (cal.state == 0) {
    ovl_clock_start();
    return FIRST_BASELINE_NS;
  }
  uint64_t tsc;
  int64_t ns, late;
  if (!sample_late(&tsc, &ns, &late)) return FIRST_BASELINE_NS;  /* preempted: soon again */
  if (cal.state == 1) {
    if (!tsc_invariant()) return switch_off("no invariant TSC"), INT64_MAX;
    if (ns - cal.ns_first < FIRST_BASELINE_NS) return FIRST_BASELINE_NS - (ns - cal.ns_first);
    if (tsc <= cal.tsc_first) return switch_off("the TSC did not advance"), INT64_MAX;
    uint64_t mult = fitted_mult(tsc, ns);
    cal.mhz = 1e3 * 4294967296.0 / (double)mult;
    /* Start no earlier than clock_gettime could have said: a thread that read it just before
    ** never sees time go back (the line starts at most a bracket, ~50 ns, ahead; refits
    ** correct that). */
    publish(tsc, late, mult);
    cal.state = 2;
    return cal.period = FIRST_PERIOD_NS;
  }
  ovl_clock_line *l = &ovl_clock_tsc_line;
  const ovl_clock_slot *cur = &l->slot[atomic_load_explicit(&l->gen, memory_order_relaxed) & 1];
  int64_t at = line_at(cur, tsc), err = ns - at;
  if (err > JUMP_NS || err < -JUMP_NS || tsc <= cal.tsc_first) {
    if (++cal.jumps >= MAX_JUMPS) return switch_off("the TSC jumped against CLOCK_MONOTONIC three times"), INT64_MAX;
    cal.tsc_first = tsc;  /* start a new baseline from here */
    cal.ns_first = ns;
    publish(tsc, ns, atomic_load_explicit(&cur->mult, memory_order_relaxed));
    return cal.period = FIRST_PERIOD_NS;
  }
  if (cal.period >= (int64_t)OVL_CLOCK_CALIBRATE_MS * 1000000 && (err < 0 ? -err : err) > cal.largest_correction)
    cal.largest_correction = err < 0 ? -err : err;
  if (cal.period < (int64_t)OVL_CLOCK_CALIBRATE_MS * 1000000) cal.period *= 10;
  if (cal.period > (int64_t)OVL_CLOCK_CALIBRATE_MS * 1000000) cal.period = (int64_t)OVL_CLOCK_CALIBRATE_MS * 1000000;
  /* Continuous at `tsc`; the slope takes the long-baseline rate plus what corrects `err`
  ** over the next period, within SLEW_LIMIT_PPM. */
  uint64_t rate = fitted_mult(tsc, ns);
  double ticks = (double)cal.period * 4294967296.0 / (double)rate;  /* in the next period */
  double slew = (double)err * 4294967296.0 / ticks, cap = (double)rate * SLEW_LIMIT_PPM * 1e-6;
  if (slew > cap) slew = cap;
  if (slew < -cap) slew = -cap;
  publish(tsc, at, (uint64_t)((double)rate + slew));
  return cal.period;
}

void ovl_clock_describe(char *buf, size_t size) {
  if (cal.state == 2)
    snprintf(buf, size, "tsc (%.3f MHz, refitted to CLOCK_MONOTONIC every %d ms; largest correction %lld ns)",
             cal.mhz, OVL_CLOCK_CALIBRATE_MS, (long long)cal.largest_correction);
  else
    snprintf(buf, size, "clock_gettime%s%s%s", cal.why_off ? " (" : "", cal.why_off ? cal.why_off : "",
             cal.why_off ? ")" : "");
}

#else /* no TSC line on this architecture: clock_gettime */

void ovl_clock_start(void) {}
int64_t ovl_clock_calibrate(int allowed) {
  (void)allowed;
  return INT64_MAX;
}
void ovl_clock_describe(char *buf, size_t size) { snprintf(buf, size, "clock_gettime"); }

#endif
