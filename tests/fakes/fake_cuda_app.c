/*
** A "CUDA program" for the CUPTI tests without a GPU (TEST DOUBLE), run under libovl.so with
** the fake CUPTI (fake_libcupti.c, built as libcupti.so.13) and the stub NCCL:
**
**   fake_cuda_app driver [CUDART]
**       loads CUDART (a path: the fake libcudart.so.13 in a directory the loader does not
**       search) when given, starts "CUDA" by calling InitializeInjection as the driver does,
**       then runs STEPS steps: a compute kernel, and an ncclAllReduce that "launches" an NCCL
**       kernel (the stub NCCL's launch hook emits its records while libovl's external id is
**       pushed). Records reach libovl when it flushes CUPTI.
**   fake_cuda_app_kineto after | first
**       the build linked against the fake libcupti, playing torch.profiler's Kineto as well:
**       `after`: the steps above, then Kineto's profiler start (cuptiSubscribe, its own buffer
**       callbacks, enable), KERNELS kernels it receives itself, its stop (flush, disable,
**       cuptiFinalize), then the steps again; `first`: Kineto starts before CUDA does.
**
** It prints only what it sees itself (steps, the records its own callbacks received, its
** calls' results): the same with and without libovl, or libovl changed its behaviour.
*/
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 3
#define KERNELS 5

typedef void (*emit_kernel_fn)(uint64_t, uint64_t, uint32_t, uint32_t, const char *);
typedef void (*emit_launch_fn)(uint64_t, uint64_t, uint32_t);
static emit_kernel_fn emit_kernel;
static emit_launch_fn emit_launch;
static uint32_t next_correlation = 100;

void stub_nccl_set_launch_hook(void (*fn)(void));

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The fake CUPTI's emitters, once something loaded it (libovl, or this program's link). */
static void find_emitters(void) {
  void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return;
  emit_kernel = (emit_kernel_fn)dlsym(h, "fake_cupti_emit_kernel");
  emit_launch = (emit_launch_fn)dlsym(h, "fake_cupti_emit_launch");
}

static void gpu_kernel(uint32_t stream, const char *name) {
  uint32_t corr = next_correlation++;
  uint64_t t = now_ns();
  if (emit_launch) emit_launch(t, t + 500, corr);
  if (emit_kernel) emit_kernel(t + 1000, t + 21000, stream, corr, name);
}

/* NCCL "launches" its kernel inside the call. */
static void nccl_launch(void) { gpu_kernel(2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"); }

static int steps(ncclComm_t comm, float *buf) {
  for (int s = 0; s < STEPS; s++) {
    gpu_kernel(1, "gemm_kernel");
    if (ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, NULL) != ncclSuccess) return 1;
  }
  printf("%d steps\n", STEPS);
  return 0;
}

static void start_cuda(void) {
  int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
  if (init) init();  /* the driver calls it where CUDA_INJECTION64_PATH names libovl */
  find_emitters();
}

#ifdef FAKE_APP_LINKS_CUPTI
/* Kineto's side: its own buffers, counting the records handed to it. */
static int records_received;
static void CUPTIAPI kineto_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 1 << 16;
  *buffer = aligned_alloc(8, *size);
  *max_records = 0;
}
static void CUPTIAPI kineto_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  (void)ctx, (void)stream, (void)size;
  CUpti_Activity *r = NULL;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) records_received++;
  free(buffer);
}
static void CUPTIAPI kineto_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data) {
  (void)u, (void)d, (void)id, (void)data;
}

static void profiler_start(void) {
  CUpti_SubscriberHandle sub;
  printf("profiler: cuptiSubscribe %d\n", (int)cuptiSubscribe(&sub, kineto_callback, NULL));
  printf("profiler: cuptiActivityRegisterCallbacks %d\n",
         (int)cuptiActivityRegisterCallbacks(kineto_requested, kineto_completed));
  printf("profiler: cuptiActivityEnable %d\n", (int)cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

static void profiler_stop(void) {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  printf("profiler: %d records received\n", records_received);
  printf("profiler: cuptiActivityDisable %d\n", (int)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  printf("profiler: cuptiFinalize %d\n", (int)cuptiFinalize());
}

static void profiled_kernels(void) {
  find_emitters();
  for (int k = 0; k < KERNELS; k++) gpu_kernel(1, "profiled_kernel");
}
#endif

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "driver";
  if (strcmp(mode, "driver") == 0 && argc > 2 && !dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
    return 2;
  }
  ncclUniqueId id;
  ncclComm_t comm;
  float buf[4] = {0};
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) return 2;
  stub_nccl_set_launch_hook(nccl_launch);
  int rc = 0;
#ifdef FAKE_APP_LINKS_CUPTI
  if (strcmp(mode, "first") == 0) profiler_start();
  start_cuda();
  rc |= steps(comm, buf);
  if (strcmp(mode, "after") == 0) profiler_start();
  profiled_kernels();
  profiler_stop();
  rc |= steps(comm, buf);
#else
  start_cuda();
  rc |= steps(comm, buf);
#endif
  ncclCommDestroy(comm);
  return rc;
}
