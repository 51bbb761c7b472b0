/*
** The gradient phase of a step: which collectives reduce gradients, when backward compute
** ended, and when each bucket's gradients were ready.
**
** Roles (first rule that applies):
**   before_window  first step only: no host launch, and it starts before the first
**               collective whose launch the trace holds: launched before the trace's window
**               opened (a profiler schedule that starts mid-run), so not part of this step;
**   blocking    the collective ran on a compute stream of the device (a stream whose kernel
**               time is mostly compute): compute on that stream waits for it;
**   unused_map  an AllReduce of an integer type outside every `bucket <k>` range (DDP's
**               find_unused_parameters used-parameter map);
**   gradient    in a `bucket <k>` range; in a step without bucket ranges, every AllReduce or
**               ReduceScatter of more than 64 bytes (or of unknown size);
**   other       everything else.
** backward_end = the latest end of the compute kernels that started before a gradient
** collective did: the last backward kernel (the optimizer waits for the reduced gradients,
** so it starts after them).
** Readiness order: gradient collectives with a known ready time sorted by it (ties in firing
** order); the step is misordered when that differs from the firing order.
*/
#ifndef OVL_GRAD_PHASE_H
#define OVL_GRAD_PHASE_H

#include "../model/bucket_model.h"
#include "analysis.h"

/* Largest AllReduce treated as a scalar (a loss or a flag), never a gradient bucket. */
#define OVL_SCALAR_BYTES 64

/* Sets roles and ready_order of the step's collectives and its gradient-phase fields. */
void ovl_grad_phase(const ovl_rank_result *r, ovl_step_result *st);
/* The gradient phase of every step of r, and r->colls_before_window (step 0's collectives
** launched before the trace's window). Part of the measurement of a rank. */
void ovl_grad_phases(ovl_rank_result *r);

/* The grad_ready marks of a rank grouped by step: marks of step s are
** marks[offset[s] .. offset[s + 1]), in time order. */
typedef struct ovl_step_marks {
  size_t *offset;          /* nsteps + 1 entries */
  ovl_grad_mark *marks;
} ovl_step_marks;

int ovl_step_marks_build(const ovl_rank_result *r, ovl_step_marks *out);
void ovl_step_marks_free(ovl_step_marks *m);

/* The step's gradient-readiness curve as gradients in ready order: the `grad_ready` marks of
** the step (m, nm) with their bytes (marks without bytes share their bucket's bytes), else an
** approximation: the gradient bytes become ready at an even rate over the backward window,
** taken as the last two thirds of [step start, backward_end] (backward costs about twice the
** forward), in 8 pieces per gradient collective (at least OVL_APPROX_SLICES, at most
** OVL_APPROX_SLICES_MAX). *approximated says which. Returns 0, or -1 when the
** step has no usable curve (no gradient collective, unknown sizes) or memory ran out
** (*g NULL then). Caller frees *g. */
#define OVL_APPROX_SLICES 256
#define OVL_APPROX_SLICES_MAX 65536
int ovl_step_readiness(const ovl_step_result *st, const ovl_grad_mark *m, size_t nm, ovl_bm_grad **g, size_t *n,
                       int *approximated);

/* Ready time of each gradient collective of the step, in firing order (ngrad entries): its
** ready_ns when known, else the time the readiness curve reaches its cumulative bytes (without
** marks and sizes: the collectives share the approximate backward window equally).
** Returns 0 (*approximated set when any came from the curve), or -1. */
int ovl_bucket_ready_times(const ovl_step_result *st, const ovl_grad_mark *m, size_t nm, double *ready,
                           int *approximated);

#endif
