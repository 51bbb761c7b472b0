#!/usr/bin/env python3
"""PyTorch DistributedDataParallel on the reference MLP (see docs/workloads.md): DDP's
gradient bucketing, with its knobs exposed so their effect can be traced.

  torchrun --nproc-per-node 8 ddp_train.py --model large [--bucket-cap-mb 25]
      [--find-unused-parameters] [--static-graph] [--gradient-as-bucket-view]
      [--misorder] [--ovl-nvtx]

--misorder registers the layers in the reverse of their use, so DDP's initial buckets start
with the first layer's gradients (ready last); with --find-unused-parameters DDP never
rebuilds them and every all-reduce waits for the end of backward. --ovl-nvtx emits ovl's
NVTX conventions: a step range, a grad_ready mark per gradient (bucket known from the second
step on) and a range around each bucket's all-reduce (through a DDP communication hook that
does what DDP's default hook does: divide by the world size, then all-reduce). Rank 0 prints
DDP's own bucket information (DDP_BUCKETS {...}) after the warm-up, and one RESULTS_JSON line.
"""

import argparse
import json
import sys

import mlp_common as common


def main():
    parser = argparse.ArgumentParser(prog="ddp_train.py",
                                     description="DistributedDataParallel training of the reference MLP.")
    common.add_common_args(parser)
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP bucket_cap_mb [25]")
    parser.add_argument("--find-unused-parameters", action="store_true", help="DDP find_unused_parameters=True")
    parser.add_argument("--static-graph", action="store_true", help="DDP static_graph=True")
    parser.add_argument("--gradient-as-bucket-view", action="store_true", help="DDP gradient_as_bucket_view=True")
    parser.add_argument("--misorder", action="store_true",
                        help="define the layers in the reverse of their use (misordered buckets)")
    args = parser.parse_args()
    if args.bucket_cap_mb <= 0:
        parser.error("--bucket-cap-mb must be positive")
    name = common.model_name(args.model)
    if args.describe:
        common.describe(name, args.model)
        return 0

    torch = common.require_torch(parser.prog)
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    job = common.Job(torch, need_group=True)
    torch.manual_seed(args.seed)
    model = common.build_model(torch, args.model, misorder=args.misorder).to(job.device)
    data = common.Data(torch, args.model, args.samples, args.batch, args.seed, job)
    nvtx = common.Nvtx(torch, args.ovl_nvtx)

    # Which bucket holds each parameter, learned from the communication hook (so known from
    # the second step on). The grad_ready hooks are registered before DDP wraps the model;
    # post-accumulate-grad hooks run before DDP's own, so a mark precedes its bucket's launch.
    bucket_of = {}
    if args.ovl_nvtx:
        for pname, param in model.named_parameters():
            def hook(p, pname=pname, nbytes=param.numel() * 4):
                nvtx.grad_ready(bucket_of.get(id(p)), nbytes, pname)
            param.register_post_accumulate_grad_hook(hook)

    ddp = DDP(model, device_ids=[job.local_rank], bucket_cap_mb=args.bucket_cap_mb,
              find_unused_parameters=args.find_unused_parameters, static_graph=args.static_graph,
              gradient_as_bucket_view=args.gradient_as_bucket_view)

    if args.ovl_nvtx:
        def allreduce_hook(state, bucket):
            k = bucket.index()
            for p in bucket.parameters():
                bucket_of[id(p)] = k
            buf = bucket.buffer().div_(job.world)
            nvtx.push("bucket %d" % k)
            fut = job.dist.all_reduce(buf, async_op=True).get_future()
            nvtx.pop()
            return fut.then(lambda f: f.value()[0])
        ddp.register_comm_hook(None, allreduce_hook)

    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    last = {}

    def step(i):
        nvtx.push("step")
        x, y = data.batch(i)
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(ddp(x), y)
        loss.backward()  # DDP's reduction ends inside backward
        opt.step()
        last["loss"] = loss
        nvtx.pop()
        if i == max(1, args.warmup - 1) and job.rank == 0:
            info = ddp._get_ddp_logging_data()
            keep = {k: v for k, v in info.items()
                    if "bucket" in k or k in ("find_unused_parameters", "static_graph", "gradient_as_bucket_view")}
            print("DDP_BUCKETS " + json.dumps(keep, default=str), flush=True)

    steps, wall, _ = common.train(torch, args, data, step, lambda: None)
    if job.rank == 0:
        common.print_results(common.results(
            args, job, name, "ddp", steps, wall, None, float(last["loss"].item()), data.steps_per_epoch,
            {"bucket_mb": args.bucket_cap_mb, "find_unused": args.find_unused_parameters,
             "static_graph": args.static_graph, "gradient_as_bucket_view": args.gradient_as_bucket_view,
             "misorder": args.misorder}))
    job.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
