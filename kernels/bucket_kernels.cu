/* Gradient bucket kernels: packing into a bucket, unpacking, and the emulated collectives.
** See kernels.h (math in kernel_ref.h). */
#include "emulated_shape.h"
#include "kernels.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

const int kThreads = 256;

dim3 segment_grid(int64_t max_count, int nsegs) {
  int64_t blocks = (max_count + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > 1024) blocks = 1024;
  return dim3((unsigned)blocks, (unsigned)nsegs);
}

__device__ unsigned long long global_time_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace

// blockIdx.y selects the segment; blocks along x stride over its floats.
extern "C" __global__ void ovl_pack(const float *flat, float *bucket, const ovl_segment *segs) {
  ovl_segment s = segs[blockIdx.y];
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < s.count; i += (int64_t)gridDim.x * blockDim.x)
    bucket[s.bucket_offset + i] = flat[s.flat_offset + i];
}

extern "C" __global__ void ovl_unpack(const float *bucket, float *flat, const ovl_segment *segs) {
  ovl_segment s = segs[blockIdx.y];
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < s.count; i += (int64_t)gridDim.x * blockDim.x)
    flat[s.flat_offset + i] = bucket[s.bucket_offset + i];
}

// A collective's duration on a few SMs (emulated_shape.h gives the blocks and the stride):
// read and rewrite the buffer (cache-bypassing loads and stores, which the compiler keeps),
// every stride-th group of four floats where the whole cannot be touched in time, then each
// block holds its SM until wait_ns after its own start. The values are left unchanged.
__device__ void emulate_collective(float *data, int64_t n, int64_t wait_ns, int64_t stride) {
  __shared__ unsigned long long start;
  if (threadIdx.x == 0) start = global_time_ns();
  __syncthreads();
  int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, step = (int64_t)gridDim.x * blockDim.x;
  if (((uintptr_t)data & 15) == 0) {
    float4 *groups = reinterpret_cast<float4 *>(data);
    int64_t ngroups = n / 4;
    for (int64_t g = first * stride; g < ngroups; g += step * stride) __stcg(groups + g, __ldcv(groups + g));
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
      float *tail = data + ngroups * 4 + threadIdx.x;
      __stcg(tail, __ldcv(tail));
    }
  } else {  // a slice of a larger buffer, not 16-byte aligned: float by float
    for (int64_t i = first * 4 * stride; i < n; i += step * 4 * stride) __stcg(data + i, __ldcv(data + i));
  }
  __syncthreads();
  if (threadIdx.x == 0)
    while ((int64_t)(global_time_ns() - start) < wait_ns) {
    }
  __syncthreads();
}

// One kernel per collective kind: ovl reads the operation from the kernel's name.
extern "C" __global__ void ovl_emulated_allreduce(float *data, int64_t n, int64_t wait_ns, int64_t stride) {
  emulate_collective(data, n, wait_ns, stride);
}

// An all-reduce of 32-bit integers (DDP's used-parameter map): the element type is in the name,
// as NCCL's kernels carry theirs, so that ovl knows the map without an NCCL call. The loads and
// stores move bits: the integers are left unchanged.
extern "C" __global__ void ovl_emulated_allreduce_i32(float *data, int64_t n, int64_t wait_ns, int64_t stride) {
  emulate_collective(data, n, wait_ns, stride);
}

extern "C" __global__ void ovl_emulated_allgather(float *data, int64_t n, int64_t wait_ns, int64_t stride) {
  emulate_collective(data, n, wait_ns, stride);
}

extern "C" __global__ void ovl_emulated_reducescatter(float *data, int64_t n, int64_t wait_ns, int64_t stride) {
  emulate_collective(data, n, wait_ns, stride);
}

int ovl_k_pack(const float *flat, float *bucket, const ovl_segment *segs, int nsegs, int64_t max_count,
               cudaStream_t stream) {
  if (nsegs <= 0) return (int)cudaSuccess;
  ovl_pack<<<segment_grid(max_count, nsegs), kThreads, 0, stream>>>(flat, bucket, segs);
  return (int)cudaGetLastError();
}

int ovl_k_unpack(const float *bucket, float *flat, const ovl_segment *segs, int nsegs, int64_t max_count,
                 cudaStream_t stream) {
  if (nsegs <= 0) return (int)cudaSuccess;
  ovl_unpack<<<segment_grid(max_count, nsegs), kThreads, 0, stream>>>(bucket, flat, segs);
  return (int)cudaGetLastError();
}

int ovl_k_emulated_allreduce(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream) {
  ovl_emulated_shape shape = ovl_emulated_shape_for(n * (int64_t)sizeof(float), wait_ns);
  ovl_emulated_allreduce<<<shape.blocks, OVL_EMULATED_THREADS, 0, stream>>>(data, n, wait_ns, shape.stride);
  return (int)cudaGetLastError();
}

int ovl_k_emulated_allreduce_i32(int32_t *data, int64_t n, int64_t wait_ns, cudaStream_t stream) {
  ovl_emulated_shape shape = ovl_emulated_shape_for(n * (int64_t)sizeof(int32_t), wait_ns);
  ovl_emulated_allreduce_i32<<<shape.blocks, OVL_EMULATED_THREADS, 0, stream>>>(reinterpret_cast<float *>(data), n,
                                                                                wait_ns, shape.stride);
  return (int)cudaGetLastError();
}

int ovl_k_emulated_allgather(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream) {
  ovl_emulated_shape shape = ovl_emulated_shape_for(n * (int64_t)sizeof(float), wait_ns);
  ovl_emulated_allgather<<<shape.blocks, OVL_EMULATED_THREADS, 0, stream>>>(data, n, wait_ns, shape.stride);
  return (int)cudaGetLastError();
}

int ovl_k_emulated_reducescatter(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream) {
  ovl_emulated_shape shape = ovl_emulated_shape_for(n * (int64_t)sizeof(float), wait_ns);
  ovl_emulated_reducescatter<<<shape.blocks, OVL_EMULATED_THREADS, 0, stream>>>(data, n, wait_ns, shape.stride);
  return (int)cudaGetLastError();
}
