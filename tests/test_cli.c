/*
** The command line as a demanding user meets it (issue 33), one ctest test per property:
**   option_values  a long option without its value is named ("option '--top' needs a value"),
**                  in every verb; unknown options, and values given to flags, are named too
**   keep_traces    an output that exists and is a trace (ovl, Kineto, Nsight Systems) is never
**                  replaced without --force, by any verb; other files are, atomically
**   wrote          every file written is named on stderr; report --html with --json or -o
**                  writes both; the page alone prints nothing on stdout
**   run_outcome    ovl run: -o FILE refused, "no trace written" and why, 127 for a missing
**                  command in both forms, --html checked before the command runs, signals sent
**                  to ovl run reach the command, a command killed by a signal kills ovl run so
**   stray_files    a directory's files that are not traces (config.json) are skipped and
**                  named; a trailing slash gives no "//"
**   help           ovl help COMMAND, ovl help nosuch (exit 1), help in the list
**   once           an output option given twice is refused, nothing written
**   simulate       --strategy with a file name refused; --emit-trace alone writes --best's
**                  schedule; --json without --strategy
**   progress       OVL_PROGRESS=1: each kind of long work (reading a Kineto file, analysing,
**                  each export pass) named with its file and percent on stderr; quiet when
**                  stderr is not a terminal, or is one for a short command, or OVL_PROGRESS=0
**   pg_names       process groups go by the names their Kineto traces give them (report, fit,
**                  --dim NAME=DIM); fit's columns hold 19-digit ids; a fit with r2 < 0 warns
** usage: test_cli OVL_BINARY TRACES_DIR DATA_DIR NOOP_PRELOAD CHECK (NOOP_PRELOAD: fakes/fake_noop_preload.c)
*/
#include "check.h"
#include "nsys_builder.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ovl, *traces, *data, *noop;
static char dir[600];

static cmd_result sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cmd_result sh(const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  return run_cmd(cmd);
}

/* dir/name, in one of a few rotating buffers (copy what must outlive the next 16 calls). */
static const char *at(const char *name) {
  static char bufs[16][800];
  static int k;
  char *b = bufs[k++ % 16];
  snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
  return b;
}

static int exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* FNV-1a of the file's bytes; 0 when it cannot be read. */
static uint64_t digest(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  uint64_t h = 1469598103934665603ull;
  for (int c; (c = getc(f)) != EOF;) h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
  fclose(f);
  return h;
}

static void copy(const char *from, const char *to) {
  cmd_result r = sh("cp '%s' '%s'", from, to);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* An ovl trace made by simulate (8-layer buckets, 3 steps). */
static void sim_trace(const char *path) {
  cmd_result r = sh("'%s' simulate --force --bucket-layers 8 --emit-trace '%s'", ovl, path);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

static int printable(const char *s) {
  for (; *s; s++)
    if (!isprint((unsigned char)*s) && *s != '\n') return 0;
  return 1;
}

static void expect_usage(const char *verb, const char *args, const char *problem) {
  cmd_result r = sh("'%s' %s %s", ovl, verb, args);
  char want[512];
  snprintf(want, sizeof want, "ovl: %s: %s (see 'ovl %s --help')\n", verb, problem, verb);
  CHECK_I64(r.status, 1);
  CHECK_STR(r.err, want);
  CHECK(printable(r.err));
  cmd_free(&r);
}

static void option_values(void) {
  static const struct { const char *verb, *flag; } missing[] = {
    {"report", "--top"}, {"report", "--detail"}, {"report", "--html"}, {"report", "--output"},
    {"report", "--dim"}, {"export", "--perfetto"}, {"export", "--chrome"}, {"export", "--comm-pattern"},
    {"whatif", "--bucket-mb"}, {"whatif", "--alpha"}, {"simulate", "--layers"}, {"simulate", "--strategy"},
    {"simulate", "--emit-trace"}, {"fit", "--step-pattern"}, {"import", "--output"}, {"run", "--flush-ms"},
  };
  for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
    char problem[128];
    snprintf(problem, sizeof problem, "option '%s' needs a value", missing[i].flag);
    expect_usage(missing[i].verb, missing[i].flag, problem);
  }
  expect_usage("report", "-o", "option '-o' needs a value");
  expect_usage("report", "--nosuch x.sqlite", "option '--nosuch' is unknown");
  expect_usage("fit", "--gradients=yes x.sqlite", "option '--gradients' takes no value");
  expect_usage("export", "-x x.sqlite", "option '-x' is unknown");
  expect_usage("simulate", "-o x", "option '-o' is unknown");
}

/* ---------------------------------------------------------------------------------- */

typedef struct trace_kind {
  const char *name, *source, *format;
} trace_kind;

/* Runs `verb args` whose output is target, an existing trace: refused without --force (exit
** 1, one line naming it, unchanged), replaced with it. */
static void refuses_then_forces(const char *what, const char *target, const char *fmt, const char *force_fmt,
                                const char *format) {
  uint64_t before = digest(target);
  cmd_result r = sh(fmt, ovl, target);
  char want[1024];
  snprintf(want, sizeof want, "ovl: %s: exists and is a trace (%s): not replaced; name another output, or give "
                              "--force to replace it\n", target, format);
  CHECK_I64(r.status, 1);
  CHECK_STR(r.err, want);
  CHECK(digest(target) == before);
  if (r.status != 1) fprintf(stderr, "  %s onto %s: status %d, stderr %s\n", what, target, r.status, r.err);
  cmd_free(&r);
  r = sh(force_fmt, ovl, target);
  CHECK_I64(r.status, 0);
  CHECK(digest(target) != before);
  if (r.status != 0) fprintf(stderr, "  %s --force onto %s: status %d, stderr %s\n", what, target, r.status, r.err);
  cmd_free(&r);
}

static void keep_traces(void) {
  char input[800], other[800], kineto[800], nsys_src[800];
  snprintf(input, sizeof input, "%s", at("input.sqlite"));
  sim_trace(input);
  snprintf(other, sizeof other, "%s", at("other.sqlite"));
  cmd_result o = sh("'%s' simulate --bucket-layers 4 --emit-trace '%s'", ovl, other);
  CHECK_I64(o.status, 0);
  cmd_free(&o);
  snprintf(kineto, sizeof kineto, "%s/kineto-param-dlrm8/worker1_step_12.json.gz", traces);
  snprintf(nsys_src, sizeof nsys_src, "%s/base-nsys.sqlite", data);
  const trace_kind kinds[] = {
    {"w0.json.gz", kineto, "Kineto JSON"}, {"rank0.sqlite", other, "ovl"}, {"nsys.sqlite", nsys_src, "Nsight Systems"}};
  char cmd[1200], force_cmd[1200];
  static const char *const verbs[][2] = {
    {"'%s' export --perfetto '%s' ", "'%s' export --force --perfetto '%s' "},
    {"'%s' export --chrome '%s' ", "'%s' export --chrome '%s' --force "},
    {"'%s' report -o '%s' ", "'%s' report --force -o '%s' "},
    {"'%s' report --html '%s' ", "'%s' report --force --html '%s' "},
    {"'%s' fit --json -o '%s' ", "'%s' fit --force --json -o '%s' "},
    {"'%s' whatif --bucket-mb 25 -o '%s' ", "'%s' whatif --force --bucket-mb 25 -o '%s' "},
    {"'%s' import -o '%s' ", "'%s' import --force -o '%s' "},
  };
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++) {
      copy(kinds[k].source, at(kinds[k].name));
      snprintf(cmd, sizeof cmd, "%s'%s'", verbs[v][0], input);
      snprintf(force_cmd, sizeof force_cmd, "%s'%s'", verbs[v][1], input);
      refuses_then_forces(verbs[v][0], at(kinds[k].name), cmd, force_cmd, kinds[k].format);
    }
  }
  /* simulate --emit-trace and run --html (checked before the command runs: no marker) */
  copy(other, at("sim.sqlite"));
  refuses_then_forces("simulate", at("sim.sqlite"), "'%s' simulate --bucket-layers 2 --emit-trace '%s'",
                      "'%s' simulate --bucket-layers 2 --force --emit-trace '%s'", "ovl");
  copy(kineto, at("page.json.gz"));
  uint64_t before = digest(at("page.json.gz"));
  cmd_result r = sh("'%s' run -o '%s' --lib '%s' --html '%s' -- touch '%s'", ovl, at("runs"), noop, at("page.json.gz"),
                    at("ran"));
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "exists and is a trace (Kineto JSON)") != NULL);
  CHECK(!exists(at("ran")));
  CHECK(digest(at("page.json.gz")) == before);
  cmd_free(&r);
  /* files that are not traces are replaced as before: a report, ovl's own Chrome export */
  for (int i = 0; i < 2; i++) {
    r = sh("'%s' report --json -o '%s' '%s'", ovl, at("report.json"), input);
    CHECK_I64(r.status, 0);
    cmd_free(&r);
    r = sh("'%s' export --chrome '%s' '%s'", ovl, at("own.json"), input);
    CHECK_I64(r.status, 0);
    cmd_free(&r);
  }
  write_text(at("notes.json"), "{\"lr\": 0.1}\n");
  r = sh("'%s' fit --json -o '%s' '%s'", ovl, at("notes.json"), input);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

static void wrote(void) {
  char in[800];
  snprintf(in, sizeof in, "%s", at("in.sqlite"));
  sim_trace(in);
  cmd_result r = sh("'%s' report -o '%s' '%s'", ovl, at("r.txt"), in);
  char want[1024];
  struct stat sb;
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, "");
  CHECK(strncmp(r.err, "ovl: wrote ", 11) == 0 && strstr(r.err, at("r.txt")) && count_lines(r.err) == 1);
  cmd_free(&r);
  /* --json with --html: the JSON on stdout and the page */
  r = sh("'%s' report --json --compact --html '%s' '%s'", ovl, at("p.html"), in);
  CHECK_I64(r.status, 0);
  CHECK(strncmp(r.out, "{\"ovl_report_version\":1", 23) == 0);
  CHECK(stat(at("p.html"), &sb) == 0 && sb.st_size > 1000);
  snprintf(want, sizeof want, "ovl: wrote %s (", at("p.html"));
  CHECK(strncmp(r.err, want, strlen(want)) == 0);
  cmd_free(&r);
  /* -o with --html: the text report in the file and the page */
  r = sh("'%s' report -o '%s' --html '%s' '%s'", ovl, at("r2.txt"), at("p2.html"), in);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, "");
  CHECK(count_lines(r.err) == 2 && strstr(r.err, at("r2.txt")) && strstr(r.err, at("p2.html")));
  CHECK(stat(at("r2.txt"), &sb) == 0 && sb.st_size > 100 && stat(at("p2.html"), &sb) == 0);
  cmd_free(&r);
  /* the page alone: nothing on stdout, its name on stderr */
  r = sh("'%s' report --html '%s' '%s'", ovl, at("p3.html"), in);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, "");
  snprintf(want, sizeof want, "ovl: wrote %s (", at("p3.html"));
  CHECK(strncmp(r.err, want, strlen(want)) == 0 && count_lines(r.err) == 1);
  cmd_free(&r);
  r = sh("'%s' whatif --bucket-mb 5 -o '%s' '%s'", ovl, at("w.txt"), in);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.err, "ovl: wrote ") != NULL && strstr(r.err, at("w.txt")) != NULL);
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

static void run_outcome(void) {
  write_text(at("afile"), "x");
  cmd_result r = sh("'%s' run -o '%s' --lib '%s' -- touch '%s'", ovl, at("afile"), noop, at("ran"));
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "is not a directory") != NULL && count_lines(r.err) == 1);
  CHECK(!exists(at("ran")));
  cmd_free(&r);
  /* a command that captures nothing: its status, and why there is no trace */
  r = sh("'%s' run -o '%s' --lib '%s' -- sh -c 'echo out; exit 4'", ovl, at("t1"), noop);
  CHECK_I64(r.status, 4);
  CHECK_STR(r.out, "out\n");
  char want[1024];
  snprintf(want, sizeof want, "ovl: run: no trace written in %s: no process of the command used CUDA or NCCL", at("t1"));
  CHECK(strncmp(r.err, want, strlen(want)) == 0 && count_lines(r.err) == 1);
  cmd_free(&r);
  r = sh("env OVL_DISABLE=1 '%s' run -o '%s' --lib '%s' -- true", ovl, at("t1"), noop);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.err, "no trace written") && strstr(r.err, "OVL_DISABLE is set"));
  cmd_free(&r);
  /* the traces it wrote, named (the command copies in one simulate wrote: a sanitized ovl would
  ** not run under the preload, its ASan runtime not first) */
  r = sh("'%s' simulate --emit-trace '%s' 2>/dev/null", ovl, at("sim.sqlite"));
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  r = sh("'%s' run -o '%s' --lib '%s' -- cp '%s' '%s'", ovl, at("t2"), noop, at("sim.sqlite"), at("t2/a.sqlite"));
  CHECK_I64(r.status, 0);
  snprintf(want, sizeof want, "ovl: run: wrote 1 trace in %s: a.sqlite\n", at("t2"));
  CHECK(strstr(r.err, want) != NULL);
  cmd_free(&r);
  r = sh("'%s' run -q -o '%s' --lib '%s' -- true", ovl, at("t2"), noop);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.err, "");
  cmd_free(&r);
  /* a missing command: 127 in both forms, one line */
  for (int html = 0; html < 2; html++) {
    r = sh("'%s' run -o '%s' --lib '%s' %s%s -- no-such-command-33", ovl, at("t3"), noop, html ? "--html " : "",
           html ? at("none.html") : "");
    CHECK_I64(r.status, 127);
    CHECK_STR(r.err, "ovl: run: no-such-command-33: No such file or directory\n");
    cmd_free(&r);
  }
  CHECK(!exists(at("none.html")));
  /* a signal sent to ovl run goes on to the command, which ends as it likes */
  r = sh("'%s' run -o '%s' --lib '%s' -- sh -c 'trap \"exit 7\" TERM; touch %s; while :; do sleep 0.05; done' & "
         "p=$!; i=0; while [ ! -e '%s' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; kill -TERM $p; wait $p",
         ovl, at("t4"), noop, at("ready"), at("ready"));
  CHECK_I64(r.status, 7);
  cmd_free(&r);
  /* a command killed by a signal: ovl run dies of the same signal */
  r = sh("'%s' run -q -o '%s' --lib '%s' -- sh -c 'kill -USR1 $$'; echo status=$?", ovl, at("t4"), noop);
  snprintf(want, sizeof want, "status=%d\n", 128 + SIGUSR1);
  CHECK_STR(r.out, want);
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

static void stray_files(void) {
  char d[800];
  snprintf(d, sizeof d, "%s", at("job"));
  mkdir(d, 0777);
  char from[800];
  for (int i = 0; i < 2; i++) {
    snprintf(from, sizeof from, "%s/kineto-param-dlrm8/worker%d_step_12.json.gz", traces, i);
    char to[900];
    snprintf(to, sizeof to, "%s/worker%d.json.gz", d, i);
    copy(from, to);
  }
  char cfg[900];
  snprintf(cfg, sizeof cfg, "%s/config.json", d);
  write_text(cfg, "{\"lr\": 0.1, \"batch\": 32}\n");
  cmd_result r = sh("'%s' report --json --compact '%s/'", ovl, d);
  CHECK_I64(r.status, 0);
  char want[1024];
  snprintf(want, sizeof want, "ovl: warning: skipped 1 file that is not a trace: %s/config.json (JSON without "
                              "traceEvents)\n", d);
  CHECK_STR(r.err, want);
  CHECK(strstr(r.out, "\"world_size\":8") != NULL);
  CHECK(strstr(r.out, "//") == NULL);
  snprintf(want, sizeof want, "\"trace\":\"%s/worker0.json.gz\"", d);
  CHECK(strstr(r.out, want) != NULL);
  cmd_free(&r);
  /* import of the directory skips it too */
  r = sh("'%s' import -q '%s' -o '%s'", ovl, d, at("imported"));
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.err, "config.json (JSON without traceEvents)") != NULL);
  cmd_free(&r);
  /* named on the command line, it is an error */
  r = sh("'%s' report '%s'", ovl, cfg);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "not a Kineto trace") != NULL);
  cmd_free(&r);
  /* a directory of nothing but such files */
  char lone[800];
  snprintf(lone, sizeof lone, "%s", at("lone"));
  mkdir(lone, 0777);
  snprintf(cfg, sizeof cfg, "%s/a.json", lone);
  write_text(cfg, "[1, 2]\n");
  r = sh("'%s' report '%s'", ovl, lone);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "directory holds no traces") != NULL && count_lines(r.err) == 1);
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

static void help(void) {
  cmd_result a = sh("'%s' help report", ovl), b = sh("'%s' report --help", ovl);
  CHECK_I64(a.status, 0);
  CHECK(strncmp(a.out, "usage: ovl report", 17) == 0);
  CHECK_STR(a.out, b.out);
  cmd_free(&a);
  cmd_free(&b);
  a = sh("'%s' help nosuch", ovl);
  CHECK_I64(a.status, 1);
  CHECK_STR(a.err, "ovl: help: unknown command 'nosuch' (see 'ovl --help')\n");
  CHECK_STR(a.out, "");
  cmd_free(&a);
  a = sh("'%s' --help", ovl);
  CHECK_I64(a.status, 0);
  CHECK(strstr(a.out, "\n  help ") != NULL);
  cmd_free(&a);
  static const char *const verbs[] = {"report", "export", "simulate", "fit", "whatif", "run", "import"};
  for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
    a = sh("'%s' %s --help", ovl, verbs[i]);
    CHECK_I64(a.status, 0);
    CHECK(strstr(a.out, "Exit status:") != NULL);
    CHECK(strstr(a.out, "  -h, --help ") != NULL);
    CHECK(strstr(a.out, "--force") != NULL);  /* every verb writes files */
    cmd_free(&a);
  }
}

/* ---------------------------------------------------------------------------------- */

static void once(void) {
  char in[800];
  snprintf(in, sizeof in, "%s", at("in.sqlite"));
  sim_trace(in);
  cmd_result r = sh("'%s' export --perfetto '%s' --perfetto '%s' '%s'", ovl, at("a.pf"), at("b.pf"), in);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "ovl: export: --perfetto given twice") == r.err && count_lines(r.err) == 1);
  CHECK(!exists(at("a.pf")) && !exists(at("b.pf")));
  cmd_free(&r);
  r = sh("'%s' report -o '%s' --output '%s' '%s'", ovl, at("a.txt"), at("b.txt"), in);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "-o given twice") != NULL && !exists(at("a.txt")) && !exists(at("b.txt")));
  cmd_free(&r);
  r = sh("'%s' report --html '%s' --html '%s' '%s'", ovl, at("a.html"), at("b.html"), in);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "--html given twice") != NULL);
  cmd_free(&r);
  r = sh("'%s' simulate --emit-trace '%s' --emit-trace '%s'", ovl, at("a.sqlite"), at("b.sqlite"));
  CHECK_I64(r.status, 1);
  CHECK(!exists(at("a.sqlite")) && !exists(at("b.sqlite")));
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

static void simulate(void) {
  cmd_result r = sh("'%s' simulate --strategy pp --emit-trace '%s'", ovl, at("pp.sqlite"));
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "name a directory") != NULL && count_lines(r.err) == 1);
  CHECK(!exists(at("pp.sqlite")));
  cmd_free(&r);
  r = sh("'%s' simulate --strategy pp --emit-trace '%s'", ovl, at("pp"));
  CHECK_I64(r.status, 0);
  CHECK(exists(at("pp/rank0.sqlite")) && exists(at("pp/rank3.sqlite")));
  cmd_free(&r);
  /* --emit-trace alone: --best's schedule (8 layers of 48: 6 buckets a step); --best 16: 3 */
  for (int best = 8; best <= 16; best += 8) {
    char name[32];
    snprintf(name, sizeof name, "best%d.sqlite", best);
    r = sh("'%s' simulate --best %d --emit-trace '%s'", ovl, best, at(name));
    CHECK_I64(r.status, 0);
    CHECK(strstr(r.err, "-layer buckets") != NULL);
    cmd_free(&r);
    r = sh("'%s' report --json --compact '%s' | grep -o '\"index\":0,[^]]*' | grep -o '\"bucket\":[0-9]*' | sort -u | "
           "wc -l", ovl, at(name));
    CHECK_I64(atoi(r.out), 48 / best);
    cmd_free(&r);
  }
  /* --json without --strategy: the rows of the text table */
  cmd_result t = sh("'%s' simulate --bucket-layers 4,8", ovl), j = sh("'%s' simulate --json --bucket-layers 4,8", ovl);
  CHECK_I64(j.status, 0);
  CHECK(strstr(j.out, "\"rows\": [") != NULL && strstr(j.out, "\"bucket_layers\": 4") != NULL);
  const char *ov = strstr(j.out, "\"overlap_ns\": ");
  char row[64];
  if (ov) {
    snprintf(row, sizeof row, "overlap=%6.1fms", atof(ov + 14) / 1e6);
    CHECK(strstr(t.out, row) != NULL);
  }
  CHECK(ov != NULL);
  cmd_free(&t);
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */

/* Every line of fit's table (up to the first blank-free note) starts its op column where the
** header does. */
static int fit_columns_aligned(const char *text) {
  const char *op = strstr(text, " op ");
  const char *nl = strchr(text, '\n');
  if (!op || !nl || op > nl) return 0;
  size_t at = (size_t)(op - text) + 1;
  for (const char *line = nl + 1; *line && strncmp(line, "note:", 5) && strncmp(line, "warning:", 8) &&
                                  strncmp(line, "time =", 6);) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len <= at || line[at - 1] != ' ' || line[at] == ' ') return 0;
    line = end ? end + 1 : line + len;
  }
  return 1;
}

static void pg_names(void) {
  char named[800], dlrm[800];
  snprintf(named, sizeof named, "%s/kineto-hta/nccl_parser_config__nccl_data.json.gz", traces);
  snprintf(dlrm, sizeof dlrm, "%s/kineto-param-dlrm8", traces);
  cmd_result r = sh("'%s' report --json --compact '%s'", ovl, named);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "\"name\":\"default_pg\",\"dim\":\"dp\"") != NULL);
  cmd_free(&r);
  r = sh("'%s' report --json --compact --dim default_pg=tp '%s'", ovl, named);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "\"name\":\"default_pg\",\"dim\":\"tp\"") != NULL);
  cmd_free(&r);
  r = sh("'%s' report --dim nosuch_pg=dp '%s'", ovl, named);
  CHECK_I64(r.status, 1);
  CHECK_STR(r.err, "ovl: --dim 'nosuch_pg': no process group of the traces is named so (names: default_pg)\n");
  cmd_free(&r);
  /* fit: the name, not the hash; r2 < 0 warned about, row by row */
  r = sh("'%s' fit '%s'", ovl, named);
  CHECK_I64(r.status, 0);
  CHECK(strncmp(r.out, "comm ", 5) == 0 && fit_columns_aligned(r.out));
  int rows = 0, negative = 0, warned = 0;
  for (const char *line = strchr(r.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    char label[64], op[32], r2[32];
    const char *end = strchr(line + 1, '\n'), *last = end;
    while (last && last > line + 1 && last[-1] != ' ') last--;  /* r2 ends the row */
    if (!end || sscanf(line + 1, "%63s %31s", label, op) != 2 || strcmp(label, "default_pg") != 0) continue;
    snprintf(r2, sizeof r2, "%.*s", (int)(end - last), last);
    rows++;
    if (r2[0] != '-' || !r2[1]) continue;  /* "-": no r2 */
    negative++;
    char want[160];
    snprintf(want, sizeof want, "warning: comm default_pg %s: r2 %.2f:", op, atof(r2));
    warned += strstr(r.out, want) != NULL;
  }
  CHECK(rows >= 1);
  CHECK(negative >= 1);  /* this trace's AllReduce times are not a line in their sizes */
  CHECK_I64(warned, negative);
  cmd_free(&r);
  r = sh("'%s' fit --json --compact '%s'", ovl, named);
  CHECK(strstr(r.out, "\"comm_name\":\"default_pg\"") != NULL);
  cmd_free(&r);
  /* a job whose traces name no group: 19-digit ids, columns still aligned */
  r = sh("'%s' fit '%s'", ovl, dlrm);
  CHECK_I64(r.status, 0);
  CHECK(fit_columns_aligned(r.out));
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */

/* A trace long enough for a few progress reports (they come every 64 Ki rows). */
static void long_trace(const char *path) {
  tb b;
  tb_open(&b, path);
  for (int64_t i = 0; i < 200000; i++) {
    int64_t corr = tb_kernel(&b, i % 50 ? "gemm" : "ncclDevKernel_AllReduce_Sum_f32_RING_LL", i * 1000,
                             i * 1000 + 800, 0, i % 50 ? 7 : 13);
    tb_api(&b, i * 1000 - 300, i * 1000 - 200, corr);
  }
  tb_close(&b);
}

static int has_line(const char *text, const char *start, const char *then) {
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *end = strchr(l, '\n');
    size_t len = end ? (size_t)(end - l) : strlen(l);
    if (len > strlen(start) && strncmp(l, start, strlen(start)) == 0) {
      const char *t = strstr(l, then);
      if (t && t < l + len && strchr(t + strlen(then), '%') && strchr(t + strlen(then), '%') < l + len) return 1;
    }
  }
  return 0;
}

static void progress(void) {
  char big[800], want[1024];
  snprintf(big, sizeof big, "%s", at("long.sqlite"));
  long_trace(big);
  cmd_result r = sh("env OVL_PROGRESS=1 '%s' export -q --perfetto '%s' '%s'", ovl, at("long.pftrace"), big);
  CHECK_I64(r.status, 0);
  snprintf(want, sizeof want, "ovl: %s: ", big);
  CHECK(has_line(r.err, want, "analysing "));
  CHECK(has_line(r.err, want, "exporting (host calls) "));
  CHECK(has_line(r.err, want, "exporting (GPU work) "));
  /* the analysis gathered what the export needs of the GPU work: no pre-pass reads it again */
  CHECK(!strstr(r.err, "pre-pass"));
  if (!has_line(r.err, want, "analysing ")) fprintf(stderr, "  stderr: %s\n", r.err);
  cmd_free(&r);
  char kineto[800];
  snprintf(kineto, sizeof kineto, "%s/kineto-param-dlrm8/worker0_step_12.json.gz", traces);
  r = sh("env OVL_PROGRESS=1 '%s' report '%s' >/dev/null", ovl, kineto);
  CHECK_I64(r.status, 0);
  snprintf(want, sizeof want, "ovl: %s: ", kineto);
  CHECK(has_line(r.err, want, "reading "));
  cmd_free(&r);
  /* an Nsight Systems export converted: each table named as it is read (no percentage: its
  ** size under the process filter is not known) */
  char nsys[800];
  snprintf(nsys, sizeof nsys, "%s", at("nsys_export.sqlite"));
  nsys_build_two_process_export(nsys);
  r = sh("env OVL_PROGRESS=1 '%s' report '%s' >/dev/null", ovl, nsys);
  CHECK_I64(r.status, 0);
  snprintf(want, sizeof want, "ovl: %s: converting (1 of 5: kernels)\n", nsys);
  CHECK(strstr(r.err, want) != NULL);
  snprintf(want, sizeof want, "ovl: %s: converting (4 of 5: CUDA calls)\n", nsys);
  CHECK(strstr(r.err, want) != NULL);
  cmd_free(&r);
  /* not a terminal: nothing; OVL_PROGRESS=0: nothing */
  r = sh("'%s' export -q --force --perfetto '%s' '%s'", ovl, at("long.pftrace"), big);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.err, "");
  cmd_free(&r);
  r = sh("env OVL_PROGRESS=0 '%s' report '%s' >/dev/null", ovl, kineto);
  CHECK_STR(r.err, "");
  cmd_free(&r);
  /* a terminal (script's), a command shorter than 2 s: nothing either (in a shell of its own:
  ** run_cmd puts `timeout` before the command, which cannot run the builtin `command`) */
  r = sh("sh -c \"command -v script >/dev/null || exit 77; "
         "exec script -qec \\\"'%s' simulate --force --emit-trace '%s' >/dev/null\\\" /dev/null\"",
         ovl, at("short.sqlite"));
  if (r.status == 77) fprintf(stderr, "SKIP (part): no `script` for a terminal\n");
  if (r.status != 77) {
    CHECK_I64(r.status, 0);
    CHECK(strstr(r.out, "%") == NULL);
  }
  cmd_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: test_cli OVL_BINARY TRACES_DIR DATA_DIR NOOP_PRELOAD CHECK\n");
    return 2;
  }
  ovl = argv[1];
  traces = argv[2];
  data = argv[3];
  noop = argv[4];
  snprintf(dir, sizeof dir, "%s", tb_temp_path("cli"));
  mkdir(dir, 0777);
  static const struct { const char *name; void (*fn)(void); } checks[] = {
    {"option_values", option_values}, {"keep_traces", keep_traces}, {"wrote", wrote}, {"run_outcome", run_outcome},
    {"stray_files", stray_files}, {"help", help}, {"once", once}, {"simulate", simulate}, {"pg_names", pg_names},
    {"progress", progress},
  };
  for (size_t i = 0; i < sizeof checks / sizeof *checks; i++)
    if (strcmp(argv[5], checks[i].name) == 0) {
      checks[i].fn();
      return check_summary();
    }
  fprintf(stderr, "test_cli: unknown check '%s'\n", argv[5]);
  return 2;
}
