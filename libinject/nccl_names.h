/*
** NCCL calls, data types and reduction operators as the trace names them (contract §1:
** op is the NCCL name without "nccl"; dtype the type name without "nccl"). Plain integers
** here so that this file needs no nccl.h; the values of ncclDataType_t and ncclRedOp_t are
** NCCL's stable ABI.
*/
#ifndef OVL_INJECT_NCCL_NAMES_H
#define OVL_INJECT_NCCL_NAMES_H

#include <stdint.h>

typedef enum ovl_nccl_call {
  OVL_NCCL_ALLREDUCE,
  OVL_NCCL_REDUCESCATTER,
  OVL_NCCL_ALLGATHER,
  OVL_NCCL_BROADCAST,  /* ncclBroadcast and ncclBcast */
  OVL_NCCL_REDUCE,
  OVL_NCCL_ALLTOALL,
  OVL_NCCL_GATHER,
  OVL_NCCL_SCATTER,
  OVL_NCCL_SEND,
  OVL_NCCL_RECV,
  OVL_NCCL_NCALLS
} ovl_nccl_call;

/* "AllReduce", "ReduceScatter", ...; NULL for an unknown value. */
const char *ovl_nccl_call_name(int call);
/* "Float32", "Bfloat16", ...; NULL for an unknown value. */
const char *ovl_nccl_dtype_name(int dtype);
/* Bytes per element, or 0 for an unknown type. */
int ovl_nccl_dtype_size(int dtype);
/* "Sum", "Prod", "Max", "Min", "Avg"; "PreMulSum" for operators made with
** ncclRedOpCreatePreMulSum (values from ncclNumOps on); NULL for -1 (no operator). */
const char *ovl_nccl_redop_name(int redop);
/* The per-rank send size in bytes (the collectives.bytes column) of a call with NCCL's
** `count` argument, or OVL_NONE for an unknown type: ReduceScatter sends nranks x recvcount,
** every other call count elements. */
int64_t ovl_nccl_send_bytes(int call, int64_t count, int dtype, int64_t nranks);

#endif
