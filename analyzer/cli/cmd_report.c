/* `ovl report`: analyse traces and print the overlap report (text or contract JSON). */
#include "cli.h"

#include "../analyze/job.h"
#include "../report/report_json.h"
#include "../report/report_text.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: ovl report [options] TRACE...\n"
    "\n"
    "Per rank (GPU) and per training step: compute time, communication time, exposed\n"
    "communication and the overlap efficiency 1 - T_exposed/T_comm, then one line per\n"
    "collective (op, bytes, GPU start, duration, exposed time, algbw/busbw).\n"
    "TRACE: an ovl SQLite trace, a PyTorch profiler (Kineto) .json/.json.gz trace, an Nsight\n"
    "Systems SQLite export, or a directory of them.\n"
    "\n"
    "Options:\n"
    "  --json               print the JSON report (contract: docs/report.md)\n"
    "  --compact            JSON on one line (default: indented)\n"
    "  -o, --output FILE    write the report to FILE instead of standard output\n"
    "  --comm-pattern RE    also count kernels whose name matches RE (POSIX ERE) as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat         Kineto traces: analyse what Holistic Trace Analysis does (last\n"
    "                       ProfilerStep dropped, times rounded to whole us; docs/import.md)\n"
    "  --top N              text: show the N most exposed steps (default 10) and the\n"
    "                       collectives of the worst 3\n"
    "  --all                text: show every step and every collective\n"
    "  -h, --help           this help\n"
    "\n"
    "Steps come from NVTX ranges named 'step' (domain 'ovl', or 'ovl:step'), ProfilerStep#N or\n"
    "--step-pattern; else from the repetition of the collective sequence; else the whole trace.\n"
    "Exit status: 0 ok, 1 bad input or usage, 2 internal error.\n";

enum { OPT_JSON = 256, OPT_COMPACT, OPT_COMM_PATTERN, OPT_STEP_PATTERN, OPT_TOP, OPT_ALL, OPT_HTA_COMPAT };

int ovl_cmd_report(int argc, char **argv) {
  static const struct option longopts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"compact", no_argument, NULL, OPT_COMPACT},
    {"output", required_argument, NULL, 'o'},
    {"comm-pattern", required_argument, NULL, OPT_COMM_PATTERN},
    {"step-pattern", required_argument, NULL, OPT_STEP_PATTERN},
    {"top", required_argument, NULL, OPT_TOP},
    {"all", no_argument, NULL, OPT_ALL},
    {"hta-compat", no_argument, NULL, OPT_HTA_COMPAT},
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
      case OPT_HTA_COMPAT: aopt.import.hta_compat = 1; break;
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
  ovl_job job;
  rc = ovl_analyze_job(&ctx, argv + optind, (size_t)(argc - optind), ovl_cli_progress, NULL, &job, &err);
  if (!rc) ovl_cli_print_warnings(&job);
  FILE *out = stdout;
  if (!rc && output && !(out = fopen(output, "w"))) {
    rc = ovl_fail(&err, OVL_EUSER, "%s: cannot write the report: %s", output, strerror(errno));
    out = stdout;
  }
  if (!rc) {
    if (json) ovl_report_json(out, job.ranks, job.nranks, job.findings, job.nfindings, pretty);
    else ovl_report_text(out, job.ranks, job.nranks, job.findings, job.nfindings, &topt);
    if (fflush(out) != 0 || ferror(out)) rc = ovl_fail(&err, OVL_EUSER, "%s: write failed", output ? output : "stdout");
  }
  if (out != stdout) fclose(out);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  return rc ? ovl_cli_fail(&err) : 0;
}
