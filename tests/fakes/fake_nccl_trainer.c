/*
** A stand-in trainer (TEST DOUBLE) for the NCCL profiler plugin tests: threads, each on its own
** "device" with two communicators, calling NCCL (tests/fakes/fake_nccl_core.c) as a training
** step would: an all-reduce per step, and every third step a group (all-gather, reduce-scatter
** on the second communicator, a send and a receive) and a broadcast. Built linked to the fake
** core statically (no dynamic NCCL symbol: the NCCL hooks see nothing) and against it as a
** shared library.
**
**   fake_nccl_trainer THREADS STEPS [ROUNDS]
** ROUNDS (default 1) times, all threads create their communicators, run STEPS steps and destroy
** them, the next round starting once every thread is done (so NCCL closes its profiler plugin
** between rounds and loads it again). Prints "calls <n> collectives <n> p2p <n>" (calls that
** returned ncclSuccess, all rounds) and exits 0 when every call succeeded.
*/
#include <nccl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

void fake_cuda_set_device(int device);

static int nthreads, nsteps, nrounds = 1;
static atomic_long calls, colls, p2ps, failures;
static pthread_barrier_t round_done;

static void count(ncclResult_t rc, int is_p2p) {
  if (rc != ncclSuccess) {
    atomic_fetch_add(&failures, 1);
    return;
  }
  atomic_fetch_add(&calls, 1);
  atomic_fetch_add(is_p2p ? &p2ps : &colls, 1);
}

static void run_round(int t) {
  ncclUniqueId ida, idb;
  ncclGetUniqueId(&ida);
  ncclGetUniqueId(&idb);
  ncclComm_t a, b;
  if (ncclCommInitRank(&a, nthreads, ida, t) != ncclSuccess || ncclCommInitRank(&b, nthreads + 8, idb, t) != ncclSuccess) {
    atomic_fetch_add(&failures, 1);
    return;
  }
  cudaStream_t stream = (cudaStream_t)(long)(0x1000 + t);
  static float buf[1 << 16];
  for (int i = 0; i < nsteps; i++) {
    count(ncclAllReduce(buf, buf, 1024 * (size_t)(1 + i % 8), ncclFloat32, ncclSum, a, stream), 0);
    if (i % 3 != 2) continue;
    ncclGroupStart();
    count(ncclAllGather(buf, buf, 256, ncclFloat32, a, stream), 0);
    count(ncclReduceScatter(buf, buf, 128, ncclBfloat16, ncclSum, b, stream), 0);
    count(ncclSend(buf, 64, ncclFloat32, (t + 1) % nthreads, a, stream), 1);
    count(ncclRecv(buf, 64, ncclFloat32, (t + nthreads - 1) % nthreads, a, stream), 1);
    if (ncclGroupEnd() != ncclSuccess) atomic_fetch_add(&failures, 1);
    count(ncclBroadcast(buf, buf, 512, ncclFloat32, 0, b, stream), 0);
  }
  ncclCommDestroy(a);
  ncclCommDestroy(b);
}

static void *rank_main(void *arg) {
  int t = (int)(long)arg;
  fake_cuda_set_device(t);
  for (int r = 0; r < nrounds; r++) {
    run_round(t);
    pthread_barrier_wait(&round_done);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if ((argc != 3 && argc != 4) || (nthreads = atoi(argv[1])) < 1 || nthreads > 64 || (nsteps = atoi(argv[2])) < 1 ||
      (argc == 4 && (nrounds = atoi(argv[3])) < 1)) {
    fprintf(stderr, "usage: fake_nccl_trainer THREADS(1-64) STEPS [ROUNDS]\n");
    return 2;
  }
  pthread_barrier_init(&round_done, NULL, (unsigned)nthreads);
  pthread_t th[64];
  for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, rank_main, (void *)(long)t);
  for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  printf("calls %ld collectives %ld p2p %ld\n", atomic_load(&calls), atomic_load(&colls), atomic_load(&p2ps));
  return atomic_load(&failures) ? 1 : 0;
}
