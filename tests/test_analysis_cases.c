/*
** Hand-built traces with answers worked out by hand, analysed through the whole path
** (trace file -> loader -> classification -> steps -> sweep -> results).
*/
#include "analyze/analysis.h"
#include "check.h"
#include "job/rank_pack.h"
#include "load/comm_names.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>

static const char *NCCL_AR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
static const char *NCCL_AG = "ncclDevKernel_AllGather_RING_LL";

/* Analyses path with the given patterns; exits on failure (the input is known good). */
static ovl_rank_result *analyse_with(const char *path, const char *comm_pattern, const char *step_pattern, size_t *n) {
  ovl_analysis_ctx ctx;
  ovl_analysis_options opt = {0};
  opt.comm_pattern = comm_pattern;
  opt.step_pattern = step_pattern;
  ovl_err err = {0};
  ovl_rank_result *r = NULL;
  if (ovl_analysis_ctx_init(&ctx, &opt, &err) || ovl_analyze_file(&ctx, path, &r, n, &err)) {
    fprintf(stderr, "analysis of %s failed: %s\n", path, err.msg);
    exit(2);
  }
  ovl_analysis_ctx_free(&ctx);
  return r;
}

static ovl_rank_result *analyse(const char *path, size_t *n) { return analyse_with(path, NULL, NULL, n); }

static void release(ovl_rank_result *r, size_t n) {
  for (size_t i = 0; i < n; i++) ovl_rank_result_free(&r[i]);
  free(r);
}

/* Compute on two streams, an NCCL kernel (no collectives row) partly after them. */
static void several_streams(void) {
  const char *path = tb_temp_path("streams.sqlite");
  tb b;
  tb_open(&b, path);
  tb_kernel(&b, "gemm", 0, 100, 0, 1);
  tb_kernel(&b, "gemm", 50, 150, 0, 2);
  tb_kernel(&b, NCCL_AR, 120, 200, 0, 3);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(n, 1);
  CHECK_I64(r[0].totals.compute, 150);
  CHECK_I64(r[0].totals.comm, 80);
  CHECK_I64(r[0].totals.exposed, 50);
  CHECK_NEAR(ovl_overlap_efficiency(&r[0].totals), 1.0 - 50.0 / 80.0, 1e-12);
  CHECK(r[0].step_detection == OVL_STEPS_WHOLE);
  CHECK_I64(r[0].nsteps, 1);
  CHECK_I64(r[0].n_kernels, 3);
  CHECK_I64(r[0].n_comm_kernels, 1);
  CHECK_I64(r[0].steps[0].ncolls, 1);
  CHECK(r[0].steps[0].colls[0].op == OVL_OP_ALLREDUCE);
  CHECK_I64(ovl_coll_exposed(&r[0].steps[0].colls[0]), 50);
  CHECK_I64(r[0].steps[0].colls[0].bytes, OVL_NONE);
  CHECK_I64(r[0].steps[0].start, 0);
  CHECK_I64(r[0].steps[0].end, 200);
  release(r, n);
  remove(path);
}

/* Two communication streams overlapping each other: counted once, exposure per collective. */
static void overlapping_comm(void) {
  const char *path = tb_temp_path("twocomm.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t c1 = tb_kernel(&b, NCCL_AR, 0, 100, 0, 3);
  int64_t c2 = tb_kernel(&b, NCCL_AG, 50, 150, 0, 4);
  tb_kernel(&b, "gemm", 80, 120, 0, 1);
  tb_collective(&b, "AllReduce", 4000, 4, 0, c1);
  tb_collective(&b, "AllGather", 1000, 4, 1, c2);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(r[0].totals.comm, 150);
  CHECK_I64(r[0].totals.compute, 40);
  CHECK_I64(r[0].totals.exposed, 110);
  CHECK_I64(r[0].steps[0].ncolls, 2);
  const ovl_coll_result *ar = &r[0].steps[0].colls[0], *ag = &r[0].steps[0].colls[1];
  CHECK(ar->op == OVL_OP_ALLREDUCE && ag->op == OVL_OP_ALLGATHER);
  CHECK_I64(ovl_coll_exposed(ar), 80);
  CHECK_I64(ovl_coll_exposed(ag), 60);
  CHECK_I64(ar->order, 0);
  CHECK_I64(ag->order, 1);
  /* nccl-tests conventions: AllReduce algbw = bytes/t, busbw x 2(n-1)/n; AllGather moves n x bytes */
  CHECK_NEAR(ovl_coll_algbw(ar), 4000.0 / 100.0, 1e-9);
  CHECK_NEAR(ovl_coll_busbw(ar), 4000.0 / 100.0 * 2.0 * 3.0 / 4.0, 1e-9);
  CHECK_NEAR(ovl_coll_algbw(ag), 4.0 * 1000.0 / 100.0, 1e-9);
  CHECK_NEAR(ovl_coll_busbw(ag), 4.0 * 1000.0 / 100.0 * 3.0 / 4.0, 1e-9);
  release(r, n);
  remove(path);
}

/* Memops are memory, never compute; a memop linked to a collective is communication. */
static void memops_during_comm(void) {
  const char *path = tb_temp_path("memops.sqlite");
  tb b;
  tb_open(&b, path);
  tb_kernel(&b, NCCL_AR, 0, 100, 0, 3);
  tb_memop(&b, "HtoD", 20, 60, 0, 5, 1 << 20);
  int64_t ce = tb_memop(&b, "DtoD", 100, 150, 0, 6, 1 << 20);
  tb_collective(&b, "AllGather", 1 << 20, 2, 5, ce);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(r[0].totals.compute, 0);
  CHECK_I64(r[0].totals.comm, 150);
  CHECK_I64(r[0].totals.exposed, 150);
  CHECK_I64(r[0].totals.memory, 40);
  CHECK_I64(r[0].n_memops, 2);
  CHECK_I64(r[0].n_comm_memops, 1);
  CHECK(ovl_overlap_efficiency(&r[0].totals) == 0.0);
  release(r, n);
  remove(path);
}

/* Zero-length kernels hide nothing and count nothing; a zero-length collective is listed. */
static void zero_length(void) {
  const char *path = tb_temp_path("zero.sqlite");
  tb b;
  tb_open(&b, path);
  tb_kernel(&b, NCCL_AR, 0, 50, 0, 3);
  tb_kernel(&b, "gemm", 10, 10, 0, 1);
  int64_t z = tb_kernel(&b, NCCL_AR, 60, 60, 0, 3);
  tb_collective(&b, "AllReduce", 64, 2, 55, z);
  tb_kernel(&b, "gemm", 50, 80, 0, 1);  /* touches the first NCCL kernel */
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(r[0].totals.comm, 50);
  CHECK_I64(r[0].totals.compute, 30);
  CHECK_I64(r[0].totals.exposed, 50);
  CHECK_I64(r[0].n_comm_kernels, 2);
  CHECK_I64(r[0].steps[0].ncolls, 2);
  int found = 0;
  for (size_t i = 0; i < r[0].steps[0].ncolls; i++) {
    const ovl_coll_result *c = &r[0].steps[0].colls[i];
    if (ovl_coll_id(c) == OVL_NONE) continue;
    found = 1;
    CHECK_I64(c->gpu_start, 60);
    CHECK_I64(ovl_coll_gpu_end(c), 60);
    CHECK_I64(ovl_coll_exposed(c), 0);
    CHECK(isnan(ovl_coll_algbw(c)));
  }
  CHECK(found);
  release(r, n);
  remove(path);
}

/* A kernel whose name says nothing is communication because a collectives row claims it. */
static void linked_only(void) {
  const char *path = tb_temp_path("linked.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t k = tb_kernel(&b, "my_custom_reduce_kernel", 0, 100, 0, 3);
  tb_kernel(&b, "gemm", 50, 80, 0, 1);
  tb_collective(&b, "AllReduce", 1000, 2, 0, k);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(r[0].totals.comm, 100);
  CHECK_I64(r[0].totals.compute, 30);
  CHECK_I64(r[0].totals.exposed, 70);
  CHECK_I64(r[0].n_comm_kernels, 1);
  CHECK_I64(ovl_coll_exposed(&r[0].steps[0].colls[0]), 70);
  CHECK_I64(r[0].steps[0].colls[0].bytes, 1000);
  release(r, n);
  remove(path);

  /* Without the row, the same kernel is compute. */
  tb_open(&b, path);
  tb_kernel(&b, "my_custom_reduce_kernel", 0, 100, 0, 3);
  tb_kernel(&b, "gemm", 50, 80, 0, 1);
  tb_close(&b);
  r = analyse(path, &n);
  CHECK_I64(r[0].totals.comm, 0);
  CHECK_I64(r[0].totals.compute, 100);
  CHECK(isnan(ovl_overlap_efficiency(&r[0].totals)));
  release(r, n);
  remove(path);
}

/* Two NVTX steps. Host ranges [0,500) and [500,1000); step 0's GPU work lags past 500.
** With api rows, steps are projected through launch correlation; without, by time. */
static void two_nvtx_steps(int with_api) {
  const char *path = tb_temp_path(with_api ? "steps-api.sqlite" : "steps-time.sqlite");
  tb b;
  tb_open(&b, path);
  tb_nvtx(&b, "ovl", "step", 0, 500);
  tb_nvtx(&b, NULL, "ovl:step", 500, 1000);
  /* step 0: launched at 10, 20, 30, 40 */
  int64_t k0 = tb_kernel(&b, "gemm", 100, 300, 0, 1);
  int64_t n0 = tb_kernel(&b, NCCL_AR, 250, 400, 0, 3);
  int64_t k1 = tb_kernel(&b, "gemm", 450, 480, 0, 1);
  int64_t k2 = tb_kernel(&b, "gemm", 520, 560, 0, 1);   /* lags past the host range */
  tb_collective(&b, "AllReduce", 1500, 2, 20, n0);
  tb_nvtx(&b, "ovl", "grad_ready bucket=0 bytes=1500", 15, OVL_NONE);
  tb_nvtx(&b, "ovl", "bucket 0", 19, 25);
  /* step 1: launched at 510, 520 */
  int64_t k3 = tb_kernel(&b, "gemm", 600, 700, 0, 1);
  int64_t n1 = tb_kernel(&b, NCCL_AR, 650, 900, 0, 3);
  tb_collective(&b, "AllReduce", 1500, 2, 520, n1);
  tb_nvtx(&b, NULL, "ovl:grad_ready bucket=0 bytes=1500", 505, OVL_NONE);
  tb_nvtx(&b, NULL, "ovl:bucket 0", 515, 530);
  if (with_api) {
    tb_api(&b, 10, 11, k0);
    tb_api(&b, 20, 21, n0);
    tb_api(&b, 30, 31, k1);
    tb_api(&b, 40, 41, k2);
    tb_api(&b, 510, 511, k3);
    tb_api(&b, 520, 521, n1);
  }
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK(r[0].step_detection == OVL_STEPS_NVTX);
  CHECK(r[0].step_projection == (with_api ? OVL_PROJECT_CORRELATION : OVL_PROJECT_TIME));
  CHECK_I64(r[0].nsteps, 2);
  const ovl_step_result *s0 = &r[0].steps[0], *s1 = &r[0].steps[1];
  if (with_api) {
    /* windows [100, 600) and [600, 900): the lagging kernel stays in step 0 */
    CHECK_I64(s0->start, 100);
    CHECK_I64(s0->end, 600);
    CHECK_I64(s1->start, 600);
    CHECK_I64(s1->end, 900);
    CHECK_I64(s0->totals.compute, 200 + 30 + 40);
    CHECK_I64(s1->totals.compute, 100);
  } else {
    CHECK_I64(s0->start, 0);
    CHECK_I64(s0->end, 500);
    CHECK_I64(s0->totals.compute, 200 + 30);
    CHECK_I64(s1->totals.compute, 40 + 100);
  }
  CHECK_I64(s0->totals.comm, 150);
  CHECK_I64(s0->totals.exposed, 100);
  CHECK_NEAR(ovl_overlap_efficiency(&s0->totals), 1.0 - 100.0 / 150.0, 1e-12);
  CHECK_I64(s1->totals.comm, 250);
  CHECK_I64(s1->totals.exposed, 200);
  CHECK_I64(s0->ncolls, 1);
  CHECK_I64(s1->ncolls, 1);
  /* bucket ranges and gradient-ready marks, in both NVTX spellings */
  CHECK_I64(s0->colls[0].bucket, 0);
  CHECK_I64(ovl_coll_ready(&s0->colls[0]), 15);
  CHECK_I64(ovl_coll_stall(&s0->colls[0]), 5);
  CHECK_I64(s1->colls[0].bucket, 0);
  CHECK_I64(ovl_coll_ready(&s1->colls[0]), 505);
  CHECK_I64(ovl_coll_stall(&s1->colls[0]), 15);
  CHECK_I64(r[0].nmarks, 2);
  CHECK_I64(r[0].marks[0].step, 0);
  CHECK_I64(r[0].marks[1].step, 1);
  CHECK_I64(r[0].totals.exposed, 300);
  release(r, n);
  remove(path);
}

/* Work on two devices gives two rank results. */
static void two_devices(void) {
  const char *path = tb_temp_path("devices.sqlite");
  tb b;
  tb_open(&b, path);
  tb_kernel(&b, "gemm", 0, 100, 0, 1);
  tb_kernel(&b, NCCL_AR, 50, 150, 0, 2);
  tb_kernel(&b, "gemm", 0, 10, 1, 1);
  tb_kernel(&b, NCCL_AR, 5, 105, 1, 2);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(n, 2);
  for (size_t i = 0; i < n; i++) {
    if (r[i].device == 0) CHECK_I64(r[i].totals.exposed, 50);
    else CHECK_I64(r[i].totals.exposed, 95);
  }
  CHECK(r[0].device != r[1].device);
  release(r, n);
  remove(path);
}

/* Devices with ids far apart (the tracking numbers the devices it sees: each collective keeps
** its own, exactly), one without collectives, and a row whose work never ran. */
static void far_devices(void) {
  const char *path = tb_temp_path("far-devices.sqlite");
  const int64_t dev[3] = {(int64_t)1 << 40, 7, ((int64_t)1 << 33) + 1};
  tb b;
  tb_open(&b, path);
  for (int d = 0; d < 3; d++) {
    int64_t t = 1000 * d;
    tb_kernel(&b, "gemm", t, t + 100, dev[d], 1);
    if (d == 1) continue;  /* device 7: compute only */
    int64_t corr = tb_kernel(&b, NCCL_AR, t + 50, t + 150 + 10 * d, dev[d], 2);
    tb_collective(&b, "allreduce", 4096 << d, 2, t + 40, corr);
  }
  tb_collective(&b, "allreduce", 64, 2, 5000, OVL_NONE);  /* no GPU work */
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(n, 3);
  int seen = 0;
  for (size_t i = 0; i < n; i++) {
    int d = r[i].device == dev[0] ? 0 : r[i].device == dev[1] ? 1 : r[i].device == dev[2] ? 2 : -1;
    CHECK(d >= 0);
    if (d < 0) continue;
    seen |= 1 << d;
    CHECK_I64(r[i].nsteps, 1);
    CHECK_I64(r[i].steps[0].ncolls, d == 1 ? 0 : 1);
    CHECK_I64(r[i].totals.exposed, d == 1 ? 0 : 50 + 10 * d);
    if (d != 1) {
      CHECK_I64(r[i].steps[0].colls[0].bytes, 4096 << d);
      CHECK_I64(r[i].steps[0].colls[0].gpu_start, 1000 * d + 50);
    }
  }
  CHECK_I64(seen, 7);
  release(r, n);
  remove(path);
}

/* No step ranges: steps inferred from the repeating collective sequence, after a first
** iteration with one large bucket. */
static void periodic_steps(void) {
  const char *path = tb_temp_path("periodic.sqlite");
  tb b;
  tb_open(&b, path);
  static const int64_t sizes[3] = {1 << 20, 25 << 20, 10 << 20};
  int64_t t = 0;
  /* iteration 0: compute then one bucket with everything */
  tb_kernel(&b, "fwd_bwd", t, t + 1000, 0, 1);
  int64_t k = tb_kernel(&b, NCCL_AR, t + 1000, t + 1400, 0, 2);
  tb_collective(&b, "AllReduce", 36 << 20, 8, t + 1000, k);
  t += 2000;
  for (int step = 0; step < 4; step++) {
    tb_kernel(&b, "forward", t, t + 300, 0, 1);
    for (int i = 0; i < 3; i++) {
      int64_t s = t + 300 + 200 * i;
      tb_kernel(&b, "backward", s, s + 200, 0, 1);
      int64_t c = tb_kernel(&b, NCCL_AR, s + 200, s + 350, 0, 2);
      tb_collective(&b, "AllReduce", sizes[i], 8, s + 200, c);
    }
    t += 2000;
  }
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK(r[0].step_detection == OVL_STEPS_PERIODIC);
  CHECK_I64(r[0].period, 3);
  CHECK_I64(r[0].nsteps, 5);
  CHECK_I64(r[0].steps[0].ncolls, 1);
  for (size_t s = 1; s < r[0].nsteps; s++) {
    CHECK_I64(r[0].steps[s].ncolls, 3);
    CHECK_I64(r[0].steps[s].colls[0].bytes, sizes[0]);
    /* each step holds its forward, backward and collectives: 150 ns exposed at the end */
    CHECK_I64(r[0].steps[s].totals.exposed, 150);
    CHECK_I64(r[0].steps[s].totals.compute, 900);
  }
  CHECK_I64(r[0].steps[0].totals.exposed, 400);
  release(r, n);
  remove(path);
}

/* --comm-pattern adds communication kernels by name; --step-pattern adds step ranges. */
static void user_patterns(void) {
  const char *path = tb_temp_path("patterns.sqlite");
  tb b;
  tb_open(&b, path);
  tb_nvtx(&b, "myapp", "iteration 1", 0, 1000);
  tb_nvtx(&b, "myapp", "iteration 2", 1000, 2000);
  tb_kernel(&b, "gemm", 100, 400, 0, 1);
  tb_kernel(&b, "gloo_allreduce_ring", 300, 600, 0, 2);
  tb_kernel(&b, "gemm", 1100, 1400, 0, 1);
  tb_kernel(&b, "gloo_allreduce_ring", 1350, 1500, 0, 2);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(r[0].totals.comm, 0);
  CHECK(r[0].step_detection == OVL_STEPS_WHOLE);
  release(r, n);
  r = analyse_with(path, "^gloo_", "^iteration [0-9]+$", &n);
  CHECK_I64(r[0].totals.comm, 450);
  CHECK_I64(r[0].totals.exposed, 200 + 100);
  CHECK(r[0].step_detection == OVL_STEPS_NVTX);
  CHECK_I64(r[0].nsteps, 2);
  if (r[0].nsteps == 2) {
    CHECK_I64(r[0].steps[0].totals.exposed, 200);
    CHECK_I64(r[0].steps[1].totals.exposed, 100);
    CHECK_I64(r[0].steps[1].ncolls, 1);
  }
  release(r, n);
  remove(path);
}

/* One rule says which kernel names are communication: the importers (which kernels execute
** NCCL calls) and the analyzer's classifier agree on every name, emulated collectives included. */
static void one_name_rule(void) {
  const char *const names[] = {NCCL_AR, NCCL_AG, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                                       "ncclSymkDevKernel_AllGather", "_Z20NCCLKernelMangledv", "ovl_emulated_allreduce",
                                       "void gemm_kernel<float>(float*)", "ovl_sgd", "nccl", "ncc_l", ""};
  ovl_classifier c;
  ovl_err err = {0};
  CHECK(ovl_classifier_init(&c, NULL, &err) == OVL_OK);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CHECK_I64(ovl_is_comm_kernel_name(names[i]), ovl_classify_kernel_name(&c, names[i]) == OVL_CLASS_COMM);
  CHECK(ovl_is_comm_kernel_name("ovl_emulated_allreduce"));
  CHECK(!ovl_is_comm_kernel_name("ovl_sgd"));
  ovl_classifier_free(&c);
}

/* Kernels named like collectives: one rule for whether a name looks like one and where the word
** starts (the --comm-pattern suggestion is cut around it), case, '_' and '-' ignored. */
static void lookalike_words(void) {
  static const struct { const char *name; long at; } cases[] = {
    {"void acme::fused_allreduce_kernel<float>(float*, int)", 17},
    {"My-All_Gather-Op", 3},
    {"block_Reduce_Scatter_v2", 6},
    {"moe_all2all", 4},
    {"x_SENDRECV", 2},
    {"all_to_all_dispatch", 0},
    {"gemm_allreduc", -1},
    {"reduce_kernel", -1},
    {"", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *at = ovl_comm_lookalike_word(cases[i].name);
    CHECK_I64(at ? (long)(at - cases[i].name) : -1, cases[i].at);
    CHECK_I64(ovl_comm_lookalike_name(cases[i].name), cases[i].at >= 0);
  }
  CHECK(ovl_comm_lookalike_word(NCCL_AR) != NULL);  /* it is named like one... */
  CHECK(!ovl_comm_lookalike_name(NCCL_AR));         /* ...but recognised: no look-alike */
  CHECK(!ovl_comm_lookalike_name(NULL));
}

/* A collective keeps its bucket in 32 bits: `bucket <k>` and `grad_ready bucket=<k>` with k
** above INT32_MAX name no bucket (nvtx_conventions.c); INT32_MAX itself is kept. */
static void bucket_beyond_32_bits(void) {
  const char *path = tb_temp_path("bucket-wide.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t n0 = tb_kernel(&b, NCCL_AR, 100, 200, 0, 3);
  int64_t n1 = tb_kernel(&b, NCCL_AR, 300, 400, 0, 3);
  tb_collective(&b, "AllReduce", 1500, 2, 20, n0);
  tb_collective(&b, "AllReduce", 1500, 2, 220, n1);
  tb_nvtx(&b, "ovl", "grad_ready bucket=2147483647 bytes=1500", 15, OVL_NONE);
  tb_nvtx(&b, "ovl", "bucket 2147483647", 19, 25);
  tb_nvtx(&b, "ovl", "grad_ready bucket=2147483648 bytes=1500", 215, OVL_NONE);
  tb_nvtx(&b, "ovl", "bucket 2147483648", 219, 225);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(r[0].nmarks, 1);
  const ovl_coll_result *c[2] = {NULL, NULL};
  size_t k = 0;
  for (size_t s = 0; s < r[0].nsteps; s++)
    for (size_t i = 0; i < r[0].steps[s].ncolls && k < 2; i++) c[k++] = &r[0].steps[s].colls[i];
  CHECK(k == 2);
  if (k == 2) {
    CHECK_I64(c[0]->bucket, INT32_MAX);
    CHECK_I64(ovl_coll_ready(c[0]), 15);
    CHECK_I64(c[1]->bucket, -1);
    CHECK_I64(ovl_coll_ready(c[1]), OVL_NONE);
  }
  release(r, n);
  remove(path);
}

/* A collective keeps in 32 bits what lies near its GPU start (ovl_coll_result's narrow fields);
** one whose times or numbers do not fit is wide and keeps them exactly: a 5 s collective
** readied 10 s before it starts, with compute 11 s before and 8 s after its start (times on an
** epoch-like clock), and one with a sequence number and stream beyond int32. A collective of
** the same trace that fits stays narrow; an id beyond int32 does not make it wide. Each keeps
** its values through the MPI packing. */
static void times_beyond_32_bits(void) {
  const int64_t T = 1700000000000000000, S = 1000000000, US = 1000;
  const char *path = tb_temp_path("times-wide.sqlite");
  tb b;
  tb_open(&b, path);
  tb_kernel(&b, "gemm", T, T + 1 * S, 0, 1);
  int64_t k0 = tb_kernel(&b, NCCL_AR, T + 12 * S, T + 17 * S, 0, 3);
  tb_kernel(&b, "gemm", T + 20 * S, T + 20 * S + 10 * US, 0, 1);
  tb_collective(&b, "AllReduce", 1500, 2, T + 11 * S + S / 2, k0);
  tb_nvtx(&b, "ovl", "grad_ready bucket=0 bytes=1500", T + 2 * S, OVL_NONE);
  tb_nvtx(&b, "ovl", "bucket 0", T + 11 * S, T + 12 * S);
  /* narrow: everything within microseconds of its start */
  tb_kernel(&b, "gemm", T + 30 * S - 1000 * US, T + 30 * S - 500 * US, 0, 1);
  int64_t k1 = tb_kernel(&b, NCCL_AR, T + 30 * S, T + 30 * S + 100 * US, 0, 3);
  tb_kernel(&b, "gemm", T + 30 * S + 200 * US, T + 30 * S + 300 * US, 0, 1);
  tb_collective(&b, "AllReduce", 1500, 2, T + 30 * S - 20 * US, k1);
  tb_nvtx(&b, "ovl", "grad_ready bucket=1 bytes=1500", T + 30 * S - 50 * US, OVL_NONE);
  tb_nvtx(&b, "ovl", "bucket 1", T + 30 * S - 25 * US, T + 30 * S - 15 * US);
  /* a sequence number and a stream beyond int32 */
  const int64_t seq = 6000000000, stream = 5000000000;
  int64_t k2 = tb_kernel(&b, NCCL_AR, T + 40 * S, T + 40 * S + 100 * US, 0, stream);
  tb_collective_in(&b, 9, 0, 2, seq, "AllReduce", 1500, T + 40 * S - 20 * US, k2);
  tb_close(&b);
  size_t n;
  ovl_rank_result *r = analyse(path, &n);
  CHECK_I64(n, 1);
  CHECK_I64(r[0].nsteps, 1);
  CHECK_I64(r[0].steps[0].ncolls, 3);
  CHECK_I64(r[0].nmarks, 2);
  if (n != 1 || r[0].nsteps != 1 || r[0].steps[0].ncolls != 3 || r[0].nmarks != 2) {
    release(r, n);
    return;
  }
  ovl_coll_result *c = r[0].steps[0].colls;
  CHECK(c[0].wide && !c[1].wide && c[2].wide);
  CHECK_I64(c[0].gpu_start, T + 12 * S);
  CHECK_I64(ovl_coll_gpu_end(&c[0]), T + 17 * S);
  CHECK_I64(ovl_coll_host_launch(&c[0]), T + 11 * S + S / 2);
  CHECK_I64(ovl_coll_ready(&c[0]), T + 2 * S);
  CHECK_I64(ovl_coll_ready_gpu(&c[0]), r[0].marks[0].gpu_t);
  CHECK_I64(ovl_coll_stall(&c[0]), 9 * S + S / 2);
  CHECK_I64(ovl_coll_queueing(&c[0]), S / 2);
  CHECK_I64(ovl_coll_exposed(&c[0]), 5 * S);
  CHECK_I64(ovl_coll_compute_before(&c[0]), T + 1 * S);
  CHECK_I64(ovl_coll_compute_after(&c[0]), T + 20 * S);
  CHECK_I64(ovl_coll_stream(&c[0]), 3);
  CHECK_I64(c[1].gpu_start, T + 30 * S);
  CHECK_I64(ovl_coll_gpu_end(&c[1]), T + 30 * S + 100 * US);
  CHECK_I64(ovl_coll_host_launch(&c[1]), T + 30 * S - 20 * US);
  CHECK_I64(ovl_coll_ready(&c[1]), T + 30 * S - 50 * US);
  CHECK_I64(ovl_coll_ready_gpu(&c[1]), r[0].marks[1].gpu_t);
  CHECK_I64(ovl_coll_exposed(&c[1]), 100 * US);
  CHECK_I64(ovl_coll_compute_before(&c[1]), T + 30 * S - 500 * US);
  CHECK_I64(ovl_coll_compute_after(&c[1]), T + 30 * S + 200 * US);
  CHECK_I64(ovl_coll_seq(&c[2]), seq);
  CHECK_I64(ovl_coll_stream(&c[2]), stream);
  CHECK_I64(ovl_coll_gpu_end(&c[2]), T + 40 * S + 100 * US);
  CHECK_I64(ovl_coll_host_launch(&c[2]), T + 40 * S - 20 * US);
  CHECK_I64(ovl_coll_ready(&c[2]), OVL_NONE);
  CHECK_I64(ovl_coll_compute_before(&c[2]), T + 30 * S + 300 * US);
  CHECK_I64(ovl_coll_compute_after(&c[2]), OVL_NONE);
  /* an id beyond int32 (the tracer tags the plugin's calls in the top bits) is kept in the
  ** extra, without making the collective wide */
  const int64_t tagged = (int64_t)5 << 60 | (int64_t)1 << 20;
  CHECK_I64(ovl_coll_set_id(&c[1], tagged), 0);
  CHECK_I64(ovl_coll_set_id(&c[2], tagged + 1), 0);
  CHECK(!c[1].wide && c[1].extra);
  CHECK_I64(ovl_coll_id(&c[1]), tagged);
  CHECK_I64(ovl_coll_id(&c[2]), tagged + 1);
  CHECK_I64(ovl_coll_seq(&c[2]), seq);
  /* the MPI packing carries them exactly, wide or not */
  ovl_bytes one = {0};
  ovl_rank_pack(&r[0], &one);
  ovl_bytes_reader in = {one.data, one.data + one.len, 0};
  ovl_rank_result copy;
  ovl_err err = {0};
  CHECK_I64(ovl_rank_unpack(&in, &copy, &err), OVL_OK);
  CHECK_I64(copy.nsteps, 1);
  for (size_t i = 0; copy.nsteps == 1 && i < 3 && i < copy.steps[0].ncolls; i++) {
    const ovl_coll_result *a = &c[i], *z = &copy.steps[0].colls[i];
    CHECK(a->wide == z->wide && a->gpu_start == z->gpu_start);
    CHECK_I64(ovl_coll_id(z), ovl_coll_id(a));
    CHECK_I64(ovl_coll_seq(z), ovl_coll_seq(a));
    CHECK_I64(ovl_coll_stream(z), ovl_coll_stream(a));
    CHECK_I64(ovl_coll_host_launch(z), ovl_coll_host_launch(a));
    CHECK_I64(ovl_coll_gpu_end(z), ovl_coll_gpu_end(a));
    CHECK_I64(ovl_coll_exposed(z), ovl_coll_exposed(a));
    CHECK_I64(ovl_coll_ready(z), ovl_coll_ready(a));
    CHECK_I64(ovl_coll_ready_gpu(z), ovl_coll_ready_gpu(a));
    CHECK_I64(ovl_coll_compute_before(z), ovl_coll_compute_before(a));
    CHECK_I64(ovl_coll_compute_after(z), ovl_coll_compute_after(a));
  }
  ovl_rank_result_free(&copy);
  ovl_bytes_free(&one);
  /* a wide collective's extra facts are replaced, its wide values kept */
  ovl_coll_extra x = ovl_coll_extra_none;
  x.d2h_bytes = 4;
  CHECK_I64(ovl_coll_extra_set(&c[0], &x), 0);
  CHECK_I64(ovl_coll_extra_of(&c[0])->d2h_bytes, 4);
  CHECK_I64(ovl_coll_ready(&c[0]), T + 2 * S);
  CHECK_I64(ovl_coll_extra_set(&c[0], &ovl_coll_extra_none), 0);
  CHECK(ovl_coll_extra_is_none(ovl_coll_extra_of(&c[0])));
  CHECK_I64(ovl_coll_gpu_end(&c[0]), T + 17 * S);
  /* and an id in the extra stays when the extra's facts are replaced, or set back */
  CHECK_I64(ovl_coll_extra_set(&c[1], &x), 0);
  CHECK_I64(ovl_coll_id(&c[1]), tagged);
  CHECK_I64(ovl_coll_extra_of(&c[1])->d2h_bytes, 4);
  CHECK_I64(ovl_coll_set_id(&c[1], 7), 0);
  CHECK_I64(ovl_coll_id(&c[1]), 7);
  CHECK_I64(ovl_coll_extra_set(&c[1], &ovl_coll_extra_none), 0);
  CHECK(!c[1].extra && ovl_coll_id(&c[1]) == 7);
  release(r, n);
  remove(path);
}

int main(void) {
  one_name_rule();
  lookalike_words();
  user_patterns();
  several_streams();
  overlapping_comm();
  memops_during_comm();
  zero_length();
  linked_only();
  two_nvtx_steps(1);
  two_nvtx_steps(0);
  bucket_beyond_32_bits();
  times_beyond_32_bits();
  two_devices();
  far_devices();
  periodic_steps();
  return check_summary();
}
