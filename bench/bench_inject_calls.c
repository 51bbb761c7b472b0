/*
** Cost of one NCCL call, as seen by the program: N ncclAllReduce calls on one communicator
** of the stub NCCL (tests/stubs/stub_nccl.c, which returns at once), timed. Run it with and
** without LD_PRELOAD=libovl.so (bench_inject.sh does) and the difference is what libovl adds.
** With THREADS > 1, each thread has its own communicator and makes N calls.
** Prints the CPU time the calling threads spent per call (CLOCK_THREAD_CPUTIME_ID, summed over
** threads): what a call costs the program's own threads, unaffected by other processes
** competing for the cores; then the wall time per call of one thread.
** usage: ovl_bench_inject_calls [N [THREADS]]      prints "CPU_NS_PER_CALL WALL_NS_PER_CALL"
*/
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long calls = 1000000;

static double now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_seconds[64];

static void *run(void *arg) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  snprintf(id.internal, sizeof id.internal, "bench-%ld", (long)(size_t)arg);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) exit(1);
  double t0 = now(CLOCK_THREAD_CPUTIME_ID);
  for (long i = 0; i < calls; i++)
    if (ncclAllReduce(NULL, NULL, 1024, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess) exit(1);
  cpu_seconds[(size_t)arg] = now(CLOCK_THREAD_CPUTIME_ID) - t0;
  ncclCommDestroy(comm);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) calls = atol(argv[1]);
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (calls < 1 || threads < 1 || threads > 64) return 1;
  pthread_t tid[64];
  double t0 = now(CLOCK_MONOTONIC);
  for (int i = 0; i < threads; i++) pthread_create(&tid[i], NULL, run, (void *)(size_t)i);
  for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
  double wall = (now(CLOCK_MONOTONIC) - t0) * 1e9 / (double)calls;
  double cpu = 0;
  for (int i = 0; i < threads; i++) cpu += cpu_seconds[i];
  printf("%.1f %.1f\n", cpu * 1e9 / (double)(calls * threads), wall);
  return 0;
}
