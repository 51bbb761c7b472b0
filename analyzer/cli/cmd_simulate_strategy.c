/* `ovl simulate --strategy`: a strategy's known answers, and its schedule as traces (cli.h). */
#include "cli.h"
#include "output_plan.h"

#include "base/json_out.h"
#include "../model/parallel_model.h"
#include "../simulate/sim_strategy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const dim_names[OVL_PM_DIMS] = {"unknown", "dp", "tp", "pp", "ep"};

/* A stage's measured bubble: idle share of the step over every stage's span. */
static double stage_bubble(const ovl_pm_job *job, int r) {
  return job->step_ns > 0 ? 1.0 - job->ranks[r].compute_ns / job->step_ns : NAN;
}

/* The finding figures docs/findings.md defines, per rank (job: rank -1). */
typedef struct expected_finding {
  const char *code;
  int rank;
  double recoverable_ns;
} expected_finding;

static size_t expected_findings(const ovl_pm_job *job, int steps, expected_finding *out, size_t cap) {
  size_t n = 0;
  const ovl_pm_params *p = &job->p;
  double lo = INFINITY, hi = -INFINITY;
  for (int r = 0; r < job->nranks && n + 4 < cap; r++) {
    const ovl_pm_rank *rk = &job->ranks[r];
    if (rk->gather_exposed_ns > 0) out[n++] = (expected_finding){"late_prefetch", r, steps * rk->gather_exposed_ns};
    if (rk->reduce_scatter_exposed_ns > 0)
      out[n++] = (expected_finding){"exposed_reduce_scatter", r, steps * rk->reduce_scatter_exposed_ns};
    if (rk->comm_ns[OVL_PM_DIM_TP] > 0)
      out[n++] = (expected_finding){"tp_blocking_share", r, steps * rk->exposed_ns[OVL_PM_DIM_TP]};
    if (p->strategy == OVL_PM_PP) {
      double P1 = p->stages - 1, model2 = P1 / (2.0 * p->microbatches + P1);
      double rec = job->step_ns * (stage_bubble(job, r) - model2);
      out[n++] = (expected_finding){"pipeline_bubble", r, steps * (rec > 0 ? rec : 0)};
    }
    if (rk->comm_ns[OVL_PM_DIM_EP] < lo) lo = rk->comm_ns[OVL_PM_DIM_EP];
    if (rk->comm_ns[OVL_PM_DIM_EP] > hi) hi = rk->comm_ns[OVL_PM_DIM_EP];
  }
  if (p->strategy == OVL_PM_MOE && hi > lo && n < cap)
    out[n++] = (expected_finding){"alltoall_imbalance", -1, steps * (hi - lo)};
  return n;
}

static void print_json(const ovl_pm_job *job, int steps) {
  ovl_json j;
  ovl_json_init(&j, stdout, 1);
  ovl_json_object_begin(&j, NULL);
  ovl_json_string(&j, "strategy", ovl_pm_strategy_name(job->p.strategy));
  ovl_json_int(&j, "ranks", job->nranks);
  ovl_json_int(&j, "steps", steps);
  ovl_json_double(&j, "step_ns", job->step_ns);
  ovl_json_array_begin(&j, "process_groups");
  for (int g = 0; g < job->ngroups; g++) {
    ovl_json_object_begin(&j, NULL);
    ovl_json_int(&j, "comm", OVL_SIM_GROUP_COMM(g));
    ovl_json_string(&j, "dim", dim_names[job->groups[g].dim]);
    ovl_json_array_begin(&j, "ranks");
    for (int i = 0; i < job->groups[g].nmembers; i++) ovl_json_int(&j, NULL, job->groups[g].members[i]);
    ovl_json_array_end(&j);
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);
  ovl_json_array_begin(&j, "per_rank");
  for (int r = 0; r < job->nranks; r++) {
    const ovl_pm_rank *rk = &job->ranks[r];
    ovl_json_object_begin(&j, NULL);
    ovl_json_int(&j, "rank", r);
    ovl_json_double(&j, "compute_per_step_ns", rk->compute_ns);
    ovl_json_object_begin(&j, "dimensions");
    for (int d = 1; d < OVL_PM_DIMS; d++) {
      if (rk->comm_ns[d] <= 0) continue;
      ovl_json_object_begin(&j, dim_names[d]);
      ovl_json_double(&j, "t_comm_per_step_ns", rk->comm_ns[d]);
      ovl_json_double(&j, "t_exposed_per_step_ns", rk->exposed_ns[d]);
      ovl_json_double(&j, "efficiency", 1.0 - rk->exposed_ns[d] / rk->comm_ns[d]);
      ovl_json_object_end(&j);
    }
    ovl_json_object_end(&j);
    if (job->p.strategy == OVL_PM_PP) {
      ovl_json_object_begin(&j, "pipeline");
      ovl_json_int(&j, "stage", r);
      ovl_json_double(&j, "bubble_fraction", stage_bubble(job, r));
      ovl_json_double(&j, "model_bubble_fraction", job->model_bubble);
      ovl_json_object_end(&j);
    } else {
      ovl_json_null(&j, "pipeline");
    }
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);
  expected_finding f[256];
  size_t nf = expected_findings(job, steps, f, 256);
  ovl_json_array_begin(&j, "findings");
  for (size_t i = 0; i < nf; i++) {
    ovl_json_object_begin(&j, NULL);
    ovl_json_string(&j, "code", f[i].code);
    if (f[i].rank >= 0) ovl_json_int(&j, "rank", f[i].rank);
    else ovl_json_null(&j, "rank");
    ovl_json_double(&j, "recoverable_ns", f[i].recoverable_ns);
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
}

static void print_text(const ovl_pm_job *job, int steps) {
  printf("strategy=%s ranks=%d step=%.3fms\n", ovl_pm_strategy_name(job->p.strategy), job->nranks, job->step_ns / 1e6);
  for (int g = 0; g < job->ngroups; g++) {
    printf("group comm=%d dim=%s ranks=[", OVL_SIM_GROUP_COMM(g), dim_names[job->groups[g].dim]);
    for (int i = 0; i < job->groups[g].nmembers; i++) printf("%s%d", i ? " " : "", job->groups[g].members[i]);
    printf("]\n");
  }
  for (int r = 0; r < job->nranks; r++)
    for (int d = 1; d < OVL_PM_DIMS; d++) {
      const ovl_pm_rank *rk = &job->ranks[r];
      if (rk->comm_ns[d] <= 0) continue;
      printf("rank=%d dim=%s comm/step=%.3fms exposed/step=%.3fms efficiency=%.1f%%\n", r, dim_names[d],
             rk->comm_ns[d] / 1e6, rk->exposed_ns[d] / 1e6, 100.0 * (1.0 - rk->exposed_ns[d] / rk->comm_ns[d]));
    }
  if (job->p.strategy == OVL_PM_PP)
    for (int r = 0; r < job->nranks; r++)
      printf("stage=%d bubble=%.1f%% model (p-1)/(m+p-1)=%.1f%%\n", r, 100.0 * stage_bubble(job, r),
             100.0 * job->model_bubble);
  expected_finding f[256];
  size_t nf = expected_findings(job, steps, f, 256);
  for (size_t i = 0; i < nf; i++)
    printf("finding=%s rank=%d recoverable=%.3fms over %d steps\n", f[i].code, f[i].rank, f[i].recoverable_ns / 1e6,
           steps);
}

/* DIR/rank<r>.sqlite for every rank, planned as outputs (output_plan.h) before anything is
** written; DIR must be a directory (or not exist yet), never a file's name. Returns the exit
** status, having printed any error. */
static int plan_strategy_outputs(const char *dir, int nranks) {
  static const char *const file_suffixes[] = {".sqlite", ".db", ".json", ".json.gz"};
  size_t n = strlen(dir);
  for (size_t i = 0; i < sizeof file_suffixes / sizeof *file_suffixes; i++) {
    size_t m = strlen(file_suffixes[i]);
    if (n > m && strcmp(dir + n - m, file_suffixes[i]) == 0)
      return ovl_cli_usage("simulate", "--emit-trace '%s': --strategy writes one trace per rank into a directory: "
                           "name a directory, not a %s file", dir, file_suffixes[i]);
  }
  struct stat sb;
  if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
    return ovl_cli_usage("simulate", "--emit-trace '%s': exists and is not a directory", dir);
  ovl_output_plan plan = {0};
  ovl_err err;
  ovl_err_clear(&err);
  int rc = OVL_OK;
  for (int r = 0; !rc && r < nranks; r++) {
    char path[4200];
    snprintf(path, sizeof path, "%s%srank%d.sqlite", dir, n && dir[n - 1] == '/' ? "" : "/", r);
    rc = ovl_output_plan_add(&plan, path, NULL, &err);
  }
  if (!rc) rc = ovl_output_plan_check_traces(&plan, &err);
  ovl_output_plan_free(&plan);
  return rc ? ovl_cli_fail(&err) : 0;
}

int ovl_simulate_strategy(const ovl_pm_params *p, const char *emit, long steps, int json) {
  ovl_pm_job job;
  if (ovl_pm_build(p, &job)) return ovl_cli_usage("simulate", "bad parameters for --strategy %s", ovl_pm_strategy_name(p->strategy));
  if (emit && plan_strategy_outputs(emit, job.nranks)) {
    ovl_pm_free(&job);
    return 1;
  }
  if (json) print_json(&job, (int)steps);
  else print_text(&job, (int)steps);
  int rc = 0;
  if (emit) {
    ovl_err err;
    ovl_err_clear(&err);
    if (ovl_sim_emit_strategy(emit, &job, (int)steps, "ovl simulate --strategy", &err)) rc = ovl_cli_fail(&err);
    else fprintf(stderr, "ovl: wrote %d traces, %s/rank0.sqlite to rank%d.sqlite: %ld steps of %s\n", job.nranks,
                 emit, job.nranks - 1, steps, ovl_pm_strategy_name(p->strategy));
  }
  ovl_pm_free(&job);
  return rc;
}
