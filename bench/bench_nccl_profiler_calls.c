/*
** Cost of NCCL calls under libovl's two NCCL paths: N ncclAllReduce calls on one communicator
** of the fake NCCL core (tests/fakes/fake_nccl_core.c, built as a shared library; run with
** FAKE_NCCL_FAST=1 its fake GPU takes 1 us a kernel, so its proxy thread reports at once).
** bench_nccl_profiler.sh runs it without libovl, with LD_PRELOAD=libovl.so (the NCCL hooks),
** with NCCL_PROFILER_PLUGIN=libovl.so (the plugin) and with both; the differences are what
** each path adds.
** Prints, per call: the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), the whole
** process's CPU time up to its exit (NCCL's proxy thread and libovl's writer thread included:
** measured after libovl's exit flush), the wall time of the calls, and the profiler plugin
** calls (startEvent, stopEvent, recordEventState) NCCL made per call on the calling thread
** and on its proxy thread.
** usage: ovl_bench_nccl_profiler_calls [N]
**   prints "THREAD_CPU_NS PROCESS_CPU_NS WALL_NS CALLER_EVENTS PROXY_EVENTS" (per call)
*/
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long fake_nccl_profiler_calls(int proxy);

static long calls = 100000;
static double thread_cpu, wall, caller_events, proxy_events;

static double now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Registered first, so it runs last: after libovl's exit handler has written everything. */
static void report(void) {
  double process = now(CLOCK_PROCESS_CPUTIME_ID);
  printf("%.1f %.1f %.1f %.2f %.2f\n", thread_cpu * 1e9 / (double)calls, process * 1e9 / (double)calls,
         wall * 1e9 / (double)calls, caller_events / (double)calls, proxy_events / (double)calls);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc > 1) calls = atol(argv[1]);
  if (calls < 1) return 1;
  atexit(report);
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, 8, id, 0) != ncclSuccess) return 1;
  static float buf[1024];
  double t0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
  for (long i = 0; i < calls; i++)
    if (ncclAllReduce(buf, buf, 1024, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess) return 1;
  thread_cpu = now(CLOCK_THREAD_CPUTIME_ID) - t0;
  wall = now(CLOCK_MONOTONIC) - w0;
  ncclCommDestroy(comm);  /* its proxy thread reports what is left first */
  caller_events = (double)fake_nccl_profiler_calls(0);
  proxy_events = (double)fake_nccl_profiler_calls(1);
  return 0;
}
