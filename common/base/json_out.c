/* Streaming JSON writer: see json_out.h. */
#include "json_out.h"

#include "text_clean.h"

#include <inttypes.h>
#include <math.h>

void ovl_json_init(ovl_json *j, FILE *out, int pretty) {
  j->out = out;
  j->pretty = pretty;
  j->depth = 0;
  j->has_items[0] = 0;
  j->incomplete = 0;
}

void ovl_json_write_escaped(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      default:
        if (*p < 0x20) {
          fprintf(out, "\\u%04x", *p);
        } else if (*p < 0x80) {
          fputc(*p, out);
        } else {  /* JSON is UTF-8: a malformed byte becomes U+FFFD */
          size_t n = ovl_utf8_len(p);
          if (n) fwrite(p, 1, n, out), p += n - 1;
          else fputs("\\ufffd", out);
        }
    }
  }
  fputc('"', out);
}

/* Comma, newline and indentation before a value, then its key. */
static void prefix(ovl_json *j, const char *key) {
  if (j->has_items[j->depth]) fputc(',', j->out);
  j->has_items[j->depth] = 1;
  if (j->pretty && j->depth > 0) {
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
  }
  if (key) {
    ovl_json_write_escaped(j->out, key);
    fputs(j->pretty ? ": " : ":", j->out);
  }
}

static void open_container(ovl_json *j, const char *key, char c) {
  prefix(j, key);
  fputc(c, j->out);
  if (j->depth + 1 < OVL_JSON_MAX_DEPTH) j->depth++;
  j->has_items[j->depth] = 0;
}

static void close_container(ovl_json *j, char c) {
  int had = j->has_items[j->depth];
  if (j->depth > 0) j->depth--;
  if (j->pretty && had) {
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
  }
  fputc(c, j->out);
}

void ovl_json_object_begin(ovl_json *j, const char *key) { open_container(j, key, '{'); }
void ovl_json_object_end(ovl_json *j) { close_container(j, '}'); }
void ovl_json_array_begin(ovl_json *j, const char *key) { open_container(j, key, '['); }
void ovl_json_array_end(ovl_json *j) { close_container(j, ']'); }

void ovl_json_int(ovl_json *j, const char *key, int64_t v) {
  prefix(j, key);
  fprintf(j->out, "%" PRId64, v);
}

void ovl_json_double(ovl_json *j, const char *key, double v) {
  prefix(j, key);
  if (isfinite(v)) fprintf(j->out, "%.9g", v);
  else fputs("null", j->out);
}

void ovl_json_bool(ovl_json *j, const char *key, int v) {
  prefix(j, key);
  fputs(v ? "true" : "false", j->out);
}

void ovl_json_null(ovl_json *j, const char *key) {
  prefix(j, key);
  fputs("null", j->out);
}

void ovl_json_string(ovl_json *j, const char *key, const char *s) {
  prefix(j, key);
  if (s) ovl_json_write_escaped(j->out, s);
  else fputs("null", j->out);
}

void ovl_json_finish(ovl_json *j) { fputc('\n', j->out); }
