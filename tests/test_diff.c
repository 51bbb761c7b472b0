/*
** `ovl diff` and the CI gate (issue 34) on constructed before/after runs, each check judged
** against what the construction implies (the alpha-beta model by hand, model_reference.c; step
** values written into hand-built traces), through the library and through the CLI:
**   misordered  a misordered and an ordered simulated job: the bucket order change and the
**               exposed time recovered, the readiness_stall finding gone, the gate both ways;
**   buckets     25 MB against 5 MB buckets: the layout change (not an order change), the new
**               calls, the exposed and communication time per step of the model;
**   noise       steps with a known spread: a shift within it is not flagged (nor fails a gate),
**               one beyond it is;
**   report      saved `ovl report --json` files as inputs: the same comparison as their traces
**               (kernels said not compared), a report against its own trace: nothing changed;
**               newer and malformed reports refused with one line;
**   findings    profiles written by hand: a rank summary counted once (not again through its
**               steps), appeared / disappeared / changed (time or confidence) / the same, job-level
**               findings, the order most significant first;
**   ranks       4-rank and 2-rank jobs: ranks paired by number, the rest one-sided;
**   gate        `report --fail-if` and `diff --fail-if`: exit 3 only when the condition fails,
**               naming it; bad conditions refused before any input is read;
**   usage       --help, wrong numbers of inputs, an output that is an input.
** usage: test_diff OVL CHECK
*/
#include "driver/job_driver.h"
#include "check.h"
#include "compare/diff.h"
#include "model_reference.h"
#include "run_cmd.h"
#include "simulate/sim_scenario.h"
#include "simulate/sim_trace.h"
#include "stats/stats.h"
#include "trace_builder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ovl;

/* The profile of the traces at path, as `ovl diff` makes it. Exits the test when it cannot. */
static void load(const char *path, ovl_profile *p) {
  ovl_err err = {0};
  ovl_analysis_options opt;
  memset(&opt, 0, sizeof opt);
  opt.launch_dims = 1;
  ovl_analysis_ctx ctx;
  ovl_job job;
  ovl_stats k;
  char *args[] = {(char *)path};
  if (ovl_analysis_ctx_init(&ctx, &opt, &err) || ovl_analyze_job(&ctx, args, 1, NULL, NULL, &job, &err) ||
      ovl_stats_collect(&ctx, &job, OVL_STATS_KERNELS | OVL_STATS_PER_STEP, &k, &err) ||
      ovl_profile_from_job(&job, &k, path, p, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    exit(2);
  }
  ovl_stats_free(&k);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

static void diff_of(const ovl_profile *b, const ovl_profile *a, ovl_diff *d) {
  ovl_err err = {0};
  if (ovl_diff_compute(b, a, d, &err)) {
    fprintf(stderr, "diff: %s\n", err.msg);
    exit(2);
  }
}

static void emit(const char *path, const ovl_sim_params *p, int bucket_layers, const ovl_sim_faults *f) {
  ovl_err err = {0};
  ovl_sim_trace_options opt = {3, 8, "test_diff", f};
  if (ovl_sim_emit_trace(path, p, bucket_layers, &opt, &err)) {
    fprintf(stderr, "emit: %s\n", err.msg);
    exit(2);
  }
}

static const ovl_finding_diff *finding(const ovl_diff *d, const char *code) {
  for (size_t i = 0; i < d->nfindings; i++)
    if (strcmp(d->findings[i].code, code) == 0) return &d->findings[i];
  return NULL;
}

/* The time after `label` in text ("... recovered: 84.33 ms ..."), in ns; NAN when absent. */
static double time_after(const char *text, const char *label) {
  const char *p = text ? strstr(text, label) : NULL;
  if (!p) return NAN;
  double v;
  char unit[8];
  if (sscanf(p + strlen(label), "%lf %7s", &v, unit) != 2) return NAN;
  double scale = strcmp(unit, "s") == 0 ? 1e9 : strcmp(unit, "ms") == 0 ? 1e6 : strcmp(unit, "us") == 0 ? 1e3 : 1;
  return v * scale;
}

/* ---- misordered against ordered ---- */

static const ovl_sim_params MIS_P = {24, 25e6, 2e6, 200e3, 12e9};
#define MIS_BUCKET_LAYERS 4  /* 6 buckets of 100 MB */

static void check_misordered(void) {
  const char *mis = tb_temp_path("mis.sqlite"), *ord = tb_temp_path("ord.sqlite");
  ovl_sim_faults f = {0};
  f.misordered = 1;
  emit(mis, &MIS_P, MIS_BUCKET_LAYERS, &f);
  emit(ord, &MIS_P, MIS_BUCKET_LAYERS, NULL);
  /* the model: misordered, every bucket waits for the last-ready one and goes after backward;
  ** ordered, DDP's overlap leaves the tail the model replays */
  double nb = MIS_P.layers / MIS_BUCKET_LAYERS, cost = ref_cost(&MIS_P, MIS_BUCKET_LAYERS * MIS_P.layer_bytes);
  double compute = MIS_P.layers * MIS_P.layer_compute_ns;
  double exposed_mis = nb * cost;
  double exposed_ord = ref_ddp_overlap(&MIS_P, 0, MIS_BUCKET_LAYERS * MIS_P.layer_bytes) - compute;

  ovl_profile b, a;
  load(mis, &b);
  load(ord, &a);
  ovl_diff d;
  diff_of(&b, &a, &d);
  const ovl_change *e = &d.job.c[OVL_M_EXPOSED];
  CHECK_NEAR(e->from, exposed_mis, 0.005 * exposed_mis);
  CHECK_NEAR(e->to, exposed_ord, 0.005 * exposed_mis);
  CHECK_NEAR(-e->delta, exposed_mis - exposed_ord, 0.005 * exposed_mis);
  CHECK(e->significant);
  CHECK(d.job.c[OVL_M_STEP_TIME].significant && d.job.c[OVL_M_STEP_TIME].delta < 0);
  CHECK(!d.job.c[OVL_M_COMPUTE].significant);
  CHECK(!d.job.c[OVL_M_COMM].significant);  /* the same collectives, in another order */
  CHECK(d.job.c[OVL_M_EFFICIENCY].significant && d.job.c[OVL_M_EFFICIENCY].delta > 0);
  /* the bucket order: against readiness in every step before, in readiness order after */
  CHECK(d.buckets.order_changed);
  CHECK(!d.buckets.layout_changed);
  CHECK_I64(d.buckets.before.misordered_steps, 3);
  CHECK_I64(d.buckets.after.misordered_steps, 0);
  CHECK_I64(d.buckets.before.nfired, 6);
  CHECK_I64(d.buckets.before.nready, 6);
  for (int i = 0; i < 6 && d.buckets.before.nready == 6; i++) {
    CHECK_I64(d.buckets.before.fired[i], i);     /* DDP launches in index order */
    CHECK_I64(d.buckets.before.ready[i], 5 - i); /* bucket 0 holds the layers ready last */
    CHECK_I64(d.buckets.after.ready[i], i);
  }
  const ovl_finding_diff *rs = finding(&d, "readiness_stall");
  CHECK(rs && rs->status == OVL_DS_VANISHED && rs->before.steps == 3);
  CHECK(rs && rs->before.confidence && rs->before.confidence[0] && rs->before.evidence[0]);  /* judged */
  /* every call matched: the same six per step, now mostly hidden */
  size_t calls = 0, less_exposed = 0;
  for (size_t i = 0; i < d.ncolls; i++) {
    if (d.colls[i].index < 0) continue;
    calls++;
    less_exposed += d.colls[i].exposed.significant && d.colls[i].exposed.delta < 0;
    CHECK(d.colls[i].status != OVL_DS_NEW && d.colls[i].status != OVL_DS_VANISHED);
  }
  CHECK_I64(calls, 6);
  CHECK_I64(less_exposed, 5);  /* the last bucket stays exposed in both */
  ovl_diff_free(&d);
  ovl_profile_free(&a);
  ovl_profile_free(&b);

  /* the CLI names the order change and the time recovered */
  cmd_result r = run_tool(ovl, "diff '%s' '%s'", mis, ord);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "Bucket order: changed"));
  CHECK(r.out && strstr(r.out, "fired against readiness in 3 of 3 steps"));
  CHECK(r.out && strstr(r.out, "disappeared readiness_stall"));
  CHECK_NEAR(time_after(r.out, "Exposed communication recovered: "), exposed_mis - exposed_ord, 0.01 * exposed_mis);
  cmd_free(&r);
  r = run_tool(ovl, "diff --json --compact '%s' '%s'", mis, ord);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "\"bucket_order\":{\"changed\":true"));
  CHECK(r.out && strstr(r.out, "\"ready\":[5,4,3,2,1,0]"));
  CHECK(r.out && strstr(r.out, "{\"code\":\"readiness_stall\",\"status\":\"disappeared\""));
  cmd_free(&r);
  /* the gate: exposed time grew by more than 5% only the other way round */
  r = run_tool(ovl, "diff --fail-if 'exposed>+5%%' '%s' '%s'", mis, ord);
  CHECK_I64(r.status, 0);
  CHECK(r.err && r.err[0] == 0);
  cmd_free(&r);
  r = run_tool(ovl, "diff --fail-if 'exposed>+5%%' '%s' '%s'", ord, mis);
  CHECK_I64(r.status, 3);
  CHECK(r.err && strncmp(r.err, "ovl: diff: --fail-if 'exposed>+5%' failed: ", 43) == 0 && count_lines(r.err) == 1);
  CHECK(r.out && strstr(r.out, "Bucket order: changed"));  /* the comparison is written in full */
  cmd_free(&r);
}

/* ---- 25 MB against 5 MB buckets ---- */

static const ovl_sim_params BUCKET_P = {48, 5e6, 1e6, 100e3, 12e9};

static void check_buckets(void) {
  const char *big = tb_temp_path("b25.sqlite"), *small = tb_temp_path("b5.sqlite");
  emit(big, &BUCKET_P, 5, NULL);    /* 25 MB buckets: 9 of 5 layers and one of 3 */
  emit(small, &BUCKET_P, 1, NULL);  /* 5 MB buckets: 48 */
  double compute = BUCKET_P.layers * BUCKET_P.layer_compute_ns;
  double exposed_big = ref_ddp_overlap(&BUCKET_P, 0, 25e6) - compute;
  double exposed_small = ref_ddp_overlap(&BUCKET_P, 0, 5e6) - compute;
  double comm_big = 9 * ref_cost(&BUCKET_P, 25e6) + ref_cost(&BUCKET_P, 15e6);
  double comm_small = 48 * ref_cost(&BUCKET_P, 5e6);
  ovl_profile b, a;
  load(big, &b);
  load(small, &a);
  ovl_diff d;
  diff_of(&b, &a, &d);
  CHECK_NEAR(d.job.c[OVL_M_EXPOSED].from, exposed_big, 0.005 * exposed_big);
  CHECK_NEAR(d.job.c[OVL_M_EXPOSED].to, exposed_small, 0.005 * exposed_big);
  CHECK_NEAR(d.job.c[OVL_M_COMM].from, comm_big, 0.005 * comm_big);
  CHECK_NEAR(d.job.c[OVL_M_COMM].to, comm_small, 0.005 * comm_small);
  CHECK(d.job.c[OVL_M_COMM].significant && d.job.c[OVL_M_COMM].delta > 0);  /* 38 more alphas */
  CHECK(d.job.c[OVL_M_EXPOSED].significant && d.job.c[OVL_M_EXPOSED].delta < 0);
  CHECK(!d.buckets.order_changed);
  CHECK(d.buckets.layout_changed);
  CHECK_NEAR(d.buckets.before.buckets_per_step, 10, 0);
  CHECK_NEAR(d.buckets.after.buckets_per_step, 48, 0);
  CHECK_NEAR(d.buckets.before.bytes_per_bucket, 25e6, 0);
  CHECK_NEAR(d.buckets.after.bytes_per_bucket, 5e6, 0);
  size_t sums = 0, fresh = 0, calls = 0;
  for (size_t i = 0; i < d.ncolls; i++) {
    const ovl_coll_diff *c = &d.colls[i];
    if (c->index < 0) {
      sums++;
      CHECK_NEAR(c->calls.from, 10, 1e-9);
      CHECK_NEAR(c->calls.to, 48, 1e-9);
      CHECK_NEAR(c->bytes.from, 48 * 5e6, 0);  /* the same gradients per step */
      CHECK_NEAR(c->bytes.to, 48 * 5e6, 0);
      CHECK_NEAR(c->duration.to - c->duration.from, comm_small - comm_big, 0.005 * comm_small);
    } else {
      calls++;
      fresh += c->status == OVL_DS_NEW;
      CHECK(c->status != OVL_DS_VANISHED);
    }
  }
  CHECK_I64(sums, 1);
  CHECK_I64(calls, 48);
  CHECK_I64(fresh, 38);
  /* kernels: the NCCL kernel runs 48 times a step instead of 10; the layers' kernel the same */
  int nccl_seen = 0;
  for (size_t i = 0; i < d.nkernels; i++) {
    const ovl_kernel_diff *k = &d.kernels[i];
    if (k->comm) {
      nccl_seen = 1;
      CHECK(k->status == OVL_DS_CHANGED);
      CHECK_NEAR(k->count_before, 10, 1e-9);
      CHECK_NEAR(k->count_after, 48, 1e-9);
    } else {
      CHECK(k->status == OVL_DS_SAME);
    }
  }
  CHECK(nccl_seen);
  ovl_diff_free(&d);
  ovl_profile_free(&a);
  ovl_profile_free(&b);
  cmd_result r = run_tool(ovl, "diff '%s' '%s'", big, small);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "Bucket order: unchanged"));
  CHECK(r.out && strstr(r.out, "Gradient buckets: 10 per step of 25.0 MB -> 48 per step of 5.0 MB"));
  CHECK(r.out && strstr(r.out, "Exposed communication recovered: "));
  cmd_free(&r);
}

/* ---- noise: steps with a known spread ---- */

/* Eight steps: 10 ms of compute, then an all-reduce exposed for 10 ms + jitter + shift. */
static const double JITTER_MS[8] = {0, 2, -2, 1, -1, 3, -3, 0};
/* Their interquartile range, worked out: sorted 7 8 9 10 10 11 12 13, p25 = 8.75, p75 = 11.25. */
#define JITTER_IQR_NS 2.5e6

static void noise_trace(const char *path, double shift_ns) {
  tb b;
  tb_open(&b, path);
  for (int k = 0; k < 8; k++) {
    int64_t s = 1000000 + (int64_t)k * 40000000;
    tb_nvtx(&b, "ovl", "step", s, s + 35000000);
    tb_kernel(&b, "gemm", s, s + 10000000, 0, 7);
    int64_t x = (int64_t)llround(10e6 + JITTER_MS[k] * 1e6 + shift_ns);
    int64_t corr = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", s + 10000000, s + 10000000 + x, 0, 13);
    tb_collective(&b, "AllReduce", 4 << 20, 2, s + 9000000, corr);
  }
  tb_close(&b);
}

static void check_noise(void) {
  const char *base = tb_temp_path("noise0.sqlite"), *near = tb_temp_path("noise1.sqlite"),
             *far = tb_temp_path("noise5.sqlite");
  noise_trace(base, 0);
  noise_trace(near, 1e6);  /* +1 ms: within the 2.5 ms spread */
  noise_trace(far, 5e6);   /* +5 ms: beyond it */
  ovl_profile p0, p1, p5;
  load(base, &p0);
  load(near, &p1);
  load(far, &p5);
  ovl_diff d;
  diff_of(&p0, &p1, &d);
  const ovl_change *e = &d.job.c[OVL_M_EXPOSED];
  CHECK_NEAR(e->before.spread, JITTER_IQR_NS, 1);
  CHECK_NEAR(e->after.spread, JITTER_IQR_NS, 1);
  CHECK_NEAR(e->from, 10e6, 1);
  CHECK_NEAR(e->delta, 1e6, 1);
  CHECK(!e->significant);
  /* the collective's duration moved by the same 1 ms: within its spread too */
  for (size_t i = 0; i < d.ncolls; i++) CHECK(!d.colls[i].duration.significant);
  ovl_diff_free(&d);
  diff_of(&p0, &p5, &d);
  CHECK_NEAR(d.job.c[OVL_M_EXPOSED].delta, 5e6, 1);
  CHECK(d.job.c[OVL_M_EXPOSED].significant);
  ovl_diff_free(&d);
  ovl_profile_free(&p0);
  ovl_profile_free(&p1);
  ovl_profile_free(&p5);
  /* a change within the noise never fails a gate, and says why */
  cmd_result r = run_tool(ovl, "diff --fail-if 'exposed>+1%%' '%s' '%s'", base, near);
  CHECK_I64(r.status, 0);
  CHECK(r.err && strstr(r.err, "within it, not failed") && count_lines(r.err) == 1);
  CHECK(r.out && strstr(r.out, "Exposed communication: no change beyond the step-to-step spread"));
  cmd_free(&r);
  r = run_tool(ovl, "diff --fail-if 'exposed>+1%%' '%s' '%s'", base, far);
  CHECK_I64(r.status, 3);
  CHECK(r.err && strstr(r.err, "failed: ") && count_lines(r.err) == 1);
  cmd_free(&r);
}

/* ---- saved reports as inputs ---- */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "%s: cannot write\n", path);
    exit(2);
  }
}

static void check_report(void) {
  const char *mis = tb_temp_path("rmis.sqlite"), *ord = tb_temp_path("rord.sqlite");
  const char *mis_json = tb_temp_path("rmis.json"), *ord_json = tb_temp_path("rord.json");
  ovl_sim_faults f = {0};
  f.misordered = 1;
  emit(mis, &MIS_P, MIS_BUCKET_LAYERS, &f);
  emit(ord, &MIS_P, MIS_BUCKET_LAYERS, NULL);
  cmd_result r = run_tool(ovl, "report --json -o '%s' '%s'", mis_json, mis);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  r = run_tool(ovl, "report --json --compact -o '%s' '%s'", ord_json, ord);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  CHECK(ovl_is_saved_report(mis_json) && ovl_is_saved_report(ord_json));
  CHECK(!ovl_is_saved_report(mis));
  ovl_profile tb_, ta, rb, ra;
  ovl_err err = {0};
  load(mis, &tb_);
  load(ord, &ta);
  CHECK_I64(ovl_profile_from_report(mis_json, &rb, &err), 0);
  CHECK_I64(ovl_profile_from_report(ord_json, &ra, &err), 0);
  ovl_diff dt, dr;
  diff_of(&tb_, &ta, &dt);
  diff_of(&rb, &ra, &dr);
  for (int m = 0; m < OVL_M_COUNT; m++) {
    CHECK_NEAR(dr.job.c[m].from, dt.job.c[m].from, 1e-6 * fabs(dt.job.c[m].from) + 1e-9);
    CHECK_NEAR(dr.job.c[m].to, dt.job.c[m].to, 1e-6 * fabs(dt.job.c[m].to) + 1e-9);
    CHECK_I64(dr.job.c[m].significant, dt.job.c[m].significant);
  }
  CHECK_I64(dr.buckets.order_changed, 1);
  CHECK_I64(dr.buckets.before.nready, 6);
  CHECK_I64(dr.ncolls, dt.ncolls);
  CHECK_I64(dr.nfindings, dt.nfindings);
  for (size_t i = 0; i < dr.nfindings && i < dt.nfindings; i++) {
    CHECK_STR(dr.findings[i].code, dt.findings[i].code);
    CHECK_I64(dr.findings[i].status, dt.findings[i].status);
    CHECK_I64(dr.findings[i].before.recoverable, dt.findings[i].before.recoverable);
    if (dt.findings[i].before.message && dr.findings[i].before.message) {  /* the diagnosis' judgement, read back */
      CHECK_STR(dr.findings[i].before.confidence, dt.findings[i].before.confidence);
      CHECK_STR(dr.findings[i].before.evidence, dt.findings[i].before.evidence);
    }
  }
  CHECK(dt.kernels_compared && !dr.kernels_compared);
  ovl_diff_free(&dt);
  ovl_diff_free(&dr);
  ovl_profile_free(&tb_);
  ovl_profile_free(&ta);
  ovl_profile_free(&rb);
  ovl_profile_free(&ra);

  r = run_tool(ovl, "diff '%s' '%s'", mis_json, ord_json);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "Bucket order: changed") && strstr(r.out, "Kernels: not compared"));
  cmd_free(&r);
  /* a report against its own trace: nothing beyond the noise, every call the same */
  r = run_tool(ovl, "diff --json --compact '%s' '%s'", ord_json, ord);
  CHECK_I64(r.status, 0);
  CHECK(r.out && !strstr(r.out, "\"significant\":true"));
  CHECK(r.out && !strstr(r.out, "\"status\":\"changed\"") && !strstr(r.out, "\"status\":\"new\""));
  cmd_free(&r);
  /* refused with one line naming the file */
  const char *newer = tb_temp_path("newer.json"), *cut = tb_temp_path("cut.json");
  write_file(newer, "{\"ovl_report_version\": 2, \"ranks\": []}\n");
  write_file(cut, "{\"ovl_report_version\": 1, \"ranks\": [{\"rank\": 0, \"steps\": [{\"index\": 0, \"start_ns\": ");
  r = run_tool(ovl, "diff '%s' '%s'", newer, ord);
  CHECK_I64(r.status, 1);
  CHECK(r.err && strstr(r.err, newer) && strstr(r.err, "newer") && count_lines(r.err) == 1);
  cmd_free(&r);
  r = run_tool(ovl, "diff '%s' '%s'", ord, cut);
  CHECK_I64(r.status, 1);
  CHECK(r.err && strncmp(r.err, "ovl: ", 5) == 0 && strstr(r.err, cut) && count_lines(r.err) == 1);
  cmd_free(&r);
}

/* ---- findings: sums and statuses, on profiles written out by hand ---- */

static ovl_prof_finding mk(const char *code, long step, long affected, int64_t recoverable, const char *conf) {
  ovl_prof_finding f;
  memset(&f, 0, sizeof f);
  snprintf(f.code, sizeof f.code, "%s", code);
  f.step = step;
  f.steps_affected = affected;
  f.recoverable = recoverable;
  f.message = strdup(code);
  snprintf(f.confidence, sizeof f.confidence, "%s", conf);
  snprintf(f.evidence, sizeof f.evidence, "test");
  return f;
}

/* One rank of two steps with findings f[0..n), the job's findings j[0..nj). */
static void hand_profile(ovl_profile *p, const ovl_prof_finding *f, size_t n, const ovl_prof_finding *j, size_t nj) {
  memset(p, 0, sizeof *p);
  p->label = strdup("hand");
  p->from_report = 1;
  p->nranks = 1;
  p->ranks = calloc(1, sizeof *p->ranks);
  p->ranks[0].rank = 0;
  p->ranks[0].trace = strdup("hand");
  p->ranks[0].nsteps = 2;
  p->ranks[0].steps = calloc(2, sizeof *p->ranks[0].steps);
  for (int s = 0; s < 2; s++) {
    p->ranks[0].steps[s].index = s;
    p->ranks[0].steps[s].duration = 10 * 1000000;
  }
  p->ranks[0].findings = calloc(n + 1, sizeof *p->ranks[0].findings);
  memcpy(p->ranks[0].findings, f, n * sizeof *f);
  p->ranks[0].nfindings = n;
  p->findings = calloc(nj + 1, sizeof *p->findings);
  memcpy(p->findings, j, nj * sizeof *j);
  p->nfindings = nj;
}

static void check_findings(void) {
  /* before: a rank summary of two step findings (summed once, not again through its steps), a
  ** finding judged low, one that goes away, a job-level one; after: the summary halved, the
  ** low one now high, a new one */
  ovl_prof_finding fb[] = {mk("exposed_tail", -1, 2, 20000000, "high"), mk("exposed_tail", 0, 0, 12000000, "high"),
                           mk("exposed_tail", 1, 0, 8000000, "high"), mk("compute_slowdown", -1, 0, 5000000, "low"),
                           mk("readiness_stall", 0, 0, 7000000, "high")};
  ovl_prof_finding jb[] = {mk("straggler", -1, 0, 3000000, "medium")};
  ovl_prof_finding fa[] = {mk("exposed_tail", -1, 2, 10000000, "high"), mk("exposed_tail", 0, 0, 5000000, "high"),
                           mk("exposed_tail", 1, 0, 5000000, "high"), mk("compute_slowdown", -1, 0, 5000000, "high"),
                           mk("late_firing", 1, 0, 1000000, "high")};
  ovl_prof_finding ja[] = {mk("straggler", -1, 0, 3000000, "medium")};
  ovl_profile b, a;
  hand_profile(&b, fb, 5, jb, 1);
  hand_profile(&a, fa, 5, ja, 1);
  ovl_diff d;
  diff_of(&b, &a, &d);
  const ovl_finding_diff *f = finding(&d, "exposed_tail");
  CHECK(f && f->before.recoverable == 20000000 && f->after.recoverable == 10000000);  /* the summary, once */
  CHECK(f && f->before.steps == 2 && f->before.ranks == 1 && f->status == OVL_DS_CHANGED);
  f = finding(&d, "compute_slowdown");  /* same time, judged otherwise: changed */
  CHECK(f && f->status == OVL_DS_CHANGED && strcmp(f->before.confidence, "low") == 0 &&
        strcmp(f->after.confidence, "high") == 0);
  f = finding(&d, "readiness_stall");
  CHECK(f && f->status == OVL_DS_VANISHED && f->before.steps == 1);
  f = finding(&d, "late_firing");
  CHECK(f && f->status == OVL_DS_NEW && f->after.recoverable == 1000000);
  f = finding(&d, "straggler");  /* job-level, unchanged */
  CHECK(f && f->status == OVL_DS_SAME && f->before.ranks == 0 && f->before.recoverable == 3000000);
  CHECK_I64(d.nfindings, 5);
  /* appeared first, then disappeared, then changed, then the same */
  CHECK(d.nfindings == 5 && d.findings[0].status == OVL_DS_NEW && d.findings[1].status == OVL_DS_VANISHED &&
        d.findings[4].status == OVL_DS_SAME);
  ovl_diff_free(&d);
  ovl_profile_free(&b);
  ovl_profile_free(&a);
}

/* ---- ranks ---- */

static void check_ranks(void) {
  const char *four = tb_temp_path("ddp4"), *two = tb_temp_path("ddp2");
  cmd_result r = run_tool(ovl, "simulate --strategy ddp --dp 4 --emit-trace '%s'", four);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  r = run_tool(ovl, "simulate --strategy ddp --dp 2 --emit-trace '%s'", two);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  ovl_profile b, a;
  load(four, &b);
  load(two, &a);
  ovl_diff d;
  diff_of(&b, &a, &d);
  CHECK(d.ranks_by_number);
  CHECK_I64(d.nranks, 4);
  size_t both = 0, before_only = 0;
  for (size_t i = 0; i < d.nranks; i++) {
    const ovl_rank_pair *p = &d.ranks[i];
    if (p->before >= 0 && p->after >= 0) {
      both++;
      CHECK_I64(b.ranks[p->before].rank, a.ranks[p->after].rank);
    } else {
      before_only += p->before >= 0;
      CHECK(p->before >= 0 && b.ranks[p->before].rank >= 2);
    }
  }
  CHECK_I64(both, 2);
  CHECK_I64(before_only, 2);
  ovl_diff_free(&d);
  ovl_profile_free(&a);
  ovl_profile_free(&b);
}

/* ---- the gate on reports ---- */

static void check_gate(void) {
  const char *mis = tb_temp_path("gmis.sqlite"), *ord = tb_temp_path("gord.sqlite");
  ovl_sim_faults f = {0};
  f.misordered = 1;
  emit(mis, &MIS_P, MIS_BUCKET_LAYERS, &f);
  emit(ord, &MIS_P, MIS_BUCKET_LAYERS, NULL);
  /* the ordered job hides all but its tail: efficiency 1 - tail / comm, worked out */
  double cost = ref_cost(&MIS_P, MIS_BUCKET_LAYERS * MIS_P.layer_bytes);
  double tail = ref_ddp_overlap(&MIS_P, 0, MIS_BUCKET_LAYERS * MIS_P.layer_bytes) - MIS_P.layers * MIS_P.layer_compute_ns;
  double eff = 1.0 - tail / (6 * cost);
  char below[32], above[32];
  snprintf(below, sizeof below, "%.3f", eff - 0.01);
  snprintf(above, sizeof above, "%.3f", eff + 0.01);
  cmd_result r = run_tool(ovl, "report --fail-if 'efficiency<%s' '%s'", below, ord);
  CHECK_I64(r.status, 0);
  CHECK(r.err && r.err[0] == 0);
  cmd_free(&r);
  r = run_tool(ovl, "report --fail-if 'efficiency<%s' '%s'", above, ord);
  CHECK_I64(r.status, 3);
  char want[96];
  snprintf(want, sizeof want, "ovl: report: --fail-if 'efficiency<%s' failed: ", above);
  CHECK(r.err && strncmp(r.err, want, strlen(want)) == 0 && count_lines(r.err) == 1);
  CHECK(r.out && strstr(r.out, "overlap efficiency"));  /* the report is written in full */
  cmd_free(&r);
  /* percentages, several conditions (only the failing one named), JSON output */
  r = run_tool(ovl, "report --json --fail-if 'efficiency<50%%' --fail-if 'findings>0' --fail-if 'exposed>1s' '%s'", mis);
  CHECK_I64(r.status, 3);
  CHECK(r.err && strstr(r.err, "'efficiency<50%' failed") && strstr(r.err, "'findings>0' failed") &&
        !strstr(r.err, "exposed>1s") && count_lines(r.err) == 2);
  CHECK(r.out && strstr(r.out, "\"ovl_report_version\""));
  cmd_free(&r);
  /* the healthy schedule of docs/simulate.md (8-layer buckets of the defaults) has no finding */
  const char *healthy = tb_temp_path("ghealthy.sqlite");
  const ovl_sim_params defaults = {48, 25e6, 3e6, 200e3, 12e9};
  emit(healthy, &defaults, 8, NULL);
  r = run_tool(ovl, "report --fail-if 'findings>0' '%s'", healthy);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  r = run_tool(ovl, "report --fail-if 'findings>=0' '%s'", healthy);
  CHECK_I64(r.status, 3);
  cmd_free(&r);
  /* step time per step of the misordered job: compute + every bucket after backward */
  r = run_tool(ovl, "report --fail-if 'step_time>%.0fms' '%s'",
              (MIS_P.layers * MIS_P.layer_compute_ns + 6 * cost) / 1e6 - 1, mis);
  CHECK_I64(r.status, 3);
  cmd_free(&r);
  /* diff: a plain value is AFTER's */
  r = run_tool(ovl, "diff --fail-if 'efficiency<0.5' '%s' '%s'", mis, ord);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  r = run_tool(ovl, "diff --fail-if 'efficiency<0.5' '%s' '%s'", ord, mis);
  CHECK_I64(r.status, 3);
  cmd_free(&r);
  r = run_tool(ovl, "diff --fail-if 'efficiency<-0.5' '%s' '%s'", ord, mis);  /* dropped by more than 50 points */
  CHECK_I64(r.status, 3);
  cmd_free(&r);
  r = run_tool(ovl, "diff --fail-if 'findings>+0' '%s' '%s'", mis, ord);  /* one finding fewer */
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  /* bad conditions: refused before any input is read (the missing file is not named) */
  static const char *const bad[] = {"efficiency", "effic<0.8", "efficiency<<0.8", "efficiency<2", "exposed>5parsec",
                                    "exposed>+5%", "findings>5%", "efficiency<0.8x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    r = run_tool(ovl, "report --fail-if '%s' /nonexistent/trace.sqlite", bad[i]);
    char head[64];
    snprintf(head, sizeof head, "ovl: report: --fail-if '%s': ", bad[i]);
    if (r.status != 1 || !r.err || strncmp(r.err, head, strlen(head)) != 0)
      fprintf(stderr, "condition %s: status %d, %s", bad[i], r.status, r.err ? r.err : "");
    CHECK_I64(r.status, 1);
    CHECK(r.err && strncmp(r.err, head, strlen(head)) == 0 && count_lines(r.err) == 1);
    cmd_free(&r);
  }
  r = run_tool(ovl, "diff --fail-if 'exposed>>1' /nonexistent/a /nonexistent/b");
  CHECK_I64(r.status, 1);
  CHECK(r.err && strstr(r.err, "--fail-if") && !strstr(r.err, "nonexistent") && count_lines(r.err) == 1);
  cmd_free(&r);
}

/* ---- usage ---- */

static void check_usage(void) {
  const char *t = tb_temp_path("u.sqlite");
  emit(t, &MIS_P, MIS_BUCKET_LAYERS, NULL);
  cmd_result r = run_tool(ovl, "diff --help");
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "usage: ovl diff [options] BEFORE AFTER") && strstr(r.out, "--fail-if"));
  cmd_free(&r);
  r = run_tool(ovl, "help diff");
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "usage: ovl diff"));
  cmd_free(&r);
  r = run_tool(ovl, "--help");
  CHECK(r.out && strstr(r.out, "  diff ") && strstr(r.out, "  stats "));
  cmd_free(&r);
  static const char *const bad[] = {"", "'%s'", "'%s' '%s' '%s'", "--top 0 '%s' '%s'", "--bogus '%s' '%s'",
                                    "'%s' /nonexistent/after.sqlite"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[4096];
    snprintf(args, sizeof args, bad[i], t, t, t);
    r = run_tool(ovl, "diff %s", args);
    if (r.status != 1) fprintf(stderr, "diff %s: status %d\n", args, r.status);
    CHECK_I64(r.status, 1);
    CHECK(r.err && strncmp(r.err, "ovl: ", 5) == 0 && count_lines(r.err) == 1);
    cmd_free(&r);
  }
  /* an output that is an input: refused before anything is written */
  r = run_tool(ovl, "diff -o '%s' '%s' '%s'", t, t, t);
  CHECK_I64(r.status, 1);
  CHECK(r.err && strstr(r.err, "is also an input") && count_lines(r.err) == 1);
  cmd_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_diff OVL CHECK\n");
    return 2;
  }
  ovl = argv[1];
  static const struct {
    const char *name;
    void (*run)(void);
  } checks[] = {{"misordered", check_misordered}, {"buckets", check_buckets}, {"noise", check_noise},
                {"report", check_report},         {"ranks", check_ranks},     {"gate", check_gate},
                {"usage", check_usage},           {"findings", check_findings}};
  for (size_t i = 0; i < sizeof checks / sizeof *checks; i++)
    if (strcmp(argv[2], checks[i].name) == 0) {
      checks[i].run();
      return check_summary();
    }
  fprintf(stderr, "test_diff: unknown check '%s'\n", argv[2]);
  return 2;
}
