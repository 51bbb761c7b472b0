/*
** Writes a large synthetic single-rank ovl trace for the analyzer benchmark
** (bench/bench_report.sh). Per step: compute kernels back to back on one stream and, every
** COMM_EVERY kernels, an NCCL all-reduce kernel on another stream with its collectives row
** and launch link; an api row for every launch; an NVTX `step` range per step. Rows are
** written in the order a capture library delivers them: a kernel when it ends, so long
** communication kernels land after the compute kernels that started later.
**
** usage: ovl_bench_gen_trace OUT.sqlite [KERNELS [STEPS [COMM_EVERY]]]
**        defaults: 10000000 kernels, 100 steps, an NCCL kernel every 50 kernels
*/
#include "store/trace_writer.h"

#include <stdio.h>
#include <stdlib.h>

#define KERNEL_NS 10000
#define GAP_NS 1000

static int fail(const ovl_err *err) {
  fprintf(stderr, "ovl_bench_gen_trace: %s\n", err->msg);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT.sqlite [KERNELS [STEPS [COMM_EVERY]]]\n", argv[0]);
    return 1;
  }
  long total = argc > 2 ? atol(argv[2]) : 10000000L;
  long steps = argc > 3 ? atol(argv[3]) : 100;
  long comm_every = argc > 4 ? atol(argv[4]) : 50;
  if (total < 1 || steps < 1 || steps > total || comm_every < 2) {
    fprintf(stderr, "%s: KERNELS, STEPS positive, STEPS <= KERNELS, COMM_EVERY >= 2\n", argv[0]);
    return 1;
  }
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  if (ovl_tw_open(&w, argv[1], &err)) return fail(&err);
  int64_t compute_name, nccl_name, launch_name;
  int rc = ovl_tw_meta(w, "rank", "0", &err);
  if (!rc) rc = ovl_tw_meta(w, "world_size", "8", &err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", "bench", &err);
  if (!rc) rc = ovl_tw_meta(w, "clock", "synthetic", &err);
  if (!rc) rc = ovl_tw_intern(w, "void gemm_kernel<float>(Params)", &compute_name, &err);
  if (!rc) rc = ovl_tw_intern(w, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &nccl_name, &err);
  if (!rc) rc = ovl_tw_intern(w, "cudaLaunchKernel", &launch_name, &err);
  long per_step = total / steps, written = 0;
  int64_t t = 1000000, corr = 1, seq = 0;
  const ovl_kernel_row blank = {0, 0, 0, 0, 0, 0, {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
  for (long s = 0; !rc && s < steps; s++) {
    long n = s + 1 == steps ? total - written : per_step;
    int64_t step_start = t;
    ovl_kernel_row pending = blank;  /* the running NCCL kernel, written when it has ended */
    int has_pending = 0;
    for (long i = 0; !rc && i < n; i++, written++) {
      ovl_kernel_row k = blank;
      ovl_api_row api = {t - 5000, t - 4000, 1, corr, launch_name};
      k.start = t;
      k.correlation = corr++;
      if (i % comm_every == comm_every - 1) {
        k.end = t + 20 * KERNEL_NS;
        k.stream = 13;
        k.name = nccl_name;
        ovl_collective_row c = {OVL_NONE, 1, 0, 8, seq++, "AllReduce", 1 << 20, "Float32", 4 << 20, "Sum", -1,
                                0, 13, api.start, api.end, 1, OVL_NONE};
        int64_t id;
        rc = ovl_tw_collective(w, &c, &id, &err);
        if (!rc) rc = ovl_tw_launch(w, id, k.correlation, &err);
        if (!rc && has_pending) rc = ovl_tw_kernel(w, &pending, &err);
        pending = k;
        has_pending = 1;
      } else {
        k.end = t + KERNEL_NS;
        k.stream = 7;
        k.name = compute_name;
        t = k.end + GAP_NS;
        if (!rc) rc = ovl_tw_kernel(w, &k, &err);
        if (!rc && has_pending && pending.end <= t) {
          rc = ovl_tw_kernel(w, &pending, &err);
          has_pending = 0;
        }
      }
      if (!rc) rc = ovl_tw_api(w, &api, &err);
    }
    if (!rc && has_pending) rc = ovl_tw_kernel(w, &pending, &err);
    if (has_pending && pending.end > t) t = pending.end;
    ovl_nvtx_row range = {step_start - 10000, t + 1000, 1, "ovl", "step"};
    if (!rc) rc = ovl_tw_nvtx(w, &range, &err);
    t += 50000;
    if (!rc && s % 10 == 9) fprintf(stderr, "\rwritten %ld/%ld kernels", written, total);
  }
  fputc('\n', stderr);
  int crc = ovl_tw_close(w, rc ? NULL : &err);
  return (rc || crc) ? fail(&err) : 0;
}
