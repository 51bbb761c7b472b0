/*
** The human-readable `ovl report`: per rank a summary and its findings, a table of steps with
** the most exposed first, and for the worst steps the bucket view (bucket_view.h), one line
** per collective, most exposed first, and the step's findings. Times are shown relative to
** the rank's first GPU activity (bucket view: to the step's start).
*/
#ifndef OVL_REPORT_TEXT_H
#define OVL_REPORT_TEXT_H

#include "../job/job.h"

#include <stdio.h>

typedef struct ovl_text_options {
  size_t max_steps;        /* rows in the step table */
  size_t detail_steps;     /* steps whose collectives are listed */
  size_t max_collectives;  /* collective lines per listed step */
} ovl_text_options;

#define OVL_TEXT_ALL ((size_t)-1)

/* Ranks one by one, then (for several ranks sharing communicators) the job across ranks:
** clock alignment, matching, arrival skew, per-rank overlap side by side, stragglers. */
void ovl_report_text(FILE *out, const ovl_job *job, const ovl_text_options *opt);

#endif
