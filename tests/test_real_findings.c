/*
** Findings that must hold up on real PyTorch profiler (Kineto) traces: small traces of
** ../shared/traces copied byte for byte into tests/data/traces (same sub-paths). Each check
** runs `ovl` as a user would and judges its text and JSON output.
** usage: test_real_findings OVL_BINARY TRACES_DIR CHECK
*/
#include "check.h"
#include "db_query.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ovl, *traces;

static cmd_result ovl_run(const char *args) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' %s", ovl, args);
  return run_cmd(cmd);
}

/* "DIR/sub" with the traces folder. */
static const char *data(const char *sub) {
  static char buf[4][4096];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", traces, sub);
  return buf[k];
}

/* "inf" or "nan" printed as a number ("inf", "-inf", "infx"), not inside a word ("inferred"). */
static int prints_non_finite(const char *s) {
  static const char *const words[] = {"inf", "nan"};
  for (int w = 0; w < 2; w++)
    for (const char *p = strstr(s, words[w]); p; p = strstr(p + 1, words[w])) {
      int starts_word = p == s || !isalpha((unsigned char)p[-1]);
      if (starts_word && (!isalpha((unsigned char)p[3]) || p[3] == 'x')) return 1;
    }
  return 0;
}

static int count_of(const char *s, const char *pat) {
  int n = 0;
  for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat)) n++;
  return n;
}

/* The number after `"key": ` at its n-th occurrence (from 0) in JSON text; NAN when absent or null. */
static double json_num(const char *json, const char *key, int n) {
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(json, pat);
  while (p && n-- > 0) p = strstr(p + 1, pat);
  if (!p) return NAN;
  p += strlen(pat);
  if (strncmp(p, "null", 4) == 0) return NAN;
  return strtod(p, NULL);
}

/* ---------------------------------------------------------------------------------- */

/* compute_slowdown never prints "inf"; text and JSON agree: the finding's recoverable time
** is the sum of the listed slowdowns' costs, each with a finite factor. */
static void slowdown(void) {
  const char *trace = data("kineto-hta/trace_diff__test__test.json.gz");
  char args[4096];
  snprintf(args, sizeof args, "report '%s'", trace);
  cmd_result t = ovl_run(args);
  snprintf(args, sizeof args, "report --json '%s'", trace);
  cmd_result j = ovl_run(args);
  CHECK_I64(t.status, 0);
  CHECK_I64(j.status, 0);
  CHECK(!prints_non_finite(t.out));
  const char *sd = strstr(j.out, "\"slowdowns\": [");
  const char *sd_end = sd ? strstr(sd, "\"steps\": [") : NULL;
  double cost = 0;
  int n = 0;
  for (const char *p = sd; p && sd_end && (p = strstr(p, "\"slowdown\": ")) && p < sd_end; p++, n++) {
    CHECK(strncmp(p + 12, "null", 4) != 0);
    double f = strtod(p + 12, NULL);
    CHECK(isfinite(f) && f > 1);
    const char *c = strstr(p, "\"cost_ns\": ");
    if (c) cost += strtod(c + 11, NULL);
  }
  const char *f = strstr(j.out, "\"code\": \"compute_slowdown\"");
  if (n > 0 && f) {
    const char *r = strstr(f, "\"recoverable_ns\": ");
    CHECK(r != NULL);
    if (r) CHECK_NEAR(strtod(r + 18, NULL), cost, 2.0);
  }
  /* Whatever the text says about slowdowns, the JSON lists them. */
  CHECK(strstr(t.out, "compute_slowdown") == NULL || n > 0);
  cmd_free(&t);
  cmd_free(&j);
}

/* `ovl import --hta-compat` prints the counts of what it wrote, after the last step is dropped:
** every number on its line equals a count of the rows in the file. */
static void import_counts(void) {
  const char *out = tb_temp_path("hta.sqlite");
  char args[4096];
  snprintf(args, sizeof args, "import --hta-compat '%s' -o '%s'", data("kineto-hta/trace_diff__test__test.json.gz"), out);
  cmd_result r = ovl_run(args);
  CHECK_I64(r.status, 0);
  long kernels = -1, nccl = -1, memops = -1, api = -1, nvtx = -1, colls = -1, dropped = -1;
  const char *p = strstr(r.out, "kernels (");
  while (p && p > r.out && p[-1] != ',') p--;
  CHECK(p && sscanf(p, " %ld kernels (%ld NCCL), %ld memops, %ld api calls, %ld NVTX ranges, %ld collectives, %ld rows",
                    &kernels, &nccl, &memops, &api, &nvtx, &colls, &dropped) == 7);
  CHECK(dropped > 0);
  sqlite3 *db = dbq_open(out);
  CHECK_I64(kernels, dbq_int(db, "SELECT count(*) FROM kernels"));
  CHECK_I64(nccl, dbq_int(db, "SELECT count(*) FROM kernels JOIN strings ON strings.id = kernels.name"
                              " WHERE value LIKE '%nccl%'"));
  CHECK_I64(memops, dbq_int(db, "SELECT count(*) FROM memops"));
  CHECK_I64(api, dbq_int(db, "SELECT count(*) FROM api"));
  CHECK_I64(nvtx, dbq_int(db, "SELECT count(*) FROM nvtx"));
  CHECK_I64(colls, dbq_int(db, "SELECT count(*) FROM collectives"));
  sqlite3_close(db);
  remove(out);
  cmd_free(&r);
}

/* ProfilerStep#N numbers reach the JSON (`profiler_step`, in step order, as the trace names
** them) and the text; a trace without a host name gets no empty "host" in either. */
static void step_numbers(void) {
  const char *trace = data("kineto-hta/trace_diff__test__test.json.gz");
  const char *out = tb_temp_path("steps.sqlite");
  char args[4096];
  snprintf(args, sizeof args, "import '%s' -o '%s'", trace, out);
  cmd_result imp = ovl_run(args);
  CHECK_I64(imp.status, 0);
  sqlite3 *db = dbq_open(out);
  long nsteps = (long)dbq_int(db, "SELECT count(*) FROM nvtx WHERE name GLOB 'ProfilerStep#[0-9]*'");
  CHECK(nsteps >= 2);
  snprintf(args, sizeof args, "report --json '%s'", trace);
  cmd_result j = ovl_run(args);
  snprintf(args, sizeof args, "report --all '%s'", trace);
  cmd_result t = ovl_run(args);
  CHECK_I64(j.status, 0);
  CHECK_I64(t.status, 0);
  for (long k = 0; k < nsteps; k++) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT substr(name, 14) FROM nvtx WHERE name GLOB 'ProfilerStep#[0-9]*' ORDER BY start "
                              "LIMIT 1 OFFSET %ld", k);
    long want = atol(dbq_text(db, sql));
    CHECK_I64((long)json_num(j.out, "profiler_step", (int)k), want);
    char text[64];
    snprintf(text, sizeof text, "#%ld", want);
    CHECK(strstr(t.out, text) != NULL);
  }
  CHECK(strstr(j.out, "\"hostname\": \"\"") == NULL);
  CHECK(strstr(t.out, "host  ") == NULL && strstr(t.out, "host (") == NULL);
  sqlite3_close(db);
  remove(out);
  cmd_free(&imp);
  cmd_free(&j);
  cmd_free(&t);
}

/* HTA's temporal breakdown, worked out here from the rows of the --hta-compat import with
** HTA's definitions: kernel time = first GPU event start to last end; idle = that minus the
** union of all GPU events; compute = union of the kernels HTA calls computation (not
** starting with "nccl", no Memcpy/Memset/Sync in the name); non-compute = the rest. */
typedef struct ival {
  long long a, b;
} ival;

static int cmp_ival(const void *x, const void *y) {
  const ival *p = x, *q = y;
  return (p->a > q->a) - (p->a < q->a);
}

static long long union_len(ival *v, size_t n, long long *first, long long *last) {
  qsort(v, n, sizeof *v, cmp_ival);
  long long total = 0, cs = 0, ce = 0;
  int open = 0;
  *first = n ? v[0].a : 0;
  *last = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].b > *last) *last = v[i].b;
    if (open && v[i].a <= ce) {
      if (v[i].b > ce) ce = v[i].b;
      continue;
    }
    if (open) total += ce - cs;
    cs = v[i].a, ce = v[i].b, open = 1;
  }
  if (open) total += ce - cs;
  return total;
}

static int hta_compute_name(const char *name) {
  if (strncmp(name, "nccl", 4) == 0 || strncmp(name, "gloo:", 5) == 0) return 0;
  return !strstr(name, "Memcpy") && strncmp(name, "Memset", 6) != 0 && !strstr(name, "Sync");
}

static void breakdown_of(const char *trace) {
  const char *out = tb_temp_path("hta.sqlite");
  char args[4096];
  snprintf(args, sizeof args, "import --hta-compat '%s' -o '%s'", trace, out);
  cmd_result imp = ovl_run(args);
  CHECK_I64(imp.status, 0);
  sqlite3 *db = dbq_open(out);
  size_t cap = 1 << 16, nall = 0, ncomp = 0;
  ival *all = malloc(cap * sizeof *all), *comp = malloc(cap * sizeof *comp);
  sqlite3_stmt *st;
  const char *sql = "SELECT start, end, strings.value FROM kernels JOIN strings ON strings.id = kernels.name"
                    " UNION ALL SELECT start, end, 'Memcpy' FROM memops";
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) exit(2);
  while (sqlite3_step(st) == SQLITE_ROW) {
    ival v = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
    if (v.b <= v.a) continue;
    if (nall == cap) {
      cap *= 2;
      all = realloc(all, cap * sizeof *all);
      comp = realloc(comp, cap * sizeof *comp);
    }
    all[nall++] = v;
    if (hta_compute_name((const char *)sqlite3_column_text(st, 2))) comp[ncomp++] = v;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  long long first, last, f2, l2;
  long long busy = union_len(all, nall, &first, &last);
  long long compute = union_len(comp, ncomp, &f2, &l2);
  snprintf(args, sizeof args, "report --json --hta-compat '%s'", trace);
  cmd_result j = ovl_run(args);
  CHECK_I64(j.status, 0);
  fprintf(stderr, "%s: kernel time %lld, idle %lld, compute %lld, non-compute %lld\n", trace, last - first,
          last - first - busy, compute, busy - compute);
  CHECK_I64((long long)json_num(j.out, "span_ns", 0), last - first);
  CHECK_I64((long long)json_num(j.out, "idle_ns", 0), last - first - busy);
  CHECK_I64((long long)json_num(j.out, "compute_ns", 0), compute);
  CHECK_I64((long long)json_num(j.out, "non_compute_ns", 0), busy - compute);
  free(all);
  free(comp);
  remove(out);
  cmd_free(&imp);
  cmd_free(&j);
}

static void hta_breakdown(void) {
  static const char *const files[] = {
      "kineto-hta/trace_diff__test__test.json.gz", "kineto-hta/df_index_resolver__df_index_resolver.json.gz",
      "kineto-hta/trace_filter__sampled_rank-0.json.gz", "kineto-hta/trace_filter__sampled_rank-1.json.gz",
      "kineto-nonccl/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
      "kineto-param-dlrm8/worker0_step_12.json.gz", "kineto-param-dlrm8/worker1_step_12.json.gz",
      "kineto-param-dlrm8/worker2_step_12.json.gz", "kineto-param-dlrm8/worker3_step_12.json.gz",
      "kineto-param-dlrm8/worker4_step_12.json.gz", "kineto-param-dlrm8/worker5_step_12.json.gz",
      "kineto-param-dlrm8/worker6_step_12.json.gz", "kineto-param-dlrm8/worker7_step_12.json.gz"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) breakdown_of(data(files[i]));
}

/* A window that starts mid-run (trace_diff's test trace starts at ProfilerStep#1009): the NCCL
** kernels at its start that no launching call in the trace explains (counted here with SQL on
** the import) are recognised as launched before the window and said so; step 0 then has the
** steady-state bucket layout and no first_iteration_differs. In --hta-compat they are gone. */
static void window_start(void) {
  const char *trace = data("kineto-hta/trace_diff__test__test.json.gz");
  const char *out = tb_temp_path("window.sqlite");
  char args[4096];
  snprintf(args, sizeof args, "import '%s' -o '%s'", trace, out);
  cmd_result imp = ovl_run(args);
  CHECK_I64(imp.status, 0);
  sqlite3 *db = dbq_open(out);
  int64_t before = dbq_int(db, "WITH nccl AS (SELECT kernels.* FROM kernels JOIN strings ON strings.id = kernels.name"
                               " WHERE value LIKE '%nccl%') SELECT count(*) FROM nccl WHERE correlation NOT IN"
                               " (SELECT correlation FROM api WHERE correlation IS NOT NULL) AND start <"
                               " (SELECT min(start) FROM nccl WHERE correlation IN (SELECT correlation FROM api))");
  sqlite3_close(db);
  remove(out);
  CHECK(before > 0);
  snprintf(args, sizeof args, "report --json '%s'", trace);
  cmd_result j = ovl_run(args);
  snprintf(args, sizeof args, "report '%s'", trace);
  cmd_result t = ovl_run(args);
  snprintf(args, sizeof args, "report --json --hta-compat '%s'", trace);
  cmd_result h = ovl_run(args);
  CHECK_I64(j.status, 0);
  CHECK_I64(t.status, 0);
  CHECK_I64(h.status, 0);
  CHECK(strstr(j.out, "first_iteration_differs") == NULL);
  CHECK(strstr(t.out, "first_iteration_differs") == NULL);
  CHECK_I64((int64_t)json_num(j.out, "collectives_before_window", 0), before);
  CHECK_I64(count_of(j.out, "\"role\": \"before_window\""), before);
  CHECK(strstr(t.out, "launched before the profiler window") != NULL);
  CHECK_I64((int64_t)json_num(h.out, "collectives_before_window", 0), 0);
  cmd_free(&imp);
  cmd_free(&j);
  cmd_free(&t);
  cmd_free(&h);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s OVL_BINARY TRACES_DIR CHECK\n", argv[0]);
    return 2;
  }
  ovl = argv[1];
  traces = argv[2];
  static const struct {
    const char *name;
    void (*fn)(void);
  } checks[] = {{"slowdown", slowdown}, {"import_counts", import_counts},
                {"step_numbers", step_numbers}, {"hta_breakdown", hta_breakdown},
                {"window_start", window_start}};
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (strcmp(argv[3], checks[i].name) == 0) {
      checks[i].fn();
      return check_summary();
    }
  fprintf(stderr, "unknown check %s\n", argv[3]);
  return 2;
}
