"""The PyTorch workloads (workloads/pytorch) without PyTorch: every script compiles, --help
and argument checks work (fsdp_train.py: its prefetch knobs and prefetch lists too), and --describe lists the same parameters (names, sizes, order) as
ovl-ddp's --plan for every model, so traces of both trainers describe the same networks.

usage: python3 test_workload_pytorch.py SCRIPTS_DIR PLAN_TOOL
"""

import glob
import json
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        sys.stderr.write("CHECK failed: %s\n" % what)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def main():
    scripts_dir, plan_tool = sys.argv[1], sys.argv[2]
    scripts = sorted(glob.glob(os.path.join(scripts_dir, "*.py")))
    check(len(scripts) >= 3, "the PyTorch scripts are there")
    for path in scripts:
        with open(path) as f:
            try:
                compile(f.read(), path, "exec")
            except SyntaxError as e:
                check(False, "%s compiles: %s" % (path, e))

    trainers = {"manual_train.py": ["--mode"],
                "ddp_train.py": ["--bucket-cap-mb", "--find-unused-parameters", "--static-graph",
                                 "--gradient-as-bucket-view", "--misorder", "--ovl-nvtx"],
                "fsdp_train.py": ["--forward-prefetch", "--backward-prefetch", "--no-reshard-after-forward",
                                  "--reduce-bf16", "--ovl-nvtx"]}
    for script, flags in trainers.items():
        path = os.path.join(scripts_dir, script)
        r = run([sys.executable, path, "--help"])
        check(r.returncode == 0, "%s --help exits 0" % script)
        for flag in flags:
            check(flag in r.stdout, "%s --help lists %s" % (script, flag))
        r = run([sys.executable, path, "--model", "784-0-10"])
        check(r.returncode == 2 and "model '784-0-10'" in r.stderr, "%s rejects a bad model" % script)

        for model in ["small", "medium", "large", "xlarge", "784-64-10"]:
            r = run([sys.executable, path, "--describe", "--model", model])
            check(r.returncode == 0, "%s --describe --model %s" % (script, model))
            described = json.loads(r.stdout)
            p = run([plan_tool, "--plan", "--model", model])
            check(p.returncode == 0, "plan tool for %s" % model)
            plan = json.loads(p.stdout)
            check(described["params"] == plan["params"], "%s and ovl-ddp agree on %s's parameters" % (script, model))
            check(described["widths"] == plan["widths"], "%s and ovl-ddp agree on %s's widths" % (script, model))

    r = run([sys.executable, os.path.join(scripts_dir, "manual_train.py"), "--mode", "bucketed"])
    check(r.returncode == 2, "manual_train.py has no bucketed mode (that is ddp_train.py)")
    r = run([sys.executable, os.path.join(scripts_dir, "ddp_train.py"), "--bucket-cap-mb", "0"])
    check(r.returncode == 2 and "--bucket-cap-mb" in r.stderr, "ddp_train.py rejects a zero bucket cap")
    for flag in ("--forward-prefetch", "--backward-prefetch"):
        r = run([sys.executable, os.path.join(scripts_dir, "fsdp_train.py"), flag, "-1"])
        check(r.returncode == 2 and flag in r.stderr, "fsdp_train.py rejects %s -1" % flag)
        r = run([sys.executable, os.path.join(scripts_dir, "fsdp_train.py"), flag, "x"])
        check(r.returncode == 2 and flag in r.stderr, "fsdp_train.py rejects %s x" % flag)
    # the prefetch lists: each layer prefetches the next N in execution order
    sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
    sys.path.insert(0, scripts_dir)
    import fsdp_train
    check(fsdp_train.prefetch_lists(4, 1, False) == [[1], [2], [3], []], "forward prefetch depth 1")
    check(fsdp_train.prefetch_lists(4, 2, False) == [[1, 2], [2, 3], [3], []], "forward prefetch depth 2")
    check(fsdp_train.prefetch_lists(4, 1, True) == [[], [0], [1], [2]], "backward prefetch depth 1")
    check(fsdp_train.prefetch_lists(4, 3, True) == [[], [0], [1, 0], [2, 1, 0]], "backward prefetch depth 3")
    parser, args = fsdp_train.parse_args(["--forward-prefetch", "2", "--no-reshard-after-forward"])
    check(args.forward_prefetch == 2 and args.backward_prefetch == 1 and args.no_reshard_after_forward
          and not args.reduce_bf16, "fsdp_train.py parses its knobs")
    try:
        import torch  # noqa: F401
    except ImportError:
        # Without PyTorch, training ends with one clear line, not a traceback.
        r = run([sys.executable, os.path.join(scripts_dir, "ddp_train.py"), "--steps", "1"])
        check(r.returncode == 1 and r.stderr.strip() == "ddp_train.py: PyTorch is not installed (pip install torch)",
              "ddp_train.py without PyTorch: one line, exit 1 (got %r)" % r.stderr)
        r = run([sys.executable, os.path.join(scripts_dir, "fsdp_train.py"), "--steps", "1"])
        check(r.returncode == 1 and r.stderr.strip() == "fsdp_train.py: PyTorch is not installed (pip install torch)",
              "fsdp_train.py without PyTorch: one line, exit 1 (got %r)" % r.stderr)

    sys.stderr.write("%d failed\n" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
