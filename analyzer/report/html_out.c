/* Pieces of the HTML report: see html_out.h. */
#include "html_out.h"

#include "base/none.h"
#include "base/units.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>

void ovl_html_text(FILE *out, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", out); break;
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break;
      case '"': fputs("&quot;", out); break;
      case '\'': fputs("&#39;", out); break;
      default: fputc(*s, out);
    }
  }
}

static const char *const kind_names[] = {"ns", "pct", "bytes", "count", "mib"};

const char *ovl_html_format(ovl_html_kind kind, double v, char *buf, size_t len) {
  if (isnan(v)) {
    snprintf(buf, len, "n/a");
    return buf;
  }
  switch (kind) {
    case OVL_HN_NS: return ovl_format_ns(v, buf, len);
    case OVL_HN_PCT: snprintf(buf, len, "%.1f%%", v * 100.0); break;
    case OVL_HN_BYTES: return ovl_format_bytes(v, buf, len);
    case OVL_HN_COUNT: snprintf(buf, len, "%.0f", v); break;
    case OVL_HN_MIB: snprintf(buf, len, "%g MiB", v); break;
  }
  return buf;
}

/* Opens <tag class="n" data-j=.. data-k=.. data-v=" (the caller writes the value on). */
static void open_num(FILE *out, const char *tag_and_attrs, const char *cls, ovl_html_kind kind, const char *fmt,
                     va_list ap) {
  char path[256];
  vsnprintf(path, sizeof path, fmt, ap);
  fprintf(out, "<%s class=\"n%s%s\" data-j=\"", tag_and_attrs, *cls ? " " : "", cls);
  ovl_html_text(out, path);
  fprintf(out, "\" data-k=\"%s\" data-v=\"", kind_names[kind]);
}

static void int_rest(FILE *out, const char *tag, ovl_html_kind kind, int64_t v) {
  char buf[48];
  if (v == OVL_NONE) fprintf(out, "null\">n/a</%s>", tag);
  else fprintf(out, "%" PRId64 "\">%s</%s>", v, ovl_html_format(kind, (double)v, buf, sizeof buf), tag);
}

static void double_rest(FILE *out, const char *tag, ovl_html_kind kind, double v) {
  char buf[48];
  if (!isfinite(v)) fprintf(out, "null\">n/a</%s>", tag);
  else fprintf(out, "%.9g\">%s</%s>", v, ovl_html_format(kind, v, buf, sizeof buf), tag);
}

void ovl_html_inum(FILE *out, ovl_html_kind kind, int64_t v, const char *path_fmt, ...) {
  va_list ap;
  va_start(ap, path_fmt);
  open_num(out, "span", "", kind, path_fmt, ap);
  va_end(ap);
  int_rest(out, "span", kind, v);
}

void ovl_html_dnum(FILE *out, ovl_html_kind kind, double v, const char *path_fmt, ...) {
  va_list ap;
  va_start(ap, path_fmt);
  open_num(out, "span", "", kind, path_fmt, ap);
  va_end(ap);
  double_rest(out, "span", kind, v);
}

/* The opening of an SVG <text> at (x, y), without its '<'. */
static void svg_text_tag(char tag[64], double x, double y) {
  snprintf(tag, 64, "text x=\"%.1f\" y=\"%.1f\"", x, y);
}

void ovl_html_svg_inum(FILE *out, double x, double y, const char *cls, ovl_html_kind kind, int64_t v,
                       const char *path_fmt, ...) {
  char tag[64];
  svg_text_tag(tag, x, y);
  va_list ap;
  va_start(ap, path_fmt);
  open_num(out, tag, cls, kind, path_fmt, ap);
  va_end(ap);
  int_rest(out, "text", kind, v);
}

void ovl_html_svg_dnum(FILE *out, double x, double y, const char *cls, ovl_html_kind kind, double v,
                       const char *path_fmt, ...) {
  char tag[64];
  svg_text_tag(tag, x, y);
  va_list ap;
  va_start(ap, path_fmt);
  open_num(out, tag, cls, kind, path_fmt, ap);
  va_end(ap);
  double_rest(out, "text", kind, v);
}
