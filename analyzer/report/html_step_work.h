/*
** What the HTML report's timeline draws of a step: the rank's GPU work inside the step
** window, per CUDA stream, and where communication was exposed. Read from the rank's ovl
** trace through the same classified work stream and the same sweep as the analysis
** (work_stream.h, sweep.h: exposed = communication running with no compute), so the picture
** cannot disagree with the numbers. Bounded for the page: boxes closer than `merge_ns` on one
** lane and of one class are drawn as one, at most OVL_STEP_LANES streams (the busiest).
*/
#ifndef OVL_HTML_STEP_WORK_H
#define OVL_HTML_STEP_WORK_H

#include "../analyze/analysis.h"

#define OVL_STEP_LANES 12

typedef struct ovl_step_box {
  int64_t start, end;      /* trace clock, clipped to the step */
  ovl_work_class cls;
} ovl_step_box;

typedef struct ovl_step_lane {
  int64_t stream;
  int64_t busy[3];         /* ns per class: what the lane is named after */
  ovl_step_box *boxes;
  size_t n, cap;
} ovl_step_lane;

typedef struct ovl_step_work {
  ovl_step_lane *lanes;    /* by stream id */
  size_t nlanes;
  ovl_step_box *exposed;   /* exposed communication (cls OVL_CLASS_COMM) */
  size_t nexposed, exposed_cap;
} ovl_step_work;

int ovl_step_work_read(const ovl_analysis_ctx *ctx, const ovl_rank_result *r, const ovl_step_result *st,
                       int64_t merge_ns, ovl_step_work *out, ovl_err *err);
/* The same for steps[0..n) of r in one pass over its trace (each with its merge_ns): out[i] is
** steps[i]'s. On failure every out[i] is left empty (nothing to free). */
int ovl_step_work_read_many(const ovl_analysis_ctx *ctx, const ovl_rank_result *r, const ovl_step_result *const *steps,
                            const int64_t *merge_ns, size_t n, ovl_step_work *out, ovl_err *err);
void ovl_step_work_free(ovl_step_work *w);

#endif
