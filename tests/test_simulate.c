/*
** `ovl simulate`: the default table must be exactly the reference model's output
** (tests/data/simulate_default.txt, from the foundation issue), and a schedule emitted as a
** trace must analyse to the model's hidden fraction in every step, through the library and
** through the CLI.
** usage: test_simulate OVL_BINARY EXPECTED_TABLE
*/
#include "analyze/analysis.h"
#include "check.h"
#include "run_cmd.h"
#include "model/bucket_model.h"
#include "simulate/sim_trace.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ovl_bin;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

static void default_table(const char *expected_path) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' simulate", ovl_bin);
  cmd_result r = run_cmd(cmd);
  const char *expected = read_file(expected_path);
  CHECK(expected != NULL);
  CHECK_I64(r.status, 0);
  CHECK_STR(r.out, expected);
  cmd_free(&r);
}

/* Emit, analyse with the library, compare with the model. */
static void round_trip(const ovl_sim_params *p, int bucket_layers, int steps) {
  ovl_sim_result model;
  CHECK(ovl_sim_run(p, bucket_layers, &model) == 0);
  const char *path = tb_temp_path("sim.sqlite");
  ovl_err err = {0};
  ovl_sim_trace_options opt = {steps, 8, "test", NULL};
  CHECK(ovl_sim_emit_trace(path, p, bucket_layers, &opt, &err) == 0);
  ovl_analysis_ctx ctx;
  ovl_analysis_options aopt = {0};
  CHECK(ovl_analysis_ctx_init(&ctx, &aopt, &err) == 0);
  ovl_rank_result *r = NULL;
  size_t n = 0;
  CHECK(ovl_analyze_file(&ctx, path, &r, &n, &err) == 0);
  CHECK_I64(n, 1);
  if (n == 1) {
    CHECK(r[0].step_detection == OVL_STEPS_NVTX);
    CHECK(r[0].step_projection == OVL_PROJECT_CORRELATION);
    CHECK_I64(r[0].nsteps, steps);
    for (size_t s = 0; s < r[0].nsteps; s++) {
      const ovl_step_result *st = &r[0].steps[s];
      CHECK_NEAR(ovl_overlap_efficiency(&st->totals), model.hidden, 1e-6);
      CHECK_NEAR((double)st->totals.compute, model.compute_ns, 1.0);
      CHECK_NEAR((double)st->totals.comm, model.comm_ns, (double)model.nbuckets);
      CHECK_I64(st->ncolls, model.nbuckets);
      for (size_t i = 0; i < st->ncolls; i++) {
        CHECK_I64(st->colls[i].bucket, (int64_t)i);
        CHECK_I64(ovl_coll_stall(&st->colls[i]), 0);  /* launched the moment the bucket was ready */
        CHECK_NEAR((double)st->colls[i].bytes, model.buckets[i].bytes, 0.5);
      }
    }
  }
  for (size_t i = 0; i < n; i++) ovl_rank_result_free(&r[i]);
  free(r);
  ovl_analysis_ctx_free(&ctx);
  ovl_sim_result_free(&model);
  remove(path);
}

/* The same through the command line: every overlap_efficiency in the JSON report. */
static void cli_round_trip(void) {
  const char *path = tb_temp_path("cli-sim.sqlite");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' simulate --bucket-layers 8 --steps 4 --emit-trace '%s'", ovl_bin, path);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' report --json '%s'", ovl_bin, path);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  ovl_sim_params p = {48, 25e6, 3e6, 200e3, 12e9};
  ovl_sim_result model;
  CHECK(ovl_sim_run(&p, 8, &model) == 0);
  int values = 0;
  for (const char *q = strstr(r.out, "\"overlap_efficiency\": "); q; q = strstr(q + 1, "\"overlap_efficiency\": ")) {
    CHECK_NEAR(atof(q + 22), model.hidden, 1e-6);
    values++;
  }
  CHECK_I64(values, 1 + 4);  /* the rank and its four steps */
  CHECK(strstr(r.out, "\"step_detection\": \"nvtx\"") != NULL);
  ovl_sim_result_free(&model);
  cmd_free(&r);
  remove(path);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OVL_BINARY EXPECTED_TABLE\n", argv[0]);
    return 2;
  }
  ovl_bin = argv[1];
  default_table(argv[2]);
  ovl_sim_params p = {48, 25e6, 3e6, 200e3, 12e9};
  static const int sizes[] = {1, 2, 4, 8, 16, 48, 5};  /* 5 does not divide 48: a smaller last bucket */
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) round_trip(&p, sizes[i], 3);
  /* Other shapes: communication longer than a layer (the channel queues), uneven numbers. */
  ovl_sim_params slow = {30, 40e6, 1.5e6, 350e3, 5e9};
  round_trip(&slow, 1, 2);
  round_trip(&slow, 7, 5);
  cli_round_trip();
  return check_summary();
}
