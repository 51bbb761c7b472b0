#!/bin/bash
# The GPU kit's one call on a lent GPU machine (tests/gpu/README.md): stages, each with its own
# time limit, each appending one status line to $OUT/summary.txt and its output to
# $OUT/logs.txt as it ends (what finished survives a limit), the traces and every stage's own
# log in $OUT/traces.tar.gz, and stage verify's two weight files: five files (the device tool
# brings back at most 8 in all).
#
#   OUT=DIR tests/gpu/device_check.sh [--dry-run] [--kit BUILD_DIR]
#   STAGES="capture pytorch" ...       only these stages (a rerun of the failing ones)
#   KEEP_WORK=1 ...                    keep the work folder ($TMPDIR/ovl-gpu-work) afterwards
#   STAGES="torchoverhead pack" ...    an extra stage, never run by default: the PyTorch DDP
#                                      script's step time plain / under `ovl run`, alternated
#
# Stages: probe ctest capture plugin ddp verify buckets table overhead pytorch profiler pack (see
# README.md for what each
# checks). --dry-run runs every stage on a machine without a GPU: the steps that need one skip
# with their reason, everything else runs, and the same files are written (the ctest test
# test_gpu_kit_dry_run and bootstrap.sh test do this, so the kit keeps working).
# --kit: the build to use [the one prepare.sh made, build-gpu, reached through /tmp/ovl-gpu].
# Exit status: 0 when no stage failed (skipped stages are not failures), 1 otherwise.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export ROOT
ALL_STAGES="probe ctest capture plugin ddp verify buckets table overhead pytorch profiler pack"
# Stages that run only when named in STAGES (too long for the one call's budget beside the rest).
EXTRA_STAGES="torchoverhead"

# ----------------------------------------------------------------------------------------
# Stages (each runs in its own process: `device_check.sh --stage NAME`, with KIT, WORK, DRY,
# GPU_LIB_PATH, LIBOVL_PRELOAD in the environment). A stage prints "SKIP: why" and exits 77
# to skip, and may print one "RESULT: ..." line that the summary shows.
# ----------------------------------------------------------------------------------------

skip() { echo "SKIP: $*"; exit 77; }
# Our binaries need the GPU machine's CUDA libraries (cuBLAS, NCCL) on the loader path; other
# programs (python, torch) keep their own environment.
ours() { LD_LIBRARY_PATH="$GPU_LIB_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
have_gpu() { [ "$DRY" = 0 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }
have_torch_gpu() {
  [ "$DRY" = 0 ] && python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null
}
summarize() { python3 "$ROOT/tests/gpu/trace_summary.py" "$@"; }
traces_in() { find "$1" -name '*.sqlite' 2>/dev/null | sort; }

stage_probe() {
  echo "== machine"; uname -srm; echo "cores: $(nproc)"; free -g 2>/dev/null | head -2
  # The clock source decides what clock_gettime costs (vDSO or a system call): libovl reads
  # CLOCK_MONOTONIC per record where the TSC is not used (OVL_CLOCK=monotonic cost +1.4 % of a
  # GPU-bound step over the TSC on the H100 of 2026-11-26).
  echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
  python3 -c 'import time; n=200000; t=time.perf_counter(); [time.clock_gettime_ns(time.CLOCK_MONOTONIC) for _ in range(n)]; print("clock_gettime from python: %.0f ns per call" % ((time.perf_counter()-t)/n*1e9))' 2>/dev/null || true
  echo "== GPU"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  else
    echo "nvidia-smi: not found"
  fi
  echo "== CUDA toolkit"; (command -v nvcc && nvcc --version) || ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null || echo "no nvcc"
  echo "== tools"; for t in cmake ctest timeout tar python3; do printf "%s: %s\n" "$t" "$(command -v "$t" || echo MISSING)"; done
  echo "== python, torch, NCCL and CUPTI wheels"
  python3 - <<'EOF' 2>&1 || true
import glob, os, sys
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
          "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else "-", "at", os.path.dirname(torch.__file__))
    if torch.cuda.is_available():
        print("device", torch.cuda.get_device_name(0))
except Exception as e:
    print("torch: not usable:", e)
try:
    import nvidia
    for root in nvidia.__path__:
        for lib in sorted(glob.glob(os.path.join(root, "*", "lib", "lib*.so*"))):
            if any(n in lib for n in ("nccl", "cupti", "cudart", "cublas.so", "nvrtc")):
                print("wheel lib", lib)
except Exception as e:
    print("nvidia wheels: none (%s)" % e)
EOF
  echo "== CUDA libraries for ovl's binaries: LD_LIBRARY_PATH=${GPU_LIB_PATH:-(none needed)}"
  missing=0
  for bin in ovl libovl.so ovl-ddp tests/gpu_workload tests/gpu/test_gpu_kernels; do
    [ -e "$KIT/$bin" ] || { echo "$bin: not built"; missing=$((missing + 1)); continue; }
    echo "-- ldd $bin"; ours ldd "$KIT/$bin" | grep -v "linux-vdso"
    n=$(ours ldd "$KIT/$bin" | grep -c "not found")
    missing=$((missing + n))
  done
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
  torch=$(python3 -c "import torch; print(torch.__version__)" 2>/dev/null)
  echo "RESULT: gpu ${gpu:-none}; torch ${torch:-none}; libraries not found: $missing"
  [ "$missing" = 0 ]
}

stage_ctest() {
  cd "$KIT" || exit 1
  # The GPU tests (label gpu: exactly those), then the capture fault test whose parts change
  # where a GPU is present.
  ours ctest -L gpu --output-on-failure --timeout 170 2>&1 | tee "$WORK/ctest-gpu.txt"
  rc=${PIPESTATUS[0]}
  ours ctest -R '^test_inject_faults$' --output-on-failure --timeout 120 2>&1 | tee "$WORK/ctest-faults.txt"
  rc2=${PIPESTATUS[0]}
  passed=$(grep -c " Passed " "$WORK/ctest-gpu.txt"); skipped=$(grep -c '\*\*\*Skipped' "$WORK/ctest-gpu.txt")
  failed=$(grep -cE "\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception" "$WORK/ctest-gpu.txt")
  echo "RESULT: gpu tests: $passed passed, $skipped skipped, $failed failed; test_inject_faults: $([ "$rc2" = 0 ] && echo passed || echo FAILED)"
  [ "$rc" = 0 ] && [ "$rc2" = 0 ]
}

stage_capture() {
  dir="$WORK/capture"
  mkdir -p "$dir"
  if have_gpu; then
    LD_PRELOAD="$LIBOVL_PRELOAD" OVL_OUTPUT="$dir" OVL_LOG=debug ours "$KIT/tests/gpu_workload" || return 1
  else
    echo "SKIP part: no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): the summary and report run on a simulated trace"
    "$KIT/ovl" simulate --bucket-layers 8 --steps 3 --emit-trace "$dir/simulated.sqlite" >/dev/null || return 1
  fi
  mapfile -t traces < <(traces_in "$dir")
  [ "${#traces[@]}" -gt 0 ] || { echo "no trace written"; return 1; }
  "$KIT/ovl" report "$dir" || return 1
  "$KIT/ovl" report --json "$dir" > "$WORK/capture-report.json" || return 1
  summarize --result "${traces[@]}"
}

# One ovl-ddp run traced, reported: efficiency and finding codes.
ddp_traced() {  # ddp_traced NAME ARGS...
  local name=$1; shift
  local dir="$WORK/ddp/$name"
  ours "$KIT/ovl" run -o "$dir" -- "$KIT/ovl-ddp" "$@" > "$WORK/ddp-$name.out" 2>&1 || { cat "$WORK/ddp-$name.out"; return 1; }
  echo "-- $name: ovl report"
  "$KIT/ovl" report "$dir"
  "$KIT/ovl" report --json "$dir" > "$WORK/ddp-$name.json" || return 1
  python3 - "$WORK/ddp-$name.json" "$name" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ranks = r.get("ranks", [])
codes = sorted({f["code"] for rk in ranks for s in rk.get("steps", []) for f in s.get("findings", [])} |
               {f["code"] for rk in ranks for f in rk.get("findings", [])} | {f["code"] for f in r.get("findings", [])})
eff = ranks[0].get("overlap_efficiency") if ranks else None
print("mode %s: overlap efficiency %s, findings: %s" % (sys.argv[2], eff, ", ".join(codes) or "none"))
# What each mode's fault calls for (bench/results/gpu-h100-workloads.md); bucketed: none of these.
expected = {"naive": "late_firing", "interleaved": "latency_bound", "misordered": "readiness_stall",
            "find-unused": "find_unused_parameters"}
schedule = {"late_firing", "readiness_stall", "latency_bound", "single_bucket", "exposed_tail",
            "blocking_collective", "find_unused_parameters"}
want = expected.get(sys.argv[2])
if want and want not in codes:
    print("mode %s: EXPECTED %s, not found" % (sys.argv[2], want)); sys.exit(1)
if sys.argv[2] == "bucketed" and schedule & set(codes):
    print("mode bucketed: UNEXPECTED %s" % ", ".join(sorted(schedule & set(codes)))); sys.exit(1)
EOF
}

stage_ddp() {
  modes="naive interleaved bucketed misordered zero3"
  if ! have_gpu; then
    echo "SKIP part: no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): each mode's plan only"
    for m in $modes; do "$KIT/ovl-ddp" --plan --mode "$m" --model small > /dev/null || return 1; done
    "$KIT/ovl-ddp" --plan --mode bucketed --find-unused --model small > /dev/null || return 1
    skip "no GPU: the plans of every mode are valid; nothing trained"
  fi
  fails=0
  for m in $modes; do
    if ours "$KIT/ovl-ddp" --model small --mode "$m" --comm emulated --verify > "$WORK/verify-$m.out" 2>&1; then
      echo "verify $m: passed"
    else
      echo "verify $m: FAILED"; cat "$WORK/verify-$m.out"; fails=$((fails + 1))
    fi
  done
  job="--model large --comm emulated --alpha 1ms --beta 100GB/s --emulate-ranks 8 --batch 8192 --samples 65536 --steps 10 --warmup 3"
  for m in $modes; do
    # shellcheck disable=SC2086
    ddp_traced "$m" --mode "$m" $job || fails=$((fails + 1))
  done
  # shellcheck disable=SC2086
  ddp_traced find-unused --mode bucketed --find-unused $job || fails=$((fails + 1))
  echo "-- whatif on the bucketed trace"
  "$KIT/ovl" whatif --bucket-mb 1,5,25,100 "$WORK/ddp/bucketed" || fails=$((fails + 1))
  echo "RESULT: $fails failure(s) in $(echo $modes | wc -w) modes verified and traced, find-unused, whatif (per mode above)"
  [ "$fails" = 0 ]
}

# Where --verify's error comes from: the small model at several global batches, 1 and 3 steps,
# and with TF32 forced off (NVIDIA_TF32_OVERRIDE=0): per-tensor errors of each failing run.
stage_verify() {
  have_gpu || skip "no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): nothing to verify"
  local fails=0 runs=0
  for batch in 128 1024 4096; do
    for steps in 1 3; do
      for tf32 in default off; do
        local out="$WORK/verify/b$batch-s$steps-tf32$tf32.out"
        mkdir -p "$WORK/verify"
        runs=$((runs + 1))
        # The final weights of the 3-step runs at the default TF32 setting come back to $OUT
        # (raw float32, 5.9 MB each), so that the comparison can be studied here.
        local save=()
        [ "$steps-$tf32" = 3-default ] && [ "$batch" != 4096 ] && save=(--save-weights "$OUT/weights-small-b$batch-s3.f32")
        if [ "$tf32" = off ]; then
          NVIDIA_TF32_OVERRIDE=0 ours "$KIT/ovl-ddp" --model small --mode bucketed --verify --batch "$batch" --steps "$steps" > "$out" 2>&1
        else
          ours "$KIT/ovl-ddp" --model small --mode bucketed --verify --batch "$batch" --steps "$steps" "${save[@]}" > "$out" 2>&1
        fi
        local rc=$?
        [ "$rc" = 0 ] || fails=$((fails + 1))
        echo "batch $batch steps $steps tf32 $tf32: exit $rc; $(grep 'verify:' "$out" | tr '\n' ' ')"
      done
    done
  done
  echo "RESULT: $fails of $runs --verify runs failed (small model, batch 128/1024/4096, 1 and 3 steps, TF32 default/off)"
  [ "$fails" = 0 ]
}

# The bucket cap against the measured step time: the large emulated job of stage ddp in
# bucketed mode at 1, 5, 25 and 100 MB, plain, 3 alternated runs each (medians), plus one
# traced run per cap, so that `ovl whatif` on the 25 MB trace is checked against them here.
stage_buckets() {
  local ddp="$KIT/ovl-ddp"
  if ! have_gpu; then
    echo "SKIP part: no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): the method runs on tests/fake_ovl_ddp.sh"
    ddp="$ROOT/tests/fake_ovl_ddp.sh"
    export FAKE_DDP_LOG=/dev/null
  fi
  local job="--model large --mode bucketed --comm emulated --alpha 1ms --beta 100GB/s --emulate-ranks 8 --batch 8192 --samples 65536 --steps 10 --warmup 3"
  mkdir -p "$WORK/buckets"
  : > "$WORK/buckets.txt"
  for rep in 1 2 3; do
    for mb in 1 5 25 100; do
      # shellcheck disable=SC2086
      line=$(ours "$ddp" $job --bucket-mb "$mb" 2>>"$WORK/buckets/plain.err" | grep '^RESULTS_JSON ')
      echo "$mb $rep ${line#RESULTS_JSON }" >> "$WORK/buckets.txt"
    done
  done
  if have_gpu; then
    for mb in 1 5 25 100; do
      # shellcheck disable=SC2086
      ours "$KIT/ovl" run -o "$WORK/buckets/mb$mb" -- "$ddp" $job --bucket-mb "$mb" > "$WORK/buckets/mb$mb.out" 2>&1 || echo "traced run at $mb MB failed"
    done
    echo "-- whatif on the 25 MB trace"
    "$KIT/ovl" whatif --bucket-mb 1,5,25,100 "$WORK/buckets/mb25" || echo "whatif failed (its traces are packed; rerun here)"
  fi
  python3 - "$WORK/buckets.txt" <<'PY'
import json, statistics, sys
steps = {}
for line in open(sys.argv[1]):
    mb, rep, js = line.split(" ", 2)
    try:
        r = json.loads(js)
        steps.setdefault(int(mb), []).append(r["avg_epoch_s"] * r["epochs"] / r["steps"] * 1e3)
    except Exception:
        pass
for mb in sorted(steps):
    print("bucket cap %3d MB: step %.3f ms (median of %d: %s)" % (mb, statistics.median(steps[mb]), len(steps[mb]),
          ", ".join("%.3f" % x for x in steps[mb])))
print("RESULT: step time at %s MB measured" % ", ".join(str(m) for m in sorted(steps)))
sys.exit(0 if len(steps) == 4 else 1)
PY
}

# The benchmark table of docs/workloads.md from the device: small..xlarge x every mode on
# one GPU with --comm emulated (one GPU cannot run a multi-rank communicator).
stage_table() {
  local models="small,medium,large,xlarge"
  if ! have_gpu; then
    echo "SKIP part: no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): the table of tests/fake_ovl_ddp.sh"
    export OVL_DDP="$ROOT/tests/fake_ovl_ddp.sh" FAKE_DDP_LOG=/dev/null
    models="small,medium"  # the test double fails xlarge on purpose
  fi
  ours sh "$ROOT/workloads/bench.sh" --build "$KIT" --emulated --epochs 1 --models "$models" \
    --modes single,naive,interleaved,bucketed,misordered,zero3 --output "$WORK/table.md" --logs "$WORK/table" || return 1
  echo "RESULT: $(grep -c '^| [a-z]' "$WORK/table.md") rows in table.md"
}

stage_overhead() {
  local ddp="$KIT/ovl-ddp" lib="$LIBOVL_PRELOAD"
  if ! have_gpu; then
    echo "SKIP part: no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): the method runs on tests/fake_ovl_ddp.sh"
    ddp="$ROOT/tests/fake_ovl_ddp.sh"
    export FAKE_DDP_LOG=/dev/null
  fi
  declare -A cfg=(
    [launch]="--model small --mode bucketed --comm emulated --batch 256 --steps 200 --warmup 20"
    [gpu]="--model large --mode bucketed --comm emulated --batch 16384 --steps 20 --warmup 3")
  # OVERHEAD_KINDS, OVERHEAD_REPS and OVERHEAD_EXTRA (variants beside plain, libovl and disabled:
  # nocupti = OVL_CUPTI=0, monotonic = OVL_CLOCK=monotonic) split a cost found by a full run.
  local kind rep variant
  for kind in ${OVERHEAD_KINDS:-launch gpu}; do
    for rep in $(seq 1 "${OVERHEAD_REPS:-3}"); do
      for variant in plain libovl disabled ${OVERHEAD_EXTRA:-}; do
        out="$WORK/overhead/$kind-$variant-$rep"
        mkdir -p "$out"
        case $variant in
          plain) pre="" ;;
          libovl) pre="LD_PRELOAD=$lib OVL_OUTPUT=$out" ;;
          disabled) pre="LD_PRELOAD=$lib OVL_OUTPUT=$out OVL_DISABLE=1" ;;
          nocupti) pre="LD_PRELOAD=$lib OVL_OUTPUT=$out OVL_CUPTI=0" ;;
          monotonic) pre="LD_PRELOAD=$lib OVL_OUTPUT=$out OVL_CLOCK=monotonic" ;;
          *) echo "overhead: unknown variant $variant" >&2; return 1 ;;
        esac
        # shellcheck disable=SC2086
        line=$(env $pre LD_LIBRARY_PATH="$GPU_LIB_PATH" "$ddp" ${cfg[$kind]} 2>"$out.err" | grep '^RESULTS_JSON ')
        echo "$kind $variant $rep ${line#RESULTS_JSON }" >> "$WORK/overhead.txt"
      done
    done
  done
  python3 - "$WORK/overhead.txt" "$WORK/overhead" <<'EOF'
import glob, json, os, sqlite3, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    kind, variant, rep, js = line.split(" ", 3)
    try:
        r = json.loads(js)
        step = r["avg_epoch_s"] * r["epochs"] / r["steps"]
    except Exception:
        step = None
    runs.setdefault((kind, variant), []).append(step)
ok = True
for kind in [k for k in ("launch", "gpu") if any(key[0] == k for key in runs)]:
    med = {}
    for variant in ("plain", "libovl", "disabled"):
        xs = [x for x in runs.get((kind, variant), []) if x]
        med[variant] = statistics.median(xs) if xs else None
    if None in med.values():
        print("%s-bound: some runs printed no result: %s" % (kind, runs)); ok = False; continue
    traces = glob.glob(os.path.join(sys.argv[2], "%s-libovl-*" % kind, "*.sqlite"))
    dropped, size, steps = 0, 0, 0
    for t in traces:
        db = sqlite3.connect("file:%s?mode=ro" % t, uri=True)
        dropped += int(dict(db.execute("SELECT key, value FROM meta").fetchall()).get("dropped_records", 0) or 0)
        size += os.path.getsize(t)
    reps = len(runs[(kind, "libovl")])
    print("%s-bound: step %.3f ms plain, %.3f ms libovl (%+.2f%%), %.3f ms OVL_DISABLE=1 (%+.2f%%); "
          "%d traces, dropped %d, %.1f KB per trace" % (
              kind, med["plain"] * 1e3, med["libovl"] * 1e3, 100 * (med["libovl"] / med["plain"] - 1),
              med["disabled"] * 1e3, 100 * (med["disabled"] / med["plain"] - 1), len(traces), dropped,
              size / 1e3 / max(1, len(traces))))
    for variant in sorted({key[1] for key in runs if key[0] == kind} - {"plain", "libovl", "disabled"}):
        xs = [x for x in runs[(kind, variant)] if x]
        if xs:
            m = statistics.median(xs)
            print("%s-bound: %s %.3f ms (%+.2f%% of plain; runs %s)" % (
                kind, variant, m * 1e3, 100 * (m / med["plain"] - 1), ", ".join("%.3f" % (x * 1e3) for x in xs)))
print("RESULT: " + ("overhead measured (lines above)" if ok else "some runs failed"))
sys.exit(0 if ok else 1)
EOF
}

# The PyTorch DDP script's step time plain, under `ovl run`, and under `ovl run` with
# OVL_DISABLE=1, alternated TORCH_OVERHEAD_REPS times (default 3): medians. The pytorch stage's
# single plain and traced runs differed by -26..+45 % from one run to the next on the H100;
# alternated, `ovl run` cost +38 % (2 of 3 runs). TORCH_OVERHEAD_EXTRA adds variants that
# split that cost: nocupti (OVL_CUPTI=0), nonvtx (the script without --ovl-nvtx, traced),
# slowflush (OVL_FLUSH_MS=60000), plugin (NCCL_PROFILER_PLUGIN=libovl.so beside the preload).
# On an H200 (2026-11-27, 60 steps) it was +0.7 %, inside the runs' own spread; TORCH_OVERHEAD_STEPS
# (default 1000) sets the steps per run.
stage_torchoverhead() {
  have_torch_gpu || skip "no PyTorch with a usable GPU$([ "$DRY" = 1 ] && echo ' (dry run)')"
  local rep variant log="$WORK/torchoverhead.txt"
  mkdir -p "$WORK/torchoverhead"
  : > "$log"
  for rep in $(seq 1 "${TORCH_OVERHEAD_REPS:-3}"); do
    for variant in plain libovl disabled ${TORCH_OVERHEAD_EXTRA:-}; do
      # 1,000 steps (~2 s on an H200): 60 steps (130 ms) fell between the writer's 1 s flushes in
      # some runs and not in others, and varied 25-85 % run to run (bench/results/gpu-h100-h200-2.md).
      local steps=${TORCH_OVERHEAD_STEPS:-1000}
      local out="$WORK/torchoverhead/$variant-$rep" cmd=() args="--model small --steps $steps --warmup 10 --ovl-nvtx"
      case $variant in
        plain) ;;
        libovl) cmd=("$KIT/ovl" run -o "$out" --) ;;
        disabled) cmd=(env OVL_DISABLE=1 "$KIT/ovl" run -o "$out" --) ;;
        nocupti) cmd=(env OVL_CUPTI=0 "$KIT/ovl" run -o "$out" --) ;;
        nonvtx) cmd=("$KIT/ovl" run -o "$out" --); args="--model small --steps $steps --warmup 10" ;;
        slowflush) cmd=(env OVL_FLUSH_MS=60000 "$KIT/ovl" run -o "$out" --) ;;
        plugin) cmd=("$KIT/ovl" run --nccl-profiler -o "$out" --) ;;
        *) echo "torchoverhead: unknown variant $variant"; return 1 ;;
      esac
      # shellcheck disable=SC2086
      "${cmd[@]}" python3 -m torch.distributed.run --standalone --nproc-per-node 1 \
        "$ROOT/workloads/pytorch/ddp_train.py" $args > "$out.out" 2>&1 || { cat "$out.out"; return 1; }
      echo "$variant $rep $(grep -m1 '^RESULTS_JSON ' "$out.out" | cut -c14-)" >> "$log"
    done
  done
  python3 - "$log" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    variant, rep, js = line.rstrip("\n").split(" ", 2)
    r = json.loads(js)
    runs.setdefault(variant, []).append(r["avg_epoch_s"] * r["epochs"] / r["steps"])
med = {v: statistics.median(xs) for v, xs in runs.items()}
for v in ["plain", "libovl", "disabled"] + sorted(set(runs) - {"plain", "libovl", "disabled"}):
    print("%-9s %.3f ms per step (%+.2f%% of plain; runs %s)" % (
        v, med[v] * 1e3, 100 * (med[v] / med["plain"] - 1), ", ".join("%.3f" % (x * 1e3) for x in runs[v])))
# The plain runs' own spread says how large a difference the medians can tell.
spread = 100 * (max(runs["plain"]) / min(runs["plain"]) - 1)
print("RESULT: PyTorch DDP step %.3f ms plain, %+.2f%% under ovl run, %+.2f%% with OVL_DISABLE=1 (medians of %d; plain runs spread %.1f%%)" % (
    med["plain"] * 1e3, 100 * (med["libovl"] / med["plain"] - 1), 100 * (med["disabled"] / med["plain"] - 1),
    len(runs["plain"]), spread))
EOF
}

# One PyTorch script under torchrun, plain and traced.
torch_run() {  # torch_run NAME SCRIPT ARGS...
  local name=$1 script=$2; shift 2
  local dir="$WORK/pytorch/$name"
  echo "-- $name: plain"
  python3 -m torch.distributed.run --standalone --nproc-per-node 1 "$ROOT/workloads/pytorch/$script" "$@" \
    > "$WORK/pytorch-$name-plain.out" 2>&1 || { cat "$WORK/pytorch-$name-plain.out"; return 1; }
  grep '^RESULTS_JSON' "$WORK/pytorch-$name-plain.out"
  echo "-- $name: under ovl run"
  "$KIT/ovl" run -o "$dir" -- python3 -m torch.distributed.run --standalone --nproc-per-node 1 \
    "$ROOT/workloads/pytorch/$script" "$@" > "$WORK/pytorch-$name-ovl.out" 2>&1 || { cat "$WORK/pytorch-$name-ovl.out"; return 1; }
  grep -E '^RESULTS_JSON|^ovl:' "$WORK/pytorch-$name-ovl.out"
  mapfile -t traces < <(traces_in "$dir")
  [ "${#traces[@]}" -gt 0 ] || { echo "$name: no trace"; return 1; }
  summarize --result "${traces[@]}"
  "$KIT/ovl" report "$dir"
}

# NCCL's profiler plugin beside the preloaded capture of the same DDP job (whose `ovl run`
# trace torch_run made in $WORK/pytorch/ddp): the job with NCCL_PROFILER_PLUGIN=libovl.so and no
# preload (OVL_CUPTI=0: NCCL's channel timing alone), then both ways; plugin_compare.py checks.
# On one GPU the job's communicator has one rank, whose collectives NCCL never reports to a
# plugin (the plugin stage checks the plugin on sends and receives instead).
plugin_runs() {
  local args="--model small --steps 20 --warmup 5 --ovl-nvtx" d="$WORK/pytorch"
  echo "-- ddp: NCCL_PROFILER_PLUGIN=libovl.so, no preload, OVL_CUPTI=0"
  # shellcheck disable=SC2086
  env NCCL_PROFILER_PLUGIN="$KIT/libovl.so" OVL_OUTPUT="$d/ddp-plugin" OVL_CUPTI=0 NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,ENV python3 -m torch.distributed.run --standalone --nproc-per-node 1 \
    "$ROOT/workloads/pytorch/ddp_train.py" $args > "$WORK/pytorch-ddp-plugin.out" 2>&1 ||
    { cat "$WORK/pytorch-ddp-plugin.out"; return 1; }
  grep -iE '^RESULTS_JSON|^ovl:|profiler' "$WORK/pytorch-ddp-plugin.out" | head -20
  echo "-- ddp: under ovl run and NCCL_PROFILER_PLUGIN=libovl.so"
  # shellcheck disable=SC2086
  NCCL_PROFILER_PLUGIN="$KIT/libovl.so" "$KIT/ovl" run -o "$d/ddp-both" -- python3 -m torch.distributed.run \
    --standalone --nproc-per-node 1 "$ROOT/workloads/pytorch/ddp_train.py" $args > "$WORK/pytorch-ddp-both.out" 2>&1 ||
    { cat "$WORK/pytorch-ddp-both.out"; return 1; }
  grep -E '^RESULTS_JSON|^ovl:' "$WORK/pytorch-ddp-both.out"
  compare_plugin pytorch "$d/ddp" "$d/ddp-plugin" "$d/ddp-both"
}

# plugin_compare.py's lines, its RESULT kept in $WORK/plugin-compare-NAME.txt for the stage's own.
compare_plugin() {  # compare_plugin NAME HOOKS PLUGIN BOTH
  python3 "$ROOT/tests/gpu/plugin_compare.py" --hooks "$2" --plugin "$3" --both "$4" --ovl "$KIT/ovl" |
    tee "$WORK/plugin-compare-$1.txt" | sed 's/^RESULT: /plugin comparison: /'
  return "${PIPESTATUS[0]}"
}
plugin_result() { grep '^RESULT: ' "$WORK/plugin-compare-$1.txt" 2>/dev/null | tail -1 | cut -c9-; }

# The C workload with NCCL itself (gpu_workload --self-sendrecv: per step a one-rank all-reduce,
# which NCCL reports to no plugin, and a send and receive to itself, which it does report with
# each channel's GPU timer): preloaded; as NCCL's plugin alone (no preload, OVL_CUPTI=0); both.
plugin_runs_nccl() {
  local d="$WORK/plugin" w="$KIT/tests/gpu_workload"
  echo "-- gpu_workload --self-sendrecv: LD_PRELOAD=libovl.so"
  LD_PRELOAD="$LIBOVL_PRELOAD" OVL_OUTPUT="$d/hooks" ours "$w" --self-sendrecv || return 1
  echo "-- gpu_workload --self-sendrecv: NCCL_PROFILER_PLUGIN=libovl.so, no preload, OVL_CUPTI=0"
  NCCL_PROFILER_PLUGIN="$KIT/libovl.so" OVL_OUTPUT="$d/plugin" OVL_CUPTI=0 NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT ours "$w" --self-sendrecv 2>&1 | grep -iE 'profiler|gpu_workload|^ovl' | head -20
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  echo "-- gpu_workload --self-sendrecv: both"
  LD_PRELOAD="$LIBOVL_PRELOAD" NCCL_PROFILER_PLUGIN="$KIT/libovl.so" OVL_OUTPUT="$d/both" \
    ours "$w" --self-sendrecv || return 1
  compare_plugin nccl "$d/hooks" "$d/plugin" "$d/both" || return 1
  echo "-- ovl report of the plugin's trace"
  "$KIT/ovl" report "$d/plugin" | head -40
  # What this NCCL reports, event by event (types, parents, threads): the diagnostic plugin.
  echo "-- gpu_workload --self-sendrecv: NCCL_PROFILER_PLUGIN=libovl_nccl_event_log.so (first lines)"
  NCCL_PROFILER_PLUGIN="$KIT/tests/libovl_nccl_event_log.so" ours "$w" --self-sendrecv 2>&1 |
    grep 'nccl-event-log' | head -60
  # The plugin alone with CUPTI attached late (at NCCL's first communicator): on the H200 CUPTI
  # then gave no launch records, so no call was linked to its kernel (docs/capture.md).
  echo "-- gpu_workload --self-sendrecv: NCCL_PROFILER_PLUGIN=libovl.so, no preload, CUPTI"
  NCCL_PROFILER_PLUGIN="$KIT/libovl.so" OVL_OUTPUT="$d/plugin-cupti" ours "$w" --self-sendrecv || return 1
  summarize "$d/plugin-cupti"
  # The same with CUPTI from CUDA's start (CUDA_INJECTION64_PATH), as docs/capture.md advises.
  echo "-- gpu_workload --self-sendrecv: NCCL_PROFILER_PLUGIN and CUDA_INJECTION64_PATH=libovl.so, no preload"
  NCCL_PROFILER_PLUGIN="$KIT/libovl.so" CUDA_INJECTION64_PATH="$KIT/libovl.so" OVL_OUTPUT="$d/plugin-injected" \
    ours "$w" --self-sendrecv || return 1
  summarize "$d/plugin-injected"
  "$KIT/ovl" report "$d/plugin-cupti" | head -12
}

# Without a GPU, the same comparison on the fake NCCL core of the tests: the stand-in
# trainer linked to it as a library (preloaded; preloaded and the plugin) and statically (the
# plugin alone), so the method and plugin_compare.py stay rehearsed.
plugin_runs_fake() {
  local d="$WORK/plugin-fake" t="$KIT/tests"
  [ -x "$t/fake_nccl_trainer" ] && [ -x "$t/fake_nccl_trainer_static" ] || { echo "no fake NCCL trainer in the kit"; return 1; }
  env LD_PRELOAD="$LIBOVL_PRELOAD" OVL_OUTPUT="$d/hooks" "$t/fake_nccl_trainer" 2 6 || return 1
  env NCCL_PROFILER_PLUGIN="$KIT/libovl.so" OVL_OUTPUT="$d/plugin" "$t/fake_nccl_trainer_static" 2 6 || return 1
  LD_PRELOAD="$LIBOVL_PRELOAD" NCCL_PROFILER_PLUGIN="$KIT/libovl.so" OVL_OUTPUT="$d/both" \
    "$t/fake_nccl_trainer" 2 6 || return 1
  compare_plugin fake "$d/hooks" "$d/plugin" "$d/both" || return 1
  echo "-- the diagnostic plugin on the fake core (first lines)"
  NCCL_PROFILER_PLUGIN="$KIT/tests/libovl_nccl_event_log.so" "$t/fake_nccl_trainer_static" 2 1 2>&1 |
    grep 'nccl-event-log' | head -12
}

stage_plugin() {
  if ! have_gpu; then
    echo "SKIP part: no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'): NCCL's profiler plugin is compared on the fake NCCL core"
    plugin_runs_fake || return 1
    skip "no GPU$([ "$DRY" = 1 ] && echo ' (dry run)'); NCCL's profiler plugin on the fake NCCL core: $(plugin_result fake)"
  fi
  plugin_runs_nccl || { echo "RESULT: FAILED; $(plugin_result nccl)"; return 1; }
  echo "RESULT: $(plugin_result nccl)"
}

stage_pytorch() {
  have_torch_gpu || skip "no PyTorch with a usable GPU$([ "$DRY" = 1 ] && echo ' (dry run)')"
  fails=0
  torch_run ddp ddp_train.py --model small --steps 20 --warmup 5 --ovl-nvtx || fails=$((fails + 1))
  plugin_runs || fails=$((fails + 1))
  torch_run fsdp fsdp_train.py --model small --steps 20 --warmup 5 --ovl-nvtx || fails=$((fails + 1))
  torch_run manual manual_train.py --model small --steps 20 --warmup 5 --ovl-nvtx || fails=$((fails + 1))
  echo "RESULT: $fails of 4 PyTorch checks failed (ddp, NCCL's profiler plugin beside it, fsdp, manual); plugin: $(plugin_result pytorch)"
  [ "$fails" = 0 ]
}

stage_profiler() {
  have_torch_gpu || skip "no PyTorch with a usable GPU$([ "$DRY" = 1 ] && echo ' (dry run)')"
  dir="$WORK/profiler"
  mkdir -p "$dir"
  env LD_PRELOAD="$LIBOVL_PRELOAD" OVL_OUTPUT="$dir" OVL_LOG=debug python3 "$ROOT/tests/gpu/profiler_probe.py" \
    --out "$dir" || return 1
  mapfile -t traces < <(traces_in "$dir")
  [ "${#traces[@]}" -gt 0 ] || { echo "no ovl trace"; return 1; }
  summarize --phases --result "${traces[@]}"
}

stage_pack() {
  local list="$WORK/pack.list"
  (cd "$WORK" && find . \( -name '*.sqlite' -o -name '*.json' -o -name '*.txt' -o -name '*.out' -o -name '*.md' -o -name '*.log' \) -type f | sort) > "$list"
  tar czf "$OUT/traces.tar.gz" -C "$WORK" -T "$list" || return 1
  # A file back from the device is at most 16 MiB: the largest traces go first.
  while [ "$(stat -c %s "$OUT/traces.tar.gz")" -gt $((15 * 1024 * 1024)) ] && [ -s "$list" ]; do
    biggest=$(cd "$WORK" && xargs -a "$list" ls -S | head -1)
    echo "left out (size): $biggest"
    grep -vxF "$biggest" "$list" > "$list.new"; mv "$list.new" "$list"
    tar czf "$OUT/traces.tar.gz" -C "$WORK" -T "$list" || return 1
  done
  echo "RESULT: traces.tar.gz $(( $(stat -c %s "$OUT/traces.tar.gz") / 1024 )) KiB, $(wc -l < "$list") files"
}

# ----------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------

stage_limit() {  # seconds per stage (limits; the pytorch stage took 93-147 s on an H200 and ran
                 # past 150 s on an H100 on 2026-11-26, its last trace's summary unfinished)
  case $1 in probe) echo 30 ;; ctest) echo 180 ;; capture) echo 45 ;; plugin) echo 60 ;; ddp) echo 120 ;; verify) echo 90 ;;
    buckets) echo 120 ;; table) echo 150 ;; overhead) echo 120 ;;
    pytorch) echo 240 ;; profiler) echo 60 ;; pack) echo 30 ;; torchoverhead) echo 540 ;; *) echo 60 ;; esac
}

# The directories holding the CUDA libraries our binaries need and the loader does not find
# (the GPU machine has NCCL and cuBLAS as pip wheels, maybe not on its loader path).
find_gpu_lib_path() {
  local dirs=() path="" missing lib d
  dirs+=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib)
  while IFS= read -r d; do dirs+=("$d"); done < <(python3 -c '
import glob, os
try:
    import nvidia
    for root in nvidia.__path__:
        for d in sorted(glob.glob(os.path.join(root, "*", "lib"))): print(d)
except Exception:
    pass' 2>/dev/null)
  for _ in 1 2 3; do
    missing=$(for b in ovl-ddp tests/gpu_workload tests/gpu/test_gpu_kernels; do
      [ -e "$KIT/$b" ] && LD_LIBRARY_PATH="$path" ldd "$KIT/$b" 2>/dev/null | awk '/not found/ { print $1 }'
    done | sort -u)
    [ -n "$missing" ] || break
    for lib in $missing; do
      for d in "${dirs[@]}"; do
        if [ -e "$d/$lib" ]; then case ":$path:" in *":$d:"*) ;; *) path="${path:+$path:}$d" ;; esac; break; fi
      done
    done
  done
  echo "$path"
}

main() {
  DRY=0
  local kit_arg=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --dry-run) DRY=1; shift ;;
      --kit) kit_arg=${2:?--kit needs a build directory}; shift 2 ;;
      --stage) "stage_$2"; exit $? ;;
      -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
      *) echo "device_check.sh: unknown argument '$1'" >&2; exit 1 ;;
    esac
  done
  [ -n "${OUT:-}" ] || { echo "device_check.sh: set OUT to the folder for the results" >&2; exit 1; }
  if [ -n "$kit_arg" ]; then
    KIT=$(cd "$kit_arg" && pwd) || exit 1
  else  # the prepared kit, at the paths its build recorded
    [ -x "$ROOT/build-gpu/ovl" ] || { echo "device_check.sh: no build-gpu/ovl: run tests/gpu/prepare.sh first (and carry build-gpu)" >&2; exit 1; }
    mkdir -p /tmp/ovl-gpu && ln -sfn "$ROOT" /tmp/ovl-gpu/src && ln -sfn "$ROOT/build-gpu" /tmp/ovl-gpu/build
    KIT=/tmp/ovl-gpu/build
  fi
  WORK="${TMPDIR:-/tmp}/ovl-gpu-work"
  rm -rf "$WORK" && mkdir -p "$WORK/logs" "$OUT" || exit 1
  GPU_LIB_PATH=$(find_gpu_lib_path)
  # LD_PRELOAD for libovl.so: a sanitized kit (the dry run of the ASan test build) needs the
  # ASan runtime loaded first, and no leak report from the programs it is preloaded into.
  local asan
  asan=$(ldd "$KIT/libovl.so" 2>/dev/null | awk '/libasan/ { print $3 }')
  LIBOVL_PRELOAD="${asan:+$asan:}$KIT/libovl.so"
  [ -z "$asan" ] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export KIT WORK DRY GPU_LIB_PATH OUT LIBOVL_PRELOAD
  local summary="$OUT/summary.txt" failed=0
  {
    local built
    built=$(cat "$KIT/kit-commit.txt" 2>/dev/null || (cd "$ROOT" && git describe --always --dirty 2>/dev/null) || echo 'no git')
    echo "ovl GPU kit, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), built from $built$([ "$DRY" = 1 ] && echo ', DRY RUN')"
    echo "kit $KIT; CUDA libraries for ovl's binaries: ${GPU_LIB_PATH:-none needed}"
  } > "$summary"
  for stage in ${STAGES:-$ALL_STAGES}; do
    case " $ALL_STAGES $EXTRA_STAGES " in *" $stage "*) ;; *) echo "$stage: unknown stage" >> "$summary"; failed=1; continue ;; esac
    local limit t0 rc status detail log="$WORK/logs/$stage.log"
    limit=$(stage_limit "$stage")
    t0=$(date +%s)
    timeout -k 10 "$limit" bash "$0" --stage "$stage" > "$log" 2>&1
    rc=$?
    case $rc in
      0) status=ok; detail=$(grep '^RESULT: ' "$log" | tail -1 | cut -c9-) ;;
      77) status=skipped; detail=$(grep '^SKIP: ' "$log" | tail -1 | cut -c7-) ;;
      124|137) status=TIMEOUT; detail="over its ${limit} s limit; last line: $(grep -v '^$' "$log" | tail -1)"; failed=1 ;;
      *) status=FAILED; detail="exit $rc; last line: $(grep -v '^$' "$log" | tail -1)"; failed=1 ;;
    esac
    printf '%-9s %-8s %4ss  %s\n' "$stage" "$status" "$(($(date +%s) - t0))" "$detail" | tee -a "$summary"
    { printf '===== %s: %s =====\n' "$stage" "$status"; cat "$log"; echo; } >> "$OUT/logs.txt"
  done
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"  # what matters is packed in OUT
  return $failed
}

main "$@"
