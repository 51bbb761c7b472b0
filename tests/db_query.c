/* One-value SQL queries for tests: see db_query.h. */
#include "db_query.h"

#include <stdio.h>
#include <stdlib.h>

int dbq_exec(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  int rc = sqlite3_open(path, &db);
  char *msg = NULL;
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK) fprintf(stderr, "%s: %s: %s\n", path, sql, msg ? msg : sqlite3_errmsg(db));
  sqlite3_free(msg);
  sqlite3_close(db);
  return rc;
}

sqlite3 *dbq_open(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  return db;
}

static sqlite3_stmt *first_row(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "bad query %s: %s\n", sql, sqlite3_errmsg(db));
    exit(2);
  }
  if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL) {
    sqlite3_finalize(st);
    return NULL;
  }
  return st;
}

int64_t dbq_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = first_row(db, sql);
  int64_t v = st ? sqlite3_column_int64(st, 0) : -999;
  sqlite3_finalize(st);
  return v;
}

const char *dbq_text(sqlite3 *db, const char *sql) {
  static char buf[1024];
  sqlite3_stmt *st = first_row(db, sql);
  snprintf(buf, sizeof buf, "%s", st ? (const char *)sqlite3_column_text(st, 0) : "(none)");
  sqlite3_finalize(st);
  return buf;
}
