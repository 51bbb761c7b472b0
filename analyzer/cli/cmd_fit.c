/* `ovl fit`: the alpha-beta cost of collectives fitted per communicator and operation. */
#include "cli.h"
#include "cli_job.h"
#include "cli_mpi.h"

#include "../analyze/alpha_beta_fit.h"
#include "../report/fit_report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static const char help[] =
    "usage: ovl fit [options] TRACE...\n"
    "\n"
    "Fits time = alpha + bytes/beta to the collectives of the traces, per communicator and\n"
    "operation: a robust least-squares fit of relative errors (outliers, such as a call that\n"
    "waited for a late peer, are left out). The time of a call is its transfer time: from the\n"
    "last arrival among the ranks of the same host analysed together (they wait for each\n"
    "other's compute before data can move) to its end; alone, its GPU time. When the sizes do\n"
    "not vary enough to separate alpha from beta, it says so and gives the effective bandwidth.\n"
    "See docs/fit-whatif.md.\n"
    OVL_CLI_TRACE_HELP
    "\n"
    "Options:\n"
    "  --json               {\"fits\":[{\"comm\",\"op\",\"alpha_ns\",\"beta_bytes_per_s\",\"r2\",\"samples\",...}]}\n"
    "  --compact            JSON on one line (default: indented)\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "  --force              replace FILE even if it is a trace (never done otherwise)\n"
    "  --gradients          only the gradient collectives (bucketed all-reduces, docs/findings.md)\n"
    "  --comm-pattern RE    also count kernels whose name matches RE as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat         Kineto traces: what Holistic Trace Analysis analyses (docs/import.md)\n"
    "  --dim COMM=DIM,...   give process group COMM (a comm id, or the name the traces give it)\n"
    "                       the parallelism dimension DIM: dp (also fsdp), tp, pp or ep\n"
    OVL_CLI_MPI_HELP
    "  -h, --help           this help\n"
    "\n"
    "Files written are named on standard error. Exit status: 0 ok, 1 bad input or usage, 2\n"
    "internal error.\n";

enum { OPT_GRADIENTS = 256 };

typedef struct fit_out {
  const ovl_comm_fit *fits;
  size_t n;
} fit_out;

static int write_fits(FILE *out, const ovl_cli_job_opts *o, void *ctx) {
  const fit_out *f = ctx;
  if (o->json) ovl_fit_json(out, f->fits, f->n, o->pretty);
  else ovl_fit_text(out, f->fits, f->n);
  return 0;
}

int ovl_cmd_fit(int argc, char **argv) {
  static const struct option longopts[] = {
    {"gradients", no_argument, NULL, OPT_GRADIENTS},
    {"help", no_argument, NULL, 'h'},
    OVL_CLI_JOB_LONGOPTS,
    {NULL, 0, NULL, 0},
  };
  int gradients = 0;
  ovl_cli_job_opts jo;
  ovl_cli_job_opts_init(&jo);
  jo.verb = "fit";
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    int taken = ovl_cli_job_option(c, optarg, &jo);
    if (taken < 0) return 1;
    if (taken) continue;
    switch (c) {
      case OPT_GRADIENTS: gradients = 1; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("fit", c, argv);
    }
  }
  if (optind >= argc) return ovl_cli_usage("fit", "no TRACE given");
  ovl_cli_job j;
  int rc = ovl_cli_job_run(&jo.analysis, &jo.output, 1, argv + optind, (size_t)(argc - optind), &j);
  if (rc) return rc;
  ovl_err err;
  ovl_err_clear(&err);
  ovl_comm_fit *fits = NULL;
  size_t n = 0;
  rc = ovl_fit_ranks(j.job.ranks, j.job.nranks, gradients, &fits, &n, &err);
  if (rc) rc = ovl_cli_fail(&err);
  else {
    fit_out f = {fits, n};
    rc = ovl_cli_write_output(&jo, write_fits, &f);
  }
  free(fits);
  ovl_cli_job_free(&j);
  return rc;
}
