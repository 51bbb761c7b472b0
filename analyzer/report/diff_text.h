/*
** `ovl diff` as text and as JSON (docs/diff.md): most significant first, every section bounded
** (text) by max_rows; a change is marked '*' only when beyond the step-to-step spread.
*/
#ifndef OVL_DIFF_TEXT_H
#define OVL_DIFF_TEXT_H

#include "compare/diff.h"
#include "compare/gate.h"

#include <stdio.h>

typedef struct ovl_diff_gate_line {
  const ovl_gate_cond *cond;
  ovl_gate_result result;
} ovl_diff_gate_line;

/* Text: rows shown per section (SIZE_MAX: all). */
void ovl_diff_text(FILE *out, const ovl_diff *d, size_t max_rows);
/* JSON {"ovl_diff_version": 1, ...}; gates[0..ngates) are the --fail-if conditions judged. */
void ovl_diff_json(FILE *out, const ovl_diff *d, const ovl_diff_gate_line *gates, size_t ngates, int pretty);

#endif
