/*
** `ovl report --json`: contract section 2, report version 1. Keys beyond the contract
** (trace path, host, counts, step_projection, t_memory_ns, per-collective comm/seq/...)
** are documented in docs/report.md.
*/
#ifndef OVL_REPORT_JSON_H
#define OVL_REPORT_JSON_H

#include "../job/job.h"

#include <stdio.h>

/* Absolute times are job time: each rank's clock_offset is added to them. Returns 0, or -1
** when a finding's text could not be written for lack of memory: the document written is then
** incomplete and must not be kept (write errors are the stream's: ferror). */
int ovl_report_json(FILE *out, const ovl_job *job, int pretty);

#endif
