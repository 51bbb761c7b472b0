/*
** Findings that must hold up on real PyTorch profiler (Kineto) traces: small traces of
** ../shared/traces copied byte for byte into tests/data/traces (same sub-paths). Each check
** runs `ovl` as a user would and judges its text and JSON output.
** usage: test_real_findings OVL_BINARY TRACES_DIR CHECK
*/
#include "driver/job_driver.h"
#include "check.h"
#include "gz_text.h"
#include "db_query.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ovl, *traces;

static cmd_result ovl_run(const char *args) {
  char cmd[16384];
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

/* The job's own analysis of a directory of traces (library); exits the test when it fails. */
static void analyse_dir(const char *dir, ovl_job *job) {
  ovl_analysis_options aopt = {0};
  ovl_analysis_ctx ctx;
  ovl_err err = {0};
  if (ovl_analysis_ctx_init(&ctx, &aopt, &err)) exit(2);
  char *args[] = {(char *)dir};
  int rc = ovl_analyze_job(&ctx, args, 1, NULL, NULL, job, &err);
  ovl_analysis_ctx_free(&ctx);
  if (rc) {
    fprintf(stderr, "analyse %s: %s\n", dir, err.msg);
    exit(1);
  }
}

static const ovl_coll_result *coll_at(const ovl_step_result *st, int64_t at) {
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].gpu_start == at) return &st->colls[i];
  return NULL;
}

/* With the ranks of one job, a collective that compute waits for but that mostly waited for a
** peer (the cross-rank split) is reported as peer_wait naming the rank that arrived last, never
** as blocking_collective ("make the call asynchronous"); DLRM's rank 1 is such a case. */
static void peer_wait(void) {
  ovl_job job;
  analyse_dir(data("kineto-param-dlrm8"), &job);
  CHECK(job.cross.present);
  int waits = 0, rank1_waits = 0;
  for (size_t k = 0; k < job.nranks; k++) {
    const ovl_rank_result *r = &job.ranks[k];
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].nfindings; i++) {
        const ovl_finding *f = &r->steps[s].findings[i];
        const ovl_coll_result *c = coll_at(&r->steps[s], f->at_ns);
        int blocking = strcmp(f->code, "blocking_collective") == 0, waiting = strcmp(f->code, "peer_wait") == 0;
        if (!c || !(blocking || waiting) || !c->cross || c->cross->wait_ns == OVL_NONE) continue;
        double wait_share = (double)c->cross->wait_ns / (double)(ovl_coll_gpu_end(c) - c->gpu_start);
        if (blocking) CHECK(wait_share < 0.5);
        if (waiting) {
          CHECK(wait_share >= 0.5);
          CHECK(strstr(f->message, "the last to arrive") != NULL);
          CHECK(f->recoverable_ns <= ovl_coll_exposed(c));
          waits++;
          rank1_waits += r->rank == 1;
        }
      }
    /* the rank summaries follow the step findings */
    for (size_t i = 0; i < r->nfindings; i++)
      if (strcmp(r->findings[i].code, "blocking_collective") == 0) {
        int any = 0;
        for (size_t s = 0; s < r->nsteps; s++)
          for (size_t j = 0; j < r->steps[s].nfindings; j++)
            any |= strcmp(r->steps[s].findings[j].code, "blocking_collective") == 0;
        CHECK(any);
      }
  }
  CHECK(waits > 0);
  CHECK_I64(rank1_waits, 1);
  ovl_job_free(&job);
}

/* Every step with large exposure (at least 10% of the step, overlap efficiency below 50%) gets
** at least one finding; where nothing specific applies, exposed_communication names what is
** exposed and why (df_index_resolver: 404 AllReduces of unknown size on their own stream). */
static void exposed_steps(void) {
  static const char *const traces_[] = {"kineto-hta/df_index_resolver__df_index_resolver.json.gz",
                                        "kineto-hta/trace_diff__test__test.json.gz", "kineto-param-dlrm8",
                                        "kineto-hta/trace_filter__sampled_rank-0.json.gz"};
  int fallback_df = 0;
  for (size_t t = 0; t < sizeof traces_ / sizeof traces_[0]; t++) {
    ovl_job job;
    analyse_dir(data(traces_[t]), &job);
    for (size_t k = 0; k < job.nranks; k++)
      for (size_t s = 0; s < job.ranks[k].nsteps; s++) {
        const ovl_step_result *st = &job.ranks[k].steps[s];
        double step = (double)(st->end - st->start), exposed = (double)st->totals.exposed;
        int large = step > 0 && exposed >= 0.1 * step && ovl_overlap_efficiency(&st->totals) < 0.5;
        if (large && st->nfindings == 0)
          fprintf(stderr, "%s rank %lld step %ld: %.0f of %.0f ns exposed, no finding\n", traces_[t],
                  (long long)job.ranks[k].rank, st->index, exposed, step);
        CHECK(!large || st->nfindings > 0);
        for (size_t i = 0; t == 0 && i < st->nfindings; i++)
          if (strcmp(st->findings[i].code, "exposed_communication") == 0) {
            char buf[OVL_FINDING_TEXT_MAX];
            const char *text = ovl_finding_message(st, &st->findings[i], buf, sizeof buf);
            CHECK(text && strstr(text, "AllReduce (sizes unknown)") != NULL);
            CHECK(text && strstr(text, "No specific finding applies") != NULL);
            fallback_df++;
          }
      }
    ovl_job_free(&job);
  }
  CHECK(fallback_df > 0);
}

/* Two down-sampled ranks without sequence numbers: the cross-rank mismatch warning says that
** the calls were numbered by position and that missing events may explain it. */
static void sampled_mismatch(void) {
  char args[8192];
  const char *r0 = data("kineto-hta/trace_filter__sampled_rank-0.json.gz");
  const char *r1 = data("kineto-hta/trace_filter__sampled_rank-1.json.gz");
  snprintf(args, sizeof args, "report '%s' '%s'", r0, r1);
  cmd_result t = ovl_run(args);
  snprintf(args, sizeof args, "report --json '%s' '%s'", r0, r1);
  cmd_result j = ovl_run(args);
  CHECK_I64(t.status, 0);
  CHECK_I64(j.status, 0);
  const char *w = strstr(t.out, "do not line up");
  CHECK(w != NULL);
  if (w) {
    const char *eol = strchr(w, '\n');
    const char *seq = strstr(w, "no NCCL sequence numbers (Seq)"), *may = strstr(w, "may explain the mismatch");
    CHECK(seq && eol && seq < eol);
    CHECK(may && eol && may < eol);
  }
  const char *fm = strstr(j.out, "\"first_mismatch\": \"");
  CHECK(fm && strstr(fm, "may explain the mismatch"));
  /* every collective of these traces was numbered by the import: none carries Seq */
  const char *out = tb_temp_path("sampled.sqlite");
  snprintf(args, sizeof args, "import '%s' -o '%s'", r0, out);
  cmd_result imp = ovl_run(args);
  sqlite3 *db = dbq_open(out);
  CHECK_I64((int64_t)json_num(j.out, "collectives_numbered_by_import", 0), dbq_int(db, "SELECT count(*) FROM collectives"));
  sqlite3_close(db);
  remove(out);
  /* a job with Seq-less traces but no mismatch (DLRM) has no such warning */
  snprintf(args, sizeof args, "report '%s'", data("kineto-param-dlrm8"));
  cmd_result d = ovl_run(args);
  CHECK(strstr(d.out, "do not line up") == NULL);
  cmd_free(&t);
  cmd_free(&j);
  cmd_free(&imp);
  cmd_free(&d);
}

static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  if (!a || !b) exit(2);
  while ((n = fread(buf, 1, sizeof buf, a)) > 0)
    if (fwrite(buf, 1, n, b) != n) exit(2);
  fclose(a);
  fclose(b);
}

/* A directory with a CPU-only trace beside a GPU trace reports the GPU rank and lists the other
** as without GPU work (exit 0). A host-only capture (NCCL calls, no kernels; CUPTI not
** attached) alone fails with one line giving its host side and why it has no GPU data; beside
** a GPU trace it is listed the same way. */
static void no_gpu(void) {
  char dir[512], a[1024], b[1024], args[8192];
  snprintf(dir, sizeof dir, "%s", tb_temp_path("mixed"));
  CHECK(mkdir(dir, 0700) == 0);
  snprintf(a, sizeof a, "%s/worker0_step_12.json.gz", dir);
  snprintf(b, sizeof b, "%s/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", dir);
  copy_file(data("kineto-param-dlrm8/worker0_step_12.json.gz"), a);
  copy_file(data("kineto-nonccl/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), b);
  snprintf(args, sizeof args, "report '%s'", dir);
  cmd_result t = ovl_run(args);
  snprintf(args, sizeof args, "report --json '%s'", dir);
  cmd_result j = ovl_run(args);
  CHECK_I64(t.status, 0);
  CHECK_I64(j.status, 0);
  CHECK(strstr(t.out, "Without GPU work") && strstr(t.out, "cpu_only__rank-34"));
  CHECK_I64(count_of(j.out, "\"comm_kernels\":"), 1);
  const char *w = strstr(j.out, "\"ranks_without_gpu\": [");
  CHECK(w && strstr(w, "cpu_only__rank-34") && strstr(w, "\"reason\": \"the PyTorch profiler recorded no GPU"));
  CHECK_I64((int64_t)json_num(w ? w : "", "rank", 0), 34);
  remove(a);
  remove(b);

  /* A host-only capture: NCCL calls, no GPU work, CUPTI not attached (meta written as libovl does). */
  snprintf(a, sizeof a, "%s/host-only.sqlite", dir);
  tb h;
  tb_open(&h, a);
  ovl_err err = {0};
  if (ovl_tw_meta(h.w, "cupti", "not attached: test double", &err)) exit(2);
  for (int i = 0; i < 3; i++) tb_collective(&h, "AllReduce", 1 << 20, 8, 1000 + 1000 * i, OVL_NONE);
  tb_close(&h);
  snprintf(args, sizeof args, "report '%s'", a);
  cmd_result alone = ovl_run(args);
  CHECK_I64(alone.status, 1);
  CHECK_I64(count_lines(alone.err), 1);
  CHECK(strstr(alone.err, "no GPU activity") && strstr(alone.err, "CUPTI was not attached: test double") &&
        strstr(alone.err, "3 NCCL calls (3 AllReduce)"));
  snprintf(b, sizeof b, "%s/worker1_step_12.json.gz", dir);
  copy_file(data("kineto-param-dlrm8/worker1_step_12.json.gz"), b);
  snprintf(args, sizeof args, "report --json '%s'", dir);
  cmd_result both = ovl_run(args);
  CHECK_I64(both.status, 0);
  w = strstr(both.out, "\"ranks_without_gpu\": [");
  CHECK(w && strstr(w, "host-only.sqlite") && strstr(w, "\"cupti\": \"not attached: test double\""));
  CHECK_I64((int64_t)json_num(w ? w : "", "collectives", 0), 3);
  remove(a);
  remove(b);
  rmdir(dir);
  cmd_free(&t);
  cmd_free(&j);
  cmd_free(&alone);
  cmd_free(&both);
}

/* The rank list after "[code] rank(s) " in the grouped text, up to ';' or ':'. */
static int text_lists_rank(const char *text, const char *code, long rank) {
  char pat[64];
  snprintf(pat, sizeof pat, "[%s] rank", code);
  const char *p = strstr(text, pat);
  if (!p) return 0;
  p += strlen(pat);
  if (*p == 's') p++;
  while (*p && *p != ';' && *p != ':') {
    while (*p == ' ' || *p == ',') p++;
    char *end;
    long r = strtol(p, &end, 10);
    if (end == p) return 0;
    if (r == rank) return 1;
    p = end;
  }
  return 0;
}

/* DLRM's 8 ranks: the text groups identical findings across ranks (every rank that has a
** finding is named in its group) and fits in 120 lines; the JSON still holds every finding
** of every rank and step. */
static void grouped(void) {
  char args[4096];
  snprintf(args, sizeof args, "report '%s'", data("kineto-param-dlrm8"));
  cmd_result t = ovl_run(args);
  snprintf(args, sizeof args, "report --json '%s'", data("kineto-param-dlrm8"));
  cmd_result j = ovl_run(args);
  CHECK_I64(t.status, 0);
  CHECK_I64(j.status, 0);
  fprintf(stderr, "text: %d lines\n", count_lines(t.out));
  CHECK(count_lines(t.out) <= 120);
  ovl_job job;
  analyse_dir(data("kineto-param-dlrm8"), &job);
  int findings = (int)job.nfindings;
  for (size_t k = 0; k < job.nranks; k++) {
    const ovl_rank_result *r = &job.ranks[k];
    findings += (int)r->nfindings;
    for (size_t s = 0; s < r->nsteps; s++) findings += (int)r->steps[s].nfindings;
    for (size_t i = 0; i < r->nfindings; i++) {
      CHECK(text_lists_rank(t.out, r->findings[i].code, (long)r->rank));
      /* the JSON has this rank's own message */
      char head[64];
      snprintf(head, sizeof head, "%.60s", r->findings[i].message);
      CHECK(strstr(j.out, head) != NULL);
    }
    /* every rank is summarised in the text */
    char line[64];
    snprintf(line, sizeof line, "rank %lld  device", (long long)r->rank);
    CHECK(strstr(t.out, line) != NULL);
  }
  CHECK(findings > 0);
  CHECK_I64(count_of(j.out, "\"code\": "), findings);
  ovl_job_free(&job);
  cmd_free(&t);
  cmd_free(&j);
}

/* --hta-compat rounds as HTA's parser does, through float64: worked out here from the text of
** every kernel event of the ns-resolution trace (16-digit µs timestamps with fractions), every
** kernel of the compat import has HTA's [ceil(ts), floor(ts + dur)] in float64, and some of
** them differ from rounding the exact decimal (what the default mode's precision would give). */
typedef struct span_us {
  long long a, b;
} span_us;

static int cmp_span(const void *x, const void *y) {
  const span_us *p = x, *q = y;
  if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
  return (p->b > q->b) - (p->b < q->b);
}

/* The exact decimal µs text "123.456789" as ns (truncated past ns: the test needs only ceil/floor). */
static long long exact_ns(const char *p) {
  long long us = strtoll(p, (char **)&p, 10), frac = 0;
  int digits = 0;
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++)
      if (digits < 3) frac = frac * 10 + (*p - '0'), digits++;
  while (digits++ < 3) frac *= 10;
  return us * 1000 + frac;
}


static void hta_float64(void) {
  const char *trace = data("kineto-nonccl/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  size_t len;
  char *text = tb_inflate_file(trace, &len);
  size_t n = 0, ncap = 1024;
  span_us *want = malloc(ncap * sizeof *want);
  long differ = 0;
  const char *end = text + len;
  for (const char *p = tb_find_in(text, end, "\"ph\""); p;) {
    const char *next = tb_find_in(p + 4, end, "\"ph\""), *stop = next ? next : end;
    const char *cat = tb_find_in(p, stop, "\"cat\": \"kernel\""), *ts = tb_find_in(p, stop, "\"ts\": ");
    const char *dur = tb_find_in(p, stop, "\"dur\": ");
    if (cat && ts && dur) {
      double t = strtod(ts + 6, NULL), d = strtod(dur + 7, NULL);
      if (n == ncap) want = realloc(want, (ncap *= 2) * sizeof *want);
      want[n++] = (span_us){(long long)ceil(t), (long long)floor(t + d)};
      long long s_ns = exact_ns(ts + 6), e_ns = s_ns + exact_ns(dur + 7);
      long long s_exact = (s_ns + 999) / 1000, e_exact = e_ns / 1000;
      differ += s_exact != want[n - 1].a || e_exact != want[n - 1].b;
    }
    p = next;
  }
  free(text);
  qsort(want, n, sizeof *want, cmp_span);
  fprintf(stderr, "%zu kernels; %ld round differently through float64\n", n, differ);
  CHECK(n > 1000);
  CHECK(differ > 0);
  const char *out = tb_temp_path("float64.sqlite");
  char args[4096];
  snprintf(args, sizeof args, "import --hta-compat '%s' -o '%s'", trace, out);
  cmd_result imp = ovl_run(args);
  CHECK_I64(imp.status, 0);
  sqlite3 *db = dbq_open(out);
  sqlite3_stmt *st;
  long rows = 0, found = 0;
  if (sqlite3_prepare_v2(db, "SELECT start, end FROM kernels", -1, &st, NULL) != SQLITE_OK) exit(2);
  while (sqlite3_step(st) == SQLITE_ROW) {
    span_us k = {sqlite3_column_int64(st, 0) / 1000, sqlite3_column_int64(st, 1) / 1000};
    if (k.b < k.a) k.b = k.a;
    span_us *hit = bsearch(&k, want, n, sizeof *want, cmp_span);
    /* an empty interval is kept as [start, start]: HTA's negative ones */
    if (!hit && k.a == k.b)
      for (size_t i = 0; i < n && !hit; i++) hit = want[i].a == k.a && want[i].b <= k.a ? &want[i] : NULL;
    rows++;
    found += hit != NULL;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK(rows > 0);
  CHECK_I64(found, rows);
  free(want);
  remove(out);
  cmd_free(&imp);
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
                {"window_start", window_start},
                {"peer_wait", peer_wait},
                {"exposed_steps", exposed_steps},
                {"sampled_mismatch", sampled_mismatch},
                {"no_gpu", no_gpu},
                {"grouped", grouped}, {"hta_float64", hta_float64}};
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (strcmp(argv[3], checks[i].name) == 0) {
      checks[i].fn();
      return check_summary();
    }
  fprintf(stderr, "unknown check %s\n", argv[3]);
  return 2;
}
