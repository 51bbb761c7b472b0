/*
** The GPU check's workload (tests/gpu/test_gpu_capture.c runs it under libovl.so): per step,
** inside an NVTX range "step" (domain "ovl"), a host-to-device copy, SGEMMs queued on a
** compute stream, and in their middle an ncclAllReduce with ncclAvg on float on a second
** stream, on a one-rank communicator. A one-rank Avg still launches a real kernel (an
** in-place Sum would launch nothing), and it runs while the SGEMMs run: most of the
** communication should be hidden. It knows nothing of ovl.
**
** `gpu_workload --self-sendrecv` adds, after each all-reduce, a grouped ncclSend and ncclRecv of
** the rank to itself (GPU_SENDRECV_COUNT floats) on the same stream: NCCL's one-rank path turns
** collectives into a copy or a small kernel before its profiler hears of them (enqueue.cc,
** taskAppend), but sends and receives still become tasks of a kernel plan, so on one GPU they
** are what NCCL's profiler plugin can report (the kit's plugin comparison uses them).
*/
#include "gpu_workload.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA(call)                                                                  \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "gpu_workload: %s: %s\n", #call, cudaGetErrorString(e_));     \
      return 1;                                                                     \
    }                                                                               \
  } while (0)
#define CHECKED(call, ok, what)                                                     \
  do {                                                                              \
    if ((call) != (ok)) {                                                           \
      fprintf(stderr, "gpu_workload: %s failed\n", what);                           \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int main(int argc, char **argv) {
  int self_sendrecv = argc > 1 && strcmp(argv[1], "--self-sendrecv") == 0;
  if (argc > 2 || (argc == 2 && !self_sendrecv)) {
    fprintf(stderr, "usage: gpu_workload [--self-sendrecv]\n");
    return 2;
  }
  CUDA(cudaSetDevice(0));
  cudaStream_t compute, comm_stream;
  CUDA(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CUDA(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
  size_t n = GPU_GEMM_N;
  float *a, *b, *c, *grad;
  CUDA(cudaMalloc((void **)&a, n * n * sizeof *a));
  CUDA(cudaMalloc((void **)&b, n * n * sizeof *b));
  CUDA(cudaMalloc((void **)&c, n * n * sizeof *c));
  CUDA(cudaMalloc((void **)&grad, GPU_ALLREDUCE_COUNT * sizeof *grad));
  float *received = NULL;
  if (self_sendrecv) CUDA(cudaMalloc((void **)&received, GPU_SENDRECV_COUNT * sizeof *received));
  CUDA(cudaMemset(a, 0, n * n * sizeof *a));
  CUDA(cudaMemset(b, 0, n * n * sizeof *b));
  char *host = malloc(GPU_COPY_BYTES);
  if (!host) return 1;
  for (size_t i = 0; i < GPU_COPY_BYTES; i++) host[i] = (char)i;

  cublasHandle_t blas;
  CHECKED(cublasCreate(&blas), CUBLAS_STATUS_SUCCESS, "cublasCreate");
  CHECKED(cublasSetStream(blas, compute), CUBLAS_STATUS_SUCCESS, "cublasSetStream");
  ncclUniqueId id;
  ncclComm_t comm;
  CHECKED(ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
  CHECKED(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess, "ncclCommInitRank");

  nvtxDomainHandle_t ovl = nvtxDomainCreateA("ovl");
  nvtxEventAttributes_t step;
  memset(&step, 0, sizeof step);
  step.version = NVTX_VERSION;
  step.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  step.messageType = NVTX_MESSAGE_TYPE_ASCII;
  step.message.ascii = "step";
  const float one = 1.0f, zero = 0.0f;
  for (int s = 0; s < GPU_STEPS; s++) {
    nvtxDomainRangePushEx(ovl, &step);
    CUDA(cudaMemcpyAsync(grad, host, GPU_COPY_BYTES, cudaMemcpyHostToDevice, compute));
    for (int g = 0; g < GPU_GEMMS_PER_STEP; g++) {
      CHECKED(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, a, (int)n, b, (int)n, &zero,
                          c, (int)n),
              CUBLAS_STATUS_SUCCESS, "cublasSgemm");
      if (g == 1) {  /* the all-reduce, on its own stream, while the GEMMs queue up */
        CUDA(cudaStreamSynchronize(comm_stream));
        CHECKED(ncclAllReduce(grad, grad, GPU_ALLREDUCE_COUNT, ncclFloat, ncclAvg, comm, comm_stream), ncclSuccess,
                "ncclAllReduce");
        if (self_sendrecv) {
          CHECKED(ncclGroupStart(), ncclSuccess, "ncclGroupStart");
          CHECKED(ncclSend(grad, GPU_SENDRECV_COUNT, ncclFloat, 0, comm, comm_stream), ncclSuccess, "ncclSend");
          CHECKED(ncclRecv(received, GPU_SENDRECV_COUNT, ncclFloat, 0, comm, comm_stream), ncclSuccess, "ncclRecv");
          CHECKED(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd");
        }
      }
    }
    CUDA(cudaStreamSynchronize(compute));
    CUDA(cudaStreamSynchronize(comm_stream));
    nvtxDomainRangePop(ovl);
  }
  CHECKED(ncclCommDestroy(comm), ncclSuccess, "ncclCommDestroy");
  cublasDestroy(blas);
  CUDA(cudaFree(a));
  CUDA(cudaFree(b));
  CUDA(cudaFree(c));
  CUDA(cudaFree(grad));
  if (received) CUDA(cudaFree(received));
  free(host);
  printf("gpu_workload: %d steps done%s\n", GPU_STEPS, self_sendrecv ? " (with a send and receive to itself each)" : "");
  return 0;
}
