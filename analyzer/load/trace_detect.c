/* Trace format detection: see trace_detect.h. */
#include "trace_detect.h"

#include "json_stream.h"

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

/* *foreign (may be NULL) = 1 when the database reads well but has no trace tables. */
static int detect_sqlite(const char *path, ovl_trace_format *format, int *foreign, ovl_err *err) {
  sqlite3 *db = NULL;
  int rc = OVL_OK;
  if (foreign) *foreign = 0;
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
      if (foreign) *foreign = 1;
      rc = ovl_fail(err, OVL_EUSER, "%s: SQLite database without ovl trace tables (meta, kernels)", path);
    }
    sqlite3_free(msg);
  }
  sqlite3_close(db);
  return rc;
}

const char *ovl_trace_format_name(ovl_trace_format f) {
  switch (f) {
    case OVL_FORMAT_KINETO_JSON: return "Kineto JSON";
    case OVL_FORMAT_NSYS_SQLITE: return "Nsight Systems";
    case OVL_FORMAT_OVL_SQLITE: return "ovl";
  }
  return "?";
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
    case OVL_HEAD_SQLITE: return detect_sqlite(path, format, NULL, err);
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

/* otherData holds time_origin_ns: ovl export's Chrome JSON (export/chrome_sink.c). */
static int other_data_is_ovl_export(ovl_json *j, int *is_export, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(j, &tok, err);
  if (rc || tok != OVL_JSON_OBJECT_BEGIN) return rc;
  while (!(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_KEY) {
    if (strcmp(ovl_json_text(j, NULL), "time_origin_ns") == 0) *is_export = 1;
    rc = ovl_json_skip_value(j, &tok, err);
    if (rc) break;
  }
  return rc;
}

/* 1 when the top-level object has a traceEvents array (and is no ovl export); 0 otherwise. */
static int probe_json(const char *path, char *why, size_t why_len, ovl_err *err) {
  ovl_byte_input *in = NULL;
  ovl_json *j = NULL;
  ovl_err jerr;
  ovl_err_clear(&jerr);
  int rc = ovl_input_open(path, &in, err);
  if (rc) return -1;
  int found = 0, is_export = 0;
  const char *what = "JSON without traceEvents";
  ovl_json_token tok;
  rc = ovl_json_open(in, NULL, &j, &jerr);
  if (!rc) rc = ovl_json_next(j, &tok, &jerr);
  if (!rc && tok != OVL_JSON_OBJECT_BEGIN) what = "JSON that is not an object";
  while (!rc && tok == OVL_JSON_OBJECT_BEGIN && !found && !(rc = ovl_json_next(j, &tok, &jerr)) &&
         tok == OVL_JSON_KEY) {
    const char *key = ovl_json_text(j, NULL);
    if (strcmp(key, "traceEvents") == 0) {
      rc = ovl_json_next(j, &tok, &jerr);
      found = !rc && tok == OVL_JSON_ARRAY_BEGIN;
      if (!found) what = "JSON whose traceEvents is not an array";
      break;
    }
    if (strcmp(key, "otherData") == 0) rc = other_data_is_ovl_export(j, &is_export, &jerr);
    else rc = ovl_json_skip_value(j, &tok, &jerr);
    tok = OVL_JSON_OBJECT_BEGIN;  /* still inside the top-level object */
  }
  if (rc) what = "unreadable as JSON";
  if (found && is_export) what = "ovl export's Chrome JSON", found = 0;
  if (!found && why) snprintf(why, why_len, "%s", what);
  ovl_json_close(j);
  ovl_input_close(in);
  return found;
}

int ovl_probe_trace(const char *path, ovl_trace_format *format, char *why, size_t why_len, ovl_err *err) {
  if (why && why_len) why[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno)), -1;
  unsigned char head[OVL_HEAD_BYTES];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  ovl_err derr;
  ovl_err_clear(&derr);
  switch (n ? ovl_detect_head(head, n) : OVL_HEAD_NONE) {
    case OVL_HEAD_SQLITE: {
      /* A damaged database counts as a trace: it may be one, and is never replaced unasked. */
      int foreign = 0;
      if (detect_sqlite(path, format, &foreign, &derr) != OVL_OK && !foreign) *format = OVL_FORMAT_OVL_SQLITE;
      if (!foreign) return 1;
      if (why) snprintf(why, why_len, "an SQLite database without trace tables");
      return 0;
    }
    case OVL_HEAD_GZIP:
    case OVL_HEAD_JSON: {
      int found = probe_json(path, why, why_len, err);
      if (found == 1) *format = OVL_FORMAT_KINETO_JSON;
      return found;
    }
    case OVL_HEAD_NONE: break;
  }
  if (why) snprintf(why, why_len, "%s", n == 0 ? "an empty file" : ovl_is_nsys_report_name(path)
                                        ? "an Nsight Systems report (export it: nsys export --type sqlite)"
                                        : "neither SQLite nor JSON");
  return 0;
}
