/*
** The bucket view of a step in the text report: its gradient collectives in firing order with
** bucket, bytes, readiness, host launch, GPU start and end, readiness stall (launch - ready),
** queueing (GPU start - launch), exposed time and busbw; when the firing order differs from
** the readiness order, both orders. Times are relative to the step's start.
*/
#ifndef OVL_BUCKET_VIEW_H
#define OVL_BUCKET_VIEW_H

#include "../analyze/analysis.h"

#include <stdio.h>

/* Prints nothing when the step has no gradient collective. max_rows: OVL_TEXT_ALL for all. */
void ovl_bucket_view_text(FILE *out, const ovl_step_result *st, size_t max_rows);

#endif
