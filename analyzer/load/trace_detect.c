/* Trace format detection: see trace_detect.h. */
#include "trace_detect.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int table_exists(sqlite3 *db, const char *name) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL) ==
      SQLITE_OK) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return found;
}

static int detect_sqlite(const char *path, ovl_trace_format *format, ovl_err *err) {
  sqlite3 *db = NULL;
  int rc = OVL_OK;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    rc = ovl_fail(err, OVL_EUSER, "%s: cannot open SQLite database: %s", path,
                  db ? sqlite3_errmsg(db) : "out of memory");
  } else {
    /* Reading the schema also validates the header and first page. */
    char *msg = NULL;
    if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, &msg) != SQLITE_OK) {
      rc = ovl_fail(err, OVL_EUSER, "%s: corrupt or truncated SQLite database (%s)", path,
                    msg ? msg : "unreadable");
    } else if (table_exists(db, "meta") && table_exists(db, "kernels")) {
      *format = OVL_FORMAT_OVL_SQLITE;
    } else if (table_exists(db, "CUPTI_ACTIVITY_KIND_KERNEL") || table_exists(db, "TARGET_INFO_GPU")) {
      *format = OVL_FORMAT_NSYS_SQLITE;
    } else {
      rc = ovl_fail(err, OVL_EUSER, "%s: SQLite database without ovl trace tables (meta, kernels)", path);
    }
    sqlite3_free(msg);
  }
  sqlite3_close(db);
  return rc;
}

ovl_head_kind ovl_detect_head(const unsigned char *head, size_t n) {
  if (n >= 16 && memcmp(head, "SQLite format 3", 16) == 0) return OVL_HEAD_SQLITE;
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return OVL_HEAD_GZIP;
  size_t i = n >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;  /* a UTF-8 byte order mark */
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
  return i < n && head[i] == '{' ? OVL_HEAD_JSON : OVL_HEAD_NONE;
}

int ovl_detect_format(const char *path, ovl_trace_format *format, ovl_err *err) {
  struct stat sb;
  if (stat(path, &sb) != 0) return ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno));
  if (S_ISDIR(sb.st_mode)) return ovl_fail(err, OVL_EUSER, "%s: is a directory", path);
  FILE *f = fopen(path, "rb");
  if (!f) return ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno));
  unsigned char head[OVL_HEAD_BYTES];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  if (n == 0) return ovl_fail(err, OVL_EUSER, "%s: empty file", path);
  switch (ovl_detect_head(head, n)) {
    case OVL_HEAD_SQLITE: return detect_sqlite(path, format, err);
    case OVL_HEAD_GZIP:
    case OVL_HEAD_JSON: *format = OVL_FORMAT_KINETO_JSON; return OVL_OK;
    case OVL_HEAD_NONE: break;
  }
  if (ovl_is_nsys_report_name(path))
    return ovl_fail(err, OVL_EUSER, "%s: an Nsight Systems report, which ovl does not read: export it with `nsys export "
                                    "--type sqlite %s` and give ovl the .sqlite file", path, path);
  return ovl_fail(err, OVL_EUSER, "%s: not a trace (neither an ovl/Nsight SQLite database nor Kineto JSON)", path);
}

int ovl_is_nsys_report_name(const char *path) {
  static const char *const suffixes[] = {".nsys-rep", ".qdrep"};
  size_t n = strlen(path);
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    size_t m = strlen(suffixes[i]);
    if (n >= m && strcmp(path + n - m, suffixes[i]) == 0) return 1;
  }
  return 0;
}
