/* `ovl import`: convert Kineto and Nsight Systems traces into ovl trace files. */
#include "cli.h"

#include "../load/trace_files.h"
#include "../load/trace_import.h"
#include "store/trace_rows.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char help[] =
    "usage: ovl import [options] -o OUT TRACE...\n"
    "\n"
    "Converts PyTorch profiler (Kineto) traces (.json, .json.gz; one file per rank) and Nsight\n"
    "Systems SQLite exports (nsys export --type sqlite) into ovl traces (docs/schema.md).\n"
    "Every other command reads these formats directly; import once to analyse many times.\n"
    "TRACE: a file or a directory of them; formats are recognised by content.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT     the ovl trace to write; with several traces (or a directory), a\n"
    "                       directory (created if missing) that receives NAME.sqlite per trace;\n"
    "                       an Nsight Systems export of several processes gives one trace per\n"
    "                       process, OUT.pid<PID>.sqlite\n"
    "  --hta-compat         Kineto: what Holistic Trace Analysis analyses by default: drop the\n"
    "                       last ProfilerStep and round times to whole microseconds (start up,\n"
    "                       end down); see docs/import.md\n"
    "  -q, --quiet          no summary line per trace\n"
    "  -h, --help           this help\n"
    "\n"
    "Prints one line per trace: what was converted. Exit status: 0 ok, 1 bad input or usage,\n"
    "2 internal error.\n";

enum { OPT_HTA_COMPAT = 256 };

static const char *format_name(ovl_trace_format f) {
  switch (f) {
    case OVL_FORMAT_KINETO_JSON: return "Kineto JSON";
    case OVL_FORMAT_NSYS_SQLITE: return "Nsight Systems";
    case OVL_FORMAT_OVL_SQLITE: return "ovl";
  }
  return "?";
}

/* DIR/NAME.sqlite for an input path (its known extension replaced). Caller frees. */
static char *output_in_dir(const char *dir, const char *in) {
  static const char *const exts[] = {".json.gz", ".json", ".sqlite", ".db"};
  const char *base = strrchr(in, '/');
  base = base ? base + 1 : in;
  size_t n = strlen(base);
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
    size_t m = strlen(exts[i]);
    if (n > m && strcmp(base + n - m, exts[i]) == 0) {
      n -= m;
      break;
    }
  }
  size_t cap = strlen(dir) + n + 16;
  char *out = malloc(cap);
  if (out) snprintf(out, cap, "%s/%.*s.sqlite", dir, (int)n, base);
  return out;
}

static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* An ovl trace needs no conversion: copy it. */
static int copy_file(const char *in, const char *out, ovl_err *err) {
  FILE *src = fopen(in, "rb");
  if (!src) return ovl_fail(err, OVL_EUSER, "%s: %s", in, strerror(errno));
  FILE *dst = fopen(out, "wb");
  if (!dst) {
    fclose(src);
    return ovl_fail(err, OVL_EUSER, "%s: cannot write: %s", out, strerror(errno));
  }
  char buf[1 << 16];
  size_t n;
  int rc = OVL_OK;
  while (!rc && (n = fread(buf, 1, sizeof buf, src)) > 0)
    if (fwrite(buf, 1, n, dst) != n) rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", out, strerror(errno));
  if (!rc && ferror(src)) rc = ovl_fail(err, OVL_EUSER, "%s: read error", in);
  if (fclose(dst) != 0 && !rc) rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", out, strerror(errno));
  fclose(src);
  if (rc) remove(out);
  return rc;
}

static void print_summary(const char *in, const char *out, ovl_trace_format f, const ovl_import_stats *s) {
  printf("%s -> %s: %s", in, out, format_name(f));
  if (!s) {
    printf(", copied\n");
    return;
  }
  if (s->rank != OVL_NONE) printf(", rank %lld", (long long)s->rank);
  if (s->world_size != OVL_NONE) printf(" of %lld", (long long)s->world_size);
  printf(", %ld kernels (%ld NCCL), %ld memops, %ld api calls, %ld NVTX ranges, %ld collectives", s->kernels,
         s->nccl_kernels, s->memops, s->api, s->nvtx, s->collectives);
  if (s->skipped) printf(", %ld events without usable times skipped", s->skipped);
  if (s->dropped) printf(", %ld rows of the last ProfilerStep dropped", s->dropped);
  printf("\n");
}

/* OUT for a single-process trace; OUT without .sqlite + ".pid<PID>.sqlite" for each process
** of a multi-process export. Caller frees. */
static char *process_output(const char *out, int64_t process, size_t nprocesses) {
  if (nprocesses <= 1) return strdup(out);
  size_t n = strlen(out);
  if (n > 7 && strcmp(out + n - 7, ".sqlite") == 0) n -= 7;
  size_t cap = n + 48;
  char *path = malloc(cap);
  if (path) snprintf(path, cap, "%.*s.pid%lld.sqlite", (int)n, out, (long long)process);
  return path;
}

static int import_one(const char *in, const char *out, const ovl_import_options *opt, int quiet, ovl_err *err) {
  ovl_trace_format format;
  int rc = ovl_detect_format(in, &format, err);
  if (rc) return rc;
  if (same_file(in, out)) return ovl_fail(err, OVL_EUSER, "%s: the output would replace the input", out);
  if (format == OVL_FORMAT_OVL_SQLITE) {
    rc = copy_file(in, out, err);
    if (!rc && !quiet) print_summary(in, out, format, NULL);
    return rc;
  }
  int64_t *processes = NULL;
  size_t n = 0;
  rc = ovl_import_processes(in, format, &processes, &n, err);
  for (size_t i = 0; !rc && i < n; i++) {
    char *path = process_output(out, processes[i], n);
    ovl_import_stats stats;
    if (!path) rc = ovl_oom(err, "output name");
    else if (same_file(in, path)) rc = ovl_fail(err, OVL_EUSER, "%s: the output would replace the input", path);
    else rc = ovl_import_trace(in, format, processes[i], path, opt, &stats, err);
    if (!rc && !quiet) print_summary(in, path, format, &stats);
    free(path);
  }
  free(processes);
  return rc;
}

int ovl_cmd_import(int argc, char **argv) {
  static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"hta-compat", no_argument, NULL, OPT_HTA_COMPAT},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *output = NULL;
  int quiet = 0;
  ovl_import_options opt = {0};
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
    switch (c) {
      case 'o': output = optarg; break;
      case OPT_HTA_COMPAT: opt.hta_compat = 1; break;
      case 'q': quiet = 1; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("import", argv);
    }
  }
  if (optind >= argc) return ovl_cli_usage("import", "no TRACE given");
  if (!output) return ovl_cli_usage("import", "no output given (-o OUT)");

  ovl_err err;
  ovl_err_clear(&err);
  ovl_file_list files = {0};
  int rc = ovl_expand_trace_args(argv + optind, (size_t)(argc - optind), &files, &err);
  if (rc) return ovl_cli_fail(&err);
  struct stat sb;
  int to_dir = stat(output, &sb) == 0 && S_ISDIR(sb.st_mode);
  if (!to_dir && files.len > 1) {
    if (mkdir(output, 0777) != 0) rc = ovl_fail(&err, OVL_EUSER, "%s: cannot create the output directory: %s",
                                                output, strerror(errno));
    to_dir = 1;
  }
  for (size_t i = 0; !rc && i < files.len; i++) {
    char *out = to_dir ? output_in_dir(output, files.paths[i]) : strdup(output);
    if (!out) rc = ovl_oom(&err, "output name");
    else rc = import_one(files.paths[i], out, &opt, quiet, &err);
    free(out);
  }
  ovl_file_list_free(&files);
  return rc ? ovl_cli_fail(&err) : 0;
}
