/*
** The CUDA kernels of the reference workloads, callable from C. Each launcher enqueues its
** kernel on `stream` and returns the launch status (cudaSuccess = 0). The math of every
** kernel is defined by its CPU reference in kernel_ref.h (same name without `_k`); the GPU
** tests compare the two.
**
** Kernel names seen in traces: ovl_bias_act, ovl_relu_backward, ovl_bias_grad,
** ovl_softmax_xent, ovl_sgd, ovl_scale, ovl_pack, ovl_unpack, and ovl_emulated_allreduce(_i32),
** ovl_emulated_allgather and ovl_emulated_reducescatter (the only ones ovl counts as
** communication, by their `ovl_emulated_` prefix).
*/
#ifndef OVL_KERNELS_H
#define OVL_KERNELS_H

#include "segment.h"

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int ovl_k_bias_act(float *z, const float *bias, int rows, int cols, int relu, cudaStream_t stream);
int ovl_k_relu_backward(float *dz, const float *a, int64_t n, cudaStream_t stream);
int ovl_k_bias_grad(const float *dz, int rows, int cols, float *db, cudaStream_t stream);
int ovl_k_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float grad_scale,
                       float *dlogits, float *row_loss, cudaStream_t stream);
int ovl_k_sgd(float *w, const float *g, int64_t n, float lr, cudaStream_t stream);
int ovl_k_scale(float *x, int64_t n, float factor, cudaStream_t stream);
/* segs points to device memory; max_count is the largest segs[i].count (sizes the grid). */
int ovl_k_pack(const float *flat, float *bucket, const ovl_segment *segs, int nsegs, int64_t max_count,
               cudaStream_t stream);
int ovl_k_unpack(const float *bucket, float *flat, const ovl_segment *segs, int nsegs, int64_t max_count,
                 cudaStream_t stream);

/* The emulated all-reduce: a few blocks (at most 32, as NCCL's channels occupy a few SMs)
** that read and rewrite `data` and spin on the GPU's %globaltimer until `wait_ns` have passed
** since each started, for every bucket size (emulated_shape.h: the blocks, and where the
** buffer is too large to touch in time, the share touched). The values are left unchanged.
** An emulation of a collective's duration, not a reduction. */
int ovl_k_emulated_allreduce(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream);
/* The same for an all-reduce of int32 (the used-parameter map of --find-unused): its kernel,
** ovl_emulated_allreduce_i32, names the element type as NCCL's kernels do. */
int ovl_k_emulated_allreduce_i32(int32_t *data, int64_t n, int64_t wait_ns, cudaStream_t stream);
/* The same emulation for --mode zero3's all-gathers and reduce-scatters (`data`: the gathered
** layer, or the layer's gradients before the scatter), named so that ovl reads their kind. */
int ovl_k_emulated_allgather(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream);
int ovl_k_emulated_reducescatter(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
