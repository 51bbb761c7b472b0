#!/usr/bin/env python3
"""Writes a synthetic Kineto (PyTorch profiler) trace of about SIZE_MB megabytes.

usage: gen_kineto.py OUT.json SIZE_MB

The mix of events follows real DDP traces: CPU ops with shape arguments, runtime launches
and their flow events, kernels with launch arguments, copies, user annotations and
ProfilerStep ranges, and NCCL kernels carrying PyTorch's communication arguments.
Timestamps are float microseconds relative to baseTimeNanoseconds (the newer format).
For benchmarks only (bench/bench_import.sh); the test suite never uses it.
"""
import sys

KERNELS = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>"
    "(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, float, "
    "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*)",
    "ampere_sgemm_128x64_tn",
]
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def step_events(step, t, corr):
    """One training step: returns (list of event strings, end time, next correlation)."""
    ev = []
    start = t
    ev.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 4242, "tid": 4242, '
              '"ts": %.3f, "dur": %.3f, "args": {"External id": %d}}' % (step, t, 5000.0, corr))
    for i in range(200):
        t += 2.125
        ext = corr
        ev.append('{"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 4242, "tid": 4242, "ts": %.3f, '
                  '"dur": 9.5, "args": {"External id": %d, "Record function id": 0, "Ev Idx": %d, '
                  '"Input Dims": [[64, 1024], [64, 1024], []], "Input type": ["float", "float", "Scalar"], '
                  '"Input Strides": [[1024, 1], [1024, 1], []], "Concrete Inputs": ["", "", "1"]}}'
                  % (t, ext, corr))
        ev.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, '
                  '"ts": %.3f, "dur": 4.25, "args": {"External id": %d, "cbid": 211, "correlation": %d}}'
                  % (t + 1, ext, corr))
        ev.append('{"ph": "s", "id": %d, "pid": 4242, "tid": 4242, "ts": %.3f, "cat": "ac2g", "name": "ac2g"}'
                  % (corr, t + 1))
        ev.append('{"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                  % (corr, t + 8))
        ev.append('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": 6.375, '
                  '"args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, '
                  '"correlation": %d, "registers per thread": 32, "shared memory": 0, "blocks per SM": 2.5, '
                  '"warps per SM": 10.0, "grid": [256, 1, 1], "block": [128, 1, 1], '
                  '"est. achieved occupancy %%": 12}}' % (KERNELS[i % len(KERNELS)], t + 8, ext, corr))
        corr += 1
        if i % 40 == 39:
            ev.append('{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 4242, "tid": 4300, '
                      '"ts": %.3f, "dur": 30.0, "args": {"External id": %d, "Collective name": "allreduce", '
                      '"In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 8, "dtype": "Float", '
                      '"Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}' % (t, corr))
            ev.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 4242, "tid": 4300, '
                      '"ts": %.3f, "dur": 6.0, "args": {"External id": %d, "correlation": %d}}' % (t + 2, corr, corr))
            ev.append('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 20, "ts": %.3f, "dur": 150.0, '
                      '"args": {"External id": %d, "device": 0, "stream": 20, "correlation": %d, '
                      '"Collective name": "allreduce", "In msg nelems": 6637568, "Out msg nelems": 6637568, '
                      '"Group size": 8, "dtype": "Float", "Process Group Name": "0", '
                      '"Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}' % (NCCL, t + 10, corr, corr))
            corr += 1
        if i % 25 == 0:
            ev.append('{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, '
                      '"tid": 7, "ts": %.3f, "dur": 3.5, "args": {"device": 0, "context": 1, "stream": 7, '
                      '"correlation": %d, "bytes": 4000, "memory bandwidth (GB/s)": 0.78}}' % (t + 9, corr))
            corr += 1
    return ev, max(t, start + 5000.0) + 1, corr


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, target = sys.argv[1], int(float(sys.argv[2]) * 1e6)
    with open(out, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA A100"}],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n  "traceEvents": [\n')
        written, step, t, corr, first = 0, 1, 0.0, 1, True
        while written < target:
            ev, t, corr = step_events(step, t, corr)
            chunk = (",\n" if not first else "") + ",\n".join(ev)
            first = False
            f.write(chunk)
            written += len(chunk)
            step += 1
        f.write('\n  ],\n  "traceName": "synthetic", "displayTimeUnit": "ms",\n'
                '  "baseTimeNanoseconds": 1711964646000000000\n}\n')


if __name__ == "__main__":
    main()
