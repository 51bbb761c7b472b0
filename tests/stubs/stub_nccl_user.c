/*
** A TEST DOUBLE for a library that uses NCCL (as libtorch_cuda.so does): linked against a
** stub NCCL (tests/stubs/stub_nccl.c) and loaded by tests/inject_probe.c with dlopen,
** RTLD_LOCAL, so that its NCCL sits in a local scope.
*/
#include <nccl.h>

#include <string.h>

/* Makes a communicator and `calls` AllReduce calls; returns how many NCCL calls failed. */
__attribute__((visibility("default"))) int stub_nccl_user_run(int calls) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  ncclComm_t comm = NULL;
  int failed = ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess;
  for (int i = 0; i < calls; i++) failed += ncclAllReduce(NULL, NULL, (size_t)i, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess;
  failed += ncclCommDestroy(comm) != ncclSuccess;
  return failed;
}
