/*
** `ovl fit`: the robust alpha-beta fit recovers alpha and beta within 2% from generated traces
** with several message sizes, noise and outliers; says when sizes do not vary; leaves out the
** time a rank waited for its peers when their traces are analysed together; and `ovl fit
** --json` has the documented keys.
** usage: test_fit OVL_BINARY
*/
#include "analyze/alpha_beta_fit.h"
#include "analysis_helper.h"
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ovl_bin;
static const char *NCCL_AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

/* A small deterministic generator (64-bit LCG), uniform in [0, 1). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static double uniform(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int64_t seq_counter;

/* One collective call with its NCCL kernel [start, end). */
static void call(tb *b, int64_t comm, int64_t rank, int64_t seq, int64_t bytes, int64_t start, int64_t end) {
  ovl_err err = {0};
  int64_t corr = tb_kernel(b, NCCL_AR, start, end, 0, 2);
  ovl_collective_row c = {OVL_NONE, comm, rank, 2, seq, "AllReduce", bytes / 4, "Float32", bytes, "Sum", -1, 0, 2,
                          start, start + 10, 1, OVL_NONE};
  int64_t id;
  if (ovl_tw_collective(b->w, &c, &id, &err) || ovl_tw_launch(b->w, id, corr, &err)) {
    fprintf(stderr, "writer: %s\n", err.msg);
    exit(2);
  }
}

/* The one fit the ranks give (the test fails when there is not exactly one). */
static ovl_comm_fit fit_one(const ovl_rank_result *r, size_t n) {
  ovl_err err = {0};
  ovl_comm_fit *fits = NULL, f;
  size_t nfits = 0;
  memset(&f, 0, sizeof f);
  f.fit.alpha_ns = f.fit.beta_bytes_per_s = NAN;
  CHECK(ovl_fit_ranks(r, n, 0, &fits, &nfits, &err) == 0);
  CHECK_I64(nfits, 1);
  if (nfits == 1) f = fits[0];
  free(fits);
  return f;
}

/* Sizes from 4 KB to 256 MB, several calls each, +-3% noise and 10% outliers that waited. */
static const char *noisy_trace(double alpha, double beta, int outliers, int *ncalls) {
  const char *path = tb_temp_path("fit-noisy.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  *ncalls = 0;
  for (int64_t bytes = 4096; bytes <= (256 << 20); bytes *= 4) {
    for (int rep = 0; rep < 8; rep++) {
      double d = (alpha + (double)bytes / beta * 1e9) * (1 + 0.06 * (uniform() - 0.5));
      if (outliers && (*ncalls % 10) == 3) d *= 1.4 + uniform();  /* waited for a late peer */
      tb_kernel(&b, "compute", t, t + 5000, 0, 1);
      call(&b, 5, 0, seq_counter++, bytes, t + 5000, t + 5000 + (int64_t)llround(d));
      t += 5000 + (int64_t)llround(d) + 1000;
      (*ncalls)++;
    }
  }
  tb_close(&b);
  return path;
}

static void recovers_alpha_beta(int outliers) {
  const double alpha = 35000, beta = 20e9;
  int ncalls = 0;
  const char *path = noisy_trace(alpha, beta, outliers, &ncalls);
  size_t n;
  ovl_rank_result *r = th_analyse(path, &n);
  ovl_comm_fit f = fit_one(r, n);
  CHECK_I64(f.comm, 5);
  CHECK(f.op == OVL_OP_ALLREDUCE);
  CHECK(f.fit.separable);
  CHECK_I64(f.fit.samples, ncalls);
  CHECK_NEAR(f.fit.alpha_ns, alpha, 0.02 * alpha);
  CHECK_NEAR(f.fit.beta_bytes_per_s, beta, 0.02 * beta);
  CHECK(f.fit.r2 > 0.99);
  if (outliers) CHECK(f.fit.kept <= (size_t)ncalls - (size_t)ncalls / 10 + 1);
  else CHECK(f.fit.kept >= (size_t)ncalls * 9 / 10);
  th_release(r, n);
  remove(path);
}

/* One size only: alpha cannot be separated; beta is the effective bandwidth. */
static void one_size(void) {
  const char *path = tb_temp_path("fit-one.sqlite");
  tb b;
  tb_open(&b, path);
  for (int i = 0; i < 10; i++) call(&b, 5, 0, i, 100 << 20, i * 10000000, i * 10000000 + 5000000);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = th_analyse(path, &n);
  ovl_comm_fit f = fit_one(r, n);
  CHECK(!f.fit.separable);
  CHECK(isnan(f.fit.alpha_ns));
  CHECK_NEAR(f.fit.beta_bytes_per_s, (double)(100 << 20) / 5e-3, 1.0);
  th_release(r, n);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' fit '%s'", ovl_bin, path);
  cmd_result c = run_cmd(cmd);
  CHECK_I64(c.status, 0);
  CHECK(strstr(c.out, "do not vary enough to separate alpha from beta") != NULL);
  cmd_free(&c);
  remove(path);
}

/* Four ranks on one host: each call's transfer starts when the last rank arrives, so three
** of every four kernels include waiting; together the traces tell waiting from transfer. */
#define PEERS 4
static void waits_for_peers(void) {
  const double alpha = 50000, beta = 10e9;
  const char *paths[PEERS];
  tb b[PEERS];
  for (int k = 0; k < PEERS; k++) {
    char tag[32];
    snprintf(tag, sizeof tag, "fit-rank%d.sqlite", k);
    paths[k] = tb_temp_path(tag);
    tb_open(&b[k], paths[k]);
  }
  int64_t t = 0;
  for (int i = 0; i < 40; i++) {
    int64_t bytes = (int64_t)1 << (12 + i % 16);
    int64_t transfer = (int64_t)llround(alpha + (double)bytes / beta * 1e9);
    int64_t arrive[PEERS], last = 0;
    for (int k = 0; k < PEERS; k++) {
      arrive[k] = t + (int64_t)(uniform() * 3e6);  /* ranks finish their compute at different times */
      if (arrive[k] > last) last = arrive[k];
    }
    for (int k = 0; k < PEERS; k++) call(&b[k], 9, k, i, bytes, arrive[k], last + transfer);
    t = last + transfer + 100000;
  }
  for (int k = 0; k < PEERS; k++) tb_close(&b[k]);
  ovl_rank_result *r[PEERS], all[PEERS];
  size_t n[PEERS];
  for (int k = 0; k < PEERS; k++) {
    r[k] = th_analyse(paths[k], &n[k]);
    all[k] = r[k][0];
  }
  ovl_comm_fit f = fit_one(all, PEERS);
  CHECK_I64(f.fit.samples, 40 * PEERS);
  CHECK_NEAR(f.fit.alpha_ns, alpha, 0.01 * alpha);
  CHECK_NEAR(f.fit.beta_bytes_per_s, beta, 0.01 * beta);
  /* rank 0 alone: three of four of its calls include waiting, more than a robust fit can
  ** drop, so the fit is off */
  f = fit_one(r[0], 1);
  CHECK(fabs(f.fit.alpha_ns - alpha) > 0.02 * alpha || fabs(f.fit.beta_bytes_per_s - beta) > 0.02 * beta);
  for (int k = 0; k < PEERS; k++) th_release(r[k], n[k]);
  /* the CLI with every trace: JSON with the documented keys */
  char cmd[4096];
  int len = snprintf(cmd, sizeof cmd, "'%s' fit --json --compact", ovl_bin);
  for (int k = 0; k < PEERS; k++) len += snprintf(cmd + len, sizeof cmd - (size_t)len, " '%s'", paths[k]);
  cmd_result c = run_cmd(cmd);
  CHECK_I64(c.status, 0);
  CHECK(strncmp(c.out, "{\"fits\":[{\"comm\":9,\"op\":\"AllReduce\",\"alpha_ns\":", 47) == 0);
  const char *keys[] = {"\"beta_bytes_per_s\":", "\"r2\":", "\"samples\":160", "\"separable\":true"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) CHECK(strstr(c.out, keys[i]) != NULL);
  const char *a = strstr(c.out, "\"alpha_ns\":");
  if (a) CHECK_NEAR(atof(a + 11), alpha, 0.01 * alpha);
  cmd_free(&c);
  for (int k = 0; k < PEERS; k++) remove(paths[k]);
}

/* The fit itself on exact and on empty data. */
static void fit_edges(void) {
  ovl_ab_sample s[4] = {{1000, 2000}, {3000, 4000}, {0, 1000}, {-5, 7}};
  ovl_ab_fit f;
  CHECK(ovl_ab_fit_samples(s, 3, &f) == 0);
  CHECK(f.separable);
  CHECK_NEAR(f.alpha_ns, 1000, 1e-6);
  CHECK_NEAR(f.beta_bytes_per_s, 1e9, 1e-3);
  CHECK_NEAR(f.r2, 1.0, 1e-12);
  CHECK(ovl_ab_fit_samples(s + 3, 1, &f) == -1);  /* nothing usable */
  CHECK(ovl_ab_fit_samples(s, 0, &f) == -1);
}

/* Usage and input errors: exit 1 with one line. */
static void cli_errors(void) {
  const char *args[] = {"fit", "fit --bogus x", "fit /nonexistent/trace.sqlite", "fit --json"};
  for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s", ovl_bin, args[i]);
    cmd_result c = run_cmd(cmd);
    CHECK_I64(c.status, 1);
    CHECK(strncmp(c.err, "ovl: ", 5) == 0);
    CHECK_I64(count_lines(c.err), 1);
    cmd_free(&c);
  }
}

/* Two communicators' calls interleaved: one fit each, by communicator; a group's samples by
** size, equal sizes in the order the calls ran (the order the fit sums them in). */
static void groups(void) {
  const char *path = tb_temp_path("fit-groups.sqlite");
  tb b;
  tb_open(&b, path);
  static const struct { int64_t comm, bytes, ns; } calls[] = {
      {9, 1 << 20, 300000}, {5, 4 << 20, 900000}, {9, 256 << 10, 100000}, {9, 1 << 20, 310000},
      {5, 1 << 20, 250000}, {9, 1 << 20, 320000}, {5, 16 << 20, 3000000}};
  int64_t t = 0;
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    call(&b, calls[i].comm, 0, (int64_t)i, calls[i].bytes, t, t + calls[i].ns);
    t += calls[i].ns + 1000;
  }
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = th_analyse(path, &n);
  ovl_err err = {0};
  ovl_comm_fit *fits = NULL;
  size_t nfits = 0;
  CHECK(ovl_fit_ranks(r, n, 0, &fits, &nfits, &err) == 0);
  CHECK_I64(nfits, 2);
  if (nfits == 2) {
    CHECK_I64(fits[0].comm, 5);
    CHECK_I64(fits[0].total_bytes, (4 << 20) + (1 << 20) + (16 << 20));
    CHECK_I64(fits[1].comm, 9);
    CHECK_I64(fits[1].total_bytes, 3 * (1 << 20) + (256 << 10));
  }
  free(fits);
  ovl_ab_sample *s = NULL;
  size_t ns = 0;
  CHECK(ovl_fit_samples_of(r, n, 9, OVL_OP_ALLREDUCE, 0, &s, &ns, &err) == 0);
  CHECK_I64(ns, 4);
  static const double want_ns[] = {100000, 300000, 310000, 320000};
  for (size_t i = 0; i < ns && i < 4; i++) CHECK_NEAR(s[i].ns, want_ns[i], 0.5);
  free(s);
  CHECK(ovl_fit_samples_of(r, n, 7, OVL_OP_ALLREDUCE, 0, &s, &ns, &err) == 0);  /* no such group */
  CHECK_I64(ns, 0);
  free(s);
  th_release(r, n);
  remove(path);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OVL_BINARY\n", argv[0]);
    return 2;
  }
  ovl_bin = argv[1];
  fit_edges();
  cli_errors();
  recovers_alpha_beta(0);
  recovers_alpha_beta(1);
  one_size();
  waits_for_peers();
  groups();
  return check_summary();
}
