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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ovl, *traces;

/* Runs `ovl` with the arguments printf-formatted. */
#define ovl_run(...) run_tool(ovl, __VA_ARGS__)

static int has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }

/* text with every run of white space (a wrapped line's break and indent) made one space; static
** buffer, cut to fit. */
static const char *flat(const char *text) {
  static char buf[1 << 20];
  size_t n = 0;
  for (const char *p = text ? text : ""; *p && n + 1 < sizeof buf; p++) {
    if (*p == ' ' || *p == '\n' || *p == '\t') {
      if (n && buf[n - 1] == ' ') continue;
      buf[n++] = ' ';
    } else {
      buf[n++] = *p;
    }
  }
  buf[n] = 0;
  return buf;
}

/* The JSON object of the finding with this code (its text up to the next finding), or NULL. */
static const char *finding(const char *json, const char *code) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"code\": \"%s\"", code);
  return json ? strstr(json, pat) : NULL;
}

/* ---------------------------------------------------------------------------------- */
/* Kineto (PyTorch profiler) JSON written by hand                                      */
/* ---------------------------------------------------------------------------------- */

typedef struct kj {
  FILE *f;
  int n;
} kj;

static void kj_open(kj *k, const char *path, int rank, int world) {
  k->f = fopen(path, "w");
  if (!k->f) exit(2);
  k->n = 0;
  fprintf(k->f, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n"
                " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n"
                " \"traceEvents\": [\n", rank, world);
}

/* One event: category, name, pid, tid, ts and dur in us, and args (JSON object body, may be ""). */
static void kj_event(kj *k, const char *cat, const char *name, int pid, int tid, double ts, double dur,
                     const char *args) {
  fprintf(k->f, "%s  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, "
                "\"dur\": %.3f, \"args\": {%s}}",
          k->n++ ? ",\n" : "", cat, name, pid, tid, ts, dur, args);
}

/* A kernel on device 0, stream `stream`, launched (when corr > 0) by a cudaLaunchKernel at
** launch_ts on thread 100. */
static void kj_kernel(kj *k, const char *name, int stream, double ts, double dur, int corr, double launch_ts) {
  char args[256];
  if (corr > 0) {
    snprintf(args, sizeof args, "\"correlation\": %d", corr);
    kj_event(k, "cuda_runtime", "cudaLaunchKernel", 100, 100, launch_ts, 2.0, args);
    snprintf(args, sizeof args, "\"device\": 0, \"stream\": %d, \"correlation\": %d", stream, corr);
  } else {
    snprintf(args, sizeof args, "\"device\": 0, \"stream\": %d", stream);
  }
  kj_event(k, "kernel", name, 0, stream, ts, dur, args);
}

static void kj_close(kj *k) {
  fprintf(k->f, "\n ],\n \"traceName\": \"t.json\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": "
                "1711964646000000000}\n");
  fclose(k->f);
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
/* 3. The importer writes only rows its reader accepts                                 */
/* ---------------------------------------------------------------------------------- */

/* A profiler window that opens mid-run (ProfilerStep#3 and #4): at its start an NCCL kernel of
** NCCL 2.19+ (ncclDevKernel_Generic names no operation) launched in the previous iteration,
** without launch or arguments; later all-reduces with their launches. The call is written as
** what is known (operation unknown, launched before the window) and nobody is warned about
** rows they did not write. */
static void import_rows(void) {
  const char *path = tb_temp_path("window.json");
  kj k;
  kj_open(&k, path, 0, 2);
  kj_event(&k, "user_annotation", "ProfilerStep#3", 100, 100, 10, 100, "");
  kj_event(&k, "user_annotation", "ProfilerStep#4", 100, 100, 110, 100, "");
  /* launched before the window: its correlation id, but no launch in the trace */
  kj_event(&k, "kernel", "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", 0, 20, 32, 12,
           "\"device\": 0, \"stream\": 20, \"correlation\": 999");
  int corr = 1000;
  for (int s = 0; s < 2; s++) {
    double t = 10 + 100 * s;
    kj_kernel(&k, "void gemm<float>(float*)", 7, t + 20, 40, ++corr, t + 5);
    kj_kernel(&k, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 20, t + 62, 20, ++corr,
              t + 58);
  }
  kj_close(&k);
  cmd_result x = ovl_run("report '%s'", path);
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(x.status, 0);
  CHECK(!has(x.err, "warning"));
  CHECK(!has(j.err, "collectives row"));
  CHECK(has(j.out, "\"op\": \"Unknown\""));
  CHECK(has(j.out, "\"collectives_before_window\": 1"));
  CHECK(!has(x.out, "launched no GPU work"));
  cmd_free(&x);
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */
/* 4. Communication that is not NCCL's                                                 */
/* ---------------------------------------------------------------------------------- */

/* Real kernel names of the communication families ovl must recognise by default, and one of
** each that is not communication. */
static void families_default(void) {
  static const struct { const char *name, *op; } comm[] = {
    {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", "AlltoAll"},
    {"void deep_ep::internode_ll::combine<false, 7168>(void*, void*, int*)", "AlltoAll"},
    {"void c10d::symmetric_memory::(anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 4>(...)",
     "AllReduce"},
    {"two_shot_all_reduce_kernel", "AllReduce"},
    {"void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals)", "AllReduce"},
    {"nvshmemi_proxy_progress_kernel", NULL},
    {"void mscclpp::allreduce_kernel<float>(float*)", "AllReduce"},
    {"ncclDevKernel_Generic(ncclDevComm*, channelMasks, ncclWork*)", NULL},
  };
  const char *path = tb_temp_path("families.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  size_t n = sizeof comm / sizeof comm[0];
  for (int round = 0; round < 3; round++)
    for (size_t i = 0; i < n; i++) {
      tb_kernel(&b, "void deep_ep::layout::get_dispatch_layout(long*, int*, int*)", t, t + 5000, 0, 1);
      tb_kernel(&b, "gemm", t + 5000, t + 50000, 0, 1);
      tb_kernel(&b, comm[i].name, t + 50000, t + 80000, 0, 7);
      t += 100000;
    }
  tb_close(&b);
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(j.status, 0);
  char want[64];
  snprintf(want, sizeof want, "\"comm_kernels\": %zu", 3 * n);
  CHECK(has(j.out, want));
  CHECK(has(j.out, "\"op\": \"AlltoAll\""));
  CHECK(has(j.out, "\"op\": \"AllReduce\""));
  CHECK(!finding(j.out, "unrecognised_communication"));
  cmd_free(&j);
}

/* No kernel is recognised as communication, but one is named like a collective: the report
** says so and names --comm-pattern; with it, the kernel counts as communication. */
static void lookalike(void) {
  const char *path = tb_temp_path("lookalike.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  for (int i = 0; i < 5; i++) {
    tb_kernel(&b, "gemm", t, t + 50000, 0, 1);
    tb_kernel(&b, "void acme::fused_allreduce_kernel<float>(float*, int)", t + 50000, t + 80000, 0, 7);
    t += 100000;
  }
  tb_close(&b);
  cmd_result j = ovl_run("report --json '%s'", path);
  cmd_result x = ovl_run("report '%s'", path);
  cmd_result p = ovl_run("report --json --comm-pattern fused_allreduce_kernel '%s'", path);
  CHECK_I64(j.status, 0);
  const char *f = finding(j.out, "unrecognised_communication");
  CHECK(f && has(f, "fused_allreduce_kernel") && has(f, "--comm-pattern 'fused_allreduce_kernel'"));
  CHECK(has(x.out, "--comm-pattern"));
  CHECK(has(p.out, "\"comm_kernels\": 5"));
  CHECK(!finding(p.out, "unrecognised_communication"));
  cmd_free(&j);
  cmd_free(&x);
  cmd_free(&p);
}

/* ---------------------------------------------------------------------------------- */
/* 5. Traces of different jobs given together                                          */
/* ---------------------------------------------------------------------------------- */

/* One rank's trace: a few steps of compute and an all-reduce on communicator comm. */
static void job_rank(const char *path, int rank, int world, int pid, int64_t comm) {
  tb b;
  tb_open_rank(&b, path, rank, world, "node", pid);
  int64_t t = 0;
  for (int s = 0; s < 4; s++) {
    tb_kernel(&b, "gemm", t, t + 900000, 0, 1);
    int64_t c = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 900000, t + 1000000, 0, 7);
    tb_collective_in(&b, comm, rank, world, s, "AllReduce", 1 << 20, t + 890000, c);
    t += 1000000;
  }
  tb_close(&b);
}

/* Three "rank 0"s, world sizes 8, 8 and 64, given as one folder (one of them with its rank 1):
** the report says they are three jobs and which traces each holds; only one job's ranks are
** related across ranks. */
static void mixed_jobs(void) {
  const char *dir = tb_temp_path("mixed");
  mkdir(dir, 0700);
  char p[4][600];
  snprintf(p[0], sizeof p[0], "%s/a-rank0.sqlite", dir);
  snprintf(p[1], sizeof p[1], "%s/a-rank1.sqlite", dir);
  snprintf(p[2], sizeof p[2], "%s/b-rank0.sqlite", dir);
  snprintf(p[3], sizeof p[3], "%s/c-rank0.sqlite", dir);
  job_rank(p[0], 0, 8, 100, 11);
  job_rank(p[1], 1, 8, 101, 11);
  job_rank(p[2], 0, 8, 200, 11);  /* another job: its default group hashes to the same id */
  job_rank(p[3], 0, 64, 300, 12);
  cmd_result x = ovl_run("report '%s'", dir);
  cmd_result j = ovl_run("report --json '%s'", dir);
  CHECK_I64(x.status, 0);
  CHECK(has(x.out, "3 different jobs"));
  CHECK(has(x.err, "3 different jobs"));
  CHECK(has(x.out, "rank 0 is held by more than one process"));
  CHECK(has(x.out, "ranks 0-1 of 8"));
  CHECK(has(x.out, "rank 0 of 64"));
  CHECK(has(x.out, "across 2 ranks"));
  CHECK(has(j.out, "\"jobs_why\": \"rank 0 is held by more than one process"));
  const char *jobs = j.out ? strstr(j.out, "\"jobs\": [") : NULL;
  CHECK(jobs && has(jobs, "b-rank0.sqlite") && has(jobs, "c-rank0.sqlite"));
  cmd_free(&x);
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */
/* 6. A finding that recovers nothing does not print its 0 as the exposure             */
/* ---------------------------------------------------------------------------------- */

/* All-reduces of unknown size that compute waits for during backward (no overlap, no known
** fix): each step gets exposed_communication, which recovers nothing. The step's line must say
** how much is exposed and that nothing is counted as recoverable, not "(0 ns)". */
static void zero_recoverable(void) {
  const char *path = tb_temp_path("exposed.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  for (int step = 0; step < 3; step++) {
    tb_nvtx(&b, "ovl", "step", t, t + 3400000);
    int64_t at = t;
    for (int k = 0; k < 4; k++) {
      tb_kernel(&b, "backward", at, at + 500000, 0, 1);
      tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", at + 500000, at + 800000, 0, 7);
      at += 800000;
    }
    tb_kernel(&b, "optimizer", at, at + 200000, 0, 1);
    t += 3400000;
  }
  tb_close(&b);
  cmd_result x = ovl_run("report '%s'", path);
  CHECK_I64(x.status, 0);
  const char *line = x.out ? strstr(x.out, "findings of step") : NULL;
  CHECK(line && has(line, "exposed_communication"));
  CHECK(!has(x.out, "(0 ns)"));
  CHECK(line && strstr(line, "1.20 ms exposed") && strstr(line, "1.20 ms exposed") < strchr(line, '\n'));
  cmd_free(&x);
}

/* ---------------------------------------------------------------------------------- */
/* 7. An Nsight Systems report, and the files a directory's report leaves out          */
/* ---------------------------------------------------------------------------------- */

static void write_bytes(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) exit(2);
  fputs(text, f);
  fclose(f);
}

/* A .nsys-rep is not read, and the error says how to export it; a directory's report names
** the files it skipped. */
static void nsys_report(void) {
  const char *dir = tb_temp_path("nsysdir");
  mkdir(dir, 0700);
  char rep[600], notes[600], trace[600];
  snprintf(rep, sizeof rep, "%s/profile.nsys-rep", dir);
  snprintf(notes, sizeof notes, "%s/notes.txt", dir);
  snprintf(trace, sizeof trace, "%s/rank0.sqlite", dir);
  write_bytes(rep, "QDSTRMV\x01 not an sqlite database");
  cmd_result a = ovl_run("report '%s'", rep);
  CHECK_I64(a.status, 1);
  CHECK(has(a.err, "nsys export --type sqlite"));
  cmd_result b = ovl_run("report '%s'", dir);
  CHECK_I64(b.status, 1);
  CHECK(has(b.err, "nsys export --type sqlite"));
  write_bytes(notes, "how this was run\n");
  job_rank(trace, 0, 1, 100, 11);
  cmd_result c = ovl_run("report '%s'", dir);
  CHECK_I64(c.status, 0);
  CHECK(has(c.err, "profile.nsys-rep") && has(c.err, "notes.txt") && has(c.err, "nsys export --type sqlite"));
  cmd_free(&a);
  cmd_free(&b);
  cmd_free(&c);
}

/* ---------------------------------------------------------------------------------- */
/* 8. Advice within the evidence                                                       */
/* ---------------------------------------------------------------------------------- */

/* One rank, each step's communication longer than its compute, gradient all-reduces of known
** sizes at a low bus bandwidth (waiting for a peer looks like that). From one rank nothing
** tells a slow link from a late peer: no "faster interconnect"; sizes are known: no "record
** NCCL arguments". */
static void advice_bandwidth(void) {
  const char *path = tb_temp_path("bound.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  for (int step = 0; step < 3; step++) {
    tb_nvtx(&b, "ovl", "step", t, t + 10000000);
    int64_t at = t;
    for (int k = 0; k < 4; k++) {
      tb_kernel(&b, "backward", at, at + 500000, 0, 1);
      int64_t c = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", at + 500000, at + 2500000, 0, 7);
      tb_collective(&b, "AllReduce", 4 << 20, 8, at + 450000, c);  /* 4 MiB in 2 ms: ~3.7 GB/s bus */
      at += 2500000;
    }
    t += 10000000;
  }
  tb_close(&b);
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(j.status, 0);
  const char *f = finding(j.out, "exposed_communication");
  CHECK(f != NULL);
  CHECK(!has(j.out, "faster interconnect"));
  CHECK(!has(j.out, "record NCCL arguments"));
  CHECK(has(f, "a late peer looks the same as a slow transfer"));
  cmd_free(&j);
}

/* Gradient all-reduces of sizes from 1 to 32 MiB whose times do not grow with their size (half
** of them wait): an alpha-beta line explains none of their time (r2 < 0). whatif says so beside
** its predictions; no bucket-size finding rests on the line. */
static void advice_fit(void) {
  const char *path = tb_temp_path("fit.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t t = 0;
  for (int step = 0; step < 6; step++) {
    tb_nvtx(&b, "ovl", "step", t, t + 80000000);
    tb_kernel(&b, "backward", t + 100000, t + 6000000, 0, 1);
    int64_t at = t + 1000000;
    for (int k = 0; k < 6; k++) {
      int64_t d = ((k + step) % 2 ? 12000000 : 500000) + 50000 * k;
      int64_t c = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", at, at + d, 0, 7);
      tb_collective(&b, "AllReduce", (int64_t)(1 << 20) << k, 8, at - 20000, c);
      at += d + 10000;
    }
    tb_kernel(&b, "optimizer", at, at + 100000, 0, 1);
    t += 80000000;
  }
  tb_close(&b);
  cmd_result w = ovl_run("whatif --bucket-mb 1,25,100 '%s'", path);
  cmd_result wj = ovl_run("whatif --json --bucket-mb 1,25,100 '%s'", path);
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(w.status, 0);
  CHECK(has(w.out, "r2 -"));
  CHECK(has(w.out, "caveat"));
  CHECK(has(wj.out, "\"fit_r2\": -"));
  CHECK(has(wj.out, "\"caveat\": \""));
  CHECK(!finding(j.out, "exposed_tail") && !finding(j.out, "latency_bound") && !finding(j.out, "single_bucket"));
  cmd_free(&w);
  cmd_free(&wj);
  cmd_free(&j);
}

/* A two-rank job whose one process group runs mostly all-to-all, rank 1 spending far longer in
** them than rank 0. Without a kernel that names MoE work it is no expert parallelism (a
** recommender's embedding exchange looks the same): no "ep", no MoE advice. With one, it is. */
static void a2a_rank(const char *path, int rank, int pid, int moe) {
  tb b;
  tb_open_rank(&b, path, rank, 2, "node", pid);
  int64_t t = 0;
  for (int s = 0; s < 4; s++) {
    tb_nvtx(&b, "ovl", "step", t, t + 10000000);
    tb_kernel(&b, moe ? "fused_moe_kernel" : "embedding_bag_kernel", t + 100000, t + 2000000, 0, 1);
    for (int k = 0; k < 2; k++) {
      int64_t at = t + 2000000 + k * 3000000, d = rank ? 2500000 : 500000;
      int64_t c = tb_kernel(&b, "ncclDevKernel_SendRecv", at, at + d, 0, 7);
      tb_collective_in(&b, 21, rank, 2, s * 3 + k, "AlltoAll", 1 << 20, at - 10000, c);
      tb_kernel(&b, "mlp", at + d, at + d + 200000, 0, 1);
    }
    int64_t c = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 9000000, t + 9100000, 0, 7);
    tb_collective_in(&b, 21, rank, 2, s * 3 + 2, "AllReduce", 1 << 20, t + 8990000, c);
    t += 10000000;
  }
  tb_close(&b);
}

static void moe_evidence(void) {
  for (int moe = 0; moe <= 1; moe++) {
    const char *dir = tb_temp_path(moe ? "moe" : "dlrm");
    mkdir(dir, 0700);
    char p0[600], p1[600];
    snprintf(p0, sizeof p0, "%s/rank0.sqlite", dir);
    snprintf(p1, sizeof p1, "%s/rank1.sqlite", dir);
    a2a_rank(p0, 0, 100, moe);
    a2a_rank(p1, 1, 101, moe);
    cmd_result j = ovl_run("report --json '%s'", dir);
    CHECK_I64(j.status, 0);
    if (moe) {
      CHECK(has(j.out, "\"dim\": \"ep\""));
      CHECK(finding(j.out, "alltoall_imbalance") != NULL);
    } else {
      CHECK(!has(j.out, "\"dim\": \"ep\""));
      CHECK(!finding(j.out, "alltoall_imbalance"));
      CHECK(!has(j.out, "aux) loss"));
      CHECK(has(j.out, "no kernel names MoE work"));
    }
    cmd_free(&j);
  }
}

/* One rank of a 4-stage pipeline whose send/recv calls (SendRecv kernels) carry no micro-batch
** the trace can count: no pipeline model to compare its idle time with, no pipeline_bubble. */
static void pipeline_evidence(void) {
  const char *path = tb_temp_path("stage.sqlite");
  tb b;
  tb_open_rank(&b, path, 0, 4, "node", 100);
  int64_t t = 0;
  for (int s = 0; s < 3; s++) {
    tb_nvtx(&b, "ovl", "step", t, t + 10000000);
    tb_kernel(&b, "stage_forward", t + 100000, t + 1500000, 0, 1);
    int64_t c = tb_kernel(&b, "ncclDevKernel_SendRecv", t + 1500000, t + 1600000, 0, 7);
    tb_collective_in(&b, 31, 0, 4, s, "SendRecv", 1 << 20, t + 1490000, c);
    t += 10000000;
  }
  tb_close(&b);
  cmd_result j = ovl_run("report --json '%s'", path);
  CHECK_I64(j.status, 0);
  CHECK(!finding(j.out, "pipeline_bubble"));
  CHECK(!has(j.out, "nan%"));
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */
/* 9. whatif compares candidates with the model's replay of the trace                  */
/* ---------------------------------------------------------------------------------- */

/* A simulated job (200 MiB buckets) replayed with a network six times faster than the one it
** ran on: the model replays the trace's own buckets well below the trace's step time, and every
** larger cap replays slower than them. That model error is no gain: no size beats the trace. */
static void whatif_baseline(void) {
  const char *path = tb_temp_path("sim.sqlite");
  cmd_result s = ovl_run("simulate --bucket-layers 8 --emit-trace '%s'", path);
  CHECK_I64(s.status, 0);
  cmd_result w = ovl_run("whatif --bucket-mb 400,800,1600 --alpha 200us --beta 72GB/s '%s'", path);
  cmd_result j = ovl_run("whatif --json --bucket-mb 400,800,1600 --alpha 200us --beta 72GB/s '%s'", path);
  CHECK_I64(w.status, 0);
  CHECK(has(w.out, "no size beats the trace"));
  CHECK(!has(w.out, "faster than the trace ("));  /* the old claim, gain measured against the trace */
  CHECK(has(j.out, "\"beats_trace\": false"));
  const char *g = j.out ? strstr(j.out, "\"gain_ns\": ") : NULL;
  CHECK(g && strtod(g + 11, NULL) <= 0);
  cmd_free(&s);
  cmd_free(&w);
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */
/* 10. --hta-compat cuts the last step where HTA does                                  */
/* ---------------------------------------------------------------------------------- */

/* Three ProfilerSteps on the CPU (at 0, 100, 200 us) and their GPU copies (gpu_user_annotation,
** at 50, 150, 250 us: the GPU runs behind). HTA's last-step cut is the latest start of any
** ProfilerStep event, 250 us: the all-reduce launched at 220 us is kept, and --hta-compat
** counts its 40 us of communication beside the other two 20 us ones. */
static void hta_gpu_steps(void) {
  const char *path = tb_temp_path("hta.json");
  kj k;
  kj_open(&k, path, 0, 2);
  int corr = 100;
  for (int s = 0; s < 3; s++) {
    char name[32];
    double t = 100.0 * s;
    snprintf(name, sizeof name, "ProfilerStep#%d", s + 1);
    kj_event(&k, "user_annotation", name, 100, 100, t, 100, "");
    kj_event(&k, "gpu_user_annotation", name, 0, 7, t + 50, 100, "\"device\": 0");
    kj_kernel(&k, "void gemm<float>(float*)", 7, t + 50, 10, ++corr, t + 10);
    if (s < 2)
      kj_kernel(&k, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, t + 70, 20, ++corr, t + 60);
  }
  kj_kernel(&k, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 260, 40, ++corr, 220);
  kj_close(&k);
  cmd_result j = ovl_run("report --json --hta-compat '%s'", path);
  CHECK_I64(j.status, 0);
  const char *c = j.out ? strstr(j.out, "\"t_comm_ns\": ") : NULL;
  CHECK(c && strtod(c + 13, NULL) == 80000);
  cmd_free(&j);
}

/* ---------------------------------------------------------------------------------- */
/* 11. A trace of another accelerator is named for what it is                          */
/* ---------------------------------------------------------------------------------- */

/* A PyTorch profiler trace of an MTIA job: CPU ops, MTIA runtime calls and device events, no
** CUDA kernel. Telling its user to enable ProfilerActivity.CUDA would be wrong: it says MTIA. */
static void accelerator(void) {
  const char *path = tb_temp_path("mtia.json");
  kj k;
  kj_open(&k, path, 0, 1);
  for (int s = 0; s < 2; s++) {
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", s + 1);
    kj_event(&k, "user_annotation", name, 100, 100, 100.0 * s, 100, "");
    kj_event(&k, "mtia_runtime", "launchKernel", 100, 100, 100.0 * s + 5, 3, "\"correlation\": 7");
    kj_event(&k, "mtia_ccp_events", "fused_linear_relu", 1, 1, 100.0 * s + 20, 40, "\"correlation\": 7");
  }
  kj_close(&k);
  cmd_result r = ovl_run("report '%s'", path);
  CHECK_I64(r.status, 1);
  CHECK(has(r.err, "MTIA"));
  CHECK(!has(r.err, "ProfilerActivity.CUDA"));
  cmd_free(&r);
}

/* ---------------------------------------------------------------------------------- */
/* 12. One job, one answer                                                             */
/* ---------------------------------------------------------------------------------- */

/* The real 8-rank DLRM job (tests/data): peer_wait names the rank its AlltoAll waited for; no
** rank is a significant straggler. The HTML's straggler line and the text's job section name
** that same rank, not "none". And a gradient collective without a bucket range is labelled the
** same ("#order") in the bucket table and in the collectives table. */
static void one_answer(void) {
  if (!traces) {
    CHECK(!"TRACES_DIR given");
    return;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/kineto-param-dlrm8", traces);
  const char *html = tb_temp_path("dlrm.html");
  cmd_result x = ovl_run("report '%s'", dir);
  cmd_result h = ovl_run("report --html '%s' '%s'", html, dir);
  CHECK_I64(x.status, 0);
  CHECK_I64(h.status, 0);
  const char *w = strstr(flat(x.out), "waiting for rank ");
  long late = w ? strtol(w + 17, NULL, 10) : -1;
  CHECK(late >= 0);
  FILE *f = fopen(html, "r");
  static char page[1 << 21];
  size_t n = f ? fread(page, 1, sizeof page - 1, f) : 0;
  if (f) fclose(f);
  page[n] = 0;
  /* the straggler paragraph, tags removed */
  const char *p = strstr(page, "<p>Stragglers: ");
  char line[2048];
  size_t k = 0;
  for (const char *q = p; q && *q && k + 1 < sizeof line && strncmp(q, "</p>", 4) != 0; q++) {
    if (*q == '<') {
      while (*q && *q != '>') q++;
      continue;
    }
    line[k++] = *q;
  }
  line[k] = 0;
  char want[64];
  snprintf(want, sizeof want, "rank %ld", late);
  CHECK(has(line, want));
  CHECK(!has(line, "Stragglers: none."));
  CHECK(has(x.out, want) && has(x.out, "stragglers: none significant"));
  /* bucket labels: every AllReduce row of a collectives table (gradients here) shows "#order" */
  int rows = 0, labelled = 0;
  for (const char *l = x.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    int order;
    char op[32], b1[32], b2[32], b3[32];
    if (sscanf(l, " %d %31s %31s %31s %31s", &order, op, b1, b2, b3) != 5 || strcmp(op, "AllReduce") != 0) continue;
    const char *bucket = strcmp(b1, "?") == 0 ? b2 : b3;  /* bytes are "?" or a number and a unit */
    char expect[16];
    snprintf(expect, sizeof expect, "#%d", order);
    rows++;
    labelled += strcmp(bucket, expect) == 0;
  }
  CHECK(rows > 0);
  CHECK_I64(labelled, rows);
  cmd_free(&x);
  cmd_free(&h);
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
  {"import_rows", import_rows},
  {"families_default", families_default},
  {"lookalike", lookalike},
  {"mixed_jobs", mixed_jobs},
  {"zero_recoverable", zero_recoverable},
  {"nsys_report", nsys_report},
  {"advice_bandwidth", advice_bandwidth},
  {"advice_fit", advice_fit},
  {"moe_evidence", moe_evidence},
  {"pipeline_evidence", pipeline_evidence},
  {"whatif_baseline", whatif_baseline},
  {"hta_gpu_steps", hta_gpu_steps},
  {"accelerator", accelerator},
  {"one_answer", one_answer},
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
