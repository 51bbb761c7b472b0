/* `ovl report`: analyse traces and print the overlap report (text or contract JSON). */
#include "cli.h"

#include "../analyze/analysis.h"
#include "../base/vec.h"
#include "../load/trace_detect.h"
#include "../load/trace_files.h"
#include "../report/report_json.h"
#include "../report/report_text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "usage: ovl report [options] TRACE...\n"
    "\n"
    "Per rank (GPU) and per training step: compute time, communication time, exposed\n"
    "communication and the overlap efficiency 1 - T_exposed/T_comm, then one line per\n"
    "collective (op, bytes, GPU start, duration, exposed time, algbw/busbw).\n"
    "TRACE: an ovl SQLite trace, or a directory of them.\n"
    "\n"
    "Options:\n"
    "  --json               print the JSON report (contract: docs/report.md)\n"
    "  --compact            JSON on one line (default: indented)\n"
    "  -o, --output FILE    write the report to FILE instead of standard output\n"
    "  --comm-pattern RE    also count kernels whose name matches RE (POSIX ERE) as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --top N              text: show the N most exposed steps (default 10) and the\n"
    "                       collectives of the worst 3\n"
    "  --all                text: show every step and every collective\n"
    "  -h, --help           this help\n"
    "\n"
    "Steps come from NVTX ranges named 'step' (domain 'ovl', or 'ovl:step'), ProfilerStep#N or\n"
    "--step-pattern; else from the repetition of the collective sequence; else the whole trace.\n"
    "Exit status: 0 ok, 1 bad input or usage, 2 internal error.\n";

enum { OPT_JSON = 256, OPT_COMPACT, OPT_COMM_PATTERN, OPT_STEP_PATTERN, OPT_TOP, OPT_ALL };

static int cmp_rank(const void *pa, const void *pb) {
  const ovl_rank_result *a = pa, *b = pb;
  if ((a->rank == OVL_NONE) != (b->rank == OVL_NONE)) return a->rank == OVL_NONE ? 1 : -1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  return strcmp(a->trace_path, b->trace_path);
}

static void warn_bad_rows(const char *path, const ovl_bad_rows *bad) {
  static const char *const names[] = {"kernels", "memops", "collectives", "collective_launches", "nvtx", "api"};
  const long counts[] = {bad->kernels, bad->memops, bad->collectives, bad->launches, bad->nvtx, bad->api};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    if (counts[i] > 0)
      fprintf(stderr, "ovl: %s: warning: skipped %ld %s row%s with NULL fields or end < start\n", path, counts[i],
              names[i], counts[i] == 1 ? "" : "s");
}

/* Analyses every file, appending rank results to *ranks. */
static int analyse_all(const ovl_analysis_ctx *ctx, const ovl_file_list *files, ovl_rank_result **ranks,
                       size_t *nranks, ovl_err *err) {
  int progress = files->len > 1 && isatty(STDERR_FILENO);
  for (size_t i = 0; i < files->len; i++) {
    const char *path = files->paths[i];
    ovl_trace_format fmt;
    int rc = ovl_detect_format(path, &fmt, err);
    if (rc) return rc;
    if (fmt != OVL_FORMAT_OVL_SQLITE)
      return ovl_fail(err, OVL_EUSER, "%s: %s traces cannot be read by this version of ovl yet", path,
                      fmt == OVL_FORMAT_KINETO_JSON ? "Kineto JSON" : "Nsight Systems SQLite");
    ovl_rank_result *got = NULL;
    size_t ngot = 0;
    rc = ovl_analyze_file(ctx, path, &got, &ngot, err);
    if (rc) return rc;
    ovl_rank_result *grown = realloc(*ranks, (*nranks + ngot) * sizeof *grown);
    if (!grown) {
      for (size_t k = 0; k < ngot; k++) ovl_rank_result_free(&got[k]);
      free(got);
      return ovl_oom(err, "results");
    }
    *ranks = grown;
    memcpy(*ranks + *nranks, got, ngot * sizeof *got);
    *nranks += ngot;
    free(got);
    warn_bad_rows(path, &(*ranks)[*nranks - ngot].bad);
    if (progress) fprintf(stderr, "\rovl: analysed %zu/%zu traces", i + 1, files->len);
  }
  if (progress) fputc('\n', stderr);
  return OVL_OK;
}

int ovl_cmd_report(int argc, char **argv) {
  static const struct option longopts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"compact", no_argument, NULL, OPT_COMPACT},
    {"output", required_argument, NULL, 'o'},
    {"comm-pattern", required_argument, NULL, OPT_COMM_PATTERN},
    {"step-pattern", required_argument, NULL, OPT_STEP_PATTERN},
    {"top", required_argument, NULL, OPT_TOP},
    {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int json = 0, pretty = 1;
  const char *output = NULL;
  ovl_analysis_options aopt = {0};
  ovl_text_options topt = {10, 3, 40};
  long n;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_JSON: json = 1; break;
      case OPT_COMPACT: pretty = 0; break;
      case 'o': output = optarg; break;
      case OPT_COMM_PATTERN: aopt.comm_pattern = optarg; break;
      case OPT_STEP_PATTERN: aopt.step_pattern = optarg; break;
      case OPT_TOP:
        if (ovl_cli_int("report", "--top", optarg, 1, 1000000, &n)) return 1;
        topt.max_steps = (size_t)n;
        break;
      case OPT_ALL: topt.max_steps = topt.detail_steps = topt.max_collectives = OVL_TEXT_ALL; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("report", argv);
    }
  }
  if (optind >= argc) return ovl_cli_usage("report", "no TRACE given");

  ovl_err err;
  ovl_err_clear(&err);
  ovl_analysis_ctx ctx;
  int rc = ovl_analysis_ctx_init(&ctx, &aopt, &err);
  if (rc) return ovl_cli_fail(&err);
  ovl_file_list files = {0};
  ovl_rank_result *ranks = NULL;
  size_t nranks = 0;
  rc = ovl_expand_trace_args(argv + optind, (size_t)(argc - optind), &files, &err);
  if (!rc) rc = analyse_all(&ctx, &files, &ranks, &nranks, &err);
  FILE *out = stdout;
  if (!rc && output && !(out = fopen(output, "w"))) {
    rc = ovl_fail(&err, OVL_EUSER, "%s: cannot write the report", output);
    out = stdout;
  }
  if (!rc) {
    ovl_qsort(ranks, nranks, sizeof *ranks, cmp_rank);
    if (json) ovl_report_json(out, ranks, nranks, NULL, 0, pretty);
    else ovl_report_text(out, ranks, nranks, NULL, 0, &topt);
    if (fflush(out) != 0 || ferror(out)) rc = ovl_fail(&err, OVL_EUSER, "%s: write failed", output ? output : "stdout");
  }
  if (out != stdout) fclose(out);
  for (size_t i = 0; i < nranks; i++) ovl_rank_result_free(&ranks[i]);
  free(ranks);
  ovl_file_list_free(&files);
  ovl_analysis_ctx_free(&ctx);
  return rc ? ovl_cli_fail(&err) : 0;
}
