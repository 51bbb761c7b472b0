/*
** Findings that hold on traces nobody here has seen (issue 29): one check per problem class,
** each on a trace built for it (trace_builder.c, or a small Kineto JSON written here) that
** reproduces what a real trace of that kind looks like. Each runs `ovl` as a user would and
** judges what it says: a finding needs its evidence, advice stays within it, one fact has one
** answer. Every check failed on the analyzer before the fixes.
** usage: test_evidence OVL_BINARY CHECK [TRACES_DIR]
*/
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ovl, *traces;

/* Runs `ovl` with the arguments printf-formatted. */
static cmd_result ovl_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cmd_result ovl_run(const char *fmt, ...) {
  char args[8192], cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s", ovl, args);
  return run_cmd(cmd);
}

static int has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }

/* The JSON object of the finding with this code (its text up to the next finding), or NULL. */
static const char *finding(const char *json, const char *code) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"code\": \"%s\"", code);
  return json ? strstr(json, pat) : NULL;
}

/* ---------------------------------------------------------------------------------- */
/* 1. compute_slowdown compares the same work                                          */
/* ---------------------------------------------------------------------------------- */

/* NCCL kernel of `dur` on the communication stream at t, with its collectives row. */
static void comm_kernel(tb *b, int64_t t, int64_t dur) {
  int64_t c = tb_kernel(b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t, t + dur, 0, 7);
  tb_collective(b, "AllReduce", 1 << 20, 8, OVL_NONE, c);
}

static void no_slowdown(const char *path, const char *what) {
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(j.status, 0);
  if (finding(j.out, "compute_slowdown")) fprintf(stderr, "%s: a compute_slowdown was claimed\n", what);
  CHECK(!finding(j.out, "compute_slowdown"));
  CHECK(has(j.out, "\"slowdowns\": []"));
  cmd_free(&j);
}

/* One kernel name over five grid sizes (issue: 80 runs, 6.5-406 us, 355x from a 559 ns "alone"
** figure): the few small-grid runs run alone, the large grids under communication. The first
** kernel of the trace (a communication kernel) carries no launch dimensions, as an import may
** write it. Different grids are different work: no slowdown. */
static void slowdown_grids(void) {
  const char *path = tb_temp_path("grids.sqlite");
  tb b;
  tb_open(&b, path);
  tb_kernel(&b, "ncclDevKernel_Broadcast_RING_LL", 0, 20000, 0, 7);  /* no grid, no block */
  const int64_t grids[5] = {8, 40, 160, 640, 2560};
  const int64_t durs[5] = {8500, 40000, 100000, 200000, 406000};
  const int64_t block[3] = {256, 1, 1};
  int64_t t = 100000;
  for (int i = 0; i < 80; i++) {
    int g = i % 5;
    int64_t grid[3] = {grids[g], 1, 1};
    int64_t d = durs[g] + (i % 3) * 100;
    tb_kernel_dims(&b, "elementwise_kernel", t, t + d, 0, 1, grid, block);
    if (g > 0) comm_kernel(&b, t, d);  /* communication under every large-grid run */
    t += d + 5000;
  }
  tb_close(&b);
  no_slowdown(path, "five grids of one kernel");
}

/* A persistent GEMM: one grid and block, more work per launch (61-935 us); the long runs
** overlap communication, the short ones run alone. Its runs alone vary more than any
** slowdown could be told from: no finding. */
static void slowdown_spread(void) {
  const char *path = tb_temp_path("persistent.sqlite");
  tb b;
  tb_open(&b, path);
  const int64_t grid[3] = {132, 1, 1}, block[3] = {384, 1, 1};
  int64_t t = 0;
  for (int i = 0; i < 40; i++) {
    int64_t d = 61000 + (935000 - 61000) * ((i * 7) % 40) / 39;
    tb_kernel_dims(&b, "persistent_gemm", t, t + d, 0, 1, grid, block);
    if (d > 300000) comm_kernel(&b, t + d / 10, d);  /* overlaps all but its first tenth */
    t += d + 20000;
  }
  tb_close(&b);
  no_slowdown(path, "persistent GEMM with growing work");
}

/* The same name and grid with two block sizes: two kernels. The 128-thread variant runs
** alone, the 256-thread one (twice as long) only under communication: no slowdown. */
static void slowdown_block(void) {
  const char *path = tb_temp_path("blocks.sqlite");
  tb b;
  tb_open(&b, path);
  const int64_t grid[3] = {64, 1, 1}, small[3] = {128, 1, 1}, large[3] = {256, 1, 1};
  int64_t t = 0;
  for (int i = 0; i < 24; i++) {
    int big = i % 2;
    int64_t d = big ? 100000 + (i % 5) * 200 : 50000 + (i % 5) * 100;
    tb_kernel_dims(&b, "softmax_kernel", t, t + d, 0, 1, grid, big ? large : small);
    if (big) comm_kernel(&b, t, d);
    t += d + 5000;
  }
  tb_close(&b);
  no_slowdown(path, "one kernel with two block sizes");
}

/* The control: fixed work (one grid, one block, 100 us +- 1%) that runs 25% longer while
** communication overlaps it, at varying overlap. compute_slowdown fires with about 1.25x. */
static void slowdown_real(void) {
  const char *path = tb_temp_path("real.sqlite");
  tb b;
  tb_open(&b, path);
  const int64_t grid[3] = {108, 1, 1}, block[3] = {256, 1, 1};
  int64_t t = 0;
  for (int i = 0; i < 60; i++) {
    int64_t jitter = (i % 7) * 150 - 450;
    int over = i % 3 != 0;
    int64_t d = 100000 + jitter + (over ? 25000 : 0);
    tb_kernel_dims(&b, "layer_norm_kernel", t, t + d, 0, 1, grid, block);
    if (over) comm_kernel(&b, t - 1000, d + 2000);
    t += d + 10000;
  }
  tb_kernel(&b, "other", t, t + 1000, 0, 1);
  tb_close(&b);
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(j.status, 0);
  const char *f = strstr(j.out ? j.out : "", "\"slowdowns\": [");
  CHECK(f && has(f, "\"kernel\": \"layer_norm_kernel\""));
  const char *s = f ? strstr(f, "\"slowdown\": ") : NULL;
  if (s) CHECK_NEAR(strtod(s + 12, NULL), 1.25, 0.03);
  CHECK(finding(j.out, "compute_slowdown") != NULL);
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */
/* 2. --comm-pattern kernels are linked to their launches like NCCL's                  */
/* ---------------------------------------------------------------------------------- */

/* A step-structured trace (NVTX steps, an api row per launch) whose gradients go through a
** custom all-reduce kernel that --comm-pattern names, plus one NCCL collective per step.
** Their launches are in the trace: none was launched before the window. */
static void pattern_launches(void) {
  const char *path = tb_temp_path("pattern.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  for (int step = 0; step < 3; step++) {
    tb_nvtx(&b, "ovl", "step", t, t + 10000000);
    int64_t c = tb_kernel(&b, "forward_backward", t + 200000, t + 6000000, 0, 1);
    tb_api(&b, t + 100000, t + 110000, c);
    for (int k = 0; k < 4; k++) {  /* buckets reduced by the custom kernel during backward */
      int64_t at = t + 1000000 + k * 1200000;
      c = tb_kernel(&b, "custom_allreduce_kernel", at, at + 800000, 0, 7);
      tb_api(&b, at - 50000, at - 40000, c);
    }
    c = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 6100000, t + 6200000, 0, 7);
    tb_api(&b, t + 6050000, t + 6060000, c);
    tb_collective(&b, "AllReduce", 4, 8, t + 6050000, c);
    t += 10000000;
  }
  tb_close(&b);
  cmd_result j = ovl_run("report --json --comm-pattern custom_allreduce '%s'", path);
  cmd_result x = ovl_run("report --comm-pattern custom_allreduce '%s'", path);
  CHECK_I64(j.status, 0);
  CHECK(has(j.out, "\"collectives_before_window\": 0"));
  CHECK(!has(j.out, "\"role\": \"before_window\""));
  CHECK(!has(j.out, "\"host_launch_ns\": null"));
  CHECK(!has(x.out, "before the profiler window"));
  /* each custom call: its launch is the api call of its kernel */
  CHECK(has(j.out, "\"queueing_ns\": 50000"));
  cmd_free(&j);
  cmd_free(&x);
}

/* ---------------------------------------------------------------------------------- */

typedef struct check {
  const char *name;
  void (*fn)(void);
} check;

static const check checks[] = {
  {"slowdown_grids", slowdown_grids},
  {"slowdown_spread", slowdown_spread},
  {"slowdown_block", slowdown_block},
  {"slowdown_real", slowdown_real},
  {"pattern_launches", pattern_launches},
};

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_evidence OVL_BINARY CHECK [TRACES_DIR]\n");
    return 2;
  }
  ovl = argv[1];
  traces = argc > 3 ? argv[3] : NULL;
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
    if (strcmp(argv[2], checks[i].name) == 0) {
      checks[i].fn();
      return check_summary();
    }
  fprintf(stderr, "test_evidence: no check '%s'\n", argv[2]);
  return 2;
}
