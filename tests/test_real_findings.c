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

__attribute__((unused)) static int count_of(const char *s, const char *pat) {
  int n = 0;
  for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat)) n++;
  return n;
}

/* The number after `"key": ` at its n-th occurrence (from 0) in JSON text; NAN when absent or null. */
__attribute__((unused)) static double json_num(const char *json, const char *key, int n) {
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
  } checks[] = {{"slowdown", slowdown}, {"import_counts", import_counts}};
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (strcmp(argv[3], checks[i].name) == 0) {
      checks[i].fn();
      return check_summary();
    }
  fprintf(stderr, "unknown check %s\n", argv[3]);
  return 2;
}
