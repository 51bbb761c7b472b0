/*
** Stub NCCL: a TEST DOUBLE with the ABI of nccl.h (NCCL 2.28) for the capture tests, which
** must run without a GPU. Every call succeeds and does nothing; a communicator only
** remembers the rank, size and device it was created with, so that libovl's queries get
** answers. Like the real library, ncclBcast calls ncclBroadcast through the public entry
** point (libovl must record such nested calls once). A test that models the GPU side (the
** fake CUPTI, tests/fakes) sets a launch hook: ncclAllReduce calls it where NCCL would
** launch its kernel, while libovl's external correlation id is pushed.
*/
#include <nccl.h>

#include <stdlib.h>
#include <string.h>

#define STUB __attribute__((visibility("default")))

struct ncclComm {
  int rank, nranks, device;
};

static ncclResult_t new_comm(ncclComm_t *out, int rank, int nranks) {
  if (!out || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  struct ncclComm *c = malloc(sizeof *c);
  if (!c) return ncclSystemError;
  c->rank = rank;
  c->nranks = nranks;
  c->device = 0;
  *out = c;
  return ncclSuccess;
}

static ncclResult_t check(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }

static void (*launch_hook)(void);
STUB void stub_nccl_set_launch_hook(void (*fn)(void)) { launch_hook = fn; }

STUB ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

STUB const char *ncclGetErrorString(ncclResult_t result) { return result == ncclSuccess ? "no error" : "stub error"; }

STUB ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof *id);
  strcpy(id->internal, "stub-nccl-unique-id");
  return ncclSuccess;
}

STUB ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  (void)id;
  return new_comm(comm, rank, nranks);
}

STUB ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config) {
  (void)config;
  return ncclCommInitRank(comm, nranks, id, rank);
}

STUB ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  (void)devlist;
  for (int i = 0; i < ndev; i++) {
    ncclResult_t rc = new_comm(&comms[i], i, ndev);
    if (rc) return rc;
  }
  return ncclSuccess;
}

STUB ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config) {
  (void)config;
  if (check(comm)) return ncclInvalidArgument;
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = NULL;
    return ncclSuccess;
  }
  /* The stub's "split" keeps every rank: rank = key modulo the parent's size. */
  return new_comm(newcomm, key % comm->nranks, comm->nranks);
}

STUB ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  free(comm);
  return ncclSuccess;
}

STUB ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }
STUB ncclResult_t ncclCommFinalize(ncclComm_t comm) { return check(comm); }

STUB ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (check(comm)) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

STUB ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (check(comm)) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

STUB ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  if (check(comm)) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

STUB ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)op, (void)st;
  if (comm && launch_hook) launch_hook();
  return check(comm);
}

STUB ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                                    ncclComm_t comm, cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)op, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t comm, cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t comm,
                                cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)root, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclBcast(void *buff, size_t n, ncclDataType_t t, int root, ncclComm_t comm, cudaStream_t st) {
  return ncclBroadcast(buff, buff, n, t, root, comm, st);
}

STUB ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op, int root,
                             ncclComm_t comm, cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)op, (void)root, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclAlltoAll(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t comm, cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclGather(const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t comm,
                             cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)root, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclScatter(const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t comm,
                              cudaStream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)root, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st) {
  (void)s, (void)n, (void)t, (void)peer, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclRecv(void *r, size_t n, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st) {
  (void)r, (void)n, (void)t, (void)peer, (void)st;
  return check(comm);
}

STUB ncclResult_t ncclGroupStart(void) { return ncclSuccess; }
STUB ncclResult_t ncclGroupEnd(void) { return ncclSuccess; }
