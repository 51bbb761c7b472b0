/*
** JSON edge cases through `ovl report` (format detection, the Kineto importer, the analysis):
** 1e6-deep nesting, a 1 GB string and a gzip bomb (both generated compressed, so the disk
** holds about a megabyte; the peak memory of ovl is measured and must stay bounded), 1e400,
** NaN and Infinity literals, duplicated keys, invalid UTF-8, a byte-order mark, truncated
** gzip, a directory, a FIFO, /dev/zero, and paths with spaces and non-ASCII letters. Every
** case must end (time limit) with exit 0 and a sane JSON report, or exit 1 and one error
** line "ovl: ..." (warnings "ovl: ...: warning: ..." may come before it); never a crash.
**
** usage: test_json_edges OVL KINETO_TRACE(.json.gz)
*/
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static const char *ovl;
static char dir[4096];

typedef struct outcome {
  int status;        /* exit status; -1: killed (crash) ; -2: time limit */
  long max_rss_kb;   /* peak resident memory of ovl */
  char err[4096];    /* its standard error */
  char out[4096];    /* the start of its standard output */
} outcome;

static void read_small(const char *path, char *buf, size_t cap) {
  buf[0] = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = 0;
  fclose(f);
  remove(path);
}

/* Runs `ovl report --json --compact -o <dir>/report.json TRACE` with a time limit. */
static outcome run_report(const char *trace, int seconds) {
  outcome o;
  memset(&o, 0, sizeof o);
  char err_path[4200], out_path[4200], report[4200];
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(report, sizeof report, "%s/report.json", dir);
  pid_t pid = fork();
  if (pid < 0) exit(2);
  if (pid == 0) {
    int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), w = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (e < 0 || w < 0) _exit(126);
    dup2(e, 2);
    dup2(w, 1);
    alarm((unsigned)seconds);  /* survives exec: SIGALRM ends a hang */
    execl(ovl, ovl, "report", "--json", "--compact", "-o", report, trace, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  struct rusage ru;
  while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {}
  o.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(st)) o.status = WEXITSTATUS(st);
  else o.status = WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? -2 : -1;
  read_small(err_path, o.err, sizeof o.err);
  read_small(out_path, o.out, sizeof o.out);
  read_small(report, o.out, sizeof o.out);  /* the report, when written */
  return o;
}

/* Exit 1 with one error line (after warnings), or exit 0 with a report free of NaN/Infinity. */
static int acceptable(const char *what, const outcome *o) {
  int ok = 0;
  if (o->status == 1) {
    int errors = 0, well_formed = 1;
    for (const char *line = o->err; *line;) {
      const char *nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      char text[4096];
      snprintf(text, sizeof text, "%.*s", (int)len, line);
      if (strncmp(text, "ovl: ", 5) != 0) well_formed = 0;
      else if (!strstr(text, ": warning: ")) errors++;
      line += len + (nl != NULL);
    }
    ok = well_formed && errors == 1;
  } else if (o->status == 0) {
    ok = strncmp(o->out, "{\"ovl_report_version\"", 21) == 0 && !strstr(o->out, "NaN") && !strstr(o->out, "Infinity");
  }
  if (!ok) fprintf(stderr, "%s: exit %d, stderr: %.600s\n", what, o->status, o->err);
  return ok;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f || fputs(text, f) == EOF || fclose(f) != 0) exit(2);
}

static const char *path_in_dir(const char *name) {
  static char paths[8][4200];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, 4200, "%s/%s", dir, name);
  return p;
}

/* One event-bearing document with `body` as the extra content of a kernel event. */
static void kineto_case(const char *name, const char *event, int expect_success) {
  char doc[8192];
  snprintf(doc, sizeof doc,
           "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sgemm\",\"pid\":0,\"tid\":7,\"ts\":10,"
           "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},%s]}",
           event);
  const char *path = path_in_dir(name);
  write_text(path, doc);
  outcome o = run_report(path, 60);
  CHECK(acceptable(name, &o));
  if (expect_success) CHECK(o.status == 0);
  remove(path);
}

/* A gzip file of `prefix`, then `repeat` copies of byte c, then `suffix`. */
static void write_gzip_repeat(const char *path, const char *prefix, int c, long long repeat, const char *suffix) {
  gzFile g = gzopen(path, "wb1");
  if (!g) exit(2);
  static char block[1 << 20];
  memset(block, c, sizeof block);
  if (gzputs(g, prefix) < 0) exit(2);
  for (long long left = repeat; left > 0; left -= (long long)sizeof block) {
    unsigned n = left < (long long)sizeof block ? (unsigned)left : (unsigned)sizeof block;
    if (gzwrite(g, block, n) != (int)n) exit(2);
  }
  if (gzputs(g, suffix) < 0 || gzclose(g) != Z_OK) exit(2);
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_json_edges OVL KINETO_TRACE\n");
    return 2;
  }
  ovl = argv[1];
  snprintf(dir, sizeof dir, "%s", tb_temp_path("edges"));
  if (mkdir(dir, 0700) != 0) return 2;

  /* A real trace is reported: the harness tells success from failure. */
  outcome o = run_report(argv[2], 120);
  CHECK(acceptable("real trace", &o) && o.status == 0);
  long baseline_rss = o.max_rss_kb;

  /* Nesting a million deep, at the top and inside traceEvents. */
  for (int inside = 0; inside < 2; inside++) {
    const char *path = path_in_dir("deep.json");
    FILE *f = fopen(path, "wb");
    if (!f) return 2;
    if (inside) fputs("{\"traceEvents\":[", f);
    for (int i = 0; i < 1000000; i++) fputc('[', f);
    for (int i = 0; i < 1000000; i++) fputc(']', f);
    if (inside) fputs("]}", f);
    fclose(f);
    o = run_report(path, 60);
    CHECK(acceptable(inside ? "1e6-deep inside traceEvents" : "1e6-deep", &o));
    CHECK(o.status == 1);  /* deeper than the tokenizer's limit */
    remove(path);
  }

  /* A 1 GB string (a kernel's name) and a gzip bomb (2 GB of whitespace): read through,
  ** memory bounded by the tokenizer's chunk and string limit, not by the data. */
  const char *big = path_in_dir("big string.json.gz");
  write_gzip_repeat(big, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":5,\"name\":\"", 'x',
                    1LL << 30, "\",\"args\":{\"device\":0,\"stream\":7}}]}");
  CHECK(file_size(big) < 16L << 20);
  o = run_report(big, 300);
  CHECK(acceptable("1 GB string", &o));
  CHECK(o.max_rss_kb < baseline_rss + 256 * 1024);
  printf("1 GB string: exit %d, peak RSS %ld MB (a real trace: %ld MB)\n", o.status, o.max_rss_kb / 1024,
         baseline_rss / 1024);
  remove(big);
  const char *bomb = path_in_dir("bomb.json.gz");
  write_gzip_repeat(bomb, "{\"traceEvents\":[", ' ', 2LL << 30, "]}");
  CHECK(file_size(bomb) < 16L << 20);
  o = run_report(bomb, 300);
  CHECK(acceptable("gzip bomb", &o));
  CHECK(o.max_rss_kb < baseline_rss + 256 * 1024);
  printf("gzip bomb (%ld KB expanding to 2 GB): exit %d, peak RSS %ld MB\n", file_size(bomb) / 1024, o.status,
         o.max_rss_kb / 1024);
  remove(bomb);

  /* Numbers and literals where times are read, duplicated keys, invalid UTF-8. */
  kineto_case("e400.json", "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1e400,\"dur\":1}", 0);
  kineto_case("neg-e400.json", "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":-1e400}", 0);
  kineto_case("nan.json", "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":NaN,\"dur\":1}", 0);
  kineto_case("infinity.json",
              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":Infinity}", 0);
  kineto_case("nan-args.json",
              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":NaN,\"tid\":-Infinity,\"ts\":20,\"dur\":1,"
              "\"args\":{\"device\":NaN,\"stream\":1e400,\"correlation\":-Infinity}}", 0);
  kineto_case("duplicate-keys.json",
              "{\"ph\":\"X\",\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"name\":\"k2\",\"pid\":0,\"tid\":7,"
              "\"ts\":20,\"ts\":30,\"dur\":1,\"dur\":2}", 1);
  kineto_case("invalid-utf8.json",
              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\xff\xfe\xc3(\xed\xa0\x80\",\"pid\":0,\"tid\":7,\"ts\":20,"
              "\"dur\":1}", 0);
  kineto_case("lone-surrogate.json",
              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\ud800x\\udc00\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":1}", 0);

  /* A byte-order mark before a valid document. */
  const char *bom = path_in_dir("bom.json");
  write_text(bom, "\xef\xbb\xbf{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                  "\"ts\":20,\"dur\":1,\"args\":{\"device\":0,\"stream\":7}}]}");
  o = run_report(bom, 60);
  CHECK(acceptable("byte-order mark", &o));
  remove(bom);

  /* Truncated gzip: the real trace cut in half. */
  const char *cut = path_in_dir("cut.json.gz");
  {
    FILE *in = fopen(argv[2], "rb"), *out = fopen(cut, "wb");
    if (!in || !out) return 2;
    long half = file_size(argv[2]) / 2;
    for (long i = 0; i < half; i++) fputc(fgetc(in), out);
    fclose(in);
    fclose(out);
  }
  o = run_report(cut, 60);
  CHECK(acceptable("truncated gzip", &o));
  CHECK(o.status == 1 && strstr(o.err, "gzip") != NULL);
  remove(cut);

  /* A directory (holding no trace), one named like a trace, /dev/zero. */
  const char *sub = path_in_dir("folder.json");
  if (mkdir(sub, 0700) != 0) return 2;
  o = run_report(sub, 60);
  CHECK(acceptable("a directory", &o) && o.status == 1);
  rmdir(sub);
  o = run_report("/dev/zero", 60);
  CHECK(acceptable("/dev/zero", &o) && o.status == 1);

  /* A FIFO with a writer: copied once into $TMPDIR and read from there (load/input_spool.h),
  ** or refused with one line; never a hang. */
  const char *fifo = path_in_dir("fifo.json");
  if (mkfifo(fifo, 0600) != 0) return 2;
  pid_t writer = fork();
  if (writer == 0) {
    alarm(60);
    FILE *f = fopen(fifo, "wb");
    if (f) {
      fputs("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":1}]}", f);
      fclose(f);
    }
    _exit(0);
  }
  o = run_report(fifo, 15);
  CHECK(acceptable("a FIFO", &o));
  kill(writer, SIGKILL);
  waitpid(writer, NULL, 0);
  remove(fifo);

  /* Paths with spaces and non-ASCII letters (the trace itself, copied). */
  const char *odd_dir = path_in_dir("dossier d'entr\xc3\xa9" "e \xe6\x97\xa5\xe6\x9c\xac");
  if (mkdir(odd_dir, 0700) != 0) return 2;
  char odd[8400];
  snprintf(odd, sizeof odd, "%s/trace de l'\xc3\xa9t\xc3\xa9 #1.json.gz", odd_dir);
  {
    FILE *in = fopen(argv[2], "rb"), *out = fopen(odd, "wb");
    if (!in || !out) return 2;
    int c;
    while ((c = fgetc(in)) != EOF) fputc(c, out);
    fclose(in);
    fclose(out);
  }
  o = run_report(odd, 120);
  CHECK(acceptable("odd path", &o) && o.status == 0);
  o = run_report(odd_dir, 120);  /* the folder as the argument: its traces are found */
  CHECK(acceptable("odd folder", &o) && o.status == 0);
  remove(odd);
  rmdir(odd_dir);

  rmdir(dir);
  return check_summary();
}
