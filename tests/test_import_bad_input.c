/*
** Bad and hostile Kineto input through the CLI (`ovl report`, `ovl import`): truncated gzip,
** invalid JSON, JSON that is not a trace, a trace without GPU events, absurdly long strings
** and numbers, deeply nested args. Each ends either in one line "ovl: <file>: <problem>" with
** exit status 1, or in a normal report; never a crash or a hang (the sanitized build runs
** this too). Temporary conversions never outlive the command. Also the `ovl import` CLI.
** usage: test_import_bad_input OVL_BINARY
*/
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const char *ovl_bin;
static char tmpdir[1024];

/* Files left in the private TMPDIR the commands run with. */
static int leftovers(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* A private copy of a temporary path (tb_temp_path's buffers are reused, also by run_cmd). */
#define TEMP_PATH(var, tag) \
  char var[512];            \
  snprintf(var, sizeof var, "%s", tb_temp_path(tag))

static cmd_result run_ovl(const char *args) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "env TMPDIR='%s' '%s' %s", tmpdir, ovl_bin, args);
  return run_cmd(cmd);
}

/* `ovl report FILE`: exit 1, one line naming the file and holding `problem`; nothing left in TMPDIR. */
static void expect_error(const char *file, const char *problem) {
  char args[4096];
  snprintf(args, sizeof args, "report '%s'", file);
  cmd_result r = run_ovl(args);
  char prefix[2048];
  snprintf(prefix, sizeof prefix, "ovl: %s: ", file);
  CHECK_I64(r.status, 1);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strncmp(r.err, prefix, strlen(prefix)) == 0);
  CHECK(strstr(r.err, problem) != NULL);
  CHECK_I64(leftovers(), 0);
  if (r.status != 1 || !strstr(r.err, problem)) fprintf(stderr, "  case %s: status %d, stderr: %s\n", file, r.status, r.err);
  cmd_free(&r);
}

/* `ovl report FILE` succeeds; returns its stdout (caller frees). */
static char *expect_report(const char *file) {
  char args[4096];
  snprintf(args, sizeof args, "report '%s'", file);
  cmd_result r = run_ovl(args);
  CHECK_I64(r.status, 0);
  CHECK_I64(leftovers(), 0);
  if (r.status != 0) fprintf(stderr, "  case %s: status %d, stderr: %s\n", file, r.status, r.err);
  free(r.err);
  return r.out;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
}

static const char head[] =
    "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1}, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1,"
    " \"dur\": 1, \"args\": {\"correlation\": 1}},\n";

/* A kernel event; `name` and `args` are spliced in verbatim. */
static void put_kernel(FILE *f, long i, const char *name, const char *args) {
  fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": %ld, \"dur\": 5,"
             " \"args\": {\"correlation\": %ld%s%s}},\n", name, 10 + i * 10, i + 1, args[0] ? ", " : "", args);
}

static void put_tail(FILE *f) {
  fputs("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"last\", \"pid\": 0, \"tid\": 7, \"ts\": 1,"
        " \"dur\": 1, \"args\": {}}\n]}\n", f);
}

static void truncated_gzip(void) {
  TEMP_PATH(path, "trunc.json.gz");
  gzFile g = gzopen(path, "wb");
  gzputs(g, head);
  for (long i = 0; i < 200000; i++) {
    gzprintf(g, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%ld\", \"pid\": 0, \"tid\": 7, \"ts\": %ld,"
                " \"dur\": 5, \"args\": {\"correlation\": %ld}},\n", i % 97, 10 + i * 10, i + 1);
  }
  gzputs(g, "{\"ph\": \"i\"}]}\n");
  gzclose(g);
  char *out = expect_report(path);  /* the whole file is fine */
  CHECK(strstr(out, "200000 kernels") != NULL);
  free(out);
  struct stat sb;
  stat(path, &sb);
  CHECK(truncate(path, sb.st_size / 2) == 0);
  expect_error(path, "truncated gzip data");
  remove(path);
}

static void malformed(void) {
  TEMP_PATH(path, "bad.json");
  write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\",}]}");
  expect_error(path, "invalid JSON at byte");
  write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a");
  expect_error(path, "unterminated string");
  write_text(path, "{\"model\": \"resnet50\", \"epochs\": 90}\n");
  expect_error(path, "JSON but not a Kineto trace");
  write_text(path, "{\"traceEvents\": []}\n");
  expect_error(path, "no GPU activity");
  /* Only CPU-side events. */
  write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\","
                   " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 100}]}\n");
  expect_error(path, "no GPU activity");
  remove(path);
}

static void huge_values(void) {
  TEMP_PATH(path, "huge.json");
  FILE *f = fopen(path, "wb");
  fputs(head, f);
  /* A 20 MB kernel name, a 1 MB argument key and value, a 5000-digit number. */
  size_t big = 20u << 20;
  char *name = malloc(big + 1);
  memset(name, 'n', big);
  memcpy(name, "nccl", 4);
  name[big] = 0;
  put_kernel(f, 0, name, "");
  char *arg = malloc((2u << 20) + 64);
  memset(arg, 'k', 1u << 20);
  size_t n = 1u << 20;
  memcpy(arg, "\"", 1);
  memcpy(arg + n, "\": \"", 4);
  memset(arg + n + 4, 'v', (1u << 20) - 8);
  memcpy(arg + n + 4 + (1u << 20) - 8, "\"", 2);
  put_kernel(f, 1, "gemm", arg);
  char digits[5100];
  memset(digits, '7', 5000);
  digits[5000] = 0;
  fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"x\", \"pid\": 0, \"tid\": 7, \"ts\": %s, \"dur\": 5},\n",
          digits);
  put_tail(f);
  fclose(f);
  free(name);
  free(arg);
  char *out = expect_report(path);
  /* Both named kernels and the last one load; the one with an absurd ts is skipped. */
  CHECK(strstr(out, "3 kernels (1 communication)") != NULL);
  free(out);
  remove(path);
}

static void deep_args(void) {
  TEMP_PATH(path, "deep.json");
  for (int pass = 0; pass < 2; pass++) {
    size_t depth = pass ? 200000 : 5000;  /* within the 10000-level limit, then far beyond it */
    FILE *f = fopen(path, "wb");
    fputs(head, f);
    char *args = malloc(2 * depth + 32);
    size_t k = (size_t)sprintf(args, "\"deep\": ");
    for (size_t i = 0; i < depth; i++) args[k++] = '[';
    for (size_t i = 0; i < depth; i++) args[k++] = ']';
    args[k] = 0;
    put_kernel(f, 0, "gemm", args);
    put_tail(f);
    fclose(f);
    free(args);
    if (pass == 0) {
      char *out = expect_report(path);
      CHECK(strstr(out, "2 kernels") != NULL);
      free(out);
    } else {
      expect_error(path, "nested deeper than 10000 levels");
    }
  }
  remove(path);
}

static void import_cli(void) {
  TEMP_PATH(a, "cli-a.json");
  TEMP_PATH(b, "cli-b.json");
  FILE *f = fopen(a, "wb");
  fputs(head, f);
  put_kernel(f, 0, "gemm", "");
  put_tail(f);
  fclose(f);
  f = fopen(b, "wb");
  fputs(head, f);
  put_kernel(f, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "");
  put_tail(f);
  fclose(f);
  char args[8192];
  TEMP_PATH(out, "cli-out.sqlite");
  snprintf(args, sizeof args, "import '%s' -o '%s'", a, out);
  cmd_result r = run_ovl(args);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "2 kernels (0 NCCL)") != NULL);
  cmd_free(&r);
  /* The result is an ovl trace every command reads. */
  char *rep = expect_report(out);
  CHECK(strstr(rep, "2 kernels") != NULL);
  free(rep);
  /* Several inputs: one file each in the output directory. */
  TEMP_PATH(dir, "cli-dir");
  snprintf(args, sizeof args, "import -q '%s' '%s' -o '%s'", a, b, dir);
  r = run_ovl(args);
  CHECK_I64(r.status, 0);
  CHECK(r.out[0] == 0);
  cmd_free(&r);
  char made[2048];
  struct stat sb;
  snprintf(made, sizeof made, "%s/ovl-test-%d-cli-b.sqlite", dir, (int)getpid());
  CHECK(stat(made, &sb) == 0);
  remove(made);
  snprintf(made, sizeof made, "%s/ovl-test-%d-cli-a.sqlite", dir, (int)getpid());
  CHECK(stat(made, &sb) == 0);
  remove(made);
  rmdir(dir);
  /* Usage errors and --help. */
  snprintf(args, sizeof args, "import '%s'", a);
  r = run_ovl(args);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "-o OUT") != NULL);
  cmd_free(&r);
  r = run_ovl("import --help");
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "usage: ovl import") != NULL);
  cmd_free(&r);
  /* A bad input names itself; no output is left behind. */
  TEMP_PATH(bad, "cli-bad.json");
  write_text(bad, "{\"traceEvents\": [}");
  snprintf(args, sizeof args, "import '%s' -o '%s'", bad, out);
  remove(out);
  r = run_ovl(args);
  CHECK_I64(r.status, 1);
  CHECK_I64(count_lines(r.err), 1);
  CHECK(strstr(r.err, bad) != NULL);
  CHECK(stat(out, &sb) != 0);
  cmd_free(&r);
  remove(a);
  remove(b);
  remove(bad);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OVL_BINARY\n", argv[0]);
    return 2;
  }
  ovl_bin = argv[1];
  snprintf(tmpdir, sizeof tmpdir, "%s", tb_temp_path("tmpdir"));
  mkdir(tmpdir, 0700);
  truncated_gzip();
  malformed();
  huge_values();
  deep_args();
  import_cli();
  rmdir(tmpdir);
  return check_summary();
}
