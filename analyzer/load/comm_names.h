/*
** How foreign traces name communication and copies, translated into the ovl schema's
** vocabulary (schema/ovl.sql): PyTorch collective and dtype names, NCCL reduction names
** inside kernel names, CUPTI copy kinds, and stable communicator ids.
** Every returned string is static.
*/
#ifndef OVL_COMM_NAMES_H
#define OVL_COMM_NAMES_H

#include "base/nccl_ops.h"

#include <stddef.h>
#include <stdint.h>

/* collectives.op for a PyTorch `Collective name` ("allreduce", "_allgather_base",
** "all_to_all", "reduce_scatter_tensor_coalesced", ...) or an NCCL API name
** ("ncclAllReduce"); NULL when it names no NCCL operation (e.g. "barrier", "wait"). */
const char *ovl_comm_op_from_call(const char *name);

/* A PyTorch dtype name ("Float", "BFloat16", "Long", ...; also the C++ names of
** record_shapes' `Input type`: "float", "long int", "c10::Half", ...) as the NCCL type name
** without "nccl" (Float32, Bfloat16, Int64, ...) and its size in bytes; 0 when unknown. */
int ovl_comm_dtype(const char *pytorch_name, const char **nccl_name, int64_t *size);

/* The reduction named inside an NCCL kernel name (Sum, Prod, Max, Min, Avg, PreMulSum), or NULL. */
const char *ovl_comm_redop_from_kernel(const char *kernel_name);

/* memops.kind for a copy described as in Kineto's "Memcpy HtoD (Pinned -> Device)";
** CUDA arrays count as device memory. NULL when not recognised. */
const char *ovl_memcpy_kind_from_name(const char *name);
/* memops.kind for a CUPTI_ACTIVITY_MEMCPY_KIND value (Nsight exports). */
const char *ovl_memcpy_kind_from_cupti(int64_t kind);

/* 1 when a kernel's name marks it as communication (contract section 2): a family of
** communication kernels, the one list in comm_names.c (docs/report.md, "Communication
** kernels"): NCCL/RCCL ("nccl" anywhere, any case: ncclDevKernel_*, ncclKernel_*,
** ncclSymkDevKernel_*, mangled or not), MSCCL/MSCCL++, NVSHMEM, DeepEP's dispatch and combine,
** PyTorch SymmetricMemory's all-reduce and all-gather kernels, the custom all-reduces of vLLM,
** SGLang and TensorRT-LLM, and the reference workloads' emulated collectives
** ("ovl_emulated_"). The one rule: the importers (which kernels execute calls) and the
** analyzer's classifier (classify.h) both use it. */
int ovl_is_comm_kernel_name(const char *name);
/* The family a communication kernel belongs to ("NCCL", "DeepEP", ...), or NULL. */
const char *ovl_comm_kernel_family(const char *name);
/* The operation a communication kernel performs: its family's (DeepEP: AlltoAll), else the
** one its name says (base/nccl_ops.h), else OVL_OP_UNKNOWN. */
ovl_op ovl_comm_kernel_op(const char *name);
/* The element type a communication kernel's name states, as collectives.dtype names it
** (Float32, Int32, ...), or NULL: NCCL's device kernels carry it ("ncclDevKernel_AllReduce_
** Sum_i32_RING_LL", older "ncclKernel_AllReduce_RING_LL_Sum_int32_t"), and so do the reference
** workloads' emulated collectives of integers ("ovl_emulated_allreduce_i32"). */
const char *ovl_comm_kernel_dtype(const char *name);
/* 1 when a kernel that is not recognised as communication has a name that says it is one
** ("allreduce", "all_gather", "reduce_scatter", "alltoall", "all2all", "sendrecv", any case,
** '_' and '-' ignored): a custom collective that --comm-pattern could name. */
int ovl_comm_lookalike_name(const char *name);
/* Where in name the first word that names a collective begins (the words and rule above), or
** NULL: what a --comm-pattern suggestion is cut around. */
const char *ovl_comm_lookalike_word(const char *name);

/* A communicator id from a hash: non-negative, so it never collides with OVL_NONE. */
int64_t ovl_comm_id(uint64_t hash);

#endif
