/*
** The comparison's section of `ovl diff --html` (report_html.h's extra section): the job's
** metrics before and after as a table and bars, the exposed time recovered, the bucket order,
** the findings that appeared or disappeared, the largest collective and kernel changes. Every
** number carries its path in `ovl diff --json` prefixed "diff." (html_out.h), so a test can
** check the page against the JSON.
*/
#ifndef OVL_DIFF_HTML_H
#define OVL_DIFF_HTML_H

#include "compare/diff.h"

#include <stdio.h>

/* Rows per table of the section. */
#define OVL_DIFF_HTML_ROWS 10

/* Writes the section's body; ctx is the ovl_diff. */
void ovl_diff_html_section(FILE *out, const void *ctx);

#endif
