/* Element-wise and row-wise kernels of the MLP: see kernels.h (math in kernel_ref.h). */
#include "kernels.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

// Grid size for n elements with a grid-stride loop: enough blocks to fill the GPU, no more.
unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  return (unsigned)(blocks > 4096 ? 4096 : blocks);
}

}  // namespace

// Kernels are extern "C" so their names in traces are the plain names of kernels.h.
extern "C" __global__ void ovl_bias_act(float *z, const float *bias, int rows, int cols, int relu) {
  int64_t n = (int64_t)rows * cols;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = z[i] + bias[i % cols];
    z[i] = (relu && v < 0.0f) ? 0.0f : v;
  }
}

extern "C" __global__ void ovl_relu_backward(float *dz, const float *a, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    if (!(a[i] > 0.0f)) dz[i] = 0.0f;
}

// Column sums: a block covers 32 columns; its 8 thread rows stride over the matrix rows and
// the partial sums are combined in shared memory. Reads are coalesced along a row.
extern "C" __global__ void ovl_bias_grad(const float *dz, int rows, int cols, float *db) {
  __shared__ float partial[8][33];
  int c = blockIdx.x * 32 + threadIdx.x;
  float sum = 0.0f;
  if (c < cols)
    for (int r = threadIdx.y; r < rows; r += 8) sum += dz[(int64_t)r * cols + c];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    for (int k = 1; k < 8; k++) sum += partial[k][threadIdx.x];
    db[c] = sum;
  }
}

// One thread per row: the workloads have 10 classes, so a row is a handful of values.
extern "C" __global__ void ovl_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes,
                                            float grad_scale, float *dlogits, float *row_loss) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float *x = logits + (int64_t)r * classes;
  float *d = dlogits + (int64_t)r * classes;
  float max = x[0];
  for (int c = 1; c < classes; c++) max = fmaxf(max, x[c]);
  float sum = 0.0f;
  for (int c = 0; c < classes; c++) sum += expf(x[c] - max);
  float lse = max + logf(sum);
  int label = labels[r];
  row_loss[r] = lse - x[label];
  for (int c = 0; c < classes; c++) d[c] = (expf(x[c] - lse) - (c == label ? 1.0f : 0.0f)) * grad_scale;
}

extern "C" __global__ void ovl_sgd(float *w, const float *g, int64_t n, float lr) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    w[i] -= lr * g[i];
}

extern "C" __global__ void ovl_scale(float *x, int64_t n, float factor) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    x[i] *= factor;
}

int ovl_k_bias_act(float *z, const float *bias, int rows, int cols, int relu, cudaStream_t stream) {
  ovl_bias_act<<<grid_for((int64_t)rows * cols), kThreads, 0, stream>>>(z, bias, rows, cols, relu);
  return (int)cudaGetLastError();
}

int ovl_k_relu_backward(float *dz, const float *a, int64_t n, cudaStream_t stream) {
  ovl_relu_backward<<<grid_for(n), kThreads, 0, stream>>>(dz, a, n);
  return (int)cudaGetLastError();
}

int ovl_k_bias_grad(const float *dz, int rows, int cols, float *db, cudaStream_t stream) {
  dim3 block(32, 8);
  ovl_bias_grad<<<(cols + 31) / 32, block, 0, stream>>>(dz, rows, cols, db);
  return (int)cudaGetLastError();
}

int ovl_k_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float grad_scale,
                       float *dlogits, float *row_loss, cudaStream_t stream) {
  ovl_softmax_xent<<<(rows + 127) / 128, 128, 0, stream>>>(logits, labels, rows, classes, grad_scale, dlogits,
                                                            row_loss);
  return (int)cudaGetLastError();
}

int ovl_k_sgd(float *w, const float *g, int64_t n, float lr, cudaStream_t stream) {
  ovl_sgd<<<grid_for(n), kThreads, 0, stream>>>(w, g, n, lr);
  return (int)cudaGetLastError();
}

int ovl_k_scale(float *x, int64_t n, float factor, cudaStream_t stream) {
  ovl_scale<<<grid_for(n), kThreads, 0, stream>>>(x, n, factor);
  return (int)cudaGetLastError();
}
