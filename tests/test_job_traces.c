/*
** Across ranks, end to end: per-rank trace files generated with known clock offsets (up to
** +-50 ms), per-rank compute, and a known straggler, analysed as one job. Checks: offsets
** recovered within 5 us; the straggler found with the right cause (its GPU compute ran longer,
** naming the kernel, or its host launched late); waits and transfers within 1%; the JSON
** cross_rank object; a job whose ranks issue collectives in different orders reported as
** mismatched with the first diverging collective named; ovl export on the job clock.
** Also the real 8-rank DLRM job (tests/data/traces/kineto-param-dlrm8, byte copies of the
** shared traces; skipped when absent).
** usage: test_job_traces OVL_BINARY TRACES_DIR
*/
#include "driver/job_driver.h"
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NRANKS 4
#define STEPS 24
#define BUCKETS 3

static const char *ovl_bin;
static unsigned rng = 7;
static int64_t noise(int64_t amplitude) {
  rng = rng * 1664525u + 1013904223u;
  return (int64_t)((rng >> 8) % (unsigned)(2 * amplitude + 1)) - amplitude;
}

typedef enum { NO_STRAGGLER, SLOW_GPU, LATE_HOST } scenario;

typedef struct truth {
  int64_t offset[NRANKS];               /* local = job time + offset */
  int64_t wait[NRANKS], transfer[NRANKS];
} truth;

/* Writes one trace per rank into dir. In every step each rank runs a forward kernel and, per
** bucket, a backward kernel followed by the bucket's AllReduce on the NCCL stream; the
** all-reduce ends for everyone a transfer time after the last rank arrived. */
static void write_job(const char *dir, scenario sc, int straggler, int swap_rank, truth *t) {
  static const int64_t bucket_bytes[BUCKETS] = {1 << 20, 25 << 20, 8 << 20};
  tb b[NRANKS];
  int64_t seq = 0;
  for (int r = 0; r < NRANKS; r++) {
    char path[512];
    snprintf(path, sizeof path, "%s/rank%d.sqlite", dir, r);
    tb_open(&b[r], path);
    ovl_err err = {0};
    t->offset[r] = noise(50000000);
    t->wait[r] = t->transfer[r] = 0;
    ovl_tw_meta_int(b[r].w, "rank", r, &err);
    ovl_tw_meta_int(b[r].w, "world_size", NRANKS, &err);
    /* NTP-grade realtime offsets: right within a few ms */
    ovl_tw_meta_int(b[r].w, "realtime_offset_ns", 1700000000000000000LL - t->offset[r] + noise(2000000), &err);
  }
  int64_t now = 10000000;
  for (int s = 0; s < STEPS; s++) {
    int64_t gpu[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
      gpu[r] = now;
      tb_kernel(&b[r], "forward_gemm", gpu[r] + t->offset[r], gpu[r] + 800000 + t->offset[r], 0, 7);
      gpu[r] += 800000;
    }
    int64_t last_end = 0;
    for (int k = 0; k < BUCKETS; k++, seq++) {
      int64_t arrive[NRANKS], launch[NRANKS], last = INT64_MIN;
      for (int r = 0; r < NRANKS; r++) {
        int64_t bwd = 300000 + (sc == SLOW_GPU && r == straggler ? 120000 : 0);
        tb_kernel(&b[r], "backward_gemm", gpu[r] + t->offset[r], gpu[r] + bwd + t->offset[r], 0, 7);
        gpu[r] += bwd;
        /* the host launches just before the gradient is ready on the GPU; a late host, 400 us after */
        launch[r] = gpu[r] - 50000 + (sc == LATE_HOST && r == straggler ? 400000 : 0);
        arrive[r] = (launch[r] > gpu[r] ? launch[r] : gpu[r]) + 2000 + noise(3000);
        if (arrive[r] > last) last = arrive[r];
      }
      int64_t transfer = 100000 + bucket_bytes[k] / 1000;
      for (int r = 0; r < NRANKS; r++) {
        int64_t end = last + transfer + noise(400);
        int64_t corr = tb_kernel(&b[r], "ncclDevKernel_AllReduce_Sum_f32_RING_LL", arrive[r] + t->offset[r],
                                 end + t->offset[r], 0, 13);
        int kk = (r == swap_rank && s == 5 && k < 2) ? 1 - k : k;  /* this rank swaps two buckets once */
        ovl_collective_row c = {OVL_NONE, 0x5eed, r, NRANKS, seq, "AllReduce", bucket_bytes[kk] / 4, "Float32",
                                bucket_bytes[kk], "Sum", -1, 0, 13, launch[r] + t->offset[r],
                                launch[r] + 1000 + t->offset[r], 1, OVL_NONE};
        ovl_err err = {0};
        int64_t id;
        if (ovl_tw_collective(b[r].w, &c, &id, &err) || ovl_tw_launch(b[r].w, id, corr, &err)) {
          fprintf(stderr, "write failed: %s\n", err.msg);
          exit(2);
        }
        t->wait[r] += last - arrive[r];
        t->transfer[r] += end - last;
        if (end > last_end) last_end = end;
      }
    }
    now = last_end + 500000;
  }
  for (int r = 0; r < NRANKS; r++) tb_close(&b[r]);
}

static void analyse(const char *dir, ovl_analysis_ctx *ctx, ovl_job *job) {
  ovl_err err = {0};
  ovl_analysis_options opt = {0};
  opt.launch_dims = 1;
  char *args[] = {(char *)dir};
  if (ovl_analysis_ctx_init(ctx, &opt, &err) || ovl_analyze_job(ctx, args, 1, NULL, NULL, job, &err)) {
    fprintf(stderr, "analysis failed: %s\n", err.msg);
    exit(2);
  }
}

static const ovl_finding *find_code(const ovl_finding *f, size_t n, const char *code) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i].code, code) == 0) return &f[i];
  return NULL;
}

static void check_scenario(const char *dir, scenario sc, int straggler) {
  truth t;
  write_job(dir, sc, straggler, -1, &t);
  ovl_analysis_ctx ctx;
  ovl_job job;
  analyse(dir, &ctx, &job);
  CHECK_I64(job.nranks, NRANKS);
  CHECK(job.cross.present);
  CHECK_I64(job.cross.nmembers, NRANKS);
  CHECK_I64(job.cross.matched, STEPS * BUCKETS);
  CHECK_I64(job.cross.unmatched, 0);
  CHECK(!job.cross.has_mismatch);
  for (size_t i = 0; i < job.nranks && i < NRANKS; i++) {
    const ovl_rank_result *r = &job.ranks[i];
    int k = (int)r->rank;
    CHECK(k >= 0 && k < NRANKS);
    if (k < 0 || k >= NRANKS) continue;
    /* job time = local + clock_offset, with rank 0's clock the job's */
    CHECK_NEAR((double)r->clock_offset, (double)(t.offset[0] - t.offset[k]), 5000.0);
    /* the split of the collectives' time into waiting and transfer, right within 1% of that time */
    double total = (double)(t.wait[k] + t.transfer[k]);
    CHECK_NEAR((double)r->cross.wait_ns, (double)t.wait[k], 0.01 * total);
    CHECK_NEAR((double)r->cross.transfer_ns, (double)t.transfer[k], 0.01 * total);
    if (k == straggler) CHECK_NEAR((double)r->cross.wait_ns, (double)t.wait[k], 0.01 * (double)t.wait[k] + 1000.0);
    else if (sc != NO_STRAGGLER) CHECK_NEAR((double)r->cross.wait_ns, (double)t.wait[k], 0.01 * (double)t.wait[k]);
    CHECK(r->cross.straggler == (sc != NO_STRAGGLER && k == straggler));
    /* every collective is matched: each carries its cross-rank part, the rank's sums are theirs,
    ** and the exposed pieces (that stage's input) are gone */
    int64_t wait = 0;
    size_t with_cross = 0, ncolls = 0;
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t c = 0; c < r->steps[s].ncolls; c++) {
        const ovl_coll_result *cr = &r->steps[s].colls[c];
        ncolls++;
        with_cross += cr->cross != NULL;
        if (cr->cross) wait += cr->cross->wait_ns;
        CHECK(!cr->has_pieces && ovl_coll_pieces(r, cr) == NULL);
      }
    CHECK_I64(with_cross, ncolls);
    CHECK_I64(r->ncoll_cross, ncolls + r->nunstepped);
    CHECK_I64(wait, r->cross.wait_ns);
    const ovl_finding *f = find_code(r->findings, r->nfindings, "straggler");
    CHECK((f != NULL) == (sc != NO_STRAGGLER && k == straggler));
    if (f && sc == SLOW_GPU) {
      CHECK(strstr(f->message, "compute before the collectives ran longer") != NULL);
      CHECK(strstr(f->message, "backward_gemm") != NULL);
      CHECK(strstr(f->message, "forward_gemm") == NULL);  /* the same on every rank */
    }
    if (f && sc == LATE_HOST) CHECK(strstr(f->message, "the host is late") != NULL);
  }
  CHECK((find_code(job.findings, job.nfindings, "straggler") != NULL) == (sc != NO_STRAGGLER));
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

static void mismatched_order(const char *dir) {
  truth t;
  write_job(dir, NO_STRAGGLER, -1, 2, &t);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' report --json '%s'", ovl_bin, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "\"cross_rank\": {") != NULL);
  CHECK(strstr(r.out, "\"unmatched\": 2") != NULL);
  /* seq 15 = step 5, bucket 0: rank 2 swapped it with bucket 1 */
  CHECK(strstr(r.out, "collective #15 of communicator 5eed") != NULL);
  CHECK(strstr(r.out, "rank 2 called AllReduce") != NULL);
  cmd_free(&r);
  snprintf(cmd, sizeof cmd, "'%s' report '%s'", ovl_bin, dir);
  r = run_cmd(cmd);
  CHECK(strstr(r.out, "WARNING: collectives do not line up across ranks") != NULL);
  cmd_free(&r);
}

/* The contract keys of the cross_rank object, through the CLI. */
static void json_keys(const char *dir) {
  truth t;
  write_job(dir, SLOW_GPU, 1, -1, &t);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' report --json '%s'", ovl_bin, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  static const char *const keys[] = {"\"ranks\": [", "\"clock_offsets_ns\": [", "\"collectives_matched\": ",
                                     "\"unmatched\": ", "\"skew_p50_ns\": ", "\"skew_p99_ns\": ",
                                     "\"stragglers\": [", "\"wait_caused_ns\": ", "\"times_last\": ",
                                     "\"overlap_efficiency_transfer\": ", "\"wait_ns\": ", "\"transfer_ns\": "};
  const char *cross = strstr(r.out, "\"cross_rank\": {");
  CHECK(cross != NULL);
  for (size_t i = 0; cross && i < sizeof keys / sizeof keys[0]; i++) CHECK(strstr(cross, keys[i]) != NULL);
  CHECK(cross && strstr(cross, "\"rank\": 1,") != NULL);  /* the straggler listed */
  cmd_free(&r);
}

/* ovl export draws every rank on the job clock: in the Chrome export, each collective (by its
** seq) ends at the same time on every rank, within the clock-alignment tolerance. */
static void export_aligned(const char *dir) {
  truth t;
  write_job(dir, SLOW_GPU, 1, -1, &t);
  const char *json = tb_temp_path("job.json");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' export -q --chrome '%s' '%s'", ovl_bin, json, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  FILE *f = fopen(json, "r");
  CHECK(f != NULL);
  if (!f) return;
  static double lo[STEPS * BUCKETS], hi[STEPS * BUCKETS];
  for (int i = 0; i < STEPS * BUCKETS; i++) lo[i] = 1e300, hi[i] = -1e300;
  char line[8192];
  int seen = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "\"ph\":\"X\"") || !strstr(line, "ncclDevKernel")) continue;
    const char *ts = strstr(line, "\"ts\":"), *dur = strstr(line, "\"dur\":"), *seq = strstr(line, "\"seq\":");
    if (!ts || !dur || !seq) continue;
    long k = atol(seq + 6);
    if (k < 0 || k >= STEPS * BUCKETS) continue;
    double end = atof(ts + 5) + atof(dur + 6);  /* us */
    if (end < lo[k]) lo[k] = end;
    if (end > hi[k]) hi[k] = end;
    seen++;
  }
  fclose(f);
  remove(json);
  CHECK_I64(seen, NRANKS * STEPS * BUCKETS);
  double worst = 0;
  for (int k = 0; k < STEPS * BUCKETS; k++)
    if (hi[k] - lo[k] > worst) worst = hi[k] - lo[k];
  CHECK(worst < 5.0);  /* us; the raw clocks differ by up to 100 ms */
}

/* Counts occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* A real 8-rank job (facebookresearch/param's DLRM Kineto traces): one job, every collective
** matched on all 8 ranks, per-rank overlap efficiency for all 8. */
static void real_job(const char *traces) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/kineto-param-dlrm8", traces);
  if (access(dir, R_OK) != 0) {
    fprintf(stderr, "SKIP real_job: %s not found (shared traces absent)\n", dir);
    return;
  }
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' report --json --compact '%s'", ovl_bin, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  const char *cross = strstr(r.out, "\"cross_rank\":{\"ranks\":[0,1,2,3,4,5,6,7]");
  CHECK(cross != NULL);
  CHECK(cross && strstr(cross, "\"unmatched\":0,") != NULL);
  CHECK(cross && strstr(cross, "\"collectives_matched\":0,") == NULL);
  CHECK(cross && strstr(cross, "\"jobs\":1") != NULL);
  /* the matched count is each rank's number of matched calls */
  const char *m = cross ? strstr(cross, "\"collectives_matched\":") : NULL;
  long matched = m ? atol(m + 22) : -1;
  char per_rank[64];
  snprintf(per_rank, sizeof per_rank, "\"collectives_matched\":%ld,", matched);
  CHECK_I64(count_of(r.out, per_rank), 8 + 1);  /* 8 ranks' cross_rank objects and the job's */
  CHECK_I64(count_of(r.out, "\"overlap_efficiency_transfer\":"), 8 + 1);
  CHECK_I64(count_of(r.out, "\"clock_offset_ns\":"), 8);
  cmd_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OVL_BINARY TRACES_DIR\n", argv[0]);
    return 2;
  }
  ovl_bin = argv[1];
  real_job(argv[2]);
  char dir[512];
  snprintf(dir, sizeof dir, "%s", tb_temp_path("job"));
  mkdir(dir, 0700);
  check_scenario(dir, SLOW_GPU, 2);
  check_scenario(dir, LATE_HOST, 3);
  check_scenario(dir, NO_STRAGGLER, -1);
  mismatched_order(dir);
  json_keys(dir);
  export_aligned(dir);
  for (int r = 0; r < NRANKS; r++) {
    char path[600];
    snprintf(path, sizeof path, "%s/rank%d.sqlite", dir, r);
    remove(path);
  }
  rmdir(dir);
  return check_summary();
}
