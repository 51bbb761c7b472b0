/*
** One table, three forms: aligned text for people, CSV (RFC 4180 but with \n line ends: a
** header row, fields with a comma, quote or line break quoted, quotes doubled) and JSON (an
** array of objects keyed like the CSV header) for scripts. A table is described once, by its
** columns; each row is handed over as cells, so the three forms cannot disagree.
**
** Text: numbers right-aligned in their column's width, in human units (ns -> "12.34 ms");
** a text column of width 0 takes the rest of the line (put it last), cut after
** OVL_TABLE_TEXT_TAIL characters. CSV and JSON: integers
** and ns as plain integers, ratios and rates as %.9g, unknown values empty (CSV) or null (JSON).
*/
#ifndef OVL_TABLE_OUT_H
#define OVL_TABLE_OUT_H

#include "base/json_out.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Text: characters of the last column shown before "...". */
#define OVL_TABLE_TEXT_TAIL 100

typedef enum ovl_table_format { OVL_TABLE_TEXT, OVL_TABLE_CSV, OVL_TABLE_JSON } ovl_table_format;

typedef enum ovl_col_kind {
  OVL_COL_TEXT,   /* cell.s */
  OVL_COL_INT,    /* cell.i; OVL_NONE unknown */
  OVL_COL_NS,     /* cell.i, a duration in ns; OVL_NONE unknown */
  OVL_COL_BYTES,  /* cell.i; OVL_NONE unknown */
  OVL_COL_RATIO,  /* cell.d in [0,1], shown as a percentage; NAN unknown */
  OVL_COL_REAL    /* cell.d (e.g. GB/s); NAN unknown */
} ovl_col_kind;

typedef struct ovl_col {
  const char *key;     /* CSV header and JSON key: lower_case, units in the name (total_ns) */
  const char *head;    /* text heading */
  ovl_col_kind kind;
  int width;           /* text width; 0: the rest of the line (text columns only) */
} ovl_col;

typedef struct ovl_cell {
  int64_t i;
  double d;
  const char *s;
} ovl_cell;

typedef struct ovl_table {
  FILE *out;
  ovl_table_format format;
  ovl_json *json;
  const ovl_col *cols;
  size_t ncols;
  size_t rows;
} ovl_table;

/* Starts table `key` (JSON: an array of that key in the open object j; CSV: the header row;
** text: the title and the headings). */
void ovl_table_begin(ovl_table *t, FILE *out, ovl_table_format format, ovl_json *j, const char *key,
                     const char *title, const ovl_col *cols, size_t ncols);
/* One row: cells[i] for cols[i]. */
void ovl_table_row(ovl_table *t, const ovl_cell *cells);
/* Ends the table; text mentions `omitted` rows left out ("... 12 more (use --all)"). */
void ovl_table_end(ovl_table *t, size_t omitted);

/* A CSV field (quoted when it needs to be). */
void ovl_csv_field(FILE *out, const char *s);

#endif
