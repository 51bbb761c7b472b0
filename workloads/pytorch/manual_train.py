#!/usr/bin/env python3
"""Hand-written data parallelism with torch.distributed/NCCL (see docs/workloads.md).

  single       one GPU, no communication
  naive        full backward, then a blocking all-reduce of every gradient
  interleaved  an asynchronous all-reduce per gradient, fired the moment it is ready

Launch with torchrun (torchrun --nproc-per-node N manual_train.py --mode interleaved) or
alone. Prints one RESULTS_JSON line (rank 0). DDP's bucketing: ddp_train.py.
"""

import argparse
import sys

import mlp_common as common


def main():
    parser = argparse.ArgumentParser(
        prog="manual_train.py",
        description="Single-GPU, naive and interleaved data-parallel training of the reference MLP.")
    common.add_common_args(parser)
    parser.add_argument("--mode", choices=["single", "naive", "interleaved"], default="interleaved",
                        help="single, naive or interleaved [interleaved]")
    args = parser.parse_args()
    name = common.model_name(args.model)
    if args.describe:
        common.describe(name, args.model)
        return 0

    torch = common.require_torch(parser.prog)
    import torch.nn.functional as F
    job = common.Job(torch, need_group=args.mode != "single")
    if args.mode == "single" and job.world > 1:
        parser.error("--mode single runs on one GPU, not %d" % job.world)
    torch.manual_seed(args.seed)
    model = common.build_model(torch, args.model).to(job.device)
    data = common.Data(torch, args.model, args.samples, args.batch, args.seed, job)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    nvtx = common.Nvtx(torch, args.ovl_nvtx)

    # Gradients are ready in the reverse of registration; each is its own "bucket" k.
    named = list(model.named_parameters())
    ready = list(reversed(named))
    works = []

    def on_ready(k, pname, nbytes):
        def hook(param):
            nvtx.grad_ready(k, nbytes, pname)
            if args.mode == "interleaved":
                nvtx.push("bucket %d" % k)
                works.append(job.dist.all_reduce(param.grad, async_op=True))
                nvtx.pop()
        return hook

    for k, (pname, param) in enumerate(ready):
        param.register_post_accumulate_grad_hook(on_ready(k, pname, param.numel() * 4))

    last = {}

    def step(i):
        nvtx.push("step")
        x, y = data.batch(i)
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        works.clear()
        loss.backward()
        if args.mode != "single":
            bwd_end = torch.cuda.Event(enable_timing=True)
            comm_end = torch.cuda.Event(enable_timing=True)
            bwd_end.record()
            if args.mode == "naive":
                for k, (pname, param) in enumerate(ready):
                    nvtx.push("bucket %d" % k)
                    job.dist.all_reduce(param.grad)
                    nvtx.pop()
            for work in works:
                work.wait()
            if job.world > 1:
                for _, param in named:
                    param.grad.div_(job.world)
            comm_end.record()
            last["events"] = (bwd_end, comm_end)
        opt.step()
        last["loss"] = loss
        nvtx.pop()

    steps, wall, comm = common.train(torch, args, data, step, lambda: last.get("events"))
    if job.rank == 0:
        common.print_results(common.results(
            args, job, name, args.mode, steps, wall, None if args.mode == "single" else comm,
            float(last["loss"].item()), data.steps_per_epoch))
    job.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
