/* Asking the CUDA driver whether a GPU is usable: see gpu_probe.h. */
#include "gpu_probe.h"

#include <dlfcn.h>
#include <stdio.h>

int gpu_present(char *why, size_t size) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda) {
    snprintf(why, size, "no CUDA driver (libcuda.so.1 cannot be loaded)");
    return 0;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(cuda, "cuInit");
  int (*count)(int *) = (int (*)(int *))dlsym(cuda, "cuDeviceGetCount");
  int n = 0;
  if (!init || !count || init(0) != 0 || count(&n) != 0 || n < 1) {
    snprintf(why, size, "the CUDA driver reports no usable GPU");
    return 0;
  }
  snprintf(why, size, "%d CUDA device%s", n, n == 1 ? "" : "s");
  return 1;
}
