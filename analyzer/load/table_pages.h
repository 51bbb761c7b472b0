/*
** The rows of one SQLite table read straight from its b-tree pages (the file format:
** https://www.sqlite.org/fileformat2.html), in rowid order, as decoded column values: what a
** full scan `SELECT cols FROM table` gives, without SQLite's virtual machine.
**
** Only where that is certainly the same rows: a scan holds a read transaction on the
** connection it is given for as long as it is open (no writer can change a page under it),
** and ovl_tp_open says "not here" (the caller reads through SQL instead) before the first row
** when the file's content is not the main file alone (WAL mode with frames in the -wal file),
** its text is not UTF-8, the table is not a rowid table, a column's position or affinity is
** not what the caller expects (from PRAGMA table_xinfo: generated columns, a REAL or NUMERIC
** column), a default value it cannot decode, or OVL_DIRECT_READ=0 in the environment.
**
** Hostile files: page numbers are checked against the page count, each page is read at most
** once per scan (a cyclic or shared child or overflow chain is a fault), the descent is at most
** OVL_TP_MAX_DEPTH deep, cell offsets and payload sizes are checked against the page. A fault
** is an error "<path>: corrupt or truncated trace database (<problem>)", as SQLite's own
** corrupt-page errors are reported by load/trace_reader.c.
*/
#ifndef OVL_TABLE_PAGES_H
#define OVL_TABLE_PAGES_H

#include "base/status.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define OVL_TP_MAX_COLS 16
#define OVL_TP_MAX_DEPTH 20   /* SQLite's own limit on a b-tree's depth */

/* One column's value as SQLite's sqlite3_value_type would report it (SQLITE_INTEGER,
** SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL). Text and blob bytes are not
** NUL-terminated and live until the next ovl_tp_next. */
typedef struct ovl_tp_value {
  int type;
  int64_t i;
  double r;
  const unsigned char *p;
  size_t n;
} ovl_tp_value;

/* What the caller will do with a column: read it as an integer (the column must have INTEGER
** affinity) or as text (TEXT affinity). */
enum { OVL_TP_INT = 1, OVL_TP_TEXT = 2 };

typedef struct ovl_tp_scan ovl_tp_scan;

/* 0 when OVL_DIRECT_READ=0 forces the SQL path, else 1. */
int ovl_tp_enabled(void);

/* Scans opened on pages since the process started (tests: the direct path was taken). */
long long ovl_tp_scans(void);

/* Opens a scan of the rows of `table` with rowid in [lo, hi], columns `cols[0..ncols)` (names;
** NULL: a column not read, its value never written) read as `kinds[i]`, on connection db (of the trace `path`, for messages). OVL_OK with *out
** set: the rows are read from the pages; OVL_OK with *out NULL: not here (read through SQL;
** nothing was started); else an error. */
int ovl_tp_open(sqlite3 *db, const char *path, const char *table, const char *const *cols, const int *kinds,
                int ncols, int64_t lo, int64_t hi, ovl_tp_scan **out, ovl_err *err);
/* The next row's values into v[0..ncols): 1, or 0 at the end, or -status with *err set (a
** structural fault; the scan then stays at its end). */
int ovl_tp_next(ovl_tp_scan *s, ovl_tp_value *v, ovl_err *err);
/* Ends the scan and the read transaction it began. NULL is fine. */
void ovl_tp_close(ovl_tp_scan *s);

#endif
