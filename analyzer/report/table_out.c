/* Tables as text, CSV or JSON: see table_out.h. */
#include "table_out.h"

#include "base/none.h"
#include "base/units.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void ovl_csv_field(FILE *out, const char *s) {
  if (!s) return;
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (const char *p = s; *p; p++) {
    if (*p == '"') fputc('"', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

void ovl_table_begin(ovl_table *t, FILE *out, ovl_table_format format, ovl_json *j, const char *key,
                     const char *title, const ovl_col *cols, size_t ncols) {
  t->out = out;
  t->format = format;
  t->json = j;
  t->cols = cols;
  t->ncols = ncols;
  t->rows = 0;
  if (format == OVL_TABLE_JSON) {
    ovl_json_array_begin(j, key);
  } else if (format == OVL_TABLE_CSV) {
    for (size_t c = 0; c < ncols; c++) {
      if (c) fputc(',', out);
      ovl_csv_field(out, cols[c].key);
    }
    fputc('\n', out);
  } else {
    fprintf(out, "%s\n", title);
    for (size_t c = 0; c < ncols; c++) {
      if (cols[c].width == 0) fprintf(out, "  %s", cols[c].head);
      else if (cols[c].kind == OVL_COL_TEXT) fprintf(out, "  %-*s", cols[c].width, cols[c].head);
      else fprintf(out, "  %*s", cols[c].width, cols[c].head);
    }
    fputc('\n', out);
  }
}

/* The human form of a numeric cell, into buf. */
static const char *human(const ovl_col *col, const ovl_cell *cell, char *buf, size_t len) {
  switch (col->kind) {
    case OVL_COL_INT:
      if (cell->i == OVL_NONE) snprintf(buf, len, "-");
      else snprintf(buf, len, "%" PRId64, cell->i);
      return buf;
    case OVL_COL_NS:
      if (cell->i == OVL_NONE) snprintf(buf, len, "-");
      else ovl_format_ns((double)cell->i, buf, len);
      return buf;
    case OVL_COL_BYTES:
      if (cell->i == OVL_NONE) snprintf(buf, len, "-");
      else ovl_format_bytes((double)cell->i, buf, len);
      return buf;
    case OVL_COL_RATIO:
      if (isnan(cell->d)) snprintf(buf, len, "-");
      else snprintf(buf, len, "%.1f%%", 100.0 * cell->d);
      return buf;
    case OVL_COL_REAL:
      if (isnan(cell->d)) snprintf(buf, len, "-");
      else snprintf(buf, len, "%.2f", cell->d);
      return buf;
    case OVL_COL_TEXT: break;
  }
  return cell->s ? cell->s : "";
}

static void csv_cell(FILE *out, const ovl_col *col, const ovl_cell *cell) {
  switch (col->kind) {
    case OVL_COL_TEXT: ovl_csv_field(out, cell->s); break;
    case OVL_COL_INT:
    case OVL_COL_NS:
    case OVL_COL_BYTES:
      if (cell->i != OVL_NONE) fprintf(out, "%" PRId64, cell->i);
      break;
    case OVL_COL_RATIO:
    case OVL_COL_REAL:
      if (!isnan(cell->d) && !isinf(cell->d)) fprintf(out, "%.9g", cell->d);
      break;
  }
}

static void json_cell(ovl_json *j, const ovl_col *col, const ovl_cell *cell) {
  switch (col->kind) {
    case OVL_COL_TEXT:
      if (cell->s) ovl_json_string(j, col->key, cell->s);
      else ovl_json_null(j, col->key);
      break;
    case OVL_COL_INT:
    case OVL_COL_NS:
    case OVL_COL_BYTES:
      if (cell->i == OVL_NONE) ovl_json_null(j, col->key);
      else ovl_json_int(j, col->key, cell->i);
      break;
    case OVL_COL_RATIO:
    case OVL_COL_REAL: ovl_json_double(j, col->key, cell->d); break;
  }
}

/* The last column of a text row: long names (C++ kernel signatures run to thousands of
** characters) are cut on a character boundary, "..." appended; CSV and JSON keep them whole. */
static void text_tail(FILE *out, const char *s) {
  size_t len = strlen(s);
  if (len <= OVL_TABLE_TEXT_TAIL) {
    fprintf(out, "  %s", s);
    return;
  }
  size_t cut = OVL_TABLE_TEXT_TAIL;
  while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;  /* not inside a UTF-8 sequence */
  fprintf(out, "  %.*s...", (int)cut, s);
}

void ovl_table_row(ovl_table *t, const ovl_cell *cells) {
  t->rows++;
  if (t->format == OVL_TABLE_JSON) {
    ovl_json_object_begin(t->json, NULL);
    for (size_t c = 0; c < t->ncols; c++) json_cell(t->json, &t->cols[c], &cells[c]);
    ovl_json_object_end(t->json);
    return;
  }
  if (t->format == OVL_TABLE_CSV) {
    for (size_t c = 0; c < t->ncols; c++) {
      if (c) fputc(',', t->out);
      csv_cell(t->out, &t->cols[c], &cells[c]);
    }
    fputc('\n', t->out);
    return;
  }
  for (size_t c = 0; c < t->ncols; c++) {
    char buf[64];
    const ovl_col *col = &t->cols[c];
    const char *s = human(col, &cells[c], buf, sizeof buf);
    if (col->width == 0) text_tail(t->out, s);
    else if (col->kind == OVL_COL_TEXT) fprintf(t->out, "  %-*.*s", col->width, col->width, s);
    else fprintf(t->out, "  %*s", col->width, s);
  }
  fputc('\n', t->out);
}

void ovl_table_end(ovl_table *t, size_t omitted) {
  if (t->format == OVL_TABLE_JSON) {
    ovl_json_array_end(t->json);
  } else if (t->format == OVL_TABLE_TEXT) {
    if (t->rows == 0) fputs("  (none)\n", t->out);
    if (omitted) fprintf(t->out, "  ... %zu more (use --all)\n", omitted);
  }
}
