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

/* A number to show: an integer (OVL_NONE = none) or a double (not finite = none). */
typedef struct num_value {
  int is_int;
  int64_t i;
  double d;
} num_value;

/* Writes <open_tag class="n .." data-j=path data-k=kind data-v=value>shown</close_tag>. */
static void write_num(FILE *out, const char *open_tag, const char *close_tag, const char *cls, ovl_html_kind kind,
                      num_value v, const char *path_fmt, va_list ap) {
  char path[256], buf[48];
  vsnprintf(path, sizeof path, path_fmt, ap);
  fprintf(out, "<%s class=\"n%s%s\" data-j=\"", open_tag, *cls ? " " : "", cls);
  ovl_html_text(out, path);
  fprintf(out, "\" data-k=\"%s\" data-v=\"", kind_names[kind]);
  if (v.is_int ? v.i == OVL_NONE : !isfinite(v.d)) fprintf(out, "null\">n/a</%s>", close_tag);
  else if (v.is_int) fprintf(out, "%" PRId64 "\">%s</%s>", v.i, ovl_html_format(kind, (double)v.i, buf, sizeof buf), close_tag);
  else fprintf(out, "%.9g\">%s</%s>", v.d, ovl_html_format(kind, v.d, buf, sizeof buf), close_tag);
}

void ovl_html_inum(FILE *out, ovl_html_kind kind, int64_t v, const char *path_fmt, ...) {
  va_list ap;
  va_start(ap, path_fmt);
  write_num(out, "span", "span", "", kind, (num_value){1, v, 0}, path_fmt, ap);
  va_end(ap);
}

void ovl_html_dnum(FILE *out, ovl_html_kind kind, double v, const char *path_fmt, ...) {
  va_list ap;
  va_start(ap, path_fmt);
  write_num(out, "span", "span", "", kind, (num_value){0, 0, v}, path_fmt, ap);
  va_end(ap);
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
  write_num(out, tag, "text", cls, kind, (num_value){1, v, 0}, path_fmt, ap);
  va_end(ap);
}

void ovl_html_svg_dnum(FILE *out, double x, double y, const char *cls, ovl_html_kind kind, double v,
                       const char *path_fmt, ...) {
  char tag[64];
  svg_text_tag(tag, x, y);
  va_list ap;
  va_start(ap, path_fmt);
  write_num(out, tag, "text", cls, kind, (num_value){0, 0, v}, path_fmt, ap);
  va_end(ap);
}
