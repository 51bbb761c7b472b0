/* The parallelism dimensions in the reports: see report_dims.h. */
#include "report_dims.h"

#include "base/text_clean.h"

#include "base/units.h"

#include <math.h>

void ovl_report_dims_coll_json(ovl_json *j, const ovl_coll_result *c) {
  ovl_json_string(j, "dim", ovl_pdim_name((ovl_pdim)c->pdim.dim));
  ovl_json_string(j, "dim_role", ovl_prole_name((ovl_prole)c->pdim.role));
}

void ovl_report_dims_totals_json(ovl_json *j, const ovl_dim_totals *t, long nsteps) {
  ovl_json_object_begin(j, "dimensions");
  for (int d = 1; d < OVL_DIM_COUNT; d++) {
    if (t[d].colls == 0) continue;
    ovl_json_object_begin(j, ovl_pdim_name((ovl_pdim)d));
    ovl_json_int(j, "t_comm_ns", t[d].comm);
    ovl_json_int(j, "t_exposed_ns", t[d].exposed);
    ovl_json_double(j, "efficiency", ovl_dim_efficiency(&t[d]));
    ovl_json_int(j, "collectives", t[d].colls);
    if (nsteps > 0) {
      ovl_json_int(j, "t_comm_per_step_ns", t[d].comm / nsteps);
      ovl_json_int(j, "t_exposed_per_step_ns", t[d].exposed / nsteps);
    }
    ovl_json_object_end(j);
  }
  ovl_json_object_end(j);
}

void ovl_report_dims_pipeline_json(ovl_json *j, const ovl_rank_result *r) {
  const ovl_pipeline_stats *p = &r->pipeline;
  if (p->stage < 0) {
    ovl_json_null(j, "pipeline");
    return;
  }
  ovl_json_object_begin(j, "pipeline");
  ovl_json_int(j, "stage", p->stage);
  ovl_json_int(j, "stages", p->stages);
  ovl_json_double(j, "microbatches", p->microbatches);
  ovl_json_double(j, "bubble_fraction", p->bubble);
  ovl_json_double(j, "model_bubble_fraction", p->model_bubble);
  ovl_json_int(j, "compute_per_step_ns", p->compute_ns);
  ovl_json_int(j, "span_per_step_ns", p->span_ns);
  ovl_json_object_end(j);
}

void ovl_report_dims_groups_json(ovl_json *j, const ovl_job *job) {
  ovl_json_array_begin(j, "process_groups");
  for (size_t g = 0; g < job->npgroups; g++) {
    const ovl_pgroup *pg = &job->pgroups[g];
    ovl_json_object_begin(j, NULL);
    ovl_json_int(j, "comm", pg->comm);
    if (pg->name) ovl_json_string(j, "name", pg->name);
    else ovl_json_null(j, "name");
    ovl_json_string(j, "dim", ovl_pdim_name(pg->dim));
    ovl_json_string(j, "dense_dim", ovl_pdim_name(pg->dense_dim));
    ovl_json_string(j, "why", pg->why);
    if (pg->nranks != OVL_NONE) ovl_json_int(j, "nranks", pg->nranks);
    else ovl_json_null(j, "nranks");
    ovl_json_array_begin(j, "ranks");
    for (size_t i = 0; i < pg->nmembers; i++) ovl_json_int(j, NULL, pg->members[i]);
    ovl_json_array_end(j);
    if (pg->stride > 0) ovl_json_int(j, "stride", pg->stride);
    else ovl_json_null(j, "stride");
    ovl_json_object_begin(j, "ops");
    for (int op = 0; op < OVL_OP_COUNT; op++)
      if (pg->ops[op]) ovl_json_int(j, ovl_op_name((ovl_op)op), pg->ops[op]);
    ovl_json_object_end(j);
    ovl_json_int(j, "on_compute_stream", pg->on_compute_stream);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

int ovl_report_dims_beyond_ddp(const ovl_job *job) {
  for (size_t g = 0; g < job->npgroups; g++) {
    const ovl_pgroup *pg = &job->pgroups[g];
    if (pg->dim == OVL_DIM_TP || pg->dim == OVL_DIM_PP || pg->dim == OVL_DIM_EP) return 1;
    if (pg->dim == OVL_DIM_DP && (pg->ops[OVL_OP_ALLGATHER] || pg->ops[OVL_OP_REDUCESCATTER])) return 1;
    if (pg->ops[OVL_OP_ALLTOALL]) return 1;  /* ep, or why it is not */
  }
  return 0;
}

/* One row per dimension: the range over the ranks that have it, per step. */
static void print_dims_grouped(FILE *out, const ovl_job *job) {
  char a[32], b[32], c[32], d2[32];
  fprintf(out, "\n  %4s %5s %23s %23s %15s   (range over the ranks; --all or --json: each rank)\n", "dim", "ranks",
          "comm/step", "exposed/step", "efficiency");
  for (int d = 1; d < OVL_DIM_COUNT; d++) {
    double comm_lo = INFINITY, comm_hi = -INFINITY, exp_lo = INFINITY, exp_hi = -INFINITY;
    double eff_lo = INFINITY, eff_hi = -INFINITY;
    long n = 0;
    for (size_t i = 0; i < job->nranks; i++) {
      const ovl_rank_result *r = &job->ranks[i];
      const ovl_dim_totals *t = &r->dims[d];
      if (t->colls == 0) continue;
      double steps = r->nsteps ? (double)r->nsteps : 1.0;
      double comm = (double)t->comm / steps, exposed = (double)t->exposed / steps, eff = ovl_dim_efficiency(t);
      comm_lo = fmin(comm_lo, comm), comm_hi = fmax(comm_hi, comm);
      exp_lo = fmin(exp_lo, exposed), exp_hi = fmax(exp_hi, exposed);
      if (!isnan(eff)) eff_lo = fmin(eff_lo, eff), eff_hi = fmax(eff_hi, eff);
      n++;
    }
    if (n == 0) continue;
    fprintf(out, "  %4s %5ld %10s - %10s %10s - %10s ", ovl_pdim_name((ovl_pdim)d), n,
            ovl_format_ns(comm_lo, a, sizeof a), ovl_format_ns(comm_hi, b, sizeof b),
            ovl_format_ns(exp_lo, c, sizeof c), ovl_format_ns(exp_hi, d2, sizeof d2));
    if (eff_lo > eff_hi) fprintf(out, "%15s\n", "n/a");
    else fprintf(out, "%5.1f%% - %5.1f%%\n", 100.0 * eff_lo, 100.0 * eff_hi);
  }
  for (size_t i = 0; i < job->nranks; i++) {
    const ovl_rank_result *r = &job->ranks[i];
    if (r->pipeline.stage >= 0)
      fprintf(out, "  rank %lld: pipeline stage %d/%d, bubble %.1f%% (model %.1f%%)\n", (long long)r->rank,
              r->pipeline.stage, r->pipeline.stages, 100.0 * r->pipeline.bubble, 100.0 * r->pipeline.model_bubble);
  }
}

void ovl_report_dims_text(FILE *out, const ovl_job *job, int per_rank) {
  char a[32], b[32];
  fprintf(out, "\nParallelism dimensions\n");
  for (size_t g = 0; g < job->npgroups; g++) {
    const ovl_pgroup *pg = &job->pgroups[g];
    if (pg->name) {
      char clean[256];
      ovl_text_clean_into(pg->name, clean, sizeof clean);
      fprintf(out, "  %-7s %s (comm %lld), %lld ranks [", ovl_pdim_name(pg->dim), clean, (long long)pg->comm,
              (long long)(pg->nranks == OVL_NONE ? -1 : pg->nranks));
    } else {
      fprintf(out, "  %-7s comm %lld, %lld ranks [", ovl_pdim_name(pg->dim), (long long)pg->comm,
              (long long)(pg->nranks == OVL_NONE ? -1 : pg->nranks));
    }
    for (size_t i = 0; i < pg->nmembers; i++) fprintf(out, "%s%lld", i ? " " : "", (long long)pg->members[i]);
    fprintf(out, "]: %s\n", pg->why);
  }
  if (!per_rank) {
    print_dims_grouped(out, job);
    return;
  }
  fprintf(out, "\n  %6s %4s %12s %12s %10s\n", "rank", "dim", "comm/step", "exposed/step", "efficiency");
  for (size_t i = 0; i < job->nranks; i++) {
    const ovl_rank_result *r = &job->ranks[i];
    double steps = r->nsteps ? (double)r->nsteps : 1.0;
    for (int d = 1; d < OVL_DIM_COUNT; d++) {
      const ovl_dim_totals *t = &r->dims[d];
      if (t->colls == 0) continue;
      double eff = ovl_dim_efficiency(t);
      fprintf(out, "  %6lld %4s %12s %12s ", (long long)r->rank, ovl_pdim_name((ovl_pdim)d),
              ovl_format_ns((double)t->comm / steps, a, sizeof a), ovl_format_ns((double)t->exposed / steps, b, sizeof b));
      if (isnan(eff)) fprintf(out, "%10s\n", "n/a");
      else fprintf(out, "%9.1f%%\n", 100.0 * eff);
    }
    if (r->pipeline.stage >= 0)
      fprintf(out, "  %6lld   pipeline stage %d/%d: bubble %.1f%% (model (p-1)/(m+p-1) with m=%.0f: %.1f%%)\n",
              (long long)r->rank, r->pipeline.stage, r->pipeline.stages, 100.0 * r->pipeline.bubble,
              r->pipeline.microbatches, 100.0 * r->pipeline.model_bubble);
  }
}
