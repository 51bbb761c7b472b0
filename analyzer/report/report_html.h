/*
** `ovl report --html FILE`: one self-contained page (inline SVG and CSS, no network) a person
** opens first: (1) summary per rank with the top findings, (2) the most exposed step's
** timeline, (3) its bucket firing order against readiness, (4) the bucket-size valley from
** whatif's predictions, (5) for a job the per-rank efficiency, the arrival map and the
** stragglers, (6) the efficiency of every step. Drawn from the job's analysis results (the
** JSON report's), the whatif result and, for the timeline only, the worst step's GPU work
** re-read from its trace (html_step_work.h). Every number carries its JSON path (html_out.h).
** Large jobs stay bounded: tables and pictures sample or average ranks and collectives.
*/
#ifndef OVL_REPORT_HTML_H
#define OVL_REPORT_HTML_H

#include "../job/job.h"
#include "../analyze/whatif.h"

#include <stdio.h>

/* The bucket caps (MiB, as `ovl whatif --bucket-mb`) the valley is drawn from: 1 MiB to 2 GiB. */
#define OVL_HTML_VALLEY_CAPS "1,1.5,2,3,4,6,8,12,16,25,32,48,64,96,128,192,256,384,512,768,1024,1536,2048"

#include "html_step_work.h"

/* How the timelines' step work is read (ovl_step_work_read_many's contract). */
typedef int (*ovl_step_work_reader)(const ovl_analysis_ctx *ctx, const ovl_rank_result *r,
                                    const ovl_step_result *const *steps, const int64_t *merge_ns, size_t n,
                                    ovl_step_work *out, ovl_err *err);

/* A section written before the report's own (the comparison of `ovl diff --html`). */
typedef struct ovl_html_extra {
  const char *id, *nav, *title;      /* section id, its link text, its heading */
  void (*write)(FILE *out, const void *ctx);
  const void *ctx;
} ovl_html_extra;

typedef struct ovl_html_inputs {
  const ovl_job *job;                /* NULL: only the extra section (a diff of saved reports) */
  const ovl_analysis_ctx *ctx;       /* the job's options: how the timeline re-reads a trace */
  const ovl_whatif_result *whatif;   /* NULL: no replay (whatif_error says why) */
  const char *whatif_error;
  const char *title;                 /* shown in the header, e.g. the traces named */
  ovl_step_work_reader read_step;    /* NULL: ovl_step_work_read_many (a job analysed over MPI reads it
                                     ** where the trace is: mpi/mpi_job.h) */
  const ovl_html_extra *extra;       /* NULL: none */
  const char *heading;               /* NULL: "ovl report" */
} ovl_html_inputs;

/* Writes the page. Fails only when the worst step's trace cannot be re-read. */
int ovl_report_html(FILE *out, const ovl_html_inputs *in, ovl_err *err);

#endif
