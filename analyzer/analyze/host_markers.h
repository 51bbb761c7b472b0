/*
** Host-side structure of a trace, from its NVTX rows (contract section 3) and api rows:
** step ranges, bucket launch ranges and gradient-ready marks, and the projection of step
** ranges onto GPU work through launch correlation ids.
*/
#ifndef OVL_HOST_MARKERS_H
#define OVL_HOST_MARKERS_H

#include "base/i64map.h"
#include "base/vec.h"
#include "analysis.h"

typedef struct ovl_host_range {
  int64_t start, end, tid;
  long bucket;   /* bucket ranges: k; dim ranges: the ovl_pdim */
  long number;   /* step ranges: N of ProfilerStep#N, else -1 */
} ovl_host_range;

typedef struct ovl_host_markers {
  OVL_VEC(ovl_host_range) steps;    /* sorted by start, disjoint (nested/overlapping ones dropped) */
  OVL_VEC(ovl_host_range) buckets;  /* sorted by start */
  OVL_VEC(ovl_host_range) dims;     /* `dim <d>` ranges, sorted by start */
  OVL_VEC(ovl_grad_mark) marks;     /* sorted by time */
  /* Correlation projection: the api correlation ids launched inside each step range, for
  ** the steps that launched anything, in step order (ids grow with launch time). */
  int64_t *corr_min, *corr_max;     /* per step; OVL_NONE when the step launched nothing */
  int64_t *ranged_min, *ranged_max; /* the same, steps without launches left out */
  long *ranged_step;
  size_t nranged;
  int by_correlation;               /* 1 when launch_step() can be used */
  ovl_i64map mark_of_launch;        /* launch_corr -> index of the first mark with it */
} ovl_host_markers;

/* Scans the nvtx table. */
int ovl_host_markers_collect(ovl_trace *t, const ovl_analysis_ctx *ctx, ovl_host_markers *hm, ovl_err *err);
/* Scans the api table to map each step range to the correlation ids launched inside it.
** Leaves by_correlation = 0 when there are no api rows or the ranges are not ordered. */
int ovl_host_markers_project(ovl_trace *t, ovl_host_markers *hm, ovl_err *err);
void ovl_host_markers_free(ovl_host_markers *hm);

/* Compute work with this correlation id ended at `end`: the marks it precedes are on the GPU
** then (their gpu_t; the latest end when a launch has several pieces of work). Marks whose
** launch ran communication keep no GPU time. */
void ovl_host_markers_work_end(ovl_host_markers *hm, int64_t correlation, int64_t end);

/* Step whose host range contains t, or -1. */
long ovl_host_step_at(const ovl_host_markers *hm, int64_t t);
/* Step that launched the work with this correlation id: its index, steps.len when it was
** launched after the last step, or -1 (before the first step, between steps, unknown). */
long ovl_launch_step(const ovl_host_markers *hm, int64_t correlation);
/* The same, looking first where *hint says (SIZE_MAX: nowhere) and leaving there where the
** answer was found: quick for lookups in launch order (the analysis pass, per device). */
long ovl_launch_step_near(const ovl_host_markers *hm, int64_t correlation, size_t *hint);

#endif
