/*
** ovl export: Perfetto and Chrome timelines of hand-built and simulated traces, verified by
** the independent checker (ovl_pftrace_check: nesting, declared tracks, interned names,
** flows, kernel slice count against an SQL count of the trace) and by `protoc --decode`
** against schema/perfetto_subset.proto; the counters, lanes, findings and clock offsets
** against worked-out values; real third-party traces when this build can import them.
**
** usage: test_export OVL CHECKER PROTOC|- SCHEMA_DIR TRACES_DIR
*/
#include "driver/job_driver.h"
#include "check.h"
#include "db_query.h"
#include "export/export.h"
#include "export/export_sink.h"
#include "export/gpu_facts.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ovl, *checker, *protoc, *schema_dir, *traces_dir;

/* Valid kernels of a trace, counted with SQL (what the reader keeps). */
static long sql_kernels(const char *path) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  long n = -1;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db,
                         "SELECT count(*) FROM kernels WHERE start IS NOT NULL AND end IS NOT NULL"
                         " AND device IS NOT NULL AND end >= start",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = (long)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* Runs the checker on a file; returns its exit status and keeps its output in *out. */
static int run_checker(const char *file, int chrome, long kernels, char **out) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' %s '%s' --kernels %ld", checker, chrome ? "--chrome" : "", file, kernels);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) fprintf(stderr, "checker on %s:\n%s%s", file, r.out, r.err);
  if (out) *out = strdup(r.out);
  int status = r.status;
  cmd_free(&r);
  return status;
}

/* Value of "key N" in the checker's output, or -1. */
static double stat_of(const char *out, const char *key) {
  size_t n = strlen(key);
  for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, key, n) == 0 && p[n] == ' ') return atof(p + n + 1);
  return -1;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = calloc(1, (size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) buf[0] = 0;
  fclose(f);
  return buf;
}

/* Whether two files hold the same bytes, and some (a Perfetto file holds NULs: not strcmp). */
static int same_bytes(const char *a, const char *b) {
  FILE *f[2] = {fopen(a, "rb"), fopen(b, "rb")};
  int same = f[0] && f[1], some = 0;
  while (same) {
    int x = getc(f[0]), y = getc(f[1]);
    if (x != y) same = 0;
    if (x == EOF || !same) break;
    some = 1;
  }
  for (int i = 0; i < 2; i++)
    if (f[i]) fclose(f[i]);
  return same && some;
}

/* The checker's "track_order PROCESS | track | ..." lines: every process shows "steps" first
** and its streams in numeric order (Perfetto sorts by name unless the ranks are honoured,
** which puts "stream 13" before "stream 7" and "steps" after the counters). Returns the
** number of processes seen. */
static int check_track_order(const char *out) {
  int processes = 0;
  for (const char *p = strstr(out, "track_order "); p; p = strstr(p + 1, "\ntrack_order ")) {
    const char *line = p[0] == '\n' ? p + 1 : p;
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    char *text = strndup(line, len);
    processes++;
    char *first = strstr(text, " | ");
    CHECK(first != NULL && strncmp(first + 3, "steps |", 7) == 0);
    long last = -1;
    int streams = 0;
    for (char *q = strstr(text, "| stream "); q; q = strstr(q + 1, "| stream ")) {
      long id = strtol(q + 9, NULL, 10);
      if (id < last) fprintf(stderr, "streams out of numeric order: %s\n", text);
      CHECK(id >= last);
      last = id;
      streams++;
    }
    CHECK(streams >= 2);
    free(text);
  }
  return processes;
}

/* The slices of a Perfetto file and of the Chrome JSON of the same export, as the checker
** decodes them (process, track, name, start and end in ns; the Perfetto file's incremental
** timestamps resolved): both files must hold the same slices, and some. */
static void check_same_slices(const char *label, const char *pf, const char *js) {
  char a[512], b[512], cmd[2048];
  snprintf(a, sizeof a, "%s", tb_temp_path("slices.pftrace.txt"));
  snprintf(b, sizeof b, "%s", tb_temp_path("slices.json.txt"));
  snprintf(cmd, sizeof cmd, "'%s' '%s' --slices '%s' && '%s' --chrome '%s' --slices '%s'", checker, pf, a, checker, js,
           b);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) fprintf(stderr, "%s: %s%s", label, r.out, r.err);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  char *x = read_text(a), *y = read_text(b);
  CHECK(x && y && strlen(x) > 0);
  if (x && y && strcmp(x, y) != 0) {
    fprintf(stderr, "%s: the Perfetto and Chrome files hold different slices (diff '%s' '%s')\n", label, a, b);
    CHECK(0);
  } else {
    unlink(a);
    unlink(b);
  }
  free(x);
  free(y);
}

/* Exports a trace both ways through the CLI and runs every file-level check on the results. */
static void export_and_check(const char *label, const char *trace_args, long kernels, int processes) {
  char pf[512], js[512], cmd[4096];
  snprintf(pf, sizeof pf, "%s", tb_temp_path("out.pftrace"));
  snprintf(js, sizeof js, "%s", tb_temp_path("out.json.gz"));
  snprintf(cmd, sizeof cmd, "'%s' export --perfetto '%s' --chrome '%s' %s", ovl, pf, js, trace_args);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) fprintf(stderr, "%s: %s%s", label, r.out, r.err);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  char *out = NULL;
  CHECK_I64(run_checker(pf, 0, kernels, &out), 0);
  CHECK_I64(check_track_order(out), processes);
  /* every annotation name the exporters write is interned (perfetto_sink.c's KNOWN_KEYS) */
  CHECK(stat_of(out, "annotations") > 0);
  CHECK_I64((long)stat_of(out, "annotation_names_plain"), 0);
  free(out);
  CHECK_I64(run_checker(js, 1, kernels, NULL), 0);
  check_same_slices(label, pf, js);
  if (strcmp(protoc, "-") != 0) {
    snprintf(cmd, sizeof cmd, "'%s' --decode=perfetto.protos.Trace -I'%s' '%s/perfetto_subset.proto' < '%s'", protoc,
             schema_dir, schema_dir, pf);
    r = run_cmd(cmd);
    CHECK_I64(r.status, 0);
    int begins = count_of(r.out, "type: TYPE_SLICE_BEGIN"), ends = count_of(r.out, "type: TYPE_SLICE_END");
    CHECK(begins >= kernels);
    CHECK_I64(begins, ends);
    cmd_free(&r);
  }
  unlink(pf);
  unlink(js);
}

/* Two Perfetto exports of one job hold the same tracks, slices (with their annotations),
** instants, counter values and flows (both ends), each file passing the checker: the
** checker's --events lines of both are equal. The host pass drawn beside the GPU pass
** (export_file.c) gives such a file, its packets in another order. */
static int same_events(const char *label, const char *a, const char *b) {
  char ea[600], eb[600], cmd[2048];
  snprintf(ea, sizeof ea, "%s.events", a);
  snprintf(eb, sizeof eb, "%s.events", b);
  int ok = 1;
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "'%s' '%s' --events '%s'", checker, i ? b : a, i ? eb : ea);
    cmd_result r = run_cmd(cmd);
    if (r.status != 0) {
      fprintf(stderr, "%s: checker on %s:\n%s%s", label, i ? b : a, r.out, r.err);
      ok = 0;
    }
    cmd_free(&r);
  }
  if (ok && !same_bytes(ea, eb)) {
    fprintf(stderr, "%s: %s and %s hold different events (diff %s %s)\n", label, a, b, ea, eb);
    ok = 0;
  }
  if (ok) {
    unlink(ea);
    unlink(eb);
  }
  return ok;
}

/* The export draws the same timeline however it reads the work: the api rows read on a
** thread beside the analysis or after it (OVL_EXPORT_THREADS, api_capture.h), the GPU work
** from the analysis's capture or read again (OVL_EXPORT_ONE_READ, gpu_facts.h). The same
** bytes every way, but for the Perfetto file when both are held (the first way): its host
** pass is drawn on a second thread, and the file holds the same events (same_events). */
static void same_exports_every_way(const char *label, const char *trace_args) {
  static const char *const env[] = {"OVL_EXPORT_THREADS=1", "OVL_EXPORT_THREADS=0",
                                    "OVL_EXPORT_THREADS=0 OVL_EXPORT_ONE_READ=0",
                                    "OVL_EXPORT_THREADS=1 OVL_EXPORT_ONE_READ=0"};
  char pf[4][512], js[4][512], cmd[4096];
  for (int i = 0; i < 4; i++) {
    char name[64];
    snprintf(name, sizeof name, "ways%d.pftrace", i);
    snprintf(pf[i], sizeof pf[i], "%s", tb_temp_path(name));
    snprintf(name, sizeof name, "ways%d.json", i);
    snprintf(js[i], sizeof js[i], "%s", tb_temp_path(name));
    snprintf(cmd, sizeof cmd, "env %s '%s' export -q --perfetto '%s' --chrome '%s' %s", env[i], ovl, pf[i], js[i],
             trace_args);
    cmd_result r = run_cmd(cmd);
    if (r.status != 0) fprintf(stderr, "%s (%s): %s%s", label, env[i], r.out, r.err);
    CHECK_I64(r.status, 0);
    cmd_free(&r);
  }
  for (int i = 1; i < 4; i++) {
    if ((i > 1 && !same_bytes(pf[1], pf[i])) || !same_bytes(js[0], js[i])) {
      fprintf(stderr, "%s: %s and %s export differently\n", label, env[i > 1 ? 1 : 0], env[i]);
      CHECK(0);
    }
  }
  CHECK(same_events(label, pf[0], pf[1]));
  /* A Perfetto file named .gz is gzipped (the trace processor opens it as it is): the same
  ** bytes once inflated, and the gzip magic first, so it is not the plain file renamed. */
  char gz[512];
  snprintf(gz, sizeof gz, "%s", tb_temp_path("ways.pftrace.gz"));
  snprintf(cmd, sizeof cmd, "env %s '%s' export -q --perfetto '%s' %s && gzip -dc '%s' | cmp - '%s'", env[1], ovl, gz,
           trace_args, gz, pf[1]);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) fprintf(stderr, "%s (.pftrace.gz): %s%s", label, r.out, r.err);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  FILE *f = fopen(gz, "rb");
  CHECK(f && getc(f) == 0x1f && getc(f) == 0x8b);
  if (f) fclose(f);
  unlink(gz);
  for (int i = 0; i < 4; i++) {
    unlink(pf[i]);
    unlink(js[i]);
  }
}

/* A trace with everything the layout draws. Returns its kernel count. */
static void build_rich(const char *path, int rank) {
  tb b;
  tb_open(&b, path);
  if (rank) {
    ovl_err err = {0};
    char text[16];
    snprintf(text, sizeof text, "%d", rank);
    if (ovl_tw_meta(b.w, "rank", text, &err)) exit(2);
  }
  tb_nvtx(&b, "ovl", "step", 0, 1000);
  tb_nvtx(&b, "ovl", "step", 1000, 2000);
  for (int s = 0; s < 2; s++) {
    int64_t t0 = s * 1000;
    int64_t c1 = tb_kernel(&b, "gemm", t0 + 10, t0 + 400, 0, 7);
    int64_t c2 = tb_kernel(&b, "relu", t0 + 300, t0 + 500, 0, 7);  /* overlaps gemm: second lane */
    int64_t c3 = tb_kernel(&b, "gemm", t0 + 500, t0 + 600, 0, 7);  /* starts as relu ends */
    int64_t c4 = tb_kernel(&b, "tiny", t0 + 650, t0 + 650, 0, 7);  /* zero length */
    int64_t nccl = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t0 + 450, t0 + 900, 0, 13);
    tb_memop(&b, "HtoD", t0 + 20, t0 + 60, 0, 20, 4096);
    tb_api(&b, t0 + 1, t0 + 3, c1);
    tb_api(&b, t0 + 2, t0 + 4, c2);
    tb_api(&b, t0 + 5, t0 + 6, c3);
    tb_api(&b, t0 + 6, t0 + 7, c4);
    tb_api(&b, t0 + 8, t0 + 9, 999999);  /* launched nothing: no flow */
    tb_nvtx(&b, "ovl", "grad_ready bucket=0 bytes=1024", t0 + 350, OVL_NONE);
    tb_nvtx(&b, "ovl", "bucket 0", t0 + 390, t0 + 420);
    tb_collective(&b, "AllReduce", 1 << 20, 2, t0 + 400, nccl);
    tb_api(&b, t0 + 402, t0 + 405, nccl);  /* NCCL's own launch inside the call */
    /* A second kernel of the same launch (same correlation): flows end on the first only. */
    ovl_err err = {0};
    int64_t name;
    ovl_kernel_row k2 = {t0 + 910, t0 + 950, 0, 13, nccl, 0, {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
    if (ovl_tw_intern(b.w, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &name, &err)) exit(2);
    k2.name = name;
    if (ovl_tw_kernel(b.w, &k2, &err)) exit(2);
  }
  tb_close(&b);
}

static void test_rich_traces(void) {
  char a[512], b2[512], args[1200];
  snprintf(a, sizeof a, "%s", tb_temp_path("rank0.sqlite"));
  snprintf(b2, sizeof b2, "%s", tb_temp_path("rank1.sqlite"));
  build_rich(a, 0);
  build_rich(b2, 1);
  long k = sql_kernels(a);
  CHECK_I64(k, 12);
  snprintf(args, sizeof args, "'%s'", a);
  export_and_check("one rank", args, k, 1);
  /* Two ranks: flow ids and uuids must stay unique across ranks. */
  snprintf(args, sizeof args, "'%s' '%s'", a, b2);
  export_and_check("two ranks", args, k + sql_kernels(b2), 2);
  same_exports_every_way("two ranks", args);
  snprintf(args, sizeof args, "'%s' '%s'", a, a);  /* a file named twice: its facts are ambiguous */
  same_exports_every_way("one rank twice", args);
  snprintf(args, sizeof args, "'%s/kineto-nonccl'", traces_dir);  /* converted: the api rows read after */
  same_exports_every_way("Kineto", args);
  unlink(a);
  unlink(b2);
}

/* Many launches, from several threads, with NVTX ranges and NCCL calls: the host pass
** drawn beside the GPU pass (OVL_EXPORT_THREADS=1) writes several chunks (out_stream.h)
** while the GPU pass writes its own, and the file holds the same events as the one drawn on
** one thread (=0), whose bytes are main's. */
static void test_host_pass_beside(void) {
  char path[512], args[600], pf[2][512], cmd[2048];
  snprintf(path, sizeof path, "%s", tb_temp_path("launches.sqlite"));
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  for (int i = 0; i < 60000; i++, t += 1000) {
    if (i % 500 == 0) tb_nvtx(&b, "ovl", "step", t, t + 500 * 1000 - 10);
    int64_t c = tb_kernel(&b, i % 3 ? "gemm" : "relu", t + 300, t + 900, 0, 7 + i % 2);
    tb_api(&b, t + 10, t + 40, c);
    if (i % 100 == 99) {
      int64_t nccl = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 500, t + 950, 0, 13);
      tb_collective(&b, "AllReduce", 1 << 20, 2, t + 50, nccl);
    }
  }
  tb_close(&b);
  snprintf(args, sizeof args, "'%s'", path);
  for (int i = 0; i < 2; i++) {
    char name[64];
    snprintf(name, sizeof name, "beside%d.pftrace", i);
    snprintf(pf[i], sizeof pf[i], "%s", tb_temp_path(name));
    snprintf(cmd, sizeof cmd, "env OVL_EXPORT_THREADS=%d OVL_DEBUG_EXPORT=1 '%s' export -q --perfetto '%s' %s", !i,
             ovl, pf[i], args);
    cmd_result r = run_cmd(cmd);
    if (r.status != 0) fprintf(stderr, "host pass beside: %s%s", r.out, r.err);
    CHECK_I64(r.status, 0);
    /* the threads drew (the host pass and the counters) or did not: said by the run itself,
    ** since the packets' order may or may not differ from one thread's */
    const char *said = strstr(r.err ? r.err : "", i ? ": 0 pass(es) drawn beside" : ": 2 pass(es) drawn beside");
    if (!said) fprintf(stderr, "host pass beside, threads %d: %s", !i, r.err ? r.err : "(nothing on stderr)\n");
    CHECK(said != NULL);
    cmd_free(&r);
  }
  CHECK(same_events("host pass beside", pf[0], pf[1]));
  unlink(pf[0]);
  unlink(pf[1]);
  unlink(path);
}

/* Layout details through the library: lanes, flows, counters, findings, clock offsets. */
/* One trace analysed as a job with these options: the context and job the test then uses. */
static void analyze_path(char *path, const ovl_analysis_options *aopt, ovl_analysis_ctx *ctx, ovl_job *job) {
  ovl_err err = {0};
  CHECK_I64(ovl_analysis_ctx_init(ctx, aopt, &err), 0);
  char *args[] = {path};
  CHECK_I64(ovl_analyze_job(ctx, args, 1, NULL, NULL, job, &err), 0);
}

static void test_layout(void) {
  char path[512], js[512], pf[512];
  snprintf(path, sizeof path, "%s", tb_temp_path("layout.sqlite"));
  snprintf(js, sizeof js, "%s", tb_temp_path("layout.json"));
  snprintf(pf, sizeof pf, "%s", tb_temp_path("layout.pftrace"));
  tb b;
  tb_open(&b, path);
  int64_t c1 = tb_kernel(&b, "compute_a", 1000, 2000, 0, 7);
  tb_kernel(&b, "compute_b", 1500, 2500, 0, 7);  /* overlaps: lane 2 of stream 7 */
  int64_t nccl = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1800, 3000, 0, 13);
  tb_collective(&b, "AllReduce", 4096, 2, 1700, nccl);
  tb_api(&b, 900, 950, c1);
  tb_close(&b);

  ovl_analysis_ctx ctx;
  ovl_analysis_options aopt = {0};
  ovl_job job;
  analyze_path(path, &aopt, &ctx, &job);
  ovl_err err = {0};
  CHECK_I64(job.nranks, 1);
  /* Hand-built findings: one at a step, one for the rank, one for the job. */
  ovl_rank_result *r = &job.ranks[0];
  CHECK(r->nsteps >= 1);
  CHECK_I64(ovl_add_finding(&r->steps[0].findings, &r->steps[0].nfindings, "late_firing", 0, 123, "step finding"), 0);
  CHECK_I64(ovl_add_finding(&r->findings, &r->nfindings, "single_bucket", -1, 0, "rank finding"), 0);
  CHECK_I64(ovl_add_finding(&job.findings, &job.nfindings, "straggler", -1, 7, "job finding"), 0);

  ovl_export_options opt = {OVL_EXPORT_CHROME, js, NULL, 0, NULL};
  ovl_export_stats st;
  CHECK_I64(ovl_export_job(&job, &ctx, &opt, &st, &err), 0);
  CHECK_I64(st.kernel_slices, 3);
  CHECK_I64(st.flows, 2);  /* the launch of compute_a and the NCCL call */
  char *text = read_text(js);
  CHECK_I64(count_of(text, "\"name\":\"stream 7 (compute)\""), 2);  /* two lanes */
  CHECK_I64(count_of(text, "\"name\":\"stream 13 (NCCL)\""), 1);
  CHECK_I64(count_of(text, "\"ph\":\"i\""), 3);
  CHECK(strstr(text, "\"name\":\"late_firing\"") != NULL);
  CHECK(strstr(text, "\"name\":\"straggler\"") != NULL);
  CHECK(strstr(text, "\"recoverable_ns\":123") != NULL);
  CHECK(strstr(text, "\"bytes\":4096") != NULL);   /* collective annotation */
  /* Exposed communication: compute runs until 2500, the all-reduce until 3000. */
  CHECK(strstr(text, "\"name\":\"exposed communication\",\"pid\":0,\"ts\":1.000,\"args\":{\"value\":0}") != NULL);
  CHECK(strstr(text, "\"name\":\"exposed communication\",\"pid\":0,\"ts\":2.500,\"args\":{\"value\":1}") != NULL);
  CHECK(strstr(text, "\"name\":\"exposed communication\",\"pid\":0,\"ts\":3.000,\"args\":{\"value\":0}") != NULL);
  CHECK_I64(count_of(text, "\"name\":\"exposed communication\""), 3);
  CHECK(strstr(text, "\"name\":\"communication bytes in flight\",\"pid\":0,\"ts\":1.800,\"args\":{\"value\":4096}") != NULL);
  CHECK(strstr(text, "\"name\":\"communication bytes in flight\",\"pid\":0,\"ts\":3.000,\"args\":{\"value\":0}") != NULL);
  CHECK(strstr(text, "\"ts\":1.000,\"dur\":1.000") != NULL);  /* compute_a: 1000..2000 ns */
  free(text);

  /* A clock offset moves every event of the rank, at one place. */
  int64_t offset = 5000;
  opt.rank_offsets = &offset;
  CHECK_I64(ovl_export_job(&job, &ctx, &opt, NULL, &err), 0);
  text = read_text(js);
  CHECK(strstr(text, "\"ts\":6.000,\"dur\":1.000") != NULL);
  CHECK(strstr(text, "\"ts\":1.000,\"dur\":1.000") == NULL);
  free(text);

  opt.format = OVL_EXPORT_PERFETTO;
  opt.path = pf;
  opt.rank_offsets = NULL;
  CHECK_I64(ovl_export_job(&job, &ctx, &opt, &st, &err), 0);
  char *out = NULL;
  CHECK_I64(run_checker(pf, 0, 3, &out), 0);
  CHECK_I64((long)stat_of(out, "instants"), 3);
  CHECK_I64((long)stat_of(out, "flows"), 2);
  free(out);

  /* An unwritable output is a user error naming the file; nothing is left behind. */
  opt.path = "/nonexistent-dir/x.pftrace";
  CHECK_I64(ovl_export_job(&job, &ctx, &opt, NULL, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "/nonexistent-dir/x.pftrace") != NULL);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  unlink(path);
  unlink(js);
  unlink(pf);
}

/* Host rows far out of start order (a reorder window of one row): late rows go to lanes of
** their own instead of breaking the nesting; every check still holds. */
static void test_unsorted_host_rows(void) {
  char path[512], pf[512];
  snprintf(path, sizeof path, "%s", tb_temp_path("unsorted.sqlite"));
  snprintf(pf, sizeof pf, "%s", tb_temp_path("unsorted.pftrace"));
  tb b;
  tb_open(&b, path);
  int64_t corr[20];
  for (int i = 0; i < 20; i++) corr[i] = tb_kernel(&b, "k", 1000 + i * 100, 1050 + i * 100, 0, 7);
  for (int i = 19; i >= 0; i--) tb_api(&b, 10 + i * 40, 40 + i * 40, corr[i]);  /* newest first */
  for (int i = 9; i >= 0; i--) tb_nvtx(&b, NULL, "range", i * 50, i * 50 + 70);  /* crossing ranges */
  tb_close(&b);
  ovl_analysis_ctx ctx;
  ovl_analysis_options aopt = {0};
  ovl_job job;
  analyze_path(path, &aopt, &ctx, &job);
  ovl_err err = {0};
  ovl_export_options opt = {OVL_EXPORT_PERFETTO, pf, NULL, 1, NULL};
  ovl_export_stats st;
  CHECK_I64(ovl_export_job(&job, &ctx, &opt, &st, &err), 0);
  CHECK_I64(st.flows, 20);
  CHECK_I64(st.host_slices, 30);
  char *out = NULL;
  CHECK_I64(run_checker(pf, 0, 20, &out), 0);
  CHECK_I64((long)stat_of(out, "flows"), 20);
  free(out);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  unlink(path);
  unlink(pf);
}

/* What the export knows of the GPU work before drawing (each stream's role, the correlation
** ids with GPU work) comes from the analysis's own pass (gpu_facts.h) instead of a pre-pass
** of the export's, and so does the work it draws (the capture, instead of a second read):
** the three ways (capture; facts and a second read, OVL_EXPORT_ONE_READ=0; pre-pass and a
** second read) give the same files, byte for byte, also when the analysis had to sort the
** work and start its pass again (the facts then count and capture each item once). */
static void test_facts_like_prepass(void) {
  static const char *const tag[3] = {"facts", "facts-reread", "facts-prepass"};
  char path[512], pf[3][512], js[3][512];
  snprintf(path, sizeof path, "%s", tb_temp_path("facts.sqlite"));
  for (int i = 0; i < 3; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s.pftrace", tag[i]);
    snprintf(pf[i], sizeof pf[i], "%s", tb_temp_path(name));
    snprintf(name, sizeof name, "%s.json", tag[i]);
    snprintf(js[i], sizeof js[i], "%s", tb_temp_path(name));
  }
  tb b;
  tb_open(&b, path);
  long items = 0;
  for (int64_t dev = 0; dev < 2; dev++) {
    for (int i = 0; i < 6; i++) {
      int64_t k = tb_kernel(&b, "compute", 10000 + i * 1000, 10800 + i * 1000, dev, 7);
      if (i % 2 == 0) tb_api(&b, 9000 + i * 1000, 9100 + i * 1000, k);  /* a launch with its flow */
      items++;
    }
    int64_t nccl = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 12500, 16000, dev, 13);
    tb_collective(&b, "AllReduce", 4096, 2, 12000, nccl);
    tb_memop(&b, "HtoD", 9000, 9500, dev, 20, 1 << 20);  /* far before the rows above it */
    tb_memop(&b, "DtoH", 17000, 17500, dev, 20, 1 << 20);
    tb_kernel(&b, "compute", 18000, 18100, dev, 20);     /* stream 20 is still a memcpy stream */
    items += 4;
  }
  tb_api(&b, 100, 200, 999999);  /* a launch without GPU work: no flow */
  tb_close(&b);

  ovl_export_facts facts;
  CHECK_I64(ovl_export_facts_init(&facts), 0);
  ovl_analysis_ctx ctx;
  ovl_analysis_options aopt = {0};
  aopt.reorder_window = 1;  /* the memops come out of order: the pass is sorted and run again */
  aopt.observer = &facts.observer;
  ovl_job job;
  analyze_path(path, &aopt, &ctx, &job);
  ovl_err err = {0};
  CHECK_I64(job.nranks, 2);
  char source[512];  /* the ovl trace the analysis read (kept: the job is freed below) */
  snprintf(source, sizeof source, "%s", job.ranks[0].ovl_path ? job.ranks[0].ovl_path : job.ranks[0].trace_path);
  const ovl_gpu_facts *g = ovl_export_facts_find(&facts, source);
  CHECK(g != NULL);
  if (g) {
    CHECK_I64((long)g->nstreams, 6);  /* streams 7, 13, 20 of two devices */
    long counted = 0;
    for (size_t i = 0; i < g->nstreams; i++)
      for (int c = 0; c < 3; c++) counted += g->streams[i].count[c];
    CHECK_I64(counted, items);
    CHECK(!ovl_idset_has(&g->gpu_corr, 999999));
    CHECK_I64(g->sorted, 1);
    CHECK(ovl_gpu_facts_captured(g));
    CHECK_I64((long)g->capture.nitems, items);
    CHECK_I64((long)g->capture.ncolls, 2);  /* the NCCL kernel of each device */
  }
  for (int i = 0; i < 3; i++) {
    ovl_export_options opt = {OVL_EXPORT_PERFETTO, pf[i], NULL, 0, i == 2 ? NULL : &facts};
    if (i == 1) setenv("OVL_EXPORT_ONE_READ", "0", 1);
    else unsetenv("OVL_EXPORT_ONE_READ");
    ovl_export_stats st;
    CHECK_I64(ovl_export_job(&job, &ctx, &opt, &st, &err), 0);
    if (err.msg[0]) fprintf(stderr, "export: %s\n", err.msg);
    CHECK_I64(st.flows, 2 * 3 + 2);  /* three launches and the NCCL call per device */
    opt.format = OVL_EXPORT_CHROME;
    opt.path = js[i];
    CHECK_I64(ovl_export_job(&job, &ctx, &opt, NULL, &err), 0);
  }
  unsetenv("OVL_EXPORT_ONE_READ");
  char *out = NULL;
  CHECK_I64(run_checker(pf[0], 0, 16, &out), 0);
  free(out);
  char *text = read_text(js[0]);
  CHECK_I64(count_of(text, "\"name\":\"stream 20 (memcpy)\""), 2);
  CHECK_I64(count_of(text, "\"name\":\"stream 13 (NCCL)\""), 2);
  free(text);
  for (int k = 0; k < 4; k++) {
    const char *a = k & 1 ? js[0] : pf[0], *c = k & 1 ? js[1 + k / 2] : pf[1 + k / 2];
    CHECK(same_bytes(a, c) ? 1 : (fprintf(stderr, "%s and %s differ\n", a, c), 0));
  }
  /* A file analysed twice (named twice): its facts are ambiguous, the export reads its own. */
  ovl_job_free(&job);
  char *twice[] = {path, path};
  CHECK_I64(ovl_analyze_job(&ctx, twice, 2, NULL, NULL, &job, &err), 0);
  CHECK(ovl_export_facts_find(&facts, source) == NULL);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  ovl_export_facts_free(&facts);
  unlink(path);
  for (int i = 0; i < 3; i++) {
    unlink(pf[i]);
    unlink(js[i]);
  }
}

/* Unknown values are left out of the annotations: a zero-length NCCL kernel has no bandwidth,
** a step without communication no efficiency. Neither file may carry NaN (or Chrome's null
** in its place); the checker rejects NaN annotations in the Perfetto file. */
static void test_unknown_values(void) {
  char path[512], js[512], pf[512];
  snprintf(path, sizeof path, "%s", tb_temp_path("unknown.sqlite"));
  snprintf(js, sizeof js, "%s", tb_temp_path("unknown.json"));
  snprintf(pf, sizeof pf, "%s", tb_temp_path("unknown.pftrace"));
  tb b;
  tb_open(&b, path);
  tb_nvtx(&b, "ovl", "step", 0, 1000);     /* compute only: no efficiency */
  tb_nvtx(&b, "ovl", "step", 1000, 2000);
  tb_kernel(&b, "compute_a", 100, 900, 0, 7);
  tb_kernel(&b, "compute_b", 1100, 1900, 0, 7);
  int64_t nccl = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1500, 1500, 0, 13);
  tb_collective(&b, "AllReduce", 4096, 2, 1400, nccl);  /* zero length: no bandwidth */
  nccl = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1600, 1950, 0, 13);
  tb_collective(&b, "AllReduce", 8192, 2, 1550, nccl);  /* a bandwidth */
  tb_close(&b);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' export -q --perfetto '%s' --chrome '%s' '%s'", ovl, pf, js, path);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  char *text = read_text(js);
  CHECK(strstr(text, "\"bytes\":4096") != NULL);  /* the collective is annotated... */
  CHECK_I64(count_of(text, "busbw_gbps"), 1);     /* ...without the bandwidths it lacks */
  CHECK_I64(count_of(text, "algbw_gbps"), 1);
  CHECK_I64(count_of(text, "overlap_efficiency"), 1);  /* the step with communication */
  CHECK(strstr(text, "null") == NULL);
  CHECK(strstr(text, "NaN") == NULL && strstr(text, "nan") == NULL);
  free(text);
  CHECK_I64(run_checker(pf, 0, 4, NULL), 0);
  unlink(path);
  unlink(js);
  unlink(pf);
}

/* Epoch timestamps (ns since 1970, as Kineto and CUPTI traces have them): in microseconds a
** reader's double keeps them to about 0.25 µs only, so back-to-back kernels would overlap.
** The Chrome file counts from a small origin it states; the checker reads ts/dur as doubles
** and finds every track still nested. */
static void test_epoch_times(void) {
  char path[512], js[512], cmd[2048];
  snprintf(path, sizeof path, "%s", tb_temp_path("epoch.sqlite"));
  snprintf(js, sizeof js, "%s", tb_temp_path("epoch.json"));
  const int64_t t0 = 1694128201434728961LL;  /* 2023-09-07, an odd nanosecond */
  tb b;
  tb_open(&b, path);
  int64_t t = t0;
  for (int i = 0; i < 200; i++) {  /* back to back, lengths not multiples of 1 µs */
    int64_t len = 1001 + 37 * (i % 11);
    tb_kernel(&b, i % 2 ? "gemm" : "relu", t, t + len, 0, 7);
    t += len;
  }
  tb_close(&b);
  snprintf(cmd, sizeof cmd, "'%s' export -q --chrome '%s' '%s'", ovl, js, path);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  char *out = NULL;
  CHECK_I64(run_checker(js, 1, 200, &out), 0);
  CHECK_I64((long)stat_of(out, "overlapping_x_events"), 0);
  free(out);
  char *text = read_text(js);
  char origin[96];
  snprintf(origin, sizeof origin, "\"time_origin_ns\":\"%lld\"", (long long)(t0 / 1000000 * 1000000));
  CHECK(strstr(text, origin) != NULL);  /* the earliest work, rounded down to a millisecond */
  free(text);
  unlink(path);
  unlink(js);
}

static void test_simulated(void) {
  char path[512], cmd[1024];
  snprintf(path, sizeof path, "%s", tb_temp_path("sim.sqlite"));
  snprintf(cmd, sizeof cmd, "'%s' simulate --bucket-layers 8 --steps 3 --emit-trace '%s'", ovl, path);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s'", path);
  long k = sql_kernels(path);
  CHECK(k > 0);
  export_and_check("simulated", cmd, k, 1);
  unlink(path);
}

static void test_usage(void) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' export /nonexistent.sqlite", ovl);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "--perfetto") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' export --perfetto /tmp/x.pftrace /nonexistent.sqlite", ovl);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strstr(r.err, "/nonexistent.sqlite") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' export --help", ovl);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "--chrome") != NULL);
  cmd_free(&r);
}

/* A real third-party job (8 Kineto traces): the export passes the checker, with one kernel
** slice per kernel, kernels counted by SQL in an `ovl import` of the same traces. */
static void test_real_traces(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/kineto-param-dlrm8", traces_dir);
  if (access(dir, R_OK) != 0) {
    fprintf(stderr, "SKIP real traces: %s is absent\n", dir);
    return;
  }
  char imported[512], cmd[4096];
  snprintf(imported, sizeof imported, "%s", tb_temp_path("real-import"));
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && '%s' import -o '%s' '%s'", imported, ovl, imported, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  long kernels = 0;
  for (int w = 0; w < 8; w++) {
    char path[700];
    snprintf(path, sizeof path, "%s/worker%d_step_12.sqlite", imported, w);
    sqlite3 *db = dbq_open(path);
    kernels += (long)dbq_int(db, "SELECT count(*) FROM kernels");
    sqlite3_close(db);
  }
  CHECK(kernels > 0);
  /* the imported ovl traces: their api rows are read beside the analysis, and the host pass
  ** drawn beside the GPU pass */
  char pfs[2][512];
  for (int i = 0; i < 2; i++) {
    snprintf(pfs[i], sizeof pfs[i], "%s", tb_temp_path(i ? "real-ovl1.pftrace" : "real-ovl0.pftrace"));
    snprintf(cmd, sizeof cmd, "env OVL_EXPORT_THREADS=%d '%s' export -q --perfetto '%s' '%s'/*.sqlite", !i, ovl, pfs[i],
             imported);
    r = run_cmd(cmd);
    CHECK_I64(r.status, 0);
    cmd_free(&r);
  }
  CHECK(same_events("real traces, imported", pfs[0], pfs[1]));
  unlink(pfs[0]);
  unlink(pfs[1]);
  char pf[512];
  snprintf(pf, sizeof pf, "%s", tb_temp_path("real.pftrace"));
  snprintf(cmd, sizeof cmd, "'%s' export -q --perfetto '%s' '%s'", ovl, pf, dir);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  char *out = NULL;
  CHECK_I64(run_checker(pf, 0, kernels, &out), 0);
  CHECK_I64(check_track_order(out), 8);
  free(out);
  cmd_free(&r);
  /* Chrome JSON of the same job: epoch times, read back as doubles, still nest. */
  char js[512];
  snprintf(js, sizeof js, "%s", tb_temp_path("real.json.gz"));
  snprintf(cmd, sizeof cmd, "'%s' export -q --chrome '%s' '%s'", ovl, js, dir);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  CHECK_I64(run_checker(js, 1, kernels, &out), 0);
  CHECK_I64((long)stat_of(out, "overlapping_x_events"), 0);
  free(out);
  check_same_slices("real traces", pf, js);
  unlink(pf);
  unlink(js);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", imported);
  r = run_cmd(cmd);
  cmd_free(&r);
}

/* The Perfetto sink alone: annotation names are interned (defined once per sequence, then
** named by iid), a key it does not know is written by name, and the checker reads each
** annotation back under its name on every track. */
static void test_annotation_names(void) {
  char pf[512], ev[512], cmd[2048];
  snprintf(pf, sizeof pf, "%s", tb_temp_path("names.pftrace"));
  snprintf(ev, sizeof ev, "%s", tb_temp_path("names.events"));
  ovl_export_sink sink;
  ovl_err err = {0};
  CHECK_I64(ovl_perfetto_sink_open(pf, &sink, &err), OVL_OK);
  ovl_xprocess proc = {0, 0, 0, "rank 0"};
  CHECK_I64(sink.process(sink.self, &proc, &err), OVL_OK);
  for (uint32_t t = 0; t < 2; t++) {
    ovl_xtrack track = {t, 0, OVL_XTRACK_SLICES, t ? "stream 8" : "stream 7", (int32_t)t, -1};
    CHECK_I64(sink.track(sink.self, &track, &err), OVL_OK);
  }
  char unknown[] = "not_a_known_key";
  for (int i = 0; i < 6; i++) {
    ovl_xarg a[3] = {{"bytes", OVL_XARG_INT, 1000 + i, 0, NULL},
                     {"op", OVL_XARG_STRING, 0, 0, "allreduce"},
                     {unknown, OVL_XARG_INT, i, 0, NULL}};
    ovl_xslice sl = {100 * i, 100 * i + 50, 1, "ncclKernel", "nccl", a, 3, NULL, 0, NULL, 0};
    CHECK_I64(sink.slice(sink.self, (uint32_t)(i % 2), &sl, &err), OVL_OK);
  }
  CHECK_I64(sink.finish(sink.self, &err), OVL_OK);
  snprintf(cmd, sizeof cmd, "'%s' '%s' --events '%s'", checker, pf, ev);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK_I64((long)stat_of(r.out, "annotations"), 18);
  CHECK_I64((long)stat_of(r.out, "annotation_names_plain"), 6);
  cmd_free(&r);
  char *events = read_text(ev);
  for (int i = 0; i < 6; i++) {
    char want[128];
    snprintf(want, sizeof want, "bytes=%d,op='allreduce',not_a_known_key=%d", 1000 + i, i);
    CHECK(strstr(events, want) != NULL);
  }
  free(events);
  remove(pf);
  remove(ev);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: test_export OVL CHECKER PROTOC|- SCHEMA_DIR TRACES_DIR\n");
    return 2;
  }
  ovl = argv[1];
  checker = argv[2];
  protoc = argv[3];
  schema_dir = argv[4];
  traces_dir = argv[5];
  if (strcmp(protoc, "-") == 0) fprintf(stderr, "SKIP protoc --decode: protoc not found at configure time\n");
  test_annotation_names();
  test_rich_traces();
  test_host_pass_beside();
  test_layout();
  test_unsorted_host_rows();
  test_facts_like_prepass();
  test_unknown_values();
  test_epoch_times();
  test_simulated();
  test_usage();
  test_real_traces();
  return check_summary();
}
