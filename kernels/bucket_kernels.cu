/* Gradient bucket kernels: packing into a bucket, unpacking, and the emulated collectives.
** See kernels.h (math in kernel_ref.h). */
#include "kernels.h"

#include <cuda_runtime.h>

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

// One block, like a collective that occupies a few SMs: touch the whole buffer (volatile, so
// the compiler keeps the load and the store), then hold the stream until the wait is over.
__device__ void emulate_collective(float *data, int64_t n, int64_t wait_ns) {
  __shared__ unsigned long long start;
  if (threadIdx.x == 0) start = global_time_ns();
  __syncthreads();
  volatile float *v = data;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) v[i] = v[i];
  __syncthreads();
  if (threadIdx.x == 0)
    while ((int64_t)(global_time_ns() - start) < wait_ns) {
    }
  __syncthreads();
}

// One kernel per collective kind: ovl reads the operation from the kernel's name.
extern "C" __global__ void ovl_emulated_allreduce(float *data, int64_t n, int64_t wait_ns) {
  emulate_collective(data, n, wait_ns);
}

extern "C" __global__ void ovl_emulated_allgather(float *data, int64_t n, int64_t wait_ns) {
  emulate_collective(data, n, wait_ns);
}

extern "C" __global__ void ovl_emulated_reducescatter(float *data, int64_t n, int64_t wait_ns) {
  emulate_collective(data, n, wait_ns);
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
  ovl_emulated_allreduce<<<1, 1024, 0, stream>>>(data, n, wait_ns);
  return (int)cudaGetLastError();
}

int ovl_k_emulated_allgather(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream) {
  ovl_emulated_allgather<<<1, 1024, 0, stream>>>(data, n, wait_ns);
  return (int)cudaGetLastError();
}

int ovl_k_emulated_reducescatter(float *data, int64_t n, int64_t wait_ns, cudaStream_t stream) {
  ovl_emulated_reducescatter<<<1, 1024, 0, stream>>>(data, n, wait_ns);
  return (int)cudaGetLastError();
}
