/*
** NCCL's vocabulary, one for the capture library and the analyzer: collective operations
** (names as the trace stores them, contract §1: the NCCL call without "nccl"; recognition
** in kernel names), data types and reduction operators (names and sizes by NCCL's stable
** ncclDataType_t / ncclRedOp_t values, so that no nccl.h is needed), the per-rank send
** size of a call, and the bandwidth conventions of nccl-tests
** (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md).
*/
#ifndef OVL_NCCL_OPS_H
#define OVL_NCCL_OPS_H

#include "none.h"

#include <stdint.h>

typedef enum ovl_op {
  OVL_OP_UNKNOWN = 0,
  OVL_OP_ALLREDUCE,
  OVL_OP_REDUCESCATTER,
  OVL_OP_ALLGATHER,
  OVL_OP_BROADCAST,
  OVL_OP_REDUCE,
  OVL_OP_ALLTOALL,
  OVL_OP_SEND,
  OVL_OP_RECV,
  OVL_OP_SENDRECV,  /* kernels that NCCL shares between send and receive */
  OVL_OP_GATHER,
  OVL_OP_SCATTER,
  OVL_OP_COUNT
} ovl_op;

/* "AllReduce", ...; "Unknown" for OVL_OP_UNKNOWN. */
const char *ovl_op_name(ovl_op op);
/* Parses a collectives.op value (case-insensitive, optional "nccl" prefix). */
ovl_op ovl_op_from_name(const char *name);
/* Recognises the operation in a GPU kernel name such as ncclDevKernel_AllReduce_Sum_f32_RING_LL,
** ncclKernel_AllGather_RING_LL_Sum_int8_t or ovl_emulated_allreduce; OVL_OP_UNKNOWN if none. */
ovl_op ovl_op_from_kernel_name(const char *kernel);

/* "Float32", "Bfloat16", ... for an ncclDataType_t value; NULL for an unknown value. */
const char *ovl_nccl_dtype_name(int dtype);
/* Bytes per element of an ncclDataType_t value, or 0 for an unknown type. */
int ovl_nccl_dtype_size(int dtype);
/* "Sum", "Prod", "Max", "Min", "Avg" for an ncclRedOp_t value; "PreMulSum" for operators
** made with ncclRedOpCreatePreMulSum (values from ncclNumOps on); NULL for -1 (none). */
const char *ovl_nccl_redop_name(int redop);
/* The per-rank send size in bytes (the collectives.bytes column) of a call with NCCL's
** `count` argument, or OVL_NONE for an unknown type: ReduceScatter sends nranks x
** recvcount, every other call count elements. */
int64_t ovl_op_send_bytes(ovl_op op, int64_t count, int dtype, int64_t nranks);

/* nccl-tests bus-bandwidth factor for n ranks: AllReduce 2(n-1)/n; ReduceScatter, AllGather,
** AlltoAll (n-1)/n; everything else 1. */
double ovl_busbw_factor(ovl_op op, int64_t nranks);
/* The "size" nccl-tests divides by time for algbw, from the per-rank send size: AllGather and
** Gather move nranks x send size; every other op its send size. */
double ovl_algbw_bytes(ovl_op op, int64_t send_bytes, int64_t nranks);

#endif
