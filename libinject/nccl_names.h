/*
** The NCCL calls the capture hooks, in the shared vocabulary of common/base/nccl_ops.h
** (one enum, one table of names, data types and operators for the capture library and the
** analyzer): these are the capture's names for its values.
*/
#ifndef OVL_INJECT_NCCL_NAMES_H
#define OVL_INJECT_NCCL_NAMES_H

#include "base/nccl_ops.h"

typedef ovl_op ovl_nccl_call;
#define OVL_NCCL_ALLREDUCE OVL_OP_ALLREDUCE
#define OVL_NCCL_REDUCESCATTER OVL_OP_REDUCESCATTER
#define OVL_NCCL_ALLGATHER OVL_OP_ALLGATHER
#define OVL_NCCL_BROADCAST OVL_OP_BROADCAST  /* ncclBroadcast and ncclBcast */
#define OVL_NCCL_REDUCE OVL_OP_REDUCE
#define OVL_NCCL_ALLTOALL OVL_OP_ALLTOALL
#define OVL_NCCL_GATHER OVL_OP_GATHER
#define OVL_NCCL_SCATTER OVL_OP_SCATTER
#define OVL_NCCL_SEND OVL_OP_SEND
#define OVL_NCCL_RECV OVL_OP_RECV

/* The collectives.op name of a call ("AllReduce", ...); NULL for a value that is no call. */
static inline const char *ovl_nccl_call_name(int call) {
  return call > OVL_OP_UNKNOWN && call < OVL_OP_COUNT ? ovl_op_name((ovl_op)call) : 0;
}
/* The per-rank send size of a call: ovl_op_send_bytes. */
static inline int64_t ovl_nccl_send_bytes(int call, int64_t count, int dtype, int64_t nranks) {
  return ovl_op_send_bytes((ovl_op)call, count, dtype, nranks);
}

#endif
