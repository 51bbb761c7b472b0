/*
** The direct reader of table pages (analyzer/load/table_pages.h) against the SQL path:
** - every ovl trace under the folders given (tests/data, ../shared) and traces built here
**   with odd rows (NULLs, text and reals in integer columns, blobs, long text on overflow
**   pages, a column added by ALTER TABLE with a default, launch dimensions, memops) read both
**   ways (OVL_DIRECT_READ=0 forces SQL): the GPU work, the api rows (all columns, launches
**   only, and split across reader threads) and the bad-row counts are the same, field by field;
** - the direct path is taken where it applies, and not for a WAL file with frames;
** - crafted corrupt pages (a page number past the file, a cell offset past the page, a child
**   pointer that cycles, a payload size that lies, an overflow chain that loops, too many
**   cells) end the scan with "<path>: corrupt ..." errors, not a crash (ASan in CI); so do
**   400 files with random bytes over their pages.
*/
#define _XOPEN_SOURCE 700  /* nftw */
#include "check.h"
#include "db_query.h"
#include "load/table_pages.h"
#include "load/trace_reader.h"
#include "trace_builder.h"

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rows {
  ovl_work *w;
  size_t n, cap;
  ovl_api_row *a;
  size_t na, acap;
  int rc;
  char err[1024];
} rows;

static void push_work(rows *r, const ovl_work *w) {
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->w = realloc(r->w, r->cap * sizeof *r->w);
    if (!r->w) abort();
  }
  r->w[r->n++] = *w;
}

static int push_api(void *ctx, const ovl_api_row *a) {
  rows *r = ctx;
  if (r->na == r->acap) {
    r->acap = r->acap ? 2 * r->acap : 1024;
    r->a = realloc(r->a, r->acap * sizeof *r->a);
    if (!r->a) abort();
  }
  r->a[r->na++] = *a;
  return 0;
}

static void rows_free(rows *r) {
  free(r->w);
  free(r->a);
  memset(r, 0, sizeof *r);
}

/* Everything the reader gives of one trace, with direct reads on or off: the GPU work, then
** the api rows (mode 0: all columns, 1: launches only, 2: all columns split in three parts,
** concatenated part by part). */
typedef struct reading {
  rows work, api[3];
  ovl_bad_rows bad;
  int open_rc;
  long long direct_scans;
} reading;

static void read_all(const char *path, int direct, reading *out) {
  memset(out, 0, sizeof *out);
  setenv("OVL_DIRECT_READ", direct ? "1" : "0", 1);
  long long before = ovl_tp_scans();
  ovl_trace *t = NULL;
  ovl_err err = {0};
  out->open_rc = ovl_trace_open(path, &t, &err);
  if (out->open_rc) return;
  ovl_work_options opt = {OVL_DEFAULT_REORDER_WINDOW, 1};
  ovl_work_cursor *c = NULL;
  int rc = ovl_work_open(t, &opt, &c, &err);
  int has = 1;
  ovl_work w;
  while (!rc && has) {
    memset(&w, 0, sizeof w);
    rc = ovl_work_next(c, &w, &has, &err);
    if (!rc && has) push_work(&out->work, &w);
  }
  out->work.rc = rc;
  if (rc) snprintf(out->work.err, sizeof out->work.err, "%s", err.msg);
  ovl_work_close(c);
  ovl_bad_rows bad_work = *ovl_trace_bad_rows(t);
  for (int mode = 0; mode < 3; mode++) {
    rows parts[3] = {{0}};
    void *ctxs[3] = {&parts[0], &parts[1], &parts[2]};
    rc = mode < 2 ? ovl_trace_scan_api(t, mode, push_api, &parts[0], &err)
                  : ovl_trace_scan_api_split(t, 0, 3, push_api, ctxs, &err);
    out->api[mode].rc = rc;
    if (rc) snprintf(out->api[mode].err, sizeof out->api[mode].err, "%s", err.msg);
    for (int p = 0; p < 3; p++) {
      for (size_t i = 0; i < parts[p].na; i++) push_api(&out->api[mode], &parts[p].a[i]);
      rows_free(&parts[p]);
    }
  }
  out->bad = *ovl_trace_bad_rows(t);
  out->bad.kernels = bad_work.kernels;
  out->bad.memops = bad_work.memops;
  ovl_trace_close(t);
  out->direct_scans = ovl_tp_scans() - before;
  unsetenv("OVL_DIRECT_READ");
}

static void reading_free(reading *r) {
  rows_free(&r->work);
  for (int i = 0; i < 3; i++) rows_free(&r->api[i]);
}

static int same_work(const ovl_work *a, const ovl_work *b) {
  if (a->start != b->start || a->end != b->end || a->device != b->device || a->stream != b->stream ||
      a->correlation != b->correlation || a->name != b->name || a->bytes != b->bytes || a->is_memop != b->is_memop ||
      strcmp(a->memkind, b->memkind) != 0)
    return 0;
  for (int i = 0; i < 3; i++)
    if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i]) return 0;
  return 1;
}

static int same_api(const ovl_api_row *a, const ovl_api_row *b) {
  return a->start == b->start && a->end == b->end && a->tid == b->tid && a->correlation == b->correlation &&
         a->name == b->name;
}

static int ntraces;

/* Reads path both ways; 1 when it is an ovl trace (the SQL path opens it). */
static int compare_both_ways(const char *path) {
  reading d, s;
  read_all(path, 0, &s);
  if (s.open_rc) {
    reading_free(&s);
    return 0;
  }
  read_all(path, 1, &d);
  ntraces++;
  int ok = d.open_rc == 0 && d.work.rc == s.work.rc && d.work.n == s.work.n &&
           memcmp(&d.bad, &s.bad, sizeof d.bad) == 0;
  for (size_t i = 0; ok && i < d.work.n; i++) ok = same_work(&d.work.w[i], &s.work.w[i]);
  for (int m = 0; ok && m < 3; m++) {
    ok = d.api[m].rc == s.api[m].rc && d.api[m].na == s.api[m].na;
    for (size_t i = 0; ok && i < d.api[m].na; i++) ok = same_api(&d.api[m].a[i], &s.api[m].a[i]);
  }
  if (!ok)
    fprintf(stderr, "%s: direct and SQL reads differ (work %zu/%zu rc %d/%d, api %zu/%zu, bad kernels %ld/%ld api %ld/%ld)\n",
            path, d.work.n, s.work.n, d.work.rc, s.work.rc, d.api[0].na, s.api[0].na, d.bad.kernels, s.bad.kernels,
            d.bad.api, s.bad.api);
  CHECK(ok);
  CHECK(s.direct_scans == 0);
  reading_free(&d);
  reading_free(&s);
  return 1;
}

static int visit_file(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  if (type != FTW_F) return 0;
  FILE *f = fopen(path, "rb");
  char head[16] = {0};
  size_t n = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  if (n == sizeof head && memcmp(head, "SQLite format 3", 16) == 0) compare_both_ways(path);
  return 0;
}

static void exec_sql(const char *path, const char *sql) { CHECK(dbq_exec(path, sql) == SQLITE_OK); }

static long page_size_of(const char *path) {
  sqlite3 *db = dbq_open(path);
  long ps = (long)dbq_int(db, "PRAGMA page_size");
  sqlite3_close(db);
  return ps;
}

/* A trace with many pages of kernels, memops and api rows, some of them odd. */
static void write_trace(const char *path, int n) {
  remove(path);
  tb b;
  tb_open(&b, path);
  for (int i = 0; i < n; i++) {
    int64_t t = 1000 + 10 * (int64_t)i;
    int64_t grid[3] = {i % 7 + 1, 2, 1}, block[3] = {128, 1, i % 3};
    int64_t c = tb_kernel_dims(&b, i % 5 ? "gemm" : "ncclDevKernel_AllReduce", t, t + 5 + i % 9, i % 2, 7, grid, block);
    tb_api(&b, t - 3, t - 1, c);
    if (i % 50 == 0) tb_memop(&b, i % 100 ? "HtoD" : "memset", t + 1, t + 4, 0, 8, 4096 + i);
  }
  tb_close(&b);
  exec_sql(path,
           /* odd rows: NULLs, text, reals, blobs, huge and negative values, long text */
           "INSERT INTO kernels(start, end, device, stream, correlation, name) VALUES"
           " (NULL, 5, 0, 1, 1, 1), ('x', 5, 0, 1, 1, 1), (2.5, 5, 0, 1, 1, 1), (X'01', 5, 0, 1, 1, 1),"
           " (10, 5, 0, 1, 1, 1), (-1, 5, 0, 1, 1, 1), (100, 200, 0, NULL, 1, NULL), (100, 200, 0, 1, 1, 'n'),"
           " (9223372036854775807, 9223372036854775807, 0, 1, 1, 1), (100, 200, 1, 2, 3, 4);"
           "INSERT INTO memops(start, end, device, stream, correlation, kind, bytes) VALUES"
           " (100, 200, 0, 1, 1, 'DtoH', 10), (100, 200, 0, 1, 1, 12345, 10), (100, 200, 0, 1, 1, 2.25, 10),"
           " (100, 200, 0, 1, 1, X'486f4400', 10), (100, 200, 0, 1, 1, NULL, 10), (100, 200, 0, 1, 1, 'HtoD', -5),"
           " (100, 200, 0, 1, 1, 'D' || char(0) || 'x', 10), (100, 200, 0, 1, 1, 'Ü€𝄞bad' || char(1), 10),"
           " (100, 200, 0, 1, 1, printf('%.*c', 9000, 'k'), 10), (100, 200, 0, 1, 1, printf('%.*c', 3990, 'q'), 7);"
           "INSERT INTO api(start, end, tid, correlation, name) VALUES"
           " (1, 2, 3, 4, 5), (NULL, 2, 3, 4, 5), (1, 0, 3, 4, 5), (1, 2, 'a', 4, 5), (1, 2, 3, NULL, 5),"
           " (5, 6, 7, 8, 1.5), (1, 2, 3, 4, X'00');"
           /* a column added later: older records are shorter than the table */
           "ALTER TABLE api ADD COLUMN extra INTEGER DEFAULT 7;"
           "INSERT INTO api(start, end, tid, correlation, name, extra) VALUES (11, 12, 13, 14, 15, 16);");
}

static void differential(int argc, char **argv) {
  for (int i = 1; i < argc; i++) nftw(argv[i], visit_file, 16, FTW_PHYS);
  int from_folders = ntraces;
  CHECK(from_folders > 0);

  const char *path = tb_temp_path("pages.sqlite");
  write_trace(path, 20000);
  CHECK(compare_both_ways(path));
  reading d;
  read_all(path, 1, &d);
  CHECK(d.direct_scans >= 5);  /* kernels, memops and the api scans read from the pages */
  CHECK(d.work.n > 20000);
  CHECK(d.bad.kernels > 0 && d.bad.memops > 0 && d.bad.api > 0);
  reading_free(&d);
  setenv("OVL_READER_THREADS", "1", 1);  /* the same on reader threads */
  CHECK(compare_both_ways(path));
  unsetenv("OVL_READER_THREADS");

  /* Launch dimensions added by ALTER TABLE with defaults: rows written before are shorter
  ** than the table, and read with the defaults. */
  static const char recreate[] =
    "ALTER TABLE kernels RENAME TO k_old;"
    "CREATE TABLE kernels (start INTEGER, end INTEGER, device INTEGER, stream INTEGER, correlation INTEGER, name %s);"
    "INSERT INTO kernels SELECT start, end, device, stream, correlation, name FROM k_old;"
    "DROP TABLE k_old;";
  char sql[1024];
  const char *odd = tb_temp_path("pages-odd.sqlite");
  write_trace(odd, 3000);
  snprintf(sql, sizeof sql, recreate, "INTEGER");
  exec_sql(odd, sql);
  exec_sql(odd, "ALTER TABLE kernels ADD COLUMN grid_x INTEGER DEFAULT 2;"
                "ALTER TABLE kernels ADD COLUMN grid_y INT DEFAULT -3;"
                "ALTER TABLE kernels ADD COLUMN grid_z INTEGER;"
                "ALTER TABLE kernels ADD COLUMN block_x INTEGER DEFAULT 4;"
                "ALTER TABLE kernels ADD COLUMN block_y BIGINT DEFAULT +5;"
                "ALTER TABLE kernels ADD COLUMN block_z INTEGER DEFAULT NULL;"
                "INSERT INTO kernels VALUES (90000, 90005, 0, 1, 2, 3, 9, 8, 7, 6, 5, 4);");
  CHECK(compare_both_ways(odd));
  read_all(odd, 1, &d);
  CHECK(d.direct_scans >= 5);
  CHECK(d.work.n > 3000 && d.work.w[0].grid[0] == 2 && d.work.w[0].grid[1] == -3 && d.work.w[0].grid[2] == OVL_NONE);
  reading_free(&d);
  /* A default the reader does not decode (text for an integer): SQL reads the kernels. */
  write_trace(odd, 300);
  snprintf(sql, sizeof sql, recreate, "INTEGER");
  exec_sql(odd, sql);
  exec_sql(odd, "ALTER TABLE kernels ADD COLUMN grid_x INTEGER DEFAULT 'two';"
                "ALTER TABLE kernels ADD COLUMN grid_y INTEGER; ALTER TABLE kernels ADD COLUMN grid_z INTEGER;");
  CHECK(compare_both_ways(odd));
  read_all(odd, 1, &d);
  CHECK(d.direct_scans == 4);  /* memops and the api scans only */
  CHECK(d.bad.kernels > 300);   /* grid_x 'two' is no integer: every old row is bad either way */
  reading_free(&d);

  /* Kernels' name column declared REAL: not what the reader expects (SQL reads it). */
  write_trace(odd, 300);
  snprintf(sql, sizeof sql, recreate, "REAL");
  exec_sql(odd, sql);
  CHECK(compare_both_ways(odd));
  read_all(odd, 1, &d);
  CHECK(d.direct_scans == 4 && d.work.n > 0);
  reading_free(&d);

  /* Other page layouts: 64 KiB pages (stored as 1 in the header), 512-byte pages (long rows
  ** on overflow pages), reserved bytes at the end of every page (usable size below the page
  ** size). */
  static const struct { int page_size, reserve; } layouts[] = {{65536, 0}, {512, 0}, {4096, 40}, {1024, 200}};
  for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
    const char *lp = tb_temp_path("pages-layout.sqlite");
    write_trace(lp, 3000);
    sqlite3 *ldb = NULL;
    CHECK(sqlite3_open(lp, &ldb) == SQLITE_OK);
    int reserve = layouts[i].reserve;
    snprintf(sql, sizeof sql, "PRAGMA page_size=%d;", layouts[i].page_size);
    CHECK(sqlite3_exec(ldb, sql, NULL, NULL, NULL) == SQLITE_OK);
    /* after the page size (which sets the reserve wanted back to 0), taken by the VACUUM */
    if (reserve) CHECK(sqlite3_file_control(ldb, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve) == SQLITE_OK);
    CHECK(sqlite3_exec(ldb, "VACUUM;", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(ldb);
    CHECK(page_size_of(lp) == layouts[i].page_size);
    unsigned char head[100] = {0};
    FILE *f = fopen(lp, "rb");
    CHECK(f && fread(head, 1, sizeof head, f) == sizeof head);
    if (f) fclose(f);
    CHECK(head[20] == layouts[i].reserve);  /* bytes reserved at the end of each page */
    CHECK(compare_both_ways(lp));
    read_all(lp, 1, &d);
    CHECK(d.direct_scans >= 5 && d.work.n > 3000);
    reading_free(&d);
  }

  /* WAL with frames in the -wal file: read through SQL. */
  const char *wal = tb_temp_path("pages-wal.sqlite");
  write_trace(wal, 2000);
  sqlite3 *db = NULL;
  CHECK(sqlite3_open(wal, &db) == SQLITE_OK);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;"
                   "INSERT INTO kernels(start, end, device, stream, correlation, name) VALUES (5, 6, 0, 1, 2, 3);",
               NULL, NULL, NULL);
  read_all(wal, 1, &d);  /* the writer's connection stays open: the frames stay */
  CHECK(d.direct_scans == 0);
  CHECK(d.work.n > 2000);
  reading_free(&d);
  CHECK(compare_both_ways(wal));
  sqlite3_close(db);
  printf("differential: %d traces (%d from the folders)\n", ntraces, from_folders);
}

/* ---------------------------------------------------------------------------------- */
/* Corrupt pages                                                                       */
/* ---------------------------------------------------------------------------------- */


/* The first page number the query returns (one bound text parameter), or 0. */
static long page_query(const char *path, const char *sql, const char *arg) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  long p = 0;
  sqlite3_open(path, &db);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
    if (arg) sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) p = (long)sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return p;
}

static void read_page(const char *path, long pgno, long ps, unsigned char *buf) {
  FILE *f = fopen(path, "rb");
  CHECK(f && fseek(f, (pgno - 1) * ps, SEEK_SET) == 0 && fread(buf, 1, (size_t)ps, f) == (size_t)ps);
  if (f) fclose(f);
}

static void write_page(const char *path, long pgno, long ps, const unsigned char *buf) {
  FILE *f = fopen(path, "r+b");
  CHECK(f && fseek(f, (pgno - 1) * ps, SEEK_SET) == 0 && fwrite(buf, 1, (size_t)ps, f) == (size_t)ps);
  if (f) fclose(f);
}

static unsigned get16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)(v >> 8);
  p[1] = (unsigned char)v;
}
static void put32(unsigned char *p, unsigned long v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (24 - 8 * i));
}

/* Reads path's GPU work (direct reads on): the scan must fail with a corrupt-trace error
** naming the file, from the pages. */
static void expect_corrupt(const char *path, const char *what) {
  long long before = ovl_tp_scans();
  reading r;
  read_all(path, 1, &r);
  CHECK(r.open_rc == 0);
  CHECK(r.work.rc == OVL_EUSER);
  if (r.work.rc != OVL_EUSER || !strstr(r.work.err, "corrupt") || !strstr(r.work.err, path))
    fprintf(stderr, "%s: expected a corrupt-trace error, got %d '%s'\n", what, r.work.rc, r.work.err);
  else
    printf("%s: %s\n", what, r.work.err);
  CHECK(strstr(r.work.err, "corrupt") != NULL);
  CHECK(strstr(r.work.err, path) != NULL);
  CHECK(ovl_tp_scans() > before);  /* the pages were read directly */
  reading_free(&r);
}

static void corrupt_pages(void) {
  const char *good = tb_temp_path("good.sqlite");
  write_trace(good, 20000);
  long ps = page_size_of(good);
  long npages = page_query(good, "PRAGMA page_count", NULL);
  long root = page_query(good, "SELECT rootpage FROM sqlite_master WHERE name = ?1", "kernels");
  CHECK(ps >= 512 && root > 1 && npages > root);
  unsigned char *page = malloc((size_t)ps);
  read_page(good, root, ps, page);
  CHECK(page[0] == 0x05);  /* an interior root */
  unsigned ncells = get16(page + 3);
  CHECK(ncells >= 2);
  unsigned cell1 = get16(page + 12 + 2);
  char cmd[4096];

  /* A child page number past the file. */
  const char *bad = tb_temp_path("bad.sqlite");
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, bad);
  CHECK(system(cmd) == 0);
  put32(page + cell1, (unsigned long)npages + 100);
  write_page(bad, root, ps, page);
  expect_corrupt(bad, "page number past the file");

  /* A child pointer back to the root: a cycle. */
  read_page(good, root, ps, page);
  put32(page + cell1, (unsigned long)root);
  write_page(bad, root, ps, page);
  expect_corrupt(bad, "cyclic child pointer");

  /* A cell offset past the page, in a leaf. */
  CHECK(system(cmd) == 0);
  long leaf = page_query(good, "SELECT pageno FROM dbstat WHERE name = ?1 AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 5",
                         "kernels");
  CHECK(leaf > 1);  /* dbstat is compiled into Debian's SQLite */
  read_page(good, leaf, ps, page);
  CHECK(page[0] == 0x0D);
  put16(page + 8 + 2 * 3, (unsigned)ps - 1);
  write_page(bad, leaf, ps, page);
  expect_corrupt(bad, "cell offset past the page");

  /* Too many cells for the page. */
  CHECK(system(cmd) == 0);
  read_page(good, leaf, ps, page);
  put16(page + 3, 0xffff);
  write_page(bad, leaf, ps, page);
  expect_corrupt(bad, "cell count");

  /* A payload size that lies: the cell nearest the page's end says 127 bytes. */
  CHECK(system(cmd) == 0);
  read_page(good, leaf, ps, page);
  unsigned last = 0;
  for (unsigned i = 0; i < get16(page + 3); i++)
    if (get16(page + 8 + 2 * i) > last) last = get16(page + 8 + 2 * i);
  CHECK(last > 0 && page[last] < 0x80);
  page[last] = 0x7f;
  write_page(bad, leaf, ps, page);
  expect_corrupt(bad, "payload size");

  /* An overflow chain that loops: the memops row with 9,000 bytes of text, its first
  ** overflow page pointing to itself. */
  CHECK(system(cmd) == 0);
  long ovfl = page_query(good, "SELECT pageno FROM dbstat WHERE name = ?1 AND pagetype = 'overflow' ORDER BY pageno LIMIT 1",
                         "memops");
  CHECK(ovfl > 1);
  read_page(good, ovfl, ps, page);
  put32(page, (unsigned long)ovfl);
  write_page(bad, ovfl, ps, page);
  expect_corrupt(bad, "overflow chain loop");

  /* The same faults on a reader thread: the same error. */
  setenv("OVL_READER_THREADS", "1", 1);
  expect_corrupt(bad, "overflow chain loop, threaded");
  unsetenv("OVL_READER_THREADS");
  free(page);
}

/* Random bytes over random places of a small trace's pages (never the header and schema page
** 1), read with direct reads: every read ends, with rows or an error naming the file (under
** ASan in CI: never out of bounds). A fixed seed: the same files every run. */
static void mutations(void) {
  const char *good = tb_temp_path("mut-good.sqlite");
  const char *bad = tb_temp_path("mut.sqlite");
  write_trace(good, 1500);
  FILE *f = fopen(good, "rb");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *orig = malloc((size_t)size), *copy = malloc((size_t)size);
  CHECK(orig && copy && fread(orig, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  long ps = page_size_of(good);
  srand(35);
  int errors = 0, reads = 0;
  const char *env = getenv("OVL_TEST_MUTATIONS");  /* more, for a longer run by hand */
  int count = env && atoi(env) > 0 ? atoi(env) : 400;
  for (int i = 0; i < count && orig && copy && size > 2 * ps; i++) {
    memcpy(copy, orig, (size_t)size);
    int n = 1 + rand() % 8;
    for (int k = 0; k < n; k++) {
      long at = ps + (long)(((unsigned long)rand() * (unsigned long)RAND_MAX + (unsigned long)rand()) % (unsigned long)(size - ps));
      copy[at] = (unsigned char)(rand() % 4 == 0 ? 0xff : rand());
    }
    FILE *o = fopen(bad, "wb");
    CHECK(o && fwrite(copy, 1, (size_t)size, o) == (size_t)size);
    if (o) fclose(o);
    reading r;
    read_all(bad, 1, &r);
    if (r.open_rc == 0) {
      reads++;
      const rows *all[4] = {&r.work, &r.api[0], &r.api[1], &r.api[2]};
      for (int j = 0; j < 4; j++) {
        if (!all[j]->rc) continue;
        errors++;
        if (!strstr(all[j]->err, bad)) fprintf(stderr, "mutation %d: error without the file: %s\n", i, all[j]->err);
        CHECK(strstr(all[j]->err, bad) != NULL);
      }
    }
    reading_free(&r);
  }
  printf("mutations: %d files read, %d scans ended in an error\n", reads, errors);
  CHECK(reads > count / 4 && errors > 0);
  free(orig);
  free(copy);
}

int main(int argc, char **argv) {
  differential(argc, argv);
  corrupt_pages();
  mutations();
  return check_summary();
}
