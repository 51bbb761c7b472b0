/* `ovl import`: convert Kineto and Nsight Systems traces into ovl trace files. */
#include "cli.h"

#include "output_plan.h"

#include "../load/input_spool.h"
#include "../load/trace_files.h"
#include "../load/trace_import.h"
#include "base/progress.h"
#include "base/safe_output.h"
#include "store/trace_rows.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    "  --force              replace outputs that exist and are traces (never done otherwise)\n"
    "  --hta-compat         Kineto: what Holistic Trace Analysis analyses by default: drop the\n"
    "                       last ProfilerStep and round times to whole microseconds (start up,\n"
    "                       end down); see docs/import.md\n"
    "  -q, --quiet          no summary line per trace\n"
    "  -h, --help           this help\n"
    "\n"
    "Prints one line per trace: what was converted. Exit status: 0 ok, 1 bad input or usage,\n"
    "2 internal error.\n";

enum { OPT_HTA_COMPAT = 256, OPT_FORCE };

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

/* An ovl trace needs no conversion: copy it (through a temporary file renamed over out). */
static int copy_file(const char *in, const char *out, ovl_err *err) {
  FILE *src = fopen(in, "rb");
  if (!src) return ovl_fail(err, OVL_EUSER, "%s: %s", in, strerror(errno));
  ovl_safe_out so;
  int rc = ovl_safe_out_begin(&so, out, err);
  if (rc) {
    fclose(src);
    return rc;
  }
  char buf[1 << 16];
  size_t n;
  while (!rc && (n = fread(buf, 1, sizeof buf, src)) > 0) {
    for (size_t done = 0; !rc && done < n;) {
      ssize_t w = write(so.fd, buf + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", out, strerror(errno));
      else done += (size_t)w;
    }
  }
  if (!rc && ferror(src)) rc = ovl_fail(err, OVL_EUSER, "%s: read error", in);
  fclose(src);
  if (rc) ovl_safe_out_abort(&so);
  else rc = ovl_safe_out_commit(&so, err);
  return rc;
}

static void print_summary(const char *in, const char *out, ovl_trace_format f, const ovl_import_stats *s) {
  ovl_cli_progress_clear();
  printf("%s -> %s: %s", in, out, ovl_trace_format_name(f));
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

/* One input and what it becomes: planned for every input before anything is written. */
typedef struct planned_input {
  const char *user_path; /* as named */
  const char *read_path; /* what is read: the path, or its copy when it reads only once */
  ovl_trace_format format;
  int64_t *processes;
  size_t nprocesses;
  char **outputs;        /* one per process */
} planned_input;

static void free_planned(planned_input *in, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (size_t p = 0; in[i].outputs && p < in[i].nprocesses; p++) free(in[i].outputs[p]);
    free(in[i].outputs);
    free(in[i].processes);
  }
  free(in);
}

/* Reads what each input is and names every output, checked together (output_plan.h). */
static int plan_import(const ovl_file_list *files, const char *output, int to_dir, planned_input *in,
                       ovl_output_plan *plan, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < files->len; i++) {
    planned_input *pi = &in[i];
    pi->user_path = files->paths[i];
    rc = ovl_input_resolve(pi->user_path, &pi->read_path, err);
    if (!rc) rc = ovl_detect_format(pi->read_path, &pi->format, err);
    if (!rc && pi->format != OVL_FORMAT_OVL_SQLITE)
      rc = ovl_import_processes(pi->read_path, pi->format, &pi->processes, &pi->nprocesses, err);
    else if (!rc) pi->nprocesses = 1;
    if (rc) {
      ovl_input_explain(err);
      break;
    }
    char *base = to_dir ? output_in_dir(output, pi->user_path) : strdup(output);
    if (!base || !(pi->outputs = calloc(pi->nprocesses, sizeof *pi->outputs))) rc = ovl_oom(err, "output name");
    for (size_t p = 0; !rc && p < pi->nprocesses; p++) {
      pi->outputs[p] = pi->processes ? process_output(base, pi->processes[p], pi->nprocesses) : strdup(base);
      if (!pi->outputs[p]) rc = ovl_oom(err, "output name");
      else rc = ovl_output_plan_add(plan, pi->outputs[p], pi->user_path, err);
    }
    free(base);
  }
  if (!rc) rc = ovl_output_plan_check_inputs(plan, files->paths, files->len, err);
  if (!rc) rc = ovl_output_plan_check_traces(plan, err);
  return rc;
}

static int import_one(const planned_input *pi, const ovl_import_options *opt, int quiet, ovl_err *err) {
  ovl_progress_file(pi->user_path);
  if (pi->format == OVL_FORMAT_OVL_SQLITE) {
    int rc = copy_file(pi->read_path, pi->outputs[0], err);
    if (!rc && !quiet) print_summary(pi->user_path, pi->outputs[0], pi->format, NULL);
    if (rc) ovl_input_explain(err);
    return rc;
  }
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < pi->nprocesses; i++) {
    ovl_import_stats stats;
    rc = ovl_import_trace(pi->read_path, pi->format, pi->processes[i], pi->outputs[i], opt, &stats, err);
    if (!rc && !quiet) print_summary(pi->user_path, pi->outputs[i], pi->format, &stats);
  }
  if (rc) ovl_input_explain(err);
  return rc;
}

int ovl_cmd_import(int argc, char **argv) {
  static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"hta-compat", no_argument, NULL, OPT_HTA_COMPAT},
    {"force", no_argument, NULL, OPT_FORCE},
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
      case 'o':
        if (ovl_cli_once("import", "-o", &output, optarg)) return 1;
        break;
      case OPT_HTA_COMPAT: opt.hta_compat = 1; break;
      case OPT_FORCE: ovl_output_plan_force(1); break;
      case 'q': quiet = 1; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("import", c, argv);
    }
  }
  if (optind >= argc) return ovl_cli_usage("import", "no TRACE given");
  if (!output) return ovl_cli_usage("import", "no output given (-o OUT)");
  if (!*output) return ovl_cli_usage("import", "-o '': empty output name");

  ovl_err err;
  ovl_err_clear(&err);
  ovl_file_list files = {0};
  int rc = ovl_expand_trace_args(argv + optind, (size_t)(argc - optind), &files, &err);
  if (rc) return ovl_cli_fail(&err);
  if (files.nskipped || files.nnot_traces) {
    char line[2048];
    ovl_file_list_skipped_text(&files, line, sizeof line);
    fprintf(stderr, "ovl: %s\n", line);
  }
  struct stat sb;
  int out_is_dir = stat(output, &sb) == 0 && S_ISDIR(sb.st_mode);
  int to_dir = out_is_dir || files.len > 1;
  planned_input *in = calloc(files.len, sizeof *in);
  ovl_output_plan plan = {0};
  if (!in) rc = ovl_oom(&err, "import plan");
  if (!rc) rc = plan_import(&files, output, to_dir, in, &plan, &err);
  if (!rc && to_dir && !out_is_dir && mkdir(output, 0777) != 0)
    rc = ovl_fail(&err, OVL_EUSER, "%s: cannot create the output directory: %s", output, strerror(errno));
  for (size_t i = 0; !rc && i < files.len; i++) rc = import_one(&in[i], &opt, quiet, &err);
  ovl_progress_file(NULL);
  if (in) free_planned(in, files.len);
  ovl_output_plan_free(&plan);
  ovl_file_list_free(&files);
  return rc ? ovl_cli_fail(&err) : 0;
}
