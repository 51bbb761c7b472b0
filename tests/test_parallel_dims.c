/*
** Parallelism dimensions end to end (issue 17): for every `ovl simulate --strategy` the model's
** schedule is written as one trace per rank, analysed as a job, and the analysis must recover
** the model's answers within 1%: each group's dimension, per rank and dimension the
** communication and exposed time per step, pipeline bubbles, and the findings with their
** recoverable time. Some answers are also checked against closed forms (the pipeline model
** (p-1)/(m+p-1) with free transfers, TP's blocking all-reduces, ZeRO-3 without prefetch).
** Also: the 2x2 TP x FSDP job classified into its two dimensions, --dim overrides, the
** export's dimension args and the CLI (simulate --strategy, report's sections, bad usage).
** Real traces: PARAM's DLRM (DDP all-reduce and all-to-all on one process group: dp, and no ep
** without MoE evidence unless --dim says so), HTA's all-gather/reduce-scatter trace (dp: param_allgather, grad_reduce_scatter).
** usage: test_parallel_dims OVL_BINARY REPO_TRACES SHARED_TRACES
*/
#include "check.h"

#include "driver/job_driver.h"
#include "job/job_dims.h"
#include "export/export.h"
#include "model/parallel_model.h"
#include "run_cmd.h"
#include "simulate/sim_strategy.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 3
#define TOL 0.01

static int near(double got, double want) {
  if (want == 0) return fabs(got) < 1000;  /* 1 us */
  return fabs(got - want) <= TOL * fabs(want);
}

#define CHECK_WITHIN(got, want, what)                                                                          \
  do {                                                                                                         \
    check_count++;                                                                                             \
    if (!near((got), (want))) {                                                                                \
      check_failures++;                                                                                        \
      fprintf(stderr, "%s:%d: %s: got %.0f, model %.0f (more than 1%% apart)\n", __FILE__, __LINE__, what,     \
              (double)(got), (double)(want));                                                                  \
    }                                                                                                          \
  } while (0)

static char tmpdir_buf[4096];
static int sim_counter;

/* Emits p's schedule and analyses it as a job (with overrides). Returns 0 on success. */
static int run_job(const ovl_pm_params *p, ovl_pm_job *model, ovl_job *job, ovl_analysis_ctx *ctx,
                   const char *overrides, char *dir, size_t dirlen) {
  ovl_err err;
  ovl_err_clear(&err);
  snprintf(dir, dirlen, "%s/sim%d-%s", tmpdir_buf, sim_counter++, ovl_pm_strategy_name(p->strategy));
  if (ovl_pm_build(p, model)) return fprintf(stderr, "model build failed\n"), -1;
  if (ovl_sim_emit_strategy(dir, model, STEPS, "test", &err)) return fprintf(stderr, "emit: %s\n", err.msg), -1;
  ovl_analysis_options opt;
  memset(&opt, 0, sizeof opt);
  opt.dim_overrides = overrides;
  if (ovl_analysis_ctx_init(ctx, &opt, &err)) return fprintf(stderr, "ctx: %s\n", err.msg), -1;
  char *args[1] = {dir};
  if (ovl_analyze_job(ctx, args, 1, NULL, NULL, job, &err)) {
    fprintf(stderr, "analyse: %s\n", err.msg);
    ovl_analysis_ctx_free(ctx);
    return -1;
  }
  return 0;
}

static void cleanup(ovl_pm_job *model, ovl_job *job, ovl_analysis_ctx *ctx, const char *dir) {
  for (int r = 0; r < model->nranks; r++) {
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/rank%d.sqlite", dir, r);
    unlink(path);
  }
  rmdir(dir);
  ovl_job_free(job);
  ovl_analysis_ctx_free(ctx);
  ovl_pm_free(model);
}

static const ovl_rank_result *rank_of(const ovl_job *job, int rank) {
  for (size_t i = 0; i < job->nranks; i++)
    if (job->ranks[i].rank == rank) return &job->ranks[i];
  return NULL;
}

static const ovl_finding *find(const ovl_finding *f, size_t n, const char *code) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i].code, code) == 0) return &f[i];
  return NULL;
}

static const ovl_pgroup *group_of(const ovl_job *job, int64_t comm) {
  for (size_t g = 0; g < job->npgroups; g++)
    if (job->pgroups[g].comm == comm) return &job->pgroups[g];
  return NULL;
}

/* The per-dimension answers of every rank and group; returns the job for further checks. */
static void check_dimensions(const ovl_pm_job *model, const ovl_job *job, const char *name) {
  char what[400];  /* the name, the group and its reason (320 B) */
  CHECK_I64(job->nranks, model->nranks);
  for (int g = 0; g < model->ngroups; g++) {
    const ovl_pgroup *pg = group_of(job, OVL_SIM_GROUP_COMM(g));
    CHECK(pg != NULL);
    if (!pg) continue;
    snprintf(what, sizeof what, "%s group %d dim (%s)", name, g, pg->why);
    if ((int)pg->dim != model->groups[g].dim) fprintf(stderr, "%s: got %s\n", what, ovl_pdim_name(pg->dim));
    CHECK_I64(pg->dim, model->groups[g].dim);
    CHECK_I64(pg->nmembers, model->groups[g].nmembers);
    for (size_t i = 0; i < pg->nmembers && i < 64; i++) CHECK_I64(pg->members[i], model->groups[g].members[i]);
  }
  for (int r = 0; r < model->nranks; r++) {
    const ovl_rank_result *rr = rank_of(job, r);
    CHECK(rr != NULL);
    if (!rr) continue;
    CHECK_I64(rr->nsteps, STEPS);
    for (int d = 1; d < OVL_PM_DIMS; d++) {
      const ovl_pm_rank *m = &model->ranks[r];
      for (size_t s = 0; s < rr->nsteps; s++) {
        snprintf(what, sizeof what, "%s rank %d %s step %zu comm", name, r, ovl_pdim_name((ovl_pdim)d), s);
        CHECK_WITHIN(ovl_step_dim(&rr->steps[s], d).comm, m->comm_ns[d], what);
        snprintf(what, sizeof what, "%s rank %d %s step %zu exposed", name, r, ovl_pdim_name((ovl_pdim)d), s);
        CHECK_WITHIN(ovl_step_dim(&rr->steps[s], d).exposed, m->exposed_ns[d], what);
      }
      if (m->comm_ns[d] > 0) {
        double want = 1.0 - m->exposed_ns[d] / m->comm_ns[d], got = ovl_dim_efficiency(&rr->dims[d]);
        snprintf(what, sizeof what, "%s rank %d %s efficiency (x1e6)", name, r, ovl_pdim_name((ovl_pdim)d));
        CHECK_WITHIN(got * 1e6, want * 1e6, what);
      }
    }
  }
}

/* The finding with this code on this rank (-1: the job) recovers the model's figure. */
static void check_finding(const ovl_job *job, int rank, const char *code, double want, const char *name) {
  const ovl_finding *f = NULL;
  if (rank < 0) {
    f = find(job->findings, job->nfindings, code);
  } else {
    const ovl_rank_result *rr = rank_of(job, rank);
    if (rr) f = find(rr->findings, rr->nfindings, code);
  }
  char what[160];
  snprintf(what, sizeof what, "%s rank %d %s recoverable", name, rank, code);
  if (!f) fprintf(stderr, "%s: finding missing\n", what);
  CHECK(f != NULL);
  if (f) CHECK_WITHIN(f->recoverable_ns, want, what);
}

static void check_no_finding(const ovl_job *job, const char *code) {
  for (size_t i = 0; i < job->nranks; i++) CHECK(find(job->ranks[i].findings, job->ranks[i].nfindings, code) == NULL);
  CHECK(find(job->findings, job->nfindings, code) == NULL);
}

static void strategy_case(ovl_pm_params *p, const char *name) {
  ovl_pm_job model;
  ovl_job job;
  ovl_analysis_ctx ctx;
  char dir[4200];
  if (run_job(p, &model, &job, &ctx, NULL, dir, sizeof dir)) {
    CHECK(!"strategy job analysed");
    return;
  }
  check_dimensions(&model, &job, name);
  for (int r = 0; r < model.nranks; r++) {
    const ovl_pm_rank *m = &model.ranks[r];
    if (m->gather_exposed_ns > 0) check_finding(&job, r, "late_prefetch", STEPS * m->gather_exposed_ns, name);
    if (m->reduce_scatter_exposed_ns > 0)
      check_finding(&job, r, "exposed_reduce_scatter", STEPS * m->reduce_scatter_exposed_ns, name);
    if (m->comm_ns[OVL_PM_DIM_TP] > 0)
      check_finding(&job, r, "tp_blocking_share", STEPS * m->exposed_ns[OVL_PM_DIM_TP], name);
  }
  /* the dimension findings cover what blocking_collective would say about these collectives */
  if (p->strategy != OVL_PM_DDP) check_no_finding(&job, "blocking_collective");
  if (p->strategy == OVL_PM_DDP) {
    check_no_finding(&job, "late_prefetch");
    check_no_finding(&job, "tp_blocking_share");
  }
  if (p->strategy == OVL_PM_PP) {
    double P1 = p->stages - 1, model2 = P1 / (2.0 * p->microbatches + P1);
    for (int r = 0; r < model.nranks; r++) {
      const ovl_rank_result *rr = rank_of(&job, r);
      if (!rr) continue;
      double bubble = 1.0 - model.ranks[r].compute_ns / model.step_ns;
      CHECK_I64(rr->pipeline.stage, r);
      CHECK_I64(rr->pipeline.stages, p->stages);
      CHECK_NEAR(rr->pipeline.microbatches, p->microbatches, 1e-9);
      CHECK_WITHIN(rr->pipeline.bubble * 1e6, bubble * 1e6, "pp bubble (x1e6)");
      CHECK_NEAR(rr->pipeline.model_bubble, model.model_bubble, 1e-12);
      check_finding(&job, r, "pipeline_bubble", STEPS * model.step_ns * (bubble - model2), name);
    }
  }
  if (p->strategy == OVL_PM_MOE) {
    double lo = 1e300, hi = 0;
    for (int r = 0; r < model.nranks; r++) {
      double t = model.ranks[r].comm_ns[OVL_PM_DIM_EP];
      lo = t < lo ? t : lo;
      hi = t > hi ? t : hi;
    }
    check_finding(&job, -1, "alltoall_imbalance", STEPS * (hi - lo), name);
    const ovl_finding *f = find(job.findings, job.nfindings, "alltoall_imbalance");
    CHECK(f && strstr(f->message, "Rank 0 spends the least") != NULL);  /* the hot expert's rank named */
    /* dispatch and combine alternate */
    const ovl_rank_result *rr = rank_of(&job, 1);
    if (rr && rr->nsteps && rr->steps[0].ncolls >= 2) {
      CHECK_I64(rr->steps[0].colls[0].pdim.role, OVL_PROLE_EP_DISPATCH);
      CHECK_I64(rr->steps[0].colls[1].pdim.role, OVL_PROLE_EP_COMBINE);
    }
  }
  cleanup(&model, &job, &ctx, dir);
}

/* Closed forms, independent of the model's bookkeeping. */
static void closed_forms(void) {
  /* pipeline with free transfers: every stage idles exactly (p-1)/(m+p-1) of the step */
  ovl_pm_params p;
  ovl_pm_defaults(OVL_PM_PP, &p);
  p.alpha_ns = 0;
  p.beta_bytes_per_s = 1e18;
  ovl_pm_job model;
  ovl_job job;
  ovl_analysis_ctx ctx;
  char dir[4200];
  if (!run_job(&p, &model, &job, &ctx, NULL, dir, sizeof dir)) {
    for (size_t i = 0; i < job.nranks; i++) CHECK_NEAR(job.ranks[i].pipeline.bubble, 3.0 / (8 + 3), 0.01 * 3.0 / 11);
    cleanup(&model, &job, &ctx, dir);
  } else {
    CHECK(!"pp job");
  }
  /* TP: per layer 2 forward + 2 backward all-reduces of alpha + act/beta, all exposed */
  ovl_pm_defaults(OVL_PM_TP, &p);
  if (!run_job(&p, &model, &job, &ctx, NULL, dir, sizeof dir)) {
    double ar = p.alpha_ns + p.act_bytes / p.beta_bytes_per_s * 1e9;
    for (size_t i = 0; i < job.nranks; i++) {
      CHECK_WITHIN(ovl_step_dim(&job.ranks[i].steps[0], OVL_DIM_TP).comm, 4 * p.layers * ar, "tp closed form");
      CHECK_WITHIN(ovl_step_dim(&job.ranks[i].steps[0], OVL_DIM_TP).exposed, 4 * p.layers * ar, "tp closed form exposed");
    }
    cleanup(&model, &job, &ctx, dir);
  }
  /* ZeRO-3 without prefetch: every all-gather waits in full (2L - 1 of them: the last forward
  ** layer's gather serves backward's first... none here: FSDP re-gathers it) */
  ovl_pm_defaults(OVL_PM_ZERO3, &p);
  p.prefetch = 0;
  if (!run_job(&p, &model, &job, &ctx, NULL, dir, sizeof dir)) {
    double ag = p.alpha_ns + p.layer_bytes / 2 / p.beta_bytes_per_s * 1e9;
    const ovl_finding *f = find(job.ranks[0].findings, job.ranks[0].nfindings, "late_prefetch");
    CHECK(f != NULL);
    if (f) CHECK_WITHIN(f->recoverable_ns, STEPS * 2.0 * p.layers * ag, "zero3 no prefetch closed form");
    cleanup(&model, &job, &ctx, dir);
  }
}

/* The 2x2 TP x FSDP job: four ranks, TP groups {0,1} {2,3}, FSDP groups {0,2} {1,3}. */
static void tp_by_fsdp(void) {
  ovl_pm_params p;
  ovl_pm_defaults(OVL_PM_ZERO3, &p);
  p.dp = 2;
  p.tp = 2;
  ovl_pm_job model;
  ovl_job job;
  ovl_analysis_ctx ctx;
  char dir[4200];
  if (run_job(&p, &model, &job, &ctx, NULL, dir, sizeof dir)) {
    CHECK(!"tp x fsdp job");
    return;
  }
  CHECK_I64(job.nranks, 4);
  CHECK_I64(job.npgroups, 4);
  int ndp = 0, ntp = 0;
  for (size_t g = 0; g < job.npgroups; g++) {
    const ovl_pgroup *pg = &job.pgroups[g];
    CHECK_I64(pg->nmembers, 2);
    if (pg->dim == OVL_DIM_DP) {
      ndp++;
      CHECK_I64(pg->members[1] - pg->members[0], 2);
      CHECK(pg->ops[OVL_OP_ALLGATHER] > 0 && pg->ops[OVL_OP_REDUCESCATTER] > 0);
    } else if (pg->dim == OVL_DIM_TP) {
      ntp++;
      CHECK_I64(pg->members[1] - pg->members[0], 1);
    }
  }
  CHECK_I64(ndp, 2);
  CHECK_I64(ntp, 2);
  for (size_t i = 0; i < job.nranks; i++) {
    CHECK(job.ranks[i].dims[OVL_DIM_DP].colls > 0);
    CHECK(job.ranks[i].dims[OVL_DIM_TP].colls > 0);
  }
  check_dimensions(&model, &job, "tp x fsdp");
  /* the timeline carries each collective's dimension and each step's per-dimension times */
  char js[4300];
  snprintf(js, sizeof js, "%s/tpxfsdp.json", tmpdir_buf);
  ovl_export_options xo = {OVL_EXPORT_CHROME, js, NULL, 0, NULL};
  ovl_export_stats xs;
  ovl_err xerr;
  ovl_err_clear(&xerr);
  CHECK_I64(ovl_export_job(&job, &ctx, &xo, &xs, &xerr), 0);
  FILE *jf = fopen(js, "r");
  static char text[1 << 22];
  size_t len = jf ? fread(text, 1, sizeof text - 1, jf) : 0;
  text[len] = 0;
  if (jf) fclose(jf);
  unlink(js);
  CHECK(strstr(text, "\"dim\":\"tp\",\"dim_role\":\"tp_allreduce\"") != NULL);
  CHECK(strstr(text, "\"dim\":\"dp\",\"dim_role\":\"param_allgather\"") != NULL);
  CHECK(strstr(text, "\"dim\":\"dp\",\"dim_role\":\"grad_reduce_scatter\"") != NULL);
  char want[96];
  snprintf(want, sizeof want, "\"tp_comm_ns\":%lld", (long long)ovl_step_dim(&job.ranks[0].steps[0], OVL_DIM_TP).comm);
  CHECK(strstr(text, want) != NULL);
  CHECK(strstr(text, "\"dp_exposed_ns\":") != NULL);
  CHECK(strstr(text, "\"name\":\"exposed tp communication\"") != NULL);  /* per-dimension counters */
  CHECK(strstr(text, "\"name\":\"exposed dp communication\"") != NULL);
  CHECK(strstr(text, "\"name\":\"exposed ep communication\"") == NULL);
  cleanup(&model, &job, &ctx, dir);

  /* an override wins over the rules: the FSDP group of rank 0 declared tp */
  char spec[64];
  snprintf(spec, sizeof spec, "%d=tp", OVL_SIM_GROUP_COMM(0));
  if (run_job(&p, &model, &job, &ctx, spec, dir, sizeof dir)) {
    CHECK(!"override job");
    return;
  }
  const ovl_pgroup *pg = group_of(&job, OVL_SIM_GROUP_COMM(0));
  CHECK(pg && pg->dim == OVL_DIM_TP && strstr(pg->why, "override") != NULL);
  pg = group_of(&job, OVL_SIM_GROUP_COMM(1));
  CHECK(pg && pg->dim == OVL_DIM_DP);
  cleanup(&model, &job, &ctx, dir);
  ovl_err err;
  ovl_err_clear(&err);
  CHECK_I64(ovl_dim_overrides_check("1000=xx", &err), OVL_EUSER);
  CHECK_I64(ovl_dim_overrides_check("=tp", &err), OVL_EUSER);
  CHECK_I64(ovl_dim_overrides_check("1000", &err), OVL_EUSER);
  CHECK_I64(ovl_dim_overrides_check("default_pg=tp", &err), OVL_OK);  /* a name: the job decides (issue 33) */
  CHECK_I64(ovl_dim_overrides_check("1000=fsdp,1001=pp", &err), OVL_OK);
}

/* The CLI: simulate --strategy's answers and traces, report's sections, bad usage. */
static void cli(const char *ovl) {
  char cmd[8400], dir[4200];
  snprintf(dir, sizeof dir, "%s/cli-tpxfsdp", tmpdir_buf);
  snprintf(cmd, sizeof cmd, "'%s' simulate --strategy zero3 --dp 2 --tp 2 --json --emit-trace '%s'", ovl, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "\"strategy\": \"zero3\"") != NULL);
  CHECK(strstr(r.out, "\"late_prefetch\"") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' report --json --compact '%s'", ovl, dir);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "\"process_groups\":[") != NULL);
  CHECK(strstr(r.out, "\"dim\":\"tp\",\"dense_dim\":\"tp\"") != NULL);
  CHECK(strstr(r.out, "\"dim\":\"dp\",\"dense_dim\":\"dp\"") != NULL);
  CHECK(strstr(r.out, "\"dimensions\":{\"dp\":{") != NULL);
  CHECK(strstr(r.out, "\"ovl_report_version\":1") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' report '%s'", ovl, dir);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "Parallelism dimensions") != NULL);
  CHECK(strstr(r.out, "[late_prefetch]") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' report --dim 1000=bogus '%s'", ovl, dir);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK(strncmp(r.err, "ovl: --dim 'bogus': ", 20) == 0 && count_lines(r.err) == 1);
  cmd_free(&r);
  for (int i = 0; i < 4; i++) {
    char path[4300];
    snprintf(path, sizeof path, "%s/rank%d.sqlite", dir, i);
    unlink(path);
  }
  rmdir(dir);
  static const char *const bad[] = {"--strategy bogus", "--tp 2", "--strategy pp --stages 1",
                                    "--strategy zero3 --misordered", "--strategy moe --hot-factor 0.5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(cmd, sizeof cmd, "'%s' simulate %s", ovl, bad[i]);
    r = run_cmd(cmd);
    if (r.status != 1) fprintf(stderr, "simulate %s: status %d\n", bad[i], r.status);
    CHECK_I64(r.status, 1);
    CHECK(strncmp(r.err, "ovl: simulate: ", 15) == 0 && count_lines(r.err) == 1);
    cmd_free(&r);
  }
}

/* `dim <d>` NVTX ranges name a group's dimension; --dim wins over them. */
static void nvtx_dim(void) {
  ovl_pm_params p;
  ovl_pm_defaults(OVL_PM_ZERO3, &p);
  p.dp = 2;
  p.tp = 2;
  ovl_pm_job model;
  ovl_err err;
  ovl_err_clear(&err);
  char dir[4200], path[4300];
  snprintf(dir, sizeof dir, "%s/nvtx-dim", tmpdir_buf);
  CHECK_I64(ovl_pm_build(&p, &model), 0);
  CHECK_I64(ovl_sim_emit_strategy(dir, &model, STEPS, "test", &err), 0);
  /* rank 0 wraps every call of group 0 (an FSDP group) in an `ovl:dim ep` range */
  snprintf(path, sizeof path, "%s/rank0.sqlite", dir);
  sqlite3 *db = NULL;
  CHECK_I64(sqlite3_open(path, &db), SQLITE_OK);
  char sql[256];
  snprintf(sql, sizeof sql,
           "INSERT INTO nvtx (start, end, tid, domain, name) SELECT host_start, host_end, tid, NULL, 'ovl:dim ep' "
           "FROM collectives WHERE comm = %d", OVL_SIM_GROUP_COMM(0));
  CHECK_I64(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  CHECK(sqlite3_changes(db) > 0);
  sqlite3_close(db);
  for (int pass = 0; pass < 2; pass++) {
    char spec[64];
    snprintf(spec, sizeof spec, "%d=pp", OVL_SIM_GROUP_COMM(0));
    ovl_analysis_options opt;
    memset(&opt, 0, sizeof opt);
    opt.dim_overrides = pass ? spec : NULL;
    ovl_analysis_ctx ctx;
    ovl_job job;
    char *args[] = {dir};
    if (ovl_analysis_ctx_init(&ctx, &opt, &err) || ovl_analyze_job(&ctx, args, 1, NULL, NULL, &job, &err)) {
      CHECK(!"nvtx job analysed");
      break;
    }
    const ovl_pgroup *pg = group_of(&job, OVL_SIM_GROUP_COMM(0));
    CHECK(pg && pg->dim == (pass ? OVL_DIM_PP : OVL_DIM_EP));
    if (pg && !pass) CHECK(strstr(pg->why, "NVTX") != NULL);
    pg = group_of(&job, OVL_SIM_GROUP_COMM(1));
    CHECK(pg && pg->dim == OVL_DIM_DP);
    ovl_job_free(&job);
    ovl_analysis_ctx_free(&ctx);
  }
  for (int r = 0; r < model.nranks; r++) {
    snprintf(path, sizeof path, "%.4000s/rank%d.sqlite", dir, r);
    unlink(path);
  }
  rmdir(dir);
  ovl_pm_free(&model);
}

/* Analyses the trace files or directories args[0..n) as one job, with --dim `overrides` (may be
** NULL); 0 on success. */
static int analyse_real(char **args, size_t n, const char *overrides, ovl_job *job, ovl_analysis_ctx *ctx) {
  ovl_err err;
  ovl_err_clear(&err);
  ovl_analysis_options opt;
  memset(&opt, 0, sizeof opt);
  opt.dim_overrides = overrides;
  if (ovl_analysis_ctx_init(ctx, &opt, &err)) return -1;
  if (ovl_analyze_job(ctx, args, n, NULL, NULL, job, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    ovl_analysis_ctx_free(ctx);
    return -1;
  }
  return 0;
}

/* Real DLRM traces (PARAM: DDP all-reduces and the embeddings' all-to-all on one default
** process group). No kernel names MoE work, so the all-to-alls are no expert parallelism: the
** group's dimension is unknown, saying why, its all-reduces dp, and no MoE finding. Named ep
** with --dim, its calls are ep (the all-to-alls dispatch and combine alternating); per-dimension totals
** are consistent with the rank's; with every rank, the all-to-all imbalance finding agrees
** with the per-rank figures it is computed from. */
static void real_dlrm(char **files, size_t nfiles, int all_ranks) {
  ovl_job job;
  ovl_analysis_ctx ctx;
  if (analyse_real(files, nfiles, NULL, &job, &ctx)) {
    CHECK(!"DLRM traces analysed");
    return;
  }
  CHECK(job.nranks >= 2);
  CHECK_I64(job.npgroups, 1);
  char override[64] = "";
  if (job.npgroups == 1) {
    CHECK_I64(job.pgroups[0].dim, OVL_DIM_UNKNOWN);
    CHECK(strstr(job.pgroups[0].why, "no kernel names MoE work") != NULL);
    CHECK_I64(job.pgroups[0].dense_dim, OVL_DIM_DP);
    snprintf(override, sizeof override, "%lld=ep", (long long)job.pgroups[0].comm);
  }
  for (size_t i = 0; i < job.nranks; i++)
    for (size_t s = 0; s < job.ranks[i].nsteps; s++)
      for (size_t c = 0; c < job.ranks[i].steps[s].ncolls; c++) {
        const ovl_coll_result *cr = &job.ranks[i].steps[s].colls[c];
        if (cr->op == OVL_OP_ALLTOALL) CHECK_I64(cr->pdim.dim, OVL_DIM_UNKNOWN);
        if (cr->op == OVL_OP_ALLREDUCE) CHECK_I64(cr->pdim.dim, OVL_DIM_DP);
      }
  CHECK(find(job.findings, job.nfindings, "alltoall_imbalance") == NULL);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
  if (analyse_real(files, nfiles, override, &job, &ctx)) {
    CHECK(!"DLRM traces analysed with --dim");
    return;
  }
  if (job.npgroups == 1) {
    CHECK_I64(job.pgroups[0].dim, OVL_DIM_EP);
    CHECK_I64(job.pgroups[0].nmembers, job.nranks);
  }
  double lo = 1e300, hi = -1, sum = 0;
  int64_t lo_rank = -1;
  long steps = 0;
  for (size_t i = 0; i < job.nranks; i++) {
    const ovl_rank_result *r = &job.ranks[i];
    long a2a = 0, ar = 0;
    for (size_t s = 0; s < r->nsteps; s++) {
      long k = 0;
      for (size_t c = 0; c < r->steps[s].ncolls; c++) {
        const ovl_coll_result *cr = &r->steps[s].colls[c];
        if (cr->op == OVL_OP_ALLTOALL) {
          a2a++;
          CHECK_I64(cr->pdim.dim, OVL_DIM_EP);
          CHECK_I64(cr->pdim.role, k++ % 2 == 0 ? OVL_PROLE_EP_DISPATCH : OVL_PROLE_EP_COMBINE);
        } else if (cr->op == OVL_OP_ALLREDUCE) {
          ar++;
        }
      }
      for (int d = 1; d < OVL_DIM_COUNT; d++) {
        const ovl_dim_totals dt = ovl_step_dim(&r->steps[s], d), *t = &dt;
        CHECK(t->exposed >= 0 && t->exposed <= t->comm && t->comm <= r->steps[s].totals.comm);
        CHECK(t->exposed <= r->steps[s].totals.exposed);
      }
    }
    CHECK(a2a > 0 && ar > 0);
    CHECK_I64(r->dims[OVL_DIM_EP].colls, a2a + ar);  /* --dim names every call of the group */
    double t = r->nsteps ? (double)r->dims[OVL_DIM_EP].comm / (double)r->nsteps : 0;
    if (t < lo) lo = t, lo_rank = r->rank;
    if (t > hi) hi = t;
    sum += t;
    steps = (long)r->nsteps;
  }
  const ovl_finding *f = find(job.findings, job.nfindings, "alltoall_imbalance");
  double mean = sum / (double)job.nranks;
  if (all_ranks) {
    CHECK((f != NULL) == ((hi - lo) >= 0.10 * mean));
    if (f) {
      CHECK_WITHIN(f->recoverable_ns, (hi - lo) * (double)steps, "dlrm alltoall_imbalance recoverable");
      char who[64];
      snprintf(who, sizeof who, "Rank %lld spends the least", (long long)lo_rank);
      CHECK(strstr(f->message, who) != NULL);
    }
  }
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

/* A real FSDP-like trace (HTA's rank 0 of 16: all-gathers and reduce-scatters on one group):
** that group is dp, its calls param_allgather and grad_reduce_scatter. */
static void real_fsdp(char *file) {
  ovl_job job;
  ovl_analysis_ctx ctx;
  if (analyse_real(&file, 1, NULL, &job, &ctx)) {
    CHECK(!"HTA trace analysed");
    return;
  }
  int found = 0;
  for (size_t g = 0; g < job.npgroups; g++) {
    const ovl_pgroup *pg = &job.pgroups[g];
    if (!pg->ops[OVL_OP_ALLGATHER] || !pg->ops[OVL_OP_REDUCESCATTER]) continue;
    found++;
    CHECK_I64(pg->dim, OVL_DIM_DP);
  }
  CHECK(found >= 1);
  long ag = 0, rs = 0;
  for (size_t i = 0; i < job.nranks; i++)
    for (size_t s = 0; s < job.ranks[i].nsteps; s++)
      for (size_t c = 0; c < job.ranks[i].steps[s].ncolls; c++) {
        const ovl_coll_result *cr = &job.ranks[i].steps[s].colls[c];
        ag += cr->op == OVL_OP_ALLGATHER && cr->pdim.role == OVL_PROLE_PARAM_GATHER;
        rs += cr->op == OVL_OP_REDUCESCATTER && cr->pdim.role == OVL_PROLE_GRAD_REDUCE_SCATTER;
      }
  CHECK(ag > 0 && rs > 0);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

static void real_traces(const char *repo_data, const char *shared) {
  char a[4200], b[4200];
  snprintf(a, sizeof a, "%s/kineto-param-dlrm8/worker0_step_12.json.gz", repo_data);
  snprintf(b, sizeof b, "%s/kineto-param-dlrm8/worker1_step_12.json.gz", repo_data);
  char *two[] = {a, b};
  real_dlrm(two, 2, 0);
  snprintf(a, sizeof a, "%s/kineto-param-dlrm8", shared);
  if (access(a, R_OK) == 0) {
    char *all[] = {a};
    real_dlrm(all, 1, 1);
  } else {
    printf("SKIP: %s absent: the 8-rank DLRM job is not checked\n", a);
  }
  snprintf(b, sizeof b, "%s/kineto-hta/negative_queue_length_values_check__rank0.json.gz", shared);
  if (access(b, R_OK) == 0) real_fsdp(b);
  else printf("SKIP: %s absent: the all-gather/reduce-scatter trace is not checked\n", b);
}

/* A rank's steps keep only their dimensions with totals (ovl_step_dims_put/seal): what is put
** reads back, every other dimension reads zero, and putting again after a clear replaces. */
static void step_dims_kept(void) {
  ovl_rank_result r;
  memset(&r, 0, sizeof r);
  r.nsteps = 200;  /* enough to grow the block more than once */
  r.steps = calloc(r.nsteps, sizeof *r.steps);
  CHECK(r.steps != NULL);
  if (!r.steps) return;
  for (int round = 0; round < 2; round++) {
    ovl_step_dims_clear(&r);
    for (size_t s = 0; s < r.nsteps; s++) {
      ovl_dim_totals d[OVL_DIM_COUNT];
      memset(d, 0, sizeof d);
      if (s % 3 == 1) d[OVL_DIM_DP] = (ovl_dim_totals){(int64_t)s * 10 + round, (int64_t)s, 2};
      if (s % 3 == 2) {
        d[OVL_DIM_TP] = (ovl_dim_totals){7, 0, 1};
        d[OVL_DIM_EP] = (ovl_dim_totals){0, 0, (long)s};
        d[0] = (ovl_dim_totals){1, 1, 1};
      }
      CHECK(ovl_step_dims_put(&r, &r.steps[s], d) == 0);
    }
    ovl_step_dims_seal(&r);
    for (size_t s = 0; s < r.nsteps; s++) {
      const ovl_step_result *st = &r.steps[s];
      for (int k = 0; k < OVL_DIM_COUNT; k++) {
        ovl_dim_totals t = ovl_step_dim(st, k);
        int64_t comm = 0, exposed = 0;
        long colls = 0;
        if (s % 3 == 1 && k == OVL_DIM_DP) comm = (int64_t)s * 10 + round, exposed = (int64_t)s, colls = 2;
        if (s % 3 == 2 && k == OVL_DIM_TP) comm = 7, colls = 1;
        if (s % 3 == 2 && k == OVL_DIM_EP) colls = (long)s;
        if (s % 3 == 2 && k == 0) comm = exposed = colls = 1;
        CHECK_I64(t.comm, comm);
        CHECK_I64(t.exposed, exposed);
        CHECK_I64(t.colls, colls);
      }
    }
    size_t one = 0, three = 0;
    for (size_t s = 0; s < r.nsteps; s++) one += s % 3 == 1, three += s % 3 == 2;
    CHECK_I64(r.nstep_dims, one + 3 * three);  /* nothing kept for the zero dimensions */
  }
  ovl_rank_result_free(&r);
}

int main(int argc, char **argv) {
  const char *t = getenv("TMPDIR");
  snprintf(tmpdir_buf, sizeof tmpdir_buf, "%s", t && *t ? t : "/tmp");
  static const ovl_pm_strategy all[] = {OVL_PM_DDP, OVL_PM_ZERO1, OVL_PM_ZERO2, OVL_PM_ZERO3,
                                        OVL_PM_TP,  OVL_PM_PP,    OVL_PM_MOE};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    ovl_pm_params p;
    ovl_pm_defaults(all[i], &p);
    strategy_case(&p, ovl_pm_strategy_name(all[i]));
  }
  closed_forms();
  step_dims_kept();
  /* a pipeline whose neighbouring stages share two-rank communicators (PyTorch's send/recv):
  ** the stages come from membership, not from the position in one group */
  {
    ovl_pm_params p;
    ovl_pm_defaults(OVL_PM_PP, &p);
    p.pair_comms = 1;
    strategy_case(&p, "pp-pair-comms");
  }
  /* a pipeline whose stage 2 computes 1.5x longer: every stage's finding names it */
  {
    ovl_pm_params p;
    ovl_pm_defaults(OVL_PM_PP, &p);
    p.slow_stage = 2;
    strategy_case(&p, "pp-slow-stage");
    ovl_pm_job model;
    ovl_job job;
    ovl_analysis_ctx ctx;
    char dir[4200];
    if (!run_job(&p, &model, &job, &ctx, NULL, dir, sizeof dir)) {
      for (size_t i = 0; i < job.nranks; i++) {
        const ovl_finding *f = find(job.ranks[i].findings, job.ranks[i].nfindings, "pipeline_bubble");
        CHECK(f && strstr(f->message, "The bottleneck is stage 2 ") != NULL);
      }
      cleanup(&model, &job, &ctx, dir);
    }
  }
  tp_by_fsdp();
  nvtx_dim();
  if (argc > 3) {
    cli(argv[1]);
    real_traces(argv[2], argv[3]);
  } else {
    CHECK(!"usage: test_parallel_dims OVL_BINARY REPO_TRACES SHARED_TRACES");
  }
  return check_summary();
}
