/*
** The pictures of the HTML report (report_html.h), each an inline SVG with its numbers
** written through html_out.h. Internal to the report: the page writer calls them in order.
*/
#ifndef OVL_HTML_CHARTS_H
#define OVL_HTML_CHARTS_H

#include "../job/job.h"
#include "../analyze/whatif.h"
#include "html_step_work.h"

#include <stdio.h>

#define OVL_HTML_WIDTH 1200

/* Section 2: the step's lanes per stream, exposed communication shaded, each collective's
** ready -> launch -> GPU start -> end and the backward end. ri, si: JSON indices. */
void ovl_html_timeline(FILE *out, const ovl_rank_result *r, size_t ri, size_t si, const ovl_step_work *w);
/* Section 3: gradient collectives in firing order against readiness order; stall bars. */
void ovl_html_order(FILE *out, const ovl_rank_result *r, size_t ri, size_t si);
/* Section 4: predicted step time per bucket cap (log x), current cap and 25 MiB marked.
** current_cap: bytes of the largest gradient bucket seen (0: unknown), cap_path its JSON path. */
void ovl_html_valley(FILE *out, const ovl_whatif_result *w, double current_cap, const char *cap_path);
/* Section 5: per-rank efficiency and the arrival heat map (rank x matched collective). */
void ovl_html_job(FILE *out, const ovl_job *job);
/* Section 6: per-step efficiency of every rank (a sample of them for large jobs). */
void ovl_html_trend(FILE *out, const ovl_job *job);

#endif
