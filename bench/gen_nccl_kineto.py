#!/usr/bin/env python3
"""Writes a Kineto trace made of N NCCL kernels (a long job's worth of collectives).

usage: gen_nccl_kineto.py OUT.json N

Each kernel carries PyTorch's communication arguments (collective name, message size, dtype,
process group, sequence number) and has its cudaLaunchKernel call, as in real DDP traces;
nothing else, so the memory ovl needs per collective is what is measured
(bench/bench_nccl_memory.sh). For benchmarks only.
"""
import sys

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    with open(out, "w") as f:
        f.write('{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n'
                '"traceEvents": [\n')
        t = 1000.0
        for i in range(n):
            corr = i + 1
            sep = ",\n" if i + 1 < n else "\n"
            f.write('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, '
                    '"ts": %.3f, "dur": 4.0, "args": {"correlation": %d}},\n' % (t, corr))
            f.write('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 20, "ts": %.3f, "dur": 30.0, '
                    '"args": {"correlation": %d, "device": 0, "stream": 20, "Collective name": "allreduce", '
                    '"In msg nelems": %d, "dtype": "Float", "Group size": 8, "Process Group Name": "0", '
                    '"Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]", "Seq": %d}}%s'
                    % (NCCL, t + 5, corr, 1 << (10 + i % 12), i, sep))
            t += 50.0
        f.write(']}\n')


main()
