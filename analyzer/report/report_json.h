/*
** `ovl report --json`: contract section 2, report version 1. Keys beyond the contract
** (trace path, host, counts, step_projection, t_memory_ns, per-collective comm/seq/...)
** are documented in docs/report.md.
*/
#ifndef OVL_REPORT_JSON_H
#define OVL_REPORT_JSON_H

#include "../analyze/analysis.h"

#include <stdio.h>

void ovl_report_json(FILE *out, const ovl_rank_result *ranks, size_t nranks, const ovl_finding *findings,
                     size_t nfindings, int pretty);

#endif
