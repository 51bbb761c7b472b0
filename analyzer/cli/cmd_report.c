/* `ovl report`: analyse traces and print the overlap report (text or contract JSON). */
#include "cli.h"
#include "cli_gate.h"
#include "cli_job.h"
#include "cli_mpi.h"

#include "../report/report_json.h"
#include "../report/report_text.h"

#include "base/units.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char help[] =
    "usage: ovl report [options] TRACE...\n"
    "\n"
    "Per rank (GPU) and per training step: compute time, communication time, exposed\n"
    "communication and the overlap efficiency 1 - T_exposed/T_comm; the findings (what is\n"
    "wrong, the time a fix would recover, what to change: docs/findings.md); for the most\n"
    "exposed steps the bucket view (gradient collectives in firing order with readiness,\n"
    "stall, queueing and the order readiness would give) and one line per collective.\n"
    OVL_CLI_TRACE_HELP
    "\n"
    "Options:\n"
    "  --json               print the JSON report (contract: docs/report.md)\n"
    "  --html FILE          write the report as one self-contained HTML page to FILE (pictures:\n"
    "                       a timeline of any rank and step, bucket order, bucket-size valley,\n"
    "                       ranks, steps; docs/report.md); the text report is then written only\n"
    "                       with -o; --json still prints the JSON report\n"
    "  --alpha TIME, --beta RATE\n"
    "                       with --html: the collective cost for the bucket-size valley, as\n"
    "                       'ovl whatif' takes them (default: fitted on the trace)\n"
    "  --compact            JSON on one line (default: indented)\n"
    "  -o, --output FILE    write the report to FILE instead of standard output\n"
    "  --force              replace FILE even if it is a trace (never done otherwise)\n"
    "  --comm-pattern RE    also count kernels whose name matches RE (POSIX ERE) as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat         Kineto traces: analyse what Holistic Trace Analysis does (last\n"
    "                       ProfilerStep dropped, times rounded to whole us; docs/import.md)\n"
    "  --dim COMM=DIM,...   give process group COMM (a comm id, or the name the traces give it)\n"
    "                       the parallelism dimension DIM: dp (also fsdp), tp, pp or ep\n"
    "  --top N              text: show the N most exposed steps (default 10) and the\n"
    "                       buckets and collectives of the worst 3\n"
    "  --detail N           text: show buckets and collectives of the N most exposed steps\n"
    "  --all                text: show every step, bucket and collective\n"
    "  --fail-if COND       exit 3 when COND holds, for CI (repeatable; the report is written\n"
    "                       first): METRIC OP VALUE, e.g. 'efficiency<0.8', 'exposed>5ms',\n"
    "                       'findings>0'; metrics step_time, compute, comm, exposed (per step,\n"
    "                       median), efficiency, findings, recoverable (docs/diff.md)\n"
    OVL_CLI_MPI_HELP
    "  -h, --help           this help\n"
    "\n"
    "Steps come from NVTX ranges named 'step' (domain 'ovl', or 'ovl:step'), ProfilerStep#N or\n"
    "--step-pattern; else from the repetition of the collective sequence; else the whole trace.\n"
    "Files written are named on standard error; progress shows there on long work (docs/cli.md).\n"
    "Exit status: 0 ok, 1 bad input or usage, 2 internal error, 3 a --fail-if condition holds.\n";

enum { OPT_TOP = 256, OPT_DETAIL, OPT_ALL, OPT_HTML, OPT_ALPHA, OPT_BETA, OPT_FAIL_IF };

typedef struct report_out {
  const ovl_job *job;
  const ovl_text_options *topt;
} report_out;

static int write_report(FILE *out, const ovl_cli_job_opts *o, void *ctx) {
  const report_out *r = ctx;
  if (o->json) return ovl_report_json(out, r->job, o->pretty);
  ovl_report_text(out, r->job, r->topt);
  return 0;
}

int ovl_cmd_report(int argc, char **argv) {
  static const struct option longopts[] = {
    {"top", required_argument, NULL, OPT_TOP},
    {"detail", required_argument, NULL, OPT_DETAIL},
    {"all", no_argument, NULL, OPT_ALL},
    {"html", required_argument, NULL, OPT_HTML},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"fail-if", required_argument, NULL, OPT_FAIL_IF},
    {"help", no_argument, NULL, 'h'},
    OVL_CLI_JOB_LONGOPTS,
    {NULL, 0, NULL, 0},
  };
  ovl_cli_job_opts jo;
  ovl_cli_job_opts_init(&jo);
  jo.verb = "report";
  ovl_text_options topt = {10, 3, 40};
  long n;
  const char *html = NULL;
  double alpha = NAN, beta = NAN;
  ovl_cli_gate gate = {.n = 0};
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    int taken = ovl_cli_job_option(c, optarg, &jo);
    if (taken < 0) return 1;
    if (taken) continue;
    switch (c) {
      case OPT_TOP:
        if (ovl_cli_int("report", "--top", optarg, 1, 1000000, &n)) return 1;
        topt.max_steps = (size_t)n;
        break;
      case OPT_DETAIL:
        if (ovl_cli_int("report", "--detail", optarg, 0, 1000000, &n)) return 1;
        topt.detail_steps = (size_t)n;
        break;
      case OPT_ALL: topt.max_steps = topt.detail_steps = topt.max_collectives = OVL_TEXT_ALL; break;
      case OPT_HTML:
        if (ovl_cli_once("report", "--html", &html, optarg)) return 1;
        break;
      case OPT_ALPHA:
        if (ovl_parse_time_ns(optarg, &alpha))
          return ovl_cli_usage("report", "--alpha '%s': expected a time such as 50us", optarg);
        break;
      case OPT_BETA:
        if (ovl_parse_rate(optarg, &beta))
          return ovl_cli_usage("report", "--beta '%s': expected a rate such as 12GB/s", optarg);
        break;
      case OPT_FAIL_IF:
        if (ovl_cli_gate_add(&gate, "report", optarg, 0)) return 1;
        break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("report", c, argv);
    }
  }
  if (optind >= argc) return ovl_cli_usage("report", "no TRACE given");

  ovl_cli_job j;
  const char *outputs[] = {jo.output, html};  /* planned before anything is read */
  int rc = ovl_cli_job_run(&jo.analysis, outputs, 2, argv + optind, (size_t)(argc - optind), &j);
  if (rc) return rc;
  if (html) rc = ovl_cli_write_html(&j, html, argv[optind], alpha, beta);
  /* The page stands for the text report on standard output; --json and -o still ask for theirs. */
  if (!rc && (!html || jo.json || jo.output)) {
    report_out r = {&j.job, &topt};
    rc = ovl_cli_write_output(&jo, write_report, &r);
  }
  if (!rc) rc = ovl_cli_gate_job(&gate, "report", &j.job);
  ovl_cli_job_free(&j);
  return rc;
}
