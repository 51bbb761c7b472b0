/* `ovl whatif`: replay the trace's backward with other bucket sizes. */
#include "cli.h"
#include "cli_job.h"
#include "cli_mpi.h"

#include "../analyze/whatif.h"
#include "base/units.h"
#include "../report/whatif_report.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: ovl whatif --bucket-mb LIST [options] TRACE...\n"
    "\n"
    "What would other gradient bucket sizes give? Replays the backward of every steady-state\n"
    "step with the trace's own gradient-readiness curve (its grad_ready marks; without marks an\n"
    "approximation from the backward compute, which it says) and the alpha-beta cost fitted on\n"
    "the trace's gradient collectives (or given), with buckets formed as PyTorch DDP forms them:\n"
    "in ready order, closed once they reach the cap, a gradient never split, the first bucket\n"
    "with its own cap; one network channel, a bucket starts when it is ready and the channel is\n"
    "free. Prints the predicted step time and exposed communication per bucket size, the best\n"
    "and its gain over the trace. See docs/fit-whatif.md.\n"
    OVL_CLI_TRACE_HELP
    "\n"
    "Options:\n"
    "  --bucket-mb LIST       bucket caps to try, comma-separated: numbers are MiB like DDP's\n"
    "                         bucket_cap_mb (25 = 25 MiB), or sizes with a unit (25MB, 64KiB)\n"
    "  --first-bucket-mb X    cap of the first bucket (MiB or a size) [1]; 0: no separate cap\n"
    "  --alpha TIME           collective latency, e.g. 50us (default: fitted)\n"
    "  --beta RATE            collective bandwidth in bytes of the call per second, e.g. 12GB/s\n"
    "                         (default: fitted; sizes that do not vary give beta only: alpha is\n"
    "                         then taken as 0, and said; give --alpha for a firm answer)\n"
    "  --json                 {\"current\":{...},\"candidates\":[...],\"best\":{...}}\n"
    "  --compact              JSON on one line (default: indented)\n"
    "  -o, --output FILE      write to FILE instead of standard output\n"
    "  --force                replace FILE even if it is a trace (never done otherwise)\n"
    "  --comm-pattern RE      also count kernels whose name matches RE as communication\n"
    "  --step-pattern RE      also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat           Kineto traces: what Holistic Trace Analysis analyses (docs/import.md)\n"
    "  --dim COMM=DIM,...     give process group COMM (a comm id, or the name the traces give it)\n"
    "                         the parallelism dimension DIM: dp (also fsdp), tp, pp or ep\n"
    OVL_CLI_MPI_HELP
    "  -h, --help             this help\n"
    "\n"
    "Files written are named on standard error. Exit status: 0 ok, 1 bad input or usage, 2\n"
    "internal error.\n";

enum { OPT_BUCKETS = 256, OPT_FIRST, OPT_ALPHA, OPT_BETA };

#define MAX_CAPS 64
#define MIB 1048576.0

/* A bare number is MiB (bucket_cap_mb); a number with a unit is that size. */
static int parse_cap(const char *text, double *bytes) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (end != text && *end == 0) {
    if (!isfinite(v) || v < 0) return -1;
    *bytes = v * MIB;
    return 0;
  }
  return ovl_parse_bytes(text, bytes);
}

static int parse_caps(const char *text, double *caps, size_t *n) {
  char buf[1024];
  if (strlen(text) >= sizeof buf) return ovl_cli_usage("whatif", "--bucket-mb: list too long");
  snprintf(buf, sizeof buf, "%s", text);
  *n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*n == MAX_CAPS) return ovl_cli_usage("whatif", "--bucket-mb: at most %d sizes", MAX_CAPS);
    if (parse_cap(tok, &caps[*n]) || !(caps[*n] > 0))
      return ovl_cli_usage("whatif", "--bucket-mb '%s': expected a positive number of MiB or a size such as 25MB", tok);
    (*n)++;
  }
  return *n == 0 ? ovl_cli_usage("whatif", "--bucket-mb '%s': empty list", text) : 0;
}

typedef struct whatif_out {
  const ovl_whatif_result *w;
  double first_cap;
} whatif_out;

static int write_whatif(FILE *out, const ovl_cli_job_opts *o, void *ctx) {
  const whatif_out *r = ctx;
  if (o->json) ovl_whatif_json(out, r->w, r->first_cap, o->pretty);
  else ovl_whatif_text(out, r->w, r->first_cap);
  return 0;
}

int ovl_cmd_whatif(int argc, char **argv) {
  static const struct option longopts[] = {
    {"bucket-mb", required_argument, NULL, OPT_BUCKETS},
    {"first-bucket-mb", required_argument, NULL, OPT_FIRST},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"help", no_argument, NULL, 'h'},
    OVL_CLI_JOB_LONGOPTS,
    {NULL, 0, NULL, 0},
  };
  double caps[MAX_CAPS];
  size_t ncaps = 0;
  ovl_whatif_options wopt = {caps, 0, MIB, NAN, NAN};
  ovl_cli_job_opts jo;
  ovl_cli_job_opts_init(&jo);
  jo.verb = "whatif";
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    int taken = ovl_cli_job_option(c, optarg, &jo);
    if (taken < 0) return 1;
    if (taken) continue;
    switch (c) {
      case OPT_BUCKETS:
        if (parse_caps(optarg, caps, &ncaps)) return 1;
        break;
      case OPT_FIRST:
        if (parse_cap(optarg, &wopt.first_cap))
          return ovl_cli_usage("whatif", "--first-bucket-mb '%s': expected a number of MiB (0: none) or a size", optarg);
        break;
      case OPT_ALPHA:
        if (ovl_parse_time_ns(optarg, &wopt.alpha_ns))
          return ovl_cli_usage("whatif", "--alpha '%s': expected a time such as 50us", optarg);
        break;
      case OPT_BETA:
        if (ovl_parse_rate(optarg, &wopt.beta))
          return ovl_cli_usage("whatif", "--beta '%s': expected a rate such as 12GB/s", optarg);
        break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("whatif", c, argv);
    }
  }
  if (ncaps == 0) return ovl_cli_usage("whatif", "--bucket-mb LIST is required");
  if (optind >= argc) return ovl_cli_usage("whatif", "no TRACE given");
  wopt.ncaps = ncaps;
  ovl_cli_job j;
  int rc = ovl_cli_job_run(&jo.analysis, &jo.output, 1, argv + optind, (size_t)(argc - optind), &j);
  if (rc) return rc;
  ovl_err err;
  ovl_err_clear(&err);
  ovl_whatif_result w;
  rc = ovl_whatif_run(j.job.ranks, j.job.nranks, &wopt, &w, &err);
  if (rc) {
    /* Name the traces: a user error here is about their content. */
    if (rc == OVL_EUSER && j.job.nranks) {
      char msg[sizeof err.msg];
      snprintf(msg, sizeof msg, "%s", err.msg);
      ovl_fail(&err, OVL_EUSER, "%s%s: %s", j.job.ranks[0].trace_path, j.job.nranks > 1 ? " (and the others)" : "",
               msg);
    }
    rc = ovl_cli_fail(&err);
  } else {
    whatif_out o = {&w, wopt.first_cap};
    rc = ovl_cli_write_output(&jo, write_whatif, &o);
    ovl_whatif_result_free(&w);
  }
  ovl_cli_job_free(&j);
  return rc;
}
