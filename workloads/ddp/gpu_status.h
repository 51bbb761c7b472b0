/*
** CUDA, cuBLAS and NCCL failures as ovl_err statuses (OVL_EINTERNAL), so the trainer's
** functions return one status and main() prints one line. Each macro assumes a variable
** `ovl_err *err` in scope and returns from the enclosing function.
*/
#ifndef OVL_DDP_GPU_STATUS_H
#define OVL_DDP_GPU_STATUS_H

#include "base/status.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#define CUDA_TRY(call)                                                                              \
  do {                                                                                              \
    cudaError_t cuda_e_ = (cudaError_t)(call);                                                      \
    if (cuda_e_ != cudaSuccess)                                                                     \
      return ovl_fail(err, OVL_EINTERNAL, "%s:%d: %s: %s", __FILE__, __LINE__, #call,              \
                      cudaGetErrorString(cuda_e_));                                                 \
  } while (0)

#define CUBLAS_TRY(call)                                                                            \
  do {                                                                                              \
    int cublas_s_ = (int)(call);                                                                    \
    if (cublas_s_ != CUBLAS_STATUS_SUCCESS)                                                         \
      return ovl_fail(err, OVL_EINTERNAL, "%s:%d: %s: cuBLAS status %d", __FILE__, __LINE__, #call, \
                      cublas_s_);                                                                   \
  } while (0)

#define NCCL_TRY(call)                                                                              \
  do {                                                                                              \
    ncclResult_t nccl_r_ = (call);                                                                  \
    if (nccl_r_ != ncclSuccess)                                                                     \
      return ovl_fail(err, OVL_EINTERNAL, "%s:%d: %s: %s", __FILE__, __LINE__, #call,              \
                      ncclGetErrorString(nccl_r_));                                                 \
  } while (0)

#endif
