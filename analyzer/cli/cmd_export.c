/* `ovl export`: analyse traces and write their timeline for Perfetto or Chrome's viewer. */
#include "cli.h"
#include "cli_job.h"
#include "cli_mpi.h"

#include "../export/export.h"
#include "../export/gpu_facts.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: ovl export (--perfetto FILE[.gz] | --chrome FILE[.gz])... [options] TRACE...\n"
    "\n"
    "Writes the timeline of the traces: one process per rank (GPU), a track per CUDA stream\n"
    "(named with its role: compute, NCCL or memcpy; overlapping work on extra lanes), host\n"
    "threads with NCCL calls, NVTX ranges and CUDA API calls, flows from each call to the GPU\n"
    "work it launched, a steps track with each step's overlap efficiency and the findings,\n"
    "and counters: exposed communication (1 while communication runs with no compute) and\n"
    "communication bytes in flight. Collective slices carry the analysis (bucket, bytes,\n"
    "busbw, exposed ns, readiness stall) as arguments. See docs/export.md.\n"
    OVL_CLI_TRACE_HELP
    "\n"
    "Options:\n"
    "  --perfetto FILE      Perfetto protobuf trace: open it in https://ui.perfetto.dev (gzip\n"
    "                       when FILE ends in .gz, which the UI opens too: ~18x smaller)\n"
    "  --chrome FILE        Chrome Trace Event JSON (gzip when FILE ends in .gz): open it in\n"
    "                       chrome://tracing or ui.perfetto.dev\n"
    "                       (both may be given: the traces are analysed once)\n"
    "  --comm-pattern RE    also count kernels whose name matches RE (POSIX ERE) as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat         Kineto traces: what Holistic Trace Analysis analyses (docs/import.md)\n"
    "  --force              replace FILE even if it is a trace (never done otherwise)\n"
    "  -q, --quiet          do not print what was written\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad input or usage, 2 internal error.\n";

enum { OPT_PERFETTO = 256, OPT_CHROME };

static int write_one(const ovl_job *job, const ovl_analysis_ctx *ctx, const ovl_export_facts *facts,
                     ovl_export_format format, const char *path, int quiet, ovl_err *err) {
  ovl_export_options opt = {format, path, NULL, 0, facts};
  ovl_export_stats st;
  int rc = ovl_export_job(job, ctx, &opt, &st, err);
  if (!rc) ovl_cli_progress_clear();
  if (!rc && !quiet)
    printf("wrote %s (%s): %" PRIu64 " kernel slices, %" PRIu64 " memop slices, %" PRIu64 " host slices, %" PRIu64
           " flows, %" PRIu64 " counter values, %" PRIu64 " events, %" PRIu64 " bytes\n",
           path, format == OVL_EXPORT_PERFETTO ? "Perfetto" : "Chrome JSON", st.kernel_slices, st.memop_slices,
           st.host_slices, st.flows, st.counter_values, st.events, st.bytes);
  /* for tests and the curious, as OVL_DEBUG_IMPORTS: whether the passes ran on threads */
  if (!rc && getenv("OVL_DEBUG_EXPORT"))
    fprintf(stderr, "ovl: debug: %s: %" PRIu64 " pass(es) drawn beside the main thread\n", path, st.passes_beside);
  return rc;
}

int ovl_cmd_export(int argc, char **argv) {
  static const struct option longopts[] = {
    {"perfetto", required_argument, NULL, OPT_PERFETTO},
    {"chrome", required_argument, NULL, OPT_CHROME},
    {"comm-pattern", required_argument, NULL, OVL_OPT_COMM_PATTERN},
    {"step-pattern", required_argument, NULL, OVL_OPT_STEP_PATTERN},
    {"hta-compat", no_argument, NULL, OVL_OPT_HTA_COMPAT},
    {"force", no_argument, NULL, OVL_OPT_FORCE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *perfetto = NULL, *chrome = NULL;
  int quiet = 0;
  ovl_cli_job_opts jopt;
  ovl_cli_job_opts_init(&jopt);
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_PERFETTO:
        if (ovl_cli_once("export", "--perfetto", &perfetto, optarg)) return 1;
        break;
      case OPT_CHROME:
        if (ovl_cli_once("export", "--chrome", &chrome, optarg)) return 1;
        break;
      case OVL_OPT_COMM_PATTERN:
      case OVL_OPT_STEP_PATTERN:
      case OVL_OPT_FORCE:
      case OVL_OPT_HTA_COMPAT: ovl_cli_job_option(c, optarg, &jopt); break;
      case 'q': quiet = 1; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("export", c, argv);
    }
  }
  if (!perfetto && !chrome) return ovl_cli_usage("export", "give --perfetto FILE or --chrome FILE");
  if (optind >= argc) return ovl_cli_usage("export", "no TRACE given");

  /* The analysis gathers what the export needs of the GPU work as it reads it (gpu_facts.h):
  ** the export then reads each trace's GPU work once more, not twice. */
  ovl_err err;
  ovl_err_clear(&err);
  ovl_export_facts facts;
  if (ovl_export_facts_init(&facts)) return ovl_cli_fail((ovl_oom(&err, "work observer"), &err));
  jopt.analysis.observer = &facts.observer;
  ovl_cli_job j;
  const char *outputs[] = {perfetto, chrome};
  /* The host pass's api rows are read on the second CPU while the analysis runs (api_capture.h). */
  if (ovl_api_reader_wanted() && !ovl_cli_mpi_requested())
    ovl_api_reader_start(&facts.api, argv + optind, (size_t)(argc - optind));
  int status = ovl_cli_job_run(&jopt.analysis, outputs, 2, argv + optind, (size_t)(argc - optind), &j);
  ovl_api_reader_join(&facts.api);
  if (status) {
    ovl_export_facts_free(&facts);
    return status;
  }
  int rc = OVL_OK;
  if (perfetto) rc = write_one(&j.job, &j.ctx, &facts, OVL_EXPORT_PERFETTO, perfetto, quiet, &err);
  if (!rc && chrome) rc = write_one(&j.job, &j.ctx, &facts, OVL_EXPORT_CHROME, chrome, quiet, &err);
  ovl_cli_job_free(&j);
  ovl_export_facts_free(&facts);
  return rc ? ovl_cli_fail(&err) : 0;
}
