/*
** The scan VFS (analyzer/load/scan_vfs.h): a scan through it gives the same rows as the
** default VFS with far fewer reads of the file (windows), and a window never outlives the
** read transaction that read it: rows another connection commits between two queries are
** seen by the next query, in rollback-journal and in WAL mode.
*/
#include "check.h"
#include "load/scan_vfs.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static sqlite3 *open_db(const char *path, int flags, const char *vfs) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, flags, vfs) != SQLITE_OK) {
    fprintf(stderr, "cannot open %s: %s\n", path, db ? sqlite3_errmsg(db) : "no memory");
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

static long long one_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  else
    fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return v;
}

/* Two tables written in turns, so their pages interleave in the file as a trace's do. */
static void fill(sqlite3 *db, int rows) {
  sqlite3_exec(db, "CREATE TABLE a(x INTEGER, t TEXT); CREATE TABLE b(y INTEGER, t TEXT);", NULL, NULL, NULL);
  sqlite3_stmt *ia = NULL, *ib = NULL;
  sqlite3_prepare_v2(db, "INSERT INTO a VALUES (?, printf('%040d', ?1))", -1, &ia, NULL);
  sqlite3_prepare_v2(db, "INSERT INTO b VALUES (?, printf('%060d', ?1))", -1, &ib, NULL);
  sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  for (int i = 0; i < rows; i++) {
    sqlite3_bind_int(ia, 1, i);
    sqlite3_step(ia);
    sqlite3_reset(ia);
    sqlite3_bind_int(ib, 1, 3 * i);
    sqlite3_step(ib);
    sqlite3_reset(ib);
  }
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_finalize(ia);
  sqlite3_finalize(ib);
}

static const char *sums = "SELECT (SELECT sum(x) + sum(length(t)) FROM a) * 7 + (SELECT sum(y) FROM b)";

static void same_rows_fewer_reads(void) {
  const char *path = tb_temp_path("scan-vfs.sqlite");
  remove(path);
  sqlite3 *w = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (!w) return;
  fill(w, 200000);
  long long pages = one_int(w, "PRAGMA page_count");
  sqlite3_close(w);
  CHECK(ovl_scan_vfs_name() != NULL);
  sqlite3 *plain = open_db(path, SQLITE_OPEN_READONLY, NULL);
  sqlite3 *scan = open_db(path, SQLITE_OPEN_READONLY, ovl_scan_vfs_name());
  if (!plain || !scan) return;
  long long served0, windows0, served1, windows1;
  ovl_scan_vfs_counts(&served0, &windows0);
  long long expected = one_int(plain, sums);
  CHECK(expected > 0);
  CHECK(one_int(scan, sums) == expected);
  ovl_scan_vfs_counts(&served1, &windows1);
  /* Every page was read once; through windows of 64 pages, far fewer reads went to the file. */
  long long window_pages = OVL_SCAN_VFS_WINDOW / one_int(scan, "PRAGMA page_size");
  printf("%lld pages: %lld served from %lld windows\n", pages, served1 - served0, windows1 - windows0);
  CHECK(served1 - served0 >= pages / 2);
  CHECK(windows1 - windows0 > 0);
  CHECK((windows1 - windows0) * window_pages / 8 < pages);
  sqlite3_close(plain);
  sqlite3_close(scan);
}

/* A writer commits between the reader's queries: each query sees every row committed before
** it started, never a window from an earlier transaction. */
static void sees_new_commits(const char *journal) {
  char tag[64];
  snprintf(tag, sizeof tag, "scan-vfs-%s.sqlite", journal);
  const char *path = tb_temp_path(tag);
  remove(path);
  sqlite3 *w = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (!w) return;
  char sql[128];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s", journal);
  sqlite3_exec(w, sql, NULL, NULL, NULL);
  fill(w, 2000);  /* smaller than a window: a stale one would hold page 1 and its change counter */
  sqlite3 *r = open_db(path, SQLITE_OPEN_READONLY, ovl_scan_vfs_name());
  if (!r) return;
  long long before = one_int(r, "SELECT count(*) FROM a WHERE x >= 0");
  CHECK(before == 2000);
  int mismatches = 0;
  for (int round = 0; round < 20; round++) {
    /* Updates rewrite pages in place (rollback journal) or in the log (WAL). */
    snprintf(sql, sizeof sql, "UPDATE a SET x = x + 1 WHERE x %% 20 = %d; INSERT INTO a VALUES (-1, 'new');",
             round);
    sqlite3_exec(w, sql, NULL, NULL, NULL);
    if (one_int(r, "SELECT sum(x) FROM a") != one_int(w, "SELECT sum(x) FROM a")) mismatches++;
    if (one_int(r, "SELECT count(*) FROM a") != 2000 + round + 1) mismatches++;
  }
  CHECK_I64(mismatches, 0);
  sqlite3_close(r);
  sqlite3_close(w);
}

int main(void) {
  same_rows_fewer_reads();
  sees_new_commits("delete");
  sees_new_commits("wal");
  return check_summary();
}
