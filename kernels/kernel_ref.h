/*
** CPU references of every GPU kernel of the reference workloads (the .cu files here) and of the
** cuBLAS products they use (kernels/linear.h). Each function computes exactly what its GPU
** counterpart computes, in float32 with double accumulation, so the GPU tests
** (tests/gpu/) can compare the two. Plain C: builds and is tested without CUDA.
**
** Matrices are row-major. A layer with `in` inputs and `out` outputs has weights W[out][in]
** (as torch.nn.Linear), activations are [rows][features].
*/
#ifndef OVL_KERNEL_REF_H
#define OVL_KERNEL_REF_H

#include "segment.h"

#include <stdint.h>

/* z[r][c] += bias[c]; then z = max(z, 0) when relu is non-zero. */
void ovl_ref_bias_act(float *z, const float *bias, int rows, int cols, int relu);
/* dz[i] = a[i] > 0 ? dz[i] : 0, where a is the ReLU output of the forward pass. */
void ovl_ref_relu_backward(float *dz, const float *a, int64_t n);
/* db[c] = sum over r of dz[r][c]. */
void ovl_ref_bias_grad(const float *dz, int rows, int cols, float *db);
/* Softmax cross-entropy per row: row_loss[r] = logsumexp(logits[r]) - logits[r][label[r]],
** dlogits[r][c] = (softmax(logits[r])[c] - [c == label[r]]) * grad_scale. */
void ovl_ref_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float grad_scale,
                          float *dlogits, float *row_loss);
/* w[i] -= lr * g[i]. */
void ovl_ref_sgd(float *w, const float *g, int64_t n, float lr);
/* x[i] *= factor. */
void ovl_ref_scale(float *x, int64_t n, float factor);
/* bucket[s.bucket_offset + i] = flat[s.flat_offset + i] for each segment. */
void ovl_ref_pack(const float *flat, float *bucket, const ovl_segment *segs, int nsegs);
/* flat[s.flat_offset + i] = bucket[s.bucket_offset + i] for each segment. */
void ovl_ref_unpack(const float *bucket, float *flat, const ovl_segment *segs, int nsegs);

/* z[r][o] = sum_i a[r][i] * w[o][i]                 (forward product, before the bias) */
void ovl_ref_linear_forward(const float *a, const float *w, int rows, int in, int out, float *z);
/* dw[o][i] = sum_r dz[r][o] * a[r][i]               (weight gradient) */
void ovl_ref_linear_weight_grad(const float *dz, const float *a, int rows, int in, int out, float *dw);
/* da[r][i] = sum_o dz[r][o] * w[o][i]               (gradient of the layer input) */
void ovl_ref_linear_input_grad(const float *dz, const float *w, int rows, int in, int out, float *da);

/* How long the emulated all-reduce of `bytes` waits (ns): the ring all-reduce cost
** alpha + 2(n-1)/n * bytes / beta, for n emulated ranks (0 wait beyond alpha when n = 1). */
double ovl_emulated_allreduce_ns(double alpha_ns, double beta_bytes_per_s, int nranks, double bytes);
/* The same for a ring all-gather or reduce-scatter of a buffer of `bytes` (the gathered
** output, or the input to scatter): alpha + (n-1)/n * bytes / beta. */
double ovl_emulated_allgather_ns(double alpha_ns, double beta_bytes_per_s, int nranks, double bytes);

#endif
