/*
** Does communication slow compute down? Per kernel signature (name and grid size), the
** durations of its runs against how long communication overlapped each run, accumulated
** while the sweep runs: memory grows with the number of distinct signatures, never with the
** number of kernels.
**
** Model: a kernel does a fixed amount of work and runs at a lower rate while communication
** shares the GPU (SMs, memory bandwidth), so its duration is linear in the overlapped time:
**   duration = alone + k * overlapped      slowdown while overlapped = 1 / (1 - k)
** and what the contention cost is k * overlapped, summed over the runs. The fit is an
** ordinary least-squares line through streaming co-moments (Welford), with a t statistic
** for the slope.
*/
#ifndef OVL_KERNEL_STATS_H
#define OVL_KERNEL_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_kstat {
  int64_t name;            /* strings.id */
  int64_t grid[3];         /* OVL_NONE when unknown */
  long n;                  /* runs */
  long n_alone, n_over;    /* runs overlapped for <= 10% / >= 50% of their duration */
  double mean_o, mean_d;   /* means of overlapped ns and duration */
  double c_oo, c_od, c_dd; /* co-moments (sums of products of deviations) */
} ovl_kstat;

typedef struct ovl_kstats {
  ovl_kstat *items;
  size_t len, cap;
  int32_t *slots;          /* open addressing: index + 1, 0 = empty */
  size_t nslots;
} ovl_kstats;

/* Index of the signature, added on first use; -1 when memory runs out. */
int32_t ovl_kstats_index(ovl_kstats *k, int64_t name, const int64_t grid[3]);
void ovl_kstats_add(ovl_kstats *k, int32_t index, int64_t duration, int64_t overlapped);
void ovl_kstats_free(ovl_kstats *k);

/* Thresholds of a significant slowdown (docs/findings.md, compute_slowdown). */
#define OVL_SLOWDOWN_MIN_FACTOR 1.05   /* at least 5% slower while overlapped */
#define OVL_SLOWDOWN_MIN_RUNS 3        /* runs alone and runs overlapped, each */
#define OVL_SLOWDOWN_MIN_T 5.0         /* t statistic of the slope */

typedef struct ovl_slowdown {
  int64_t name;
  int64_t grid[3];
  long runs, runs_alone, runs_overlapped;
  double alone_ns;         /* fitted duration with no overlap */
  double factor;           /* duration ratio when fully overlapped */
  double cost_ns;          /* extra time over all runs */
} ovl_slowdown;

/* Fits one signature. Returns 1 when the slowdown is significant, else 0 (out is filled
** either way when there are at least two runs). */
int ovl_kstat_slowdown(const ovl_kstat *k, ovl_slowdown *out);

#endif
