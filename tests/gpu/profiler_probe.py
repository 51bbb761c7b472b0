#!/usr/bin/env python3
"""libovl and torch.profiler in one process (the GPU kit's profiler stage, tests/gpu/README.md):
a small model trains STEPS steps before, PROFILED steps under torch.profiler (CPU and CUDA
activities, as users run it) and STEPS steps after, each phase inside an NVTX range named
"phase before|during|after" that the ovl trace keeps. It prints what torch.profiler saw; the
stage then reads what ovl saw in each phase (trace_summary.py --phases).

  python3 profiler_probe.py --out DIR [--steps N] [--profiled N]
"""

import argparse
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for torch.profiler's trace")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--profiled", type=int, default=5)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                                torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2048, 1024, device="cuda")
    y = torch.randint(0, 10, (2048,), device="cuda")

    def train(n):
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        torch.cuda.synchronize()

    kineto_kernels = 0
    for phase in ("before", "during", "after"):
        torch.cuda.nvtx.range_push("phase " + phase)
        if phase == "during":
            path = os.path.join(args.out, "torch_profiler.json")
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                train(args.profiled)
            prof.export_chrome_trace(path)
            with open(path) as f:
                events = json.load(f).get("traceEvents", [])
            kineto_kernels = sum(1 for e in events if e.get("cat") == "kernel")
        else:
            train(args.steps)
        torch.cuda.nvtx.range_pop()
    print("torch.profiler saw %d kernels in its %d steps" % (kineto_kernels, args.profiled))
    print("RESULT: torch.profiler kernels %d (%d steps profiled, %d before and after)"
          % (kineto_kernels, args.profiled, args.steps))
    return 0 if kineto_kernels > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
