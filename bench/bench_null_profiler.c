/*
** A profiler plugin that does nothing (ncclProfiler_v5), for bench_nccl_profiler.sh: NCCL (the
** fake core) does the same work for it as for libovl (it asks for the same events: libovl's
** activation mask, written here by hand), so libovl's cost per event is the difference.
*/
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* Group, Coll, P2p, KernelCh, GroupApi, CollApi, P2pApi, KernelLaunch (NCCL's bits). */
#define MASK (1 | 2 | 4 | 64 | 256 | 512 | 1024 | 2048)

static int handle;

static int init(void **ctx, uint64_t id, int *mask, const char *name, int nnodes, int nranks, int rank, void *log) {
  (void)id, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
  *ctx = &handle;
  *mask = MASK;
  return 0;
}
static int start(void *ctx, void **h, void *descr) {
  (void)ctx, (void)descr;
  *h = &handle;
  return 0;
}
static int stop(void *h) {
  (void)h;
  return 0;
}
static int record(void *h, int state, void *args) {
  (void)h, (void)state, (void)args;
  return 0;
}
static int finalize(void *ctx) {
  (void)ctx;
  return 0;
}

EXPORT const struct {
  const char *name;
  void *init, *start, *stop, *record, *finalize;
} ncclProfiler_v5 = {"null", (void *)init, (void *)start, (void *)stop, (void *)record, (void *)finalize};
