/* Dropping the last ProfilerStep as HTA does: see hta_compat.h. */
#include "hta_compat.h"

#include "comm_names.h"

#include <sqlite3.h>
#include <stdio.h>

/* Rows are matched by correlation through the api table; collectives follow their launches. */
static const char drop_sql[] =
  "DELETE FROM api WHERE start >= ?1;"
  "DELETE FROM nvtx WHERE start >= ?1;"
  "DELETE FROM kernels WHERE correlation IS NULL OR correlation NOT IN"
  " (SELECT correlation FROM api WHERE correlation IS NOT NULL);"
  "DELETE FROM memops WHERE correlation IS NULL OR correlation NOT IN"
  " (SELECT correlation FROM api WHERE correlation IS NOT NULL);"
  "DELETE FROM collective_launches WHERE correlation IS NULL OR correlation NOT IN"
  " (SELECT correlation FROM kernels WHERE correlation IS NOT NULL"
  "  UNION SELECT correlation FROM memops WHERE correlation IS NOT NULL);"
  "DELETE FROM collectives WHERE id NOT IN (SELECT collective FROM collective_launches);";

static int db_fail(sqlite3 *db, const char *path, ovl_err *err) {
  return ovl_fail(err, OVL_EINTERNAL, "%s: cannot apply --hta-compat: %s", path,
                  db ? sqlite3_errmsg(db) : "out of memory");
}

/* Runs every statement of `sql` with ?1 bound to cut. */
static int run_all(sqlite3 *db, const char *sql, sqlite3_int64 cut) {
  const char *tail = sql;
  while (tail && *tail) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) return -1;
    if (!st) break;
    if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int64(st, 1, cut);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    if (step != SQLITE_DONE) return -1;
  }
  return 0;
}

/* SQL function is_nccl(name): the importers' own test of an NCCL kernel name. */
static void sql_is_nccl(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const unsigned char *name = sqlite3_value_text(argv[0]);
  sqlite3_result_int(ctx, name ? ovl_is_comm_kernel_name((const char *)name) : 0);
}

static long count_rows(sqlite3 *db, const char *sql, int *fail) {
  sqlite3_stmt *st = NULL;
  long n = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = (long)sqlite3_column_int64(st, 0);
  else *fail = 1;
  sqlite3_finalize(st);
  return n;
}

/* The counts the import reports, taken again from what the file now holds. */
static int recount(sqlite3 *db, ovl_import_stats *stats) {
  int fail = sqlite3_create_function(db, "is_nccl", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_is_nccl, NULL,
                                     NULL) != SQLITE_OK;
  stats->kernels = count_rows(db, "SELECT count(*) FROM kernels", &fail);
  stats->nccl_kernels =
      count_rows(db, "SELECT count(*) FROM kernels JOIN strings ON strings.id = kernels.name WHERE is_nccl(value)",
                 &fail);
  stats->memops = count_rows(db, "SELECT count(*) FROM memops", &fail);
  stats->api = count_rows(db, "SELECT count(*) FROM api", &fail);
  stats->nvtx = count_rows(db, "SELECT count(*) FROM nvtx", &fail);
  stats->collectives = count_rows(db, "SELECT count(*) FROM collectives", &fail);
  return fail ? -1 : 0;
}

int ovl_hta_drop_last_step(const char *path, ovl_import_stats *stats, ovl_err *err) {
  long *dropped = &stats->dropped;
  *dropped = 0;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db,
                         "SELECT count(DISTINCT name), max(max(start), coalesce((SELECT CAST(value AS INTEGER)"
                         " FROM meta WHERE key = '" OVL_HTA_GPU_STEP_META "'), max(start))) FROM nvtx"
                         " WHERE domain IS NULL AND name GLOB 'ProfilerStep#[0-9]*' AND end IS NOT NULL",
                         -1, &st, NULL) != SQLITE_OK ||
      sqlite3_step(st) != SQLITE_ROW) {
    int rc = db_fail(db, path, err);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
  }
  sqlite3_int64 steps = sqlite3_column_int64(st, 0), cut = sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  int rc = OVL_OK;
  if (steps >= 2) {
    int before = sqlite3_total_changes(db);
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK || run_all(db, drop_sql, cut) ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
      rc = db_fail(db, path, err);
      sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    } else {
      *dropped = sqlite3_total_changes(db) - before;
      if (*dropped > 0 && recount(db, stats)) rc = db_fail(db, path, err);
    }
  }
  sqlite3_close(db);
  return rc;
}
