/* `ovl stats`: nsys-stats-style summaries of traces (kernels, NCCL, NVTX, memcpy) as text, CSV
** or JSON. */
#include "cli.h"
#include "cli_job.h"

#include "../report/stats_out.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: ovl stats [options] TRACE...\n"
    "\n"
    "Summaries of the traces, per rank (GPU), as 'nsys stats' prints them: GPU kernels by\n"
    "name (count, total, share, mean, min, max), NCCL collectives by operation and size\n"
    "bucket (count, bytes, time, bus bandwidth), NVTX ranges by name and memory operations by\n"
    "kind, beside each rank's overlap totals. Work is classified as 'ovl report' classifies\n"
    "it, so the tables add up to the report's numbers (docs/stats.md).\n"
    OVL_CLI_TRACE_HELP
    "\n"
    "Options:\n"
    "  --report NAME        the table NAME only (repeat, or NAME,NAME,...): summary, kernels,\n"
    "                       nccl, nvtx, memcpy (default: all five, in that order)\n"
    "  --csv                CSV: a header row and the rows of each table (times in ns, ratios\n"
    "                       0..1); several tables apart by one empty line\n"
    "  --json               {\"ovl_stats_version\":1,\"<table>\":[{...}],...}, keys as the CSV header\n"
    "  --compact            JSON on one line (default: indented)\n"
    "  --merge              one set of rows for the whole job instead of one per rank\n"
    "  --top N              text: the N largest rows of each table and rank (default 15)\n"
    "  --all                text: every row\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "  --comm-pattern RE    also count kernels whose name matches RE as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat         Kineto traces: what Holistic Trace Analysis analyses (docs/import.md)\n"
    "  --dim COMM=DIM,...   give process group COMM a parallelism dimension (docs/report.md)\n"
    "  -h, --help           this help\n"
    "Exit status: 0 ok, 1 bad input or usage, 2 internal error.\n";

enum { OPT_REPORT = 256, OPT_CSV, OPT_MERGE, OPT_TOP, OPT_ALL };

typedef struct stats_opts {
  ovl_stats_table tables[16];
  size_t ntables;
  int csv, merge;
  size_t top;
} stats_opts;

/* Adds the tables named in `list` (comma-separated). Returns 0, or prints the error and returns 1. */
static int add_tables(stats_opts *s, const char *list) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    int t = ovl_stats_table_from_name(name);
    if (t < 0)
      return ovl_cli_usage("stats", "--report '%s': expected summary, kernels, nccl, nvtx or memcpy", name);
    size_t k = 0;
    while (k < s->ntables && s->tables[k] != (ovl_stats_table)t) k++;
    if (k == s->ntables && s->ntables < sizeof s->tables / sizeof s->tables[0]) s->tables[s->ntables++] = t;
  }
  if (s->ntables == 0) return ovl_cli_usage("stats", "--report '%s': no table named", list);
  return 0;
}

static int parse(int argc, char **argv, ovl_cli_job_opts *jo, stats_opts *s) {
  static const struct option longopts[] = {
    {"report", required_argument, NULL, OPT_REPORT},
    {"csv", no_argument, NULL, OPT_CSV},
    {"merge", no_argument, NULL, OPT_MERGE},
    {"top", required_argument, NULL, OPT_TOP},
    {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, 'h'},
    OVL_CLI_JOB_LONGOPTS,
    {NULL, 0, NULL, 0},
  };
  optind = 1;
  opterr = 0;
  int c;
  long n;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    if (ovl_cli_job_option(c, optarg, jo)) continue;
    switch (c) {
      case OPT_REPORT:
        if (add_tables(s, optarg)) return 1;
        break;
      case OPT_CSV: s->csv = 1; break;
      case OPT_MERGE: s->merge = 1; break;
      case OPT_TOP:
        if (ovl_cli_int("stats", "--top", optarg, 1, 1000000, &n)) return 1;
        s->top = (size_t)n;
        break;
      case OPT_ALL: s->top = SIZE_MAX; break;
      case 'h': fputs(help, stdout); return -1;
      default: return ovl_cli_bad_option("stats", c, argv);
    }
  }
  if (s->csv && jo->json) return ovl_cli_usage("stats", "--csv and --json: give one");
  if (optind >= argc) return ovl_cli_usage("stats", "no TRACE given");
  if (s->ntables == 0)
    for (int t = 0; t < OVL_ST_COUNT; t++) s->tables[s->ntables++] = (ovl_stats_table)t;
  return 0;
}

typedef struct stats_out {
  const ovl_stats_view *view;
  const stats_opts *s;
} stats_out;

static int write_stats(FILE *out, const ovl_cli_job_opts *o, void *ctx) {
  const stats_out *so = ctx;
  ovl_table_format f = so->s->csv ? OVL_TABLE_CSV : o->json ? OVL_TABLE_JSON : OVL_TABLE_TEXT;
  ovl_stats_write(out, so->view, so->s->tables, so->s->ntables, f, o->pretty);
  return 0;
}

int ovl_cmd_stats(int argc, char **argv) {
  ovl_cli_job_opts jo;
  ovl_cli_job_opts_init(&jo);
  stats_opts s;
  memset(&s, 0, sizeof s);
  s.top = 15;
  int rc = parse(argc, argv, &jo, &s);
  if (rc) return rc < 0 ? 0 : rc;

  unsigned what = 0;
  for (size_t i = 0; i < s.ntables; i++) what |= ovl_stats_table_needs(s.tables[i]);
  ovl_cli_job j;
  rc = ovl_cli_job_run(&jo.analysis, &jo.output, 1, argv + optind, (size_t)(argc - optind), &j);
  if (rc) return rc;
  ovl_err err;
  ovl_err_clear(&err);
  ovl_stats per_rank, merged;
  memset(&merged, 0, sizeof merged);
  rc = ovl_stats_collect(&j.ctx, &j.job, what, &per_rank, &err);
  if (!rc && s.merge) {
    rc = ovl_stats_merge(&per_rank, &merged, &err);
    if (rc) ovl_stats_free(&per_rank);
  }
  if (rc) {
    rc = ovl_cli_fail(&err);
  } else {
    ovl_stats_view view = {&j.job, s.merge ? &merged : &per_rank, s.merge, s.top};
    stats_out so = {&view, &s};
    rc = ovl_cli_write_output(&jo, write_stats, &so);
    ovl_stats_free(&per_rank);
    ovl_stats_free(&merged);
  }
  ovl_cli_job_free(&j);
  return rc;
}
