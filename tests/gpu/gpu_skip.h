/*
** GPU tests skip, visibly, where no GPU can run them: they print "SKIP: <reason>" and exit
** with GPU_SKIP (ctest's SKIP_RETURN_CODE), never a pass.
*/
#ifndef OVL_TEST_GPU_SKIP_H
#define OVL_TEST_GPU_SKIP_H

#include <cuda_runtime_api.h>
#include <stdio.h>

#define GPU_SKIP 77

/* Returns 1 when a CUDA device can be used; otherwise prints the skip line and returns 0. */
static inline int gpu_usable(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    printf("SKIP: no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 0;
  }
  return 1;
}

#endif
