/*
** Analysing a test trace through the library: every helper exits the test (status 2) when the
** analysis fails, since a test whose input cannot be analysed must not pass.
*/
#ifndef OVL_TEST_ANALYSIS_HELPER_H
#define OVL_TEST_ANALYSIS_HELPER_H

#include "analyze/analysis.h"

/* The ranks of one trace, with kernel grid sizes read when present, each diagnosed alone. */
ovl_rank_result *th_analyse(const char *path, size_t *n);
void th_release(ovl_rank_result *r, size_t n);

#endif
