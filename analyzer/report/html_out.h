/*
** Writing pieces of the HTML report (report_html.h): escaped text, and numbers taken from
** the analysis results. Every number is written as
**   <span class="n" data-j="PATH" data-k="KIND" data-v="VALUE">TEXT</span>
** where PATH is where the same value sits in `ovl report --json` (dot-separated keys and
** array indices, "whatif." for `ovl whatif --json` with the page's caps), VALUE is the value
** exactly as the JSON writes it and TEXT its human form (same units as the text report), so a
** test can check the page against the JSON.
*/
#ifndef OVL_HTML_OUT_H
#define OVL_HTML_OUT_H

#include <stdint.h>
#include <stdio.h>

typedef enum ovl_html_kind {
  OVL_HN_NS,     /* a duration, "12.34 ms" */
  OVL_HN_PCT,    /* a ratio, "83.3%" */
  OVL_HN_BYTES,  /* "25.0 MB" */
  OVL_HN_COUNT,  /* a plain integer */
  OVL_HN_MIB     /* a bucket cap in MiB, "25 MiB" */
} ovl_html_kind;

/* Text with & < > " ' escaped. */
void ovl_html_text(FILE *out, const char *s);
/* An integer value of the JSON at path (printf-style); OVL_NONE is written as null, "n/a". */
void ovl_html_inum(FILE *out, ovl_html_kind kind, int64_t v, const char *path_fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A floating-point value (the JSON's %.9g); NAN is null, "n/a". */
void ovl_html_dnum(FILE *out, ovl_html_kind kind, double v, const char *path_fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same as an SVG <text> at (x, y) with the extra classes cls (may be ""). */
void ovl_html_svg_inum(FILE *out, double x, double y, const char *cls, ovl_html_kind kind, int64_t v,
                       const char *path_fmt, ...) __attribute__((format(printf, 7, 8)));
void ovl_html_svg_dnum(FILE *out, double x, double y, const char *cls, ovl_html_kind kind, double v,
                       const char *path_fmt, ...) __attribute__((format(printf, 7, 8)));
/* The human form alone (axis labels, tooltips), into buf. */
const char *ovl_html_format(ovl_html_kind kind, double v, char *buf, size_t len);

#endif
