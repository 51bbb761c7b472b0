/*
** Bad input to `ovl report`: every case must end with exit status 1 and exactly one line
** on stderr, "ovl: <file>: <problem>" naming the file (never a crash, never a hang).
** Bad rows inside a good file are warnings: exit 0 and a report.
** usage: test_bad_input OVL_BINARY
*/
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ovl_bin;

/* Runs `ovl report [extra] target` and checks exit 1 with one "ovl: <subject>: " line holding `problem`. */
static void expect_error(const char *extra, const char *target, const char *subject, const char *problem) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' report %s '%s'", ovl_bin, extra, target);
  cmd_result r = run_cmd(cmd);
  char prefix[1024];
  snprintf(prefix, sizeof prefix, "ovl: %s: ", subject);
  CHECK_I64(r.status, 1);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strncmp(r.err, prefix, strlen(prefix)) == 0);
  CHECK(strstr(r.err, problem) != NULL);
  CHECK(r.out[0] == 0);
  if (r.status != 1 || !strstr(r.err, problem)) fprintf(stderr, "  case %s: got status %d, stderr: %s\n", target, r.status, r.err);
  cmd_free(&r);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
}

/* A good trace with enough rows to span many pages. */
static void write_good_trace(const char *path, int kernels) {
  tb b;
  tb_open(&b, path);
  for (int i = 0; i < kernels; i++) {
    tb_kernel(&b, i % 10 ? "gemm" : "ncclDevKernel_AllReduce_Sum_f32_RING_LL", i * 100, i * 100 + 80, 0, i % 10 ? 1 : 2);
    tb_api(&b, i * 100 - 10, i * 100 - 5, i + 1);
  }
  tb_close(&b);
}

static void sqlite_exec_file(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  remove(path);
  if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot build %s: %s\n", path, db ? sqlite3_errmsg(db) : "?");
    exit(2);
  }
  sqlite3_close(db);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OVL_BINARY\n", argv[0]);
    return 2;
  }
  ovl_bin = argv[1];

  const char *missing = tb_temp_path("does-not-exist.sqlite");
  expect_error("", missing, missing, "No such file");

  const char *text = tb_temp_path("notes.txt");
  write_text(text, "these are not the traces you are looking for\n");
  expect_error("", text, text, "not a trace");

  const char *empty_file = tb_temp_path("empty.sqlite");
  write_text(empty_file, "");
  expect_error("", empty_file, empty_file, "empty file");

  const char *foreign = tb_temp_path("foreign.sqlite");
  sqlite_exec_file(foreign, "CREATE TABLE customers(id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'x');");
  expect_error("", foreign, foreign, "without ovl trace tables");

  const char *newer = tb_temp_path("newer.sqlite");
  write_good_trace(newer, 10);
  {
    sqlite3 *db = NULL;
    sqlite3_open(newer, &db);
    sqlite3_exec(db, "UPDATE meta SET value = '2' WHERE key = 'schema_version'", NULL, NULL, NULL);
    sqlite3_close(db);
  }
  expect_error("", newer, newer, "schema_version 2 is newer");

  const char *no_version = tb_temp_path("noversion.sqlite");
  write_good_trace(no_version, 10);
  {
    sqlite3 *db = NULL;
    sqlite3_open(no_version, &db);
    sqlite3_exec(db, "DELETE FROM meta WHERE key = 'schema_version'", NULL, NULL, NULL);
    sqlite3_close(db);
  }
  expect_error("", no_version, no_version, "no schema_version");

  /* Columns schema/ovl.sql marks optional may be absent (older traces); required ones not. */
  const char *no_optional = tb_temp_path("nooptional.sqlite");
  write_good_trace(no_optional, 10);
  {
    sqlite3 *db = NULL;
    sqlite3_open(no_optional, &db);
    CHECK_I64(sqlite3_exec(db,
                           "ALTER TABLE kernels DROP COLUMN grid_x; ALTER TABLE kernels DROP COLUMN grid_y;"
                           "ALTER TABLE kernels DROP COLUMN grid_z; ALTER TABLE kernels DROP COLUMN block_x;"
                           "ALTER TABLE kernels DROP COLUMN block_y; ALTER TABLE kernels DROP COLUMN block_z;"
                           "ALTER TABLE collectives DROP COLUMN group_id;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
  }
  {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' report '%s'", ovl_bin, no_optional);
    cmd_result r = run_cmd(cmd);
    CHECK_I64(r.status, 0);
    if (r.status) fprintf(stderr, "  trace without optional columns: %s", r.err);
    cmd_free(&r);
  }
  const char *no_device = tb_temp_path("nodevice.sqlite");
  write_good_trace(no_device, 10);
  {
    sqlite3 *db = NULL;
    sqlite3_open(no_device, &db);
    CHECK_I64(sqlite3_exec(db, "ALTER TABLE memops DROP COLUMN device", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
  }
  expect_error("", no_device, no_device, "table memops has no column 'device'");

  const char *empty_trace = tb_temp_path("emptytrace.sqlite");
  tb b;
  tb_open(&b, empty_trace);
  tb_close(&b);
  expect_error("", empty_trace, empty_trace, "no GPU activity");

  const char *truncated = tb_temp_path("truncated.sqlite");
  write_good_trace(truncated, 20000);
  struct stat sb;
  stat(truncated, &sb);
  CHECK(truncate(truncated, sb.st_size / 2) == 0);
  expect_error("", truncated, truncated, "corrupt or truncated");

  /* Garbage over a page of the kernels table (which every analysis reads): its b-tree
  ** page type byte becomes invalid. */
  const char *corrupt = tb_temp_path("corrupt.sqlite");
  write_good_trace(corrupt, 20000);
  {
    long page = 0, page_size = 4096;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    sqlite3_open(corrupt, &db);
    if (sqlite3_prepare_v2(db, "SELECT pageno FROM dbstat WHERE name = 'kernels' AND pagetype = 'leaf' "
                               "ORDER BY pageno LIMIT 1 OFFSET 40", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      page = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      page_size = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    CHECK(page > 1);  /* dbstat is compiled into Debian's SQLite */
    FILE *f = fopen(corrupt, "r+b");
    char junk[65536];
    memset(junk, 0xa5, sizeof junk);
    fseek(f, (page - 1) * page_size, SEEK_SET);
    fwrite(junk, 1, (size_t)page_size, f);
    fclose(f);
  }
  expect_error("", corrupt, corrupt, "corrupt");

  /* Garbage over the header: not recognisable as SQLite any more. */
  const char *bad_header = tb_temp_path("badheader.sqlite");
  write_good_trace(bad_header, 100);
  {
    FILE *f = fopen(bad_header, "r+b");
    fwrite("XXXXXXXXXXXXXXXXXXXXXXXX", 1, 24, f);
    fclose(f);
  }
  expect_error("", bad_header, bad_header, "not a trace");

  /* A directory without traces. */
  const char *dir = tb_temp_path("emptydir");
  mkdir(dir, 0700);
  expect_error("", dir, dir, "no trace files");

  /* Bad flags are usage errors naming the command. */
  const char *good = tb_temp_path("good.sqlite");
  write_good_trace(good, 50);
  expect_error("--comm-pattern '('", good, "--comm-pattern '('", "");
  expect_error("--no-such-flag", good, "report", "unknown");
  expect_error("--top 0", good, "report", "--top '0'");

  /* Bad rows inside a good file: warnings, the report still comes out. */
  const char *badrows = tb_temp_path("badrows.sqlite");
  write_good_trace(badrows, 50);
  {
    sqlite3 *db = NULL;
    sqlite3_open(badrows, &db);
    sqlite3_exec(db,
                 "INSERT INTO kernels(start, end, device, stream) VALUES (NULL, 5, 0, 1);"
                 "INSERT INTO kernels(start, end, device, stream) VALUES (500, 400, 0, 1);"
                 "INSERT INTO nvtx(start, end, tid, domain, name) VALUES (10, 5, 1, 'ovl', 'step');",
                 NULL, NULL, NULL);
    sqlite3_close(db);
  }
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' report '%s'", ovl_bin, badrows);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.err, "warning: skipped 2 kernels rows") != NULL);
  CHECK(strstr(r.err, "warning: skipped 1 nvtx row") != NULL);
  CHECK(strstr(r.out, "50 kernels") != NULL);
  cmd_free(&r);

  /* Several files with one bad among them: the bad one is named. */
  snprintf(cmd, sizeof cmd, "'%s' report '%s' '%s'", ovl_bin, good, text);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, text) != NULL);
  cmd_free(&r);

  /* Unknown command and --help/--version work. */
  snprintf(cmd, sizeof cmd, "'%s' frobnicate", ovl_bin);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK_I64(count_lines(r.err), 1);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' report --help", ovl_bin);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "usage: ovl report") != NULL);
  cmd_free(&r);
  /* Every analysing verb reads every format: its help says so (not "an ovl SQLite trace"). */
  const char *analysing[] = {"report", "export", "fit", "whatif"};
  for (size_t i = 0; i < sizeof analysing / sizeof *analysing; i++) {
    snprintf(cmd, sizeof cmd, "'%s' %s --help", ovl_bin, analysing[i]);
    r = run_cmd(cmd);
    CHECK_I64(r.status, 0);
    CHECK(strstr(r.out, "PyTorch profiler (Kineto)") != NULL);
    CHECK(strstr(r.out, "Nsight") != NULL);
    CHECK(strstr(r.out, "TRACE: an ovl SQLite trace, or") == NULL);
    cmd_free(&r);
  }

  const char *files[] = {text, empty_file, foreign, newer, no_version, empty_trace, truncated, corrupt, bad_header,
                         good, badrows};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) remove(files[i]);
  rmdir(dir);
  return check_summary();
}
