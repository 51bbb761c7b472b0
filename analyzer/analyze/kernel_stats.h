/*
** Does communication slow compute down? Per kernel signature (name, grid and block size: the
** same work, as far as a trace can tell), the durations of its runs against how long
** communication overlapped each run, accumulated while the sweep runs: memory grows with the
** number of distinct signatures, never with the number of kernels.
**
** Model: a kernel does a fixed amount of work and runs at a lower rate while communication
** shares the GPU (SMs, memory bandwidth), so its duration is linear in the overlapped time:
**   duration = alone + k * overlapped      slowdown while overlapped = 1 / (1 - k)
** and what the contention cost is k * overlapped, summed over the runs. The fit is an
** ordinary least-squares line through streaming co-moments (Welford), with a t statistic
** for the slope; the durations of the runs alone and of the runs overlapped are summarised
** apart (mean, spread), so that the diagnosis can check the line against them. This module
** measures; whether a fit is a slowdown worth a finding is the diagnosis' decision
** (diagnose/thresholds.h).
*/
#ifndef OVL_KERNEL_STATS_H
#define OVL_KERNEL_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_kstat {
  int64_t name;            /* strings.id */
  int64_t grid[3];         /* OVL_NONE when unknown */
  int64_t block[3];        /* OVL_NONE when unknown */
  long n;                  /* runs */
  long n_alone, n_over;    /* runs overlapped for <= 10% / >= 50% of their duration */
  double mean_o, mean_d;   /* means of overlapped ns and duration */
  double c_oo, c_od, c_dd; /* co-moments (sums of products of deviations) */
  double mean_alone, m2_alone;  /* duration of the runs alone: mean, sum of squared deviations */
  double mean_over, m2_over;    /* the same for the runs overlapped */
} ovl_kstat;

/* Recently found signatures by name id: a kernel name mostly comes with the grid and
** block of its last run, so one comparison replaces hashing seven words per kernel. */
#define OVL_KSTATS_RECENT 64

typedef struct ovl_kstats {    /* all zero: empty */
  ovl_kstat *items;
  size_t len, cap;
  int32_t *slots;          /* open addressing: index + 1, 0 = empty */
  size_t nslots;
  int32_t recent[OVL_KSTATS_RECENT];  /* index + 1 of a signature of name & (RECENT - 1), 0 = none */
} ovl_kstats;

/* Index of the signature, added on first use; -1 when memory runs out. */
int32_t ovl_kstats_index(ovl_kstats *k, int64_t name, const int64_t grid[3], const int64_t block[3]);
void ovl_kstats_add(ovl_kstats *k, int32_t index, int64_t duration, int64_t overlapped);
void ovl_kstats_free(ovl_kstats *k);

typedef struct ovl_slowdown {
  int64_t name;
  int64_t grid[3], block[3];
  long runs, runs_alone, runs_overlapped;
  double slope;            /* k of duration = alone + k * overlapped */
  double t_stat;           /* of the slope; INFINITY for an exact fit */
  double alone_ns;         /* fitted duration with no overlap */
  double factor;           /* duration ratio when fully overlapped, 1 / (1 - k) */
  double cost_ns;          /* extra time over all runs, k * overlapped summed */
  double alone_mean_ns, alone_sd_ns;  /* durations of the runs alone */
  double over_mean_ns, over_sd_ns;    /* durations of the runs overlapped */
} ovl_slowdown;

/* Fits one signature. Returns 1 and fills *out when the line is defined and has a slope below
** 1 with runs both alone and overlapped (a candidate for the diagnosis), else 0. At a slope of
** 1 or more a run grows by at least the time overlapped: longer runs simply overlap more,
** which is no slowdown from sharing the GPU; the model does not apply. */
int ovl_kstat_fit(const ovl_kstat *k, ovl_slowdown *out);

#endif
