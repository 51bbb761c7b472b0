"""Shared parts of the PyTorch reference workloads (see docs/workloads.md).

The models, data and output match ovl-ddp (workloads/core): fully connected layers named
fc<l> (ReLU between them, softmax cross-entropy, fp32, SGD), 32,768 random samples of 784
features labelled by a fixed random linear teacher, a global batch of 1,024 split evenly over
the ranks, and one `RESULTS_JSON {...}` line from rank 0. The data come from torch's
generator, so values differ from ovl-ddp's; shapes, sizes and parameter names are the same.

PyTorch is imported only when training starts: `--help` and `--describe` work without it.
"""

import argparse
import json
import os
import socket
import sys
import time

MODELS = {
    "small": [784, 1024, 512, 256, 10],
    "medium": [784, 2048, 2048, 1024, 512, 10],
    "large": [784, 4096, 4096, 2048, 2048, 1024, 512, 10],
    "xlarge": [784, 4096, 4096, 4096, 2048, 2048, 1024, 512, 10],
}


def parse_model(text):
    """A named model or widths such as 784-256-10 -> list of layer widths."""
    if text in MODELS:
        return list(MODELS[text])
    try:
        widths = [int(w) for w in text.split("-")]
    except ValueError:
        widths = []
    if len(widths) < 2 or any(w < 1 or w > 65536 for w in widths):
        raise argparse.ArgumentTypeError(
            "model '%s': expected small, medium, large, xlarge or widths such as 784-256-10" % text)
    return widths


def param_list(widths):
    """(name, bytes) of every parameter in registration order: weight then bias per layer."""
    params = []
    for layer in range(len(widths) - 1):
        fan_in, fan_out = widths[layer], widths[layer + 1]
        params.append(("fc%d.weight" % layer, 4 * fan_in * fan_out))
        params.append(("fc%d.bias" % layer, 4 * fan_out))
    return params


def describe(model_name, widths):
    """Prints the parameter list as ovl-ddp --plan does (its "params" key)."""
    doc = {"model": model_name, "widths": widths,
           "params": [{"name": n, "bytes": b} for n, b in param_list(widths)]}
    print(json.dumps(doc))


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("expected a positive integer, got %s" % text)
    return value


def add_common_args(parser):
    parser.add_argument("--model", default="small", type=parse_model,
                        help="small, medium, large, xlarge or widths such as 784-256-10 [small]")
    parser.add_argument("--epochs", type=positive_int, default=5, help="timed epochs [5]")
    parser.add_argument("--steps", type=positive_int, default=0, help="timed steps instead of epochs")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first [5]")
    parser.add_argument("--samples", type=positive_int, default=32768, help="samples [32768]")
    parser.add_argument("--batch", type=positive_int, default=1024, help="global batch [1024]")
    parser.add_argument("--lr", type=float, default=0.01, help="SGD learning rate [0.01]")
    parser.add_argument("--seed", type=int, default=1, help="data and weight seed [1]")
    parser.add_argument("--ovl-nvtx", action="store_true",
                        help="emit ovl's NVTX annotations: step ranges, grad_ready marks, bucket ranges")
    parser.add_argument("--describe", action="store_true",
                        help="print the model's parameters as JSON and exit (no PyTorch needed)")


def model_name(widths):
    for name, w in MODELS.items():
        if w == widths:
            return name
    return "-".join(str(w) for w in widths)


def require_torch(prog):
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.stderr.write("%s: PyTorch is not installed (pip install torch)\n" % prog)
        sys.exit(1)
    import torch
    return torch


class Job:
    """This process's place in the job (torchrun's RANK/WORLD_SIZE/LOCAL_RANK, or alone) and
    an NCCL process group; a lone process gets a one-rank group on a free local port."""

    def __init__(self, torch, need_group):
        import torch.distributed as dist
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", str(self.rank)))
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)
        self.dist = dist
        self.group = False
        if need_group or self.world > 1:
            if "MASTER_ADDR" in os.environ and "MASTER_PORT" in os.environ:
                dist.init_process_group("nccl", rank=self.rank, world_size=self.world)
            else:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port,
                                        rank=self.rank, world_size=self.world)
            self.group = True

    def close(self):
        if self.group:
            self.dist.destroy_process_group()


def build_model(torch, widths, misorder=False):
    """The MLP. misorder registers the layers in the reverse of their use (DDP then buckets
    the first layer's gradients first, the classic misordering)."""

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.nlayers = len(widths) - 1
            order = range(self.nlayers - 1, -1, -1) if misorder else range(self.nlayers)
            for layer in order:
                setattr(self, "fc%d" % layer, torch.nn.Linear(widths[layer], widths[layer + 1]))

        def forward(self, x):
            for layer in range(self.nlayers):
                x = getattr(self, "fc%d" % layer)(x)
                if layer < self.nlayers - 1:
                    x = torch.relu(x)
            return x

    return MLP()


class Data:
    """Random samples resident on the GPU; step s uses global batch s mod steps-per-epoch,
    rank r its contiguous slice of it (as ovl-ddp's sharding)."""

    def __init__(self, torch, widths, samples, global_batch, seed, job):
        if global_batch % job.world:
            raise SystemExit("the global batch of %d does not split over %d ranks" % (global_batch, job.world))
        gen = torch.Generator().manual_seed(seed)
        x = torch.rand(samples, widths[0], generator=gen) * 2 - 1
        teacher = torch.rand(widths[0], widths[-1], generator=gen) * 2 - 1
        self.x = x.to(job.device)
        self.y = (self.x @ teacher.to(job.device)).argmax(dim=1)
        self.rows = global_batch // job.world
        self.global_batch = global_batch
        self.rank = job.rank
        self.steps_per_epoch = max(1, samples // global_batch)

    def batch(self, step):
        start = (step % self.steps_per_epoch) * self.global_batch + self.rank * self.rows
        return self.x[start:start + self.rows], self.y[start:start + self.rows]


class Nvtx:
    """ovl's NVTX conventions in the default domain with the "ovl:" prefix (contract §3)."""

    def __init__(self, torch, enabled):
        self.enabled = enabled
        self.nvtx = torch.cuda.nvtx

    def push(self, name):
        if self.enabled:
            self.nvtx.range_push("ovl:" + name)

    def pop(self):
        if self.enabled:
            self.nvtx.range_pop()

    def grad_ready(self, bucket, nbytes, param):
        if self.enabled:
            where = "" if bucket is None else " bucket=%d" % bucket
            self.nvtx.mark("ovl:grad_ready%s bytes=%d param=%s" % (where, nbytes, param))


def train(torch, args, data, step_fn, comm_events):
    """Warm-up, then timed epochs (device-synchronised). step_fn(step) runs one step;
    comm_events() returns the (backward end, communication end) CUDA events of the step just
    run, or None. Returns (steps, wall seconds, exposed communication seconds)."""
    step = 0
    for _ in range(max(0, args.warmup)):
        step_fn(step)
        step += 1
    total = args.steps if args.steps else args.epochs * data.steps_per_epoch
    done, wall, comm = 0, 0.0, 0.0
    while done < total:
        chunk = min(total - done, data.steps_per_epoch)
        pairs = []
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(chunk):
            step_fn(step)
            step += 1
            events = comm_events()
            if events:
                pairs.append(events)
        torch.cuda.synchronize()
        wall += time.perf_counter() - t0
        comm += sum(max(0.0, a.elapsed_time(b)) for a, b in pairs) / 1000.0
        done += chunk
    return done, wall, comm


def print_results(fields):
    print("RESULTS_JSON " + json.dumps(fields, separators=(",", ":")), flush=True)


def results(args, job, name, mode, steps, wall, comm, loss, steps_per_epoch, extra=None):
    epochs = steps / steps_per_epoch
    fields = {
        "model": name, "mode": mode, "comm": "none" if mode == "single" else "nccl",
        "gpus": job.world, "emulated_ranks": None,
        "params": sum(b for _, b in param_list(args.model)) // 4,
        "epochs": epochs, "steps": steps,
        "avg_epoch_s": wall / epochs,
        "comm_s": None if comm is None else comm / epochs,
        "throughput": steps * args.batch / wall,
        "final_loss": loss, "framework": "pytorch",
    }
    fields.update(extra or {})
    return fields
