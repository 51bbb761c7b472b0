/*
** A library that uses NCCL, linked against the real libnccl.so.2 (as libtorch_cuda.so is):
** fault_app dlopen's it at run time, as PyTorch loads its CUDA parts. On a machine without a
** GPU, NCCL's communicator creation fails; what it returns is printed.
*/
#include <nccl.h>
#include <stdio.h>
#include <string.h>

__attribute__((visibility("default"))) int real_nccl_user_run(void) {
  int version = 0;
  ncclResult_t v = ncclGetVersion(&version);
  printf("ncclGetVersion: %s\n", v == ncclSuccess && version > 0 ? "ok" : "failed");
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  ncclResult_t u = ncclGetUniqueId(&id);
  ncclComm_t comm = NULL;
  ncclResult_t r = u == ncclSuccess ? ncclCommInitRank(&comm, 1, id, 0) : u;
  printf("ncclCommInitRank: %s\n", r == ncclSuccess ? "success" : "failed");
  if (r == ncclSuccess) {
    ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, comm, NULL);
    ncclCommDestroy(comm);
  }
  return 0;
}
