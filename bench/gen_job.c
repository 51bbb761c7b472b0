/*
** Writes a synthetic data-parallel job: one ovl trace per rank, for the cross-rank
** benchmark (bench/bench_job.sh). Every rank runs the same steps: compute kernels, and
** every COMM_EVERY kernels an AllReduce on a shared communicator (same comm id and sequence
** numbers on every rank). Each rank's clock is offset by a random amount up to +-50 ms
** (meta.realtime_offset_ns says so, to a few ms); rank STRAGGLER computes 10% longer.
**
** usage: ovl_bench_gen_job OUTDIR NRANKS KERNELS_PER_RANK [STEPS [COMM_EVERY [STRAGGLER]]]
**        defaults: 100 steps, COMM_EVERY 50, STRAGGLER 1 (-1 for none)
*/
#include "store/trace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define KERNEL_NS 10000
#define GAP_NS 1000

static unsigned rng_state = 2024;
static int64_t rnd(int64_t amplitude) {  /* uniform in [-amplitude, amplitude] */
  rng_state = rng_state * 1664525u + 1013904223u;
  uint64_t x = ((uint64_t)rng_state << 16) ^ (rng_state >> 7);
  return (int64_t)(x % (uint64_t)(2 * amplitude + 1)) - amplitude;
}

static int fail(const ovl_err *err) {
  fprintf(stderr, "ovl_bench_gen_job: %s\n", err->msg);
  return 1;
}

static int write_rank(const char *dir, int rank, int nranks, long kernels, long steps, long comm_every, int straggler) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank%05d.sqlite", dir, rank);
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  if (ovl_tw_open(&w, path, &err)) return fail(&err);
  int64_t offset = rnd(50000000);                 /* local = job time + offset */
  int64_t compute_name, nccl_name, launch_name;
  int rc = ovl_tw_meta_int(w, "rank", rank, &err);
  if (!rc) rc = ovl_tw_meta_int(w, "world_size", nranks, &err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", "bench", &err);
  if (!rc) rc = ovl_tw_meta(w, "clock", "synthetic", &err);
  if (!rc) rc = ovl_tw_meta_int(w, "realtime_offset_ns", 1700000000000000000LL - offset + rnd(3000000), &err);
  if (!rc) rc = ovl_tw_intern(w, "void gemm_kernel<float>(Params)", &compute_name, &err);
  if (!rc) rc = ovl_tw_intern(w, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &nccl_name, &err);
  if (!rc) rc = ovl_tw_intern(w, "cudaLaunchKernel", &launch_name, &err);
  long per_step = kernels / steps;
  int64_t kernel_ns = rank == straggler ? KERNEL_NS * 11 / 10 : KERNEL_NS;
  int64_t slow_kernel_ns = KERNEL_NS * 11 / 10;  /* every rank waits for the straggler's pace */
  int64_t t = 1000000000, corr = 1, seq = 0;  /* 1 s: offsets never make local times negative */
  const ovl_kernel_row blank = {0, 0, 0, 0, 0, 0, {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
  for (long s = 0; !rc && s < steps; s++) {
    int64_t step_start = t;
    for (long i = 0; !rc && i < per_step; i++) {
      ovl_kernel_row k = blank;
      k.correlation = corr++;
      if (i % comm_every == comm_every - 1) {
        /* all ranks leave together: the collective ends when the slowest rank's work is done */
        int64_t arrive = t;
        int64_t last = step_start + (i + 1) * (slow_kernel_ns + GAP_NS);
        if (straggler < 0) last = arrive;
        k.start = arrive + offset;
        k.end = (last > arrive ? last : arrive) + 50000 + offset;
        k.stream = 13;
        k.name = nccl_name;
        /* the host runs ahead of the GPU at the normal pace: a slow GPU does not delay launches */
        int64_t host = step_start + i * (KERNEL_NS + GAP_NS) - 30000 + offset;
        ovl_collective_row c = {OVL_NONE, 1, rank, nranks, seq++, "AllReduce", 1 << 20, "Float32", 4 << 20, "Sum",
                                -1, 0, 13, host, host + 1000, 1, OVL_NONE};
        int64_t id;
        rc = ovl_tw_collective(w, &c, &id, &err);
        if (!rc) rc = ovl_tw_launch(w, id, k.correlation, &err);
        if (!rc) rc = ovl_tw_kernel(w, &k, &err);
      } else {
        k.start = t + offset;
        k.end = t + kernel_ns + offset;
        k.stream = 7;
        k.name = compute_name;
        t += kernel_ns + GAP_NS;
        rc = ovl_tw_kernel(w, &k, &err);
      }
    }
    /* the step ends when the slowest rank is done */
    int64_t slow_end = step_start + per_step * (slow_kernel_ns + GAP_NS) + 50000;
    t = (slow_end > t ? slow_end : t) + 20000;
  }
  int crc = ovl_tw_close(w, rc ? NULL : &err);
  return (rc || crc) ? fail(&err) : 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s OUTDIR NRANKS KERNELS_PER_RANK [STEPS [COMM_EVERY [STRAGGLER]]]\n", argv[0]);
    return 1;
  }
  int nranks = atoi(argv[2]);
  long kernels = atol(argv[3]);
  long steps = argc > 4 ? atol(argv[4]) : 100;
  long comm_every = argc > 5 ? atol(argv[5]) : 50;
  int straggler = argc > 6 ? atoi(argv[6]) : 1;
  if (nranks < 1 || kernels < 1 || steps < 1 || steps > kernels || comm_every < 2) {
    fprintf(stderr, "%s: bad sizes\n", argv[0]);
    return 1;
  }
  mkdir(argv[1], 0755);
  for (int r = 0; r < nranks; r++) {
    if (write_rank(argv[1], r, nranks, kernels, steps, comm_every, straggler)) return 1;
    if (r % 16 == 15 || r + 1 == nranks) fprintf(stderr, "\rwritten %d/%d ranks", r + 1, nranks);
  }
  fputc('\n', stderr);
  return 0;
}
