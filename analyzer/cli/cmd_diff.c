/* `ovl diff BEFORE AFTER`: what changed between two runs, noise-aware, with a CI gate. */
#include "cli.h"
#include "cli_gate.h"
#include "cli_job.h"
#include "output_plan.h"

#include "../compare/diff.h"
#include "../report/diff_html.h"
#include "../report/diff_text.h"
#include "../report/report_html.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
    "usage: ovl diff [options] BEFORE AFTER\n"
    "\n"
    "What changed between two runs, most significant first: per job and rank the step time,\n"
    "compute, communication, exposed communication and overlap efficiency; the gradient\n"
    "buckets' firing order against readiness and their layout; the findings that appeared or\n"
    "disappeared; per collective (matched by communicator, operation and index within the\n"
    "step) and per kernel name the time added or removed, count changes, new and vanished ones.\n"
    "Steps are distributions: each value is the median over steps, and a change is flagged (*)\n"
    "only when it exceeds the step-to-step spread (interquartile range). See docs/diff.md.\n"
    "\n"
    "BEFORE and AFTER: each a trace, a directory of ranks' traces, or a saved 'ovl report\n"
    "--json' (kernels are compared only between traces).\n"
    OVL_CLI_TRACE_HELP
    "\n"
    "Options:\n"
    "  --json               print the comparison as JSON (docs/diff.md)\n"
    "  --compact            JSON on one line (default: indented)\n"
    "  --html FILE          also write an HTML page: the comparison, then AFTER's report (when\n"
    "                       AFTER is traces)\n"
    "  -o, --output FILE    write the text or JSON to FILE instead of standard output\n"
    "  --fail-if COND       exit 3 when COND holds (repeatable), e.g. 'exposed>+5%' (grew by more\n"
    "                       than 5%), 'step_time>+2ms', 'efficiency<0.8' (AFTER's value),\n"
    "                       'findings>0'. METRIC OP VALUE: step_time, compute, comm, exposed\n"
    "                       (per step), efficiency, findings, recoverable; < <= > >= == !=;\n"
    "                       a signed VALUE is a change (+5% relative, +2ms absolute); a change\n"
    "                       within the step-to-step noise never fails\n"
    "  --top N              text: rows per section (default 10)\n"
    "  --all                text: every row\n"
    "  --comm-pattern RE    also count kernels whose name matches RE as communication\n"
    "  --step-pattern RE    also treat NVTX ranges whose name matches RE as training steps\n"
    "  --hta-compat         Kineto traces: what Holistic Trace Analysis analyses (docs/import.md)\n"
    "  --dim COMM=DIM,...   give process group COMM a parallelism dimension (docs/report.md)\n"
    "  -h, --help           this help\n"
    "Exit status: 0 ok, 1 bad input or usage, 2 internal error, 3 a --fail-if condition failed\n"
    "(the comparison is written in full first).\n";

enum { OPT_TOP = 256, OPT_ALL, OPT_HTML, OPT_FAIL_IF };

typedef struct diff_opts {
  ovl_cli_job_opts jo;
  ovl_cli_gate gate;
  size_t top;
  const char *html;
} diff_opts;

static int parse(int argc, char **argv, diff_opts *o) {
  static const struct option longopts[] = {
    {"top", required_argument, NULL, OPT_TOP},
    {"all", no_argument, NULL, OPT_ALL},
    {"html", required_argument, NULL, OPT_HTML},
    {"fail-if", required_argument, NULL, OPT_FAIL_IF},
    {"help", no_argument, NULL, 'h'},
    OVL_CLI_JOB_LONGOPTS,
    {NULL, 0, NULL, 0},
  };
  optind = 1;
  opterr = 0;
  int c;
  long n;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    if (ovl_cli_job_option(c, optarg, &o->jo)) continue;
    switch (c) {
      case OPT_TOP:
        if (ovl_cli_int("diff", "--top", optarg, 1, 1000000, &n)) return 1;
        o->top = (size_t)n;
        break;
      case OPT_ALL: o->top = SIZE_MAX; break;
      case OPT_HTML: o->html = optarg; break;
      case OPT_FAIL_IF:
        if (ovl_cli_gate_add(&o->gate, "diff", optarg, 1)) return 1;
        break;
      case 'h': fputs(help, stdout); return -1;
      default: return ovl_cli_bad_option("diff", c, argv);
    }
  }
  int given = argc - optind;
  if (given < 2) return ovl_cli_usage("diff", given ? "only BEFORE given: AFTER is missing" : "no BEFORE and AFTER given");
  if (given > 2)
    return ovl_cli_usage("diff", "%d inputs given: give BEFORE and AFTER (a directory holds the ranks of one run)",
                         given);
  return 0;
}

/* One side: a saved report, or traces analysed with their kernels; keep_job keeps the analysis
** (AFTER's, for the HTML page), else only the profile stays in memory. */
typedef struct diff_side {
  int analysed;
  ovl_cli_job job;
  ovl_profile prof;
} diff_side;

static int load_side(const ovl_analysis_options *opt, char *arg, int keep_job, diff_side *s) {
  memset(s, 0, sizeof *s);
  ovl_err err;
  ovl_err_clear(&err);
  if (ovl_is_saved_report(arg)) return ovl_profile_from_report(arg, &s->prof, &err) ? ovl_cli_fail(&err) : 0;
  int rc = ovl_cli_job_run(opt, NULL, 0, &arg, 1, &s->job);
  if (rc) return rc;
  s->analysed = 1;
  ovl_stats kernels;
  rc = ovl_stats_collect(&s->job.ctx, &s->job.job, OVL_STATS_KERNELS | OVL_STATS_PER_STEP, &kernels, &err);
  if (!rc) {
    rc = ovl_profile_from_job(&s->job.job, &kernels, arg, &s->prof, &err);
    ovl_stats_free(&kernels);
  }
  if (!rc && !keep_job) {
    ovl_cli_job_free(&s->job);
    s->analysed = 0;
  }
  return rc ? ovl_cli_fail(&err) : 0;
}

static void free_side(diff_side *s) {
  ovl_profile_free(&s->prof);
  if (s->analysed) ovl_cli_job_free(&s->job);
  s->analysed = 0;
}

typedef struct diff_out {
  const ovl_diff *d;
  const ovl_diff_gate_line *gates;
  size_t ngates;
  size_t top;
} diff_out;

static int write_diff(FILE *out, const ovl_cli_job_opts *o, void *ctx) {
  const diff_out *w = ctx;
  if (o->json) ovl_diff_json(out, w->d, w->gates, w->ngates, o->pretty);
  else ovl_diff_text(out, w->d, w->top);
  return 0;
}

/* The page: the comparison first, then AFTER's report when AFTER was analysed. */
static int write_html(const char *path, const ovl_diff *d, ovl_cli_job *after) {
  ovl_html_extra extra = {"diff", "0 before/after", "0. Before and after", ovl_diff_html_section, d};
  char title[2048];
  snprintf(title, sizeof title, "%s -> %s", d->before->label, d->after->label);
  return ovl_cli_write_html_with(after, path, title, NAN, NAN, &extra, "ovl diff");
}

/* Compares the loaded sides, writes the outputs and judges the gate. */
static int compare(const diff_opts *o, diff_side *b, diff_side *a) {
  ovl_err err;
  ovl_err_clear(&err);
  ovl_diff d;
  if (ovl_diff_compute(&b->prof, &a->prof, &d, &err)) return ovl_cli_fail(&err);
  ovl_diff_gate_line lines[OVL_CLI_GATE_MAX];
  int rc = 0;
  if (ovl_cli_gate_judge_diff(&o->gate, &d, lines)) {
    ovl_oom(&err, "--fail-if");
    rc = ovl_cli_fail(&err);
  }
  diff_out w = {&d, lines, o->gate.n, o->top};
  if (!rc) rc = ovl_cli_write_output(&o->jo, write_diff, &w);
  if (!rc && o->html) rc = write_html(o->html, &d, a->analysed ? &a->job : NULL);
  if (!rc) rc = ovl_cli_gate_finish("diff", lines, o->gate.n);
  ovl_diff_free(&d);
  return rc;
}

int ovl_cmd_diff(int argc, char **argv) {
  diff_opts o;
  memset(&o, 0, sizeof o);
  ovl_cli_job_opts_init(&o.jo);
  o.top = 10;
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  const char *outputs[] = {o.jo.output, o.html};  /* planned before anything is read */
  rc = ovl_cli_plan_outputs(outputs, 2, argv + optind, 2);
  if (rc) return rc;
  diff_side b, a;
  rc = load_side(&o.jo.analysis, argv[optind], 0, &b);
  if (rc) return rc;
  rc = load_side(&o.jo.analysis, argv[optind + 1], o.html != NULL, &a);
  if (!rc) rc = compare(&o, &b, &a);
  free_side(&a);
  free_side(&b);
  return rc;
}
