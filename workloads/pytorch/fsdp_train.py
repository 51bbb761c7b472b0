#!/usr/bin/env python3
"""PyTorch FSDP2 (fully_shard) on the reference MLP (see docs/workloads.md): ZeRO-3 style
sharding, one FSDP unit per layer, with the prefetch knobs exposed so their effect on the
all-gathers can be traced (`ovl report` names an exposed all-gather's layer: late_prefetch).

  torchrun --nproc-per-node 8 fsdp_train.py --model large [--forward-prefetch N]
      [--backward-prefetch N] [--no-reshard-after-forward] [--reduce-bf16] [--ovl-nvtx]

--forward-prefetch N / --backward-prefetch N: each layer explicitly prefetches the next N
layers' all-gathers (set_modules_to_forward_prefetch / set_modules_to_backward_prefetch);
0 leaves FSDP2's default (implicit backward prefetch of one layer, none in forward).
--no-reshard-after-forward keeps parameters gathered between forward and backward (ZeRO-2
like: no second all-gather). --reduce-bf16 reduce-scatters gradients in bf16 (mixed precision
policy: parameters in fp32). --ovl-nvtx: step ranges and `layer <l>` ranges around each
layer's forward. Rank 0 prints one RESULTS_JSON line.
"""

import argparse
import sys

import mlp_common as common


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="fsdp_train.py",
                                     description="FSDP2 (fully_shard) training of the reference MLP.")
    common.add_common_args(parser)
    parser.add_argument("--forward-prefetch", type=int, default=1,
                        help="layers each layer prefetches in forward (0: FSDP2's default, none) [1]")
    parser.add_argument("--backward-prefetch", type=int, default=1,
                        help="layers each layer prefetches in backward (0: FSDP2's default) [1]")
    parser.add_argument("--no-reshard-after-forward", action="store_true",
                        help="keep parameters gathered until backward (no second all-gather)")
    parser.add_argument("--reduce-bf16", action="store_true", help="reduce-scatter gradients in bf16")
    args = parser.parse_args(argv)
    for flag in ("forward_prefetch", "backward_prefetch"):
        if getattr(args, flag) < 0:
            parser.error("--%s must be 0 or more" % flag.replace("_", "-"))
    return parser, args


def prefetch_lists(nlayers, depth, backward):
    """For each layer (index), the layers it prefetches: the next `depth` in execution order
    (forward: higher layers; backward: lower layers)."""
    lists = []
    for layer in range(nlayers):
        if backward:
            lists.append([l for l in range(layer - 1, max(-1, layer - 1 - depth), -1)])
        else:
            lists.append([l for l in range(layer + 1, min(nlayers, layer + 1 + depth))])
    return lists


def import_fully_shard(torch):
    try:
        from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy  # PyTorch >= 2.6
    except ImportError:
        try:
            from torch.distributed._composable.fsdp import fully_shard, MixedPrecisionPolicy  # 2.4, 2.5
        except ImportError:
            sys.stderr.write("fsdp_train.py: this PyTorch has no FSDP2 fully_shard (PyTorch >= 2.4 needed)\n")
            sys.exit(1)
    return fully_shard, MixedPrecisionPolicy


def main():
    parser, args = parse_args()
    name = common.model_name(args.model)
    if args.describe:
        common.describe(name, args.model)
        return 0

    torch = common.require_torch(parser.prog)
    import torch.nn.functional as F
    fully_shard, MixedPrecisionPolicy = import_fully_shard(torch)
    job = common.Job(torch, need_group=True)
    torch.manual_seed(args.seed)
    model = common.build_model(torch, args.model).to(job.device)
    data = common.Data(torch, args.model, args.samples, args.batch, args.seed, job)
    nvtx = common.Nvtx(torch, args.ovl_nvtx)

    mp = MixedPrecisionPolicy(param_dtype=torch.float32,
                              reduce_dtype=torch.bfloat16 if args.reduce_bf16 else torch.float32)
    layers = [getattr(model, "fc%d" % l) for l in range(model.nlayers)]
    for layer in layers:
        fully_shard(layer, reshard_after_forward=not args.no_reshard_after_forward, mp_policy=mp)
    fully_shard(model, reshard_after_forward=not args.no_reshard_after_forward, mp_policy=mp)
    if args.forward_prefetch:
        for l, targets in enumerate(prefetch_lists(model.nlayers, args.forward_prefetch, False)):
            if targets:
                layers[l].set_modules_to_forward_prefetch([layers[t] for t in targets])
    if args.backward_prefetch:
        for l, targets in enumerate(prefetch_lists(model.nlayers, args.backward_prefetch, True)):
            if targets:
                layers[l].set_modules_to_backward_prefetch([layers[t] for t in targets])
    if args.ovl_nvtx:
        for l, layer in enumerate(layers):
            layer.register_forward_pre_hook(lambda m, inp, l=l: nvtx.push("layer %d" % l))
            layer.register_forward_hook(lambda m, inp, out: nvtx.pop())

    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    last = {}

    def step(i):
        nvtx.push("step")
        x, y = data.batch(i)
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # FSDP's reduce-scatters end inside backward
        opt.step()
        last["loss"] = loss
        nvtx.pop()

    steps, wall, _ = common.train(torch, args, data, step, lambda: None)
    if job.rank == 0:
        common.print_results(common.results(
            args, job, name, "fsdp2", steps, wall, None, float(last["loss"].item()), data.steps_per_epoch,
            {"forward_prefetch": args.forward_prefetch, "backward_prefetch": args.backward_prefetch,
             "reshard_after_forward": not args.no_reshard_after_forward, "reduce_bf16": args.reduce_bf16}))
    job.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
