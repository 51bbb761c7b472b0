/*
** The parallelism dimensions in the reports (docs/report.md "Parallelism dimensions"): the
** JSON keys report_json.c adds per collective, step and rank and at the top level, and the
** text section report_text.c prints when a job goes beyond DDP.
*/
#ifndef OVL_REPORT_DIMS_H
#define OVL_REPORT_DIMS_H

#include "base/json_out.h"
#include "../job/job.h"

#include <stdio.h>

/* "dim" and "dim_role" of a collective. */
void ovl_report_dims_coll_json(ovl_json *j, const ovl_coll_result *c);
/* "dimensions": {"dp": {...}, ...} for a step's or a rank's totals (dimensions without
** communication left out). */
void ovl_report_dims_totals_json(ovl_json *j, const ovl_dim_totals *t, long nsteps);
/* "pipeline": the rank's stage, or null. */
void ovl_report_dims_pipeline_json(ovl_json *j, const ovl_rank_result *r);
/* "process_groups": the job's groups and their dimension. */
void ovl_report_dims_groups_json(ovl_json *j, const ovl_job *job);

/* Whether the job goes beyond DDP: a TP, PP or EP group, or data-parallel all-gathers or
** reduce-scatters (ZeRO/FSDP). The text section is printed only then. */
int ovl_report_dims_beyond_ddp(const ovl_job *job);
/* The text section. per_rank: a row per rank and dimension; else (the grouped report of one
** job) a row per dimension with the range over the ranks (the JSON keeps every rank). */
void ovl_report_dims_text(FILE *out, const ovl_job *job, int per_rank);

#endif
