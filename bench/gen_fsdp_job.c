/*
** Writes a synthetic FSDP-like job, one ovl trace per rank, for `ovl report --mpi`
** (bench/bench_mpi.sh). Every step: 32 layers forward, each an all-gather of its parameters,
** then 32 layers backward, each an all-gather and a reduce-scatter (96 collectives on one
** communicator, same ids and sequence numbers on every rank); 13 compute kernels before each
** collective and 100 optimizer kernels at the step's end (1,060 kernels a step); an NVTX
** `step` range per step. A collective ends for everyone a transfer time after its last rank
** arrived; ranks start each step together.
**
** Injected, for the analysis to find: rank STRAGGLER computes 10% slower (last at every
** collective), and rank SKEWED arrives 8 ms late at one collective (step 5, collective 40)
** because its host launched that call late. Each rank's clock is offset by up to +-50 ms
** (meta.realtime_offset_ns says so, to a few ms), arrivals jitter by up to 2 us.
**
** usage: ovl_bench_gen_fsdp_job OUTDIR WORLD_SIZE [FIRST COUNT]   (ranks FIRST.. FIRST+COUNT-1;
**        default all). Rank r is written to OUTDIR/rank%05d.sqlite; STEPS, STRAGGLER and SKEWED
**        are 10, 7 and 100 (each below any world size the bench uses).
*/
#include "store/trace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define STEPS 10
#define LAYERS 32
#define SLOTS (3 * LAYERS)         /* collectives per step */
#define CHUNK 9                    /* compute kernels before each collective */
#define OPTIMIZER 100              /* kernels after the last collective */
#define KERNEL_NS 40000
#define GAP_NS 500
#define TRANSFER_NS 160000         /* 16 MB at 100 GB/s */
#define STRAGGLER 7
#define SKEWED 100
#define SKEW_STEP 5
#define SKEW_SLOT 40
#define SKEW_NS 8000000

/* A number in [-amplitude, amplitude] fixed by its arguments (the same on every run). */
static int64_t hashed(uint64_t a, uint64_t b, uint64_t c, int64_t amplitude) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^ c * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 29;
  return (int64_t)(x % (uint64_t)(2 * amplitude + 1)) - amplitude;
}

static int64_t kernel_ns(int rank) { return rank == STRAGGLER ? KERNEL_NS * 11 / 10 : KERNEL_NS; }

/* Job time at which rank arrives at slot i of a step starting at t0. */
static int64_t arrival(int rank, int step, int slot, int64_t t0) {
  int64_t a = t0 + (int64_t)(slot + 1) * CHUNK * (kernel_ns(rank) + GAP_NS) + hashed((uint64_t)rank, (uint64_t)step, (uint64_t)slot, 2000);
  if (rank == SKEWED && step == SKEW_STEP && slot == SKEW_SLOT) a += SKEW_NS;
  return a;
}

/* The last arrival at slot i: the straggler, or the skewed rank at its collective. */
static int64_t last_arrival(int world, int step, int slot, int64_t t0) {
  int64_t last = arrival(STRAGGLER < world ? STRAGGLER : 0, step, slot, t0);
  if (SKEWED < world && arrival(SKEWED, step, slot, t0) > last) last = arrival(SKEWED, step, slot, t0);
  return last;
}

static const char *slot_op(int slot) {
  if (slot < LAYERS) return "AllGather";
  return (slot - LAYERS) % 2 == 0 ? "AllGather" : "ReduceScatter";
}

static int fail(const ovl_err *err) {
  fprintf(stderr, "ovl_bench_gen_fsdp_job: %s\n", err->msg);
  return 1;
}

static int write_rank(const char *dir, int rank, int world) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank%05d.sqlite", dir, rank);
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  if (ovl_tw_open(&w, path, &err)) return fail(&err);
  int64_t offset = hashed((uint64_t)rank, 99, 1, 50000000);  /* local = job time + offset */
  int64_t names[4];
  const char *texts[] = {"void fsdp_layer_kernel<bf16>(Params)", "ncclDevKernel_AllGather_RING_LL",
                         "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "void adam_kernel<float>(Params)"};
  int rc = ovl_tw_meta_int(w, "rank", rank, &err);
  if (!rc) rc = ovl_tw_meta_int(w, "world_size", world, &err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", "bench", &err);
  if (!rc) rc = ovl_tw_meta(w, "clock", "synthetic", &err);
  if (!rc)
    rc = ovl_tw_meta_int(w, "realtime_offset_ns", 1700000000000000000LL - offset + hashed((uint64_t)rank, 7, 7, 3000000),
                         &err);
  for (int i = 0; !rc && i < 4; i++) rc = ovl_tw_intern(w, texts[i], &names[i], &err);
  const ovl_kernel_row blank = {0, 0, 0, 0, 0, 0, {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
  int64_t t0 = 1000000000, corr = 1, seq = 0;  /* 1 s: offsets never make local times negative */
  for (int s = 0; !rc && s < STEPS; s++) {
    int64_t t = t0, kd = kernel_ns(rank), end = t0;
    for (int i = 0; !rc && i < SLOTS; i++) {
      for (int k = 0; !rc && k < CHUNK; k++) {  /* compute up to the collective */
        ovl_kernel_row row = blank;
        row.start = t + offset;
        row.end = t + kd + offset;
        row.stream = 7;
        row.correlation = corr++;
        row.name = names[0];
        rc = ovl_tw_kernel(w, &row, &err);
        t += kd + GAP_NS;
      }
      int64_t arrive = arrival(rank, s, i, t0);
      end = last_arrival(world, s, i, t0) + TRANSFER_NS;
      ovl_kernel_row row = blank;
      row.start = arrive + offset;
      row.end = end + offset;
      row.stream = 13;
      row.correlation = corr++;
      row.name = names[i >= LAYERS && (i - LAYERS) % 2 ? 2 : 1];
      int64_t host = arrive - 10000 + offset;
      ovl_collective_row c = {OVL_NONE, 1, rank, world, seq++, slot_op(i), 4 << 20, "Float32", 16 << 20,
                              i >= LAYERS && (i - LAYERS) % 2 ? "Sum" : NULL, -1, 0, 13, host, host + 2000, 1,
                              OVL_NONE};
      int64_t id;
      if (!rc) rc = ovl_tw_collective(w, &c, &id, &err);
      if (!rc) rc = ovl_tw_launch(w, id, row.correlation, &err);
      if (!rc) rc = ovl_tw_kernel(w, &row, &err);
    }
    if (end > t) t = end;  /* the optimizer waits for the last reduce-scatter */
    for (int k = 0; !rc && k < OPTIMIZER; k++) {
      ovl_kernel_row row = blank;
      row.start = t + offset;
      row.end = t + KERNEL_NS / 4 + offset;
      row.stream = 7;
      row.correlation = corr++;
      row.name = names[3];
      rc = ovl_tw_kernel(w, &row, &err);
      t += KERNEL_NS / 4 + GAP_NS;
    }
    /* every rank starts the next step together: after the slowest one's optimizer */
    int64_t slowest = t0 + (int64_t)SLOTS * CHUNK * (kernel_ns(STRAGGLER) + GAP_NS) + 2000 + TRANSFER_NS +
                      OPTIMIZER * (KERNEL_NS / 4 + GAP_NS);
    int64_t next = slowest + 100000;
    ovl_nvtx_row step = {t0 - 5000 + offset, next - 50000 + offset, 1, "ovl", "step"};
    if (!rc) rc = ovl_tw_nvtx(w, &step, &err);
    t0 = next;
  }
  int crc = ovl_tw_close(w, rc ? NULL : &err);
  return (rc || crc) ? fail(&err) : 0;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 5) {
    fprintf(stderr, "usage: %s OUTDIR WORLD_SIZE [FIRST COUNT]\n", argv[0]);
    return 1;
  }
  int world = atoi(argv[2]);
  int first = argc == 5 ? atoi(argv[3]) : 0, count = argc == 5 ? atoi(argv[4]) : world;
  if (world < 2 || first < 0 || count < 1 || first + count > world) {
    fprintf(stderr, "%s: bad sizes\n", argv[0]);
    return 1;
  }
  mkdir(argv[1], 0755);
  for (int r = first; r < first + count; r++) {
    if (write_rank(argv[1], r, world)) return 1;
    if ((r - first) % 64 == 63 || r + 1 == first + count) fprintf(stderr, "\rwritten %d/%d ranks", r - first + 1, count);
  }
  fputc('\n', stderr);
  return 0;
}
