#!/bin/sh
# Runs ovl-ddp for every model x mode x GPU count and prints the table
#   Model | Mode | GPUs | Params | Avg Epoch | Comm Time | Throughput | Speedup
# (Speedup: the single-GPU epoch time of the same model divided by this row's).
#
# usage: workloads/bench.sh [options] [-- OVL-DDP-ARGS...]
#   --build DIR        build directory holding ovl-ddp [build]; $OVL_DDP overrides the binary
#   --models LIST      comma-separated models [small,medium,large,xlarge]
#   --modes LIST       comma-separated modes [single,naive,interleaved,bucketed,misordered]
#   --gpus LIST        GPU counts [1,2,4,8,... up to the GPUs nvidia-smi lists, and that count]
#   --epochs N         timed epochs per run [3]
#   --emulated         one GPU, --comm emulated (add --alpha/--beta/--emulate-ranks after --)
#   --launcher L       local (torchrun-style environment, one process per GPU) or mpirun [local]
#   --port N           first rendezvous MASTER_PORT of the local launcher [29600]
#   --output FILE      also write the table to FILE
#   --logs DIR         keep every run's output in DIR
#   -h, --help         this help
# Exit status: 0 when every run succeeded, 1 otherwise (failed rows say so).
set -u

here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
models="small,medium,large,xlarge"
modes="single,naive,interleaved,bucketed,misordered"
gpus=""
epochs=3
emulated=0
launcher=local
port=29600
output=""
logs=""

die() { echo "bench.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --models) models=${2:?--models needs a list}; shift 2 ;;
    --modes) modes=${2:?--modes needs a list}; shift 2 ;;
    --gpus) gpus=${2:?--gpus needs a list}; shift 2 ;;
    --epochs) epochs=${2:?--epochs needs a number}; shift 2 ;;
    --emulated) emulated=1; shift ;;
    --launcher) launcher=${2:?--launcher needs local or mpirun}; shift 2 ;;
    --port) port=${2:?--port needs a number}; shift 2 ;;
    --output) output=${2:?--output needs a file}; shift 2 ;;
    --logs) logs=${2:?--logs needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
case "$launcher" in local|mpirun) ;; *) die "--launcher '$launcher': expected local or mpirun" ;; esac
case "$epochs" in ''|*[!0-9]*) die "--epochs '$epochs': expected a number" ;; esac

ddp=${OVL_DDP:-$build/ovl-ddp}
[ -x "$ddp" ] || die "$ddp not found: build with the CUDA toolkit, or set --build / OVL_DDP"

if [ -z "$gpus" ]; then
  if [ "$emulated" = 1 ]; then
    gpus=1
  else
    present=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "$present" -gt 0 ] 2>/dev/null || die "no GPU found by nvidia-smi (use --gpus to choose counts)"
    gpus=1
    n=2
    while [ "$n" -le "$present" ]; do gpus="$gpus,$n"; n=$((n * 2)); done
    case ",$gpus," in *",$present,"*) ;; *) gpus="$gpus,$present" ;; esac
  fi
fi

work=${logs:-$(mktemp -d "${TMPDIR:-/tmp}/ovl-bench.XXXXXX")}
mkdir -p "$work" || die "cannot create $work"
[ -n "$logs" ] || trap 'rm -rf "$work"' EXIT

# Field of a RESULTS_JSON line (numbers and strings of our own flat format).
field() { sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" "$1" | head -n 1; }

# run MODEL MODE GPUS LOG: one job; rank 0's output goes to LOG. Returns its exit status.
run() {
  m=$1; md=$2; g=$3; log=$4
  set -- --model "$m" --mode "$md" --epochs "$epochs"
  [ "$emulated" = 1 ] && set -- "$@" --comm emulated
  if [ "$g" -eq 1 ]; then
    env -u RANK -u WORLD_SIZE -u LOCAL_RANK "$ddp" "$@" $extra >"$log" 2>"$log.err"
    return $?
  fi
  if [ "$launcher" = mpirun ]; then
    mpirun -np "$g" "$ddp" "$@" $extra >"$log" 2>"$log.err"
    return $?
  fi
  port=$((port + 2))  # a fresh port pair per job: MASTER_PORT and the rendezvous above it
  pids=""
  r=0
  while [ "$r" -lt "$g" ]; do
    out="$log"
    [ "$r" -gt 0 ] && out="$log.rank$r"
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$g MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$ddp" "$@" $extra >"$out" 2>"$out.err" &
    pids="$pids $!"
    r=$((r + 1))
  done
  status=0
  for p in $pids; do wait "$p" || status=$?; done
  cat "$log".rank*.err >>"$log.err" 2>/dev/null
  return $status
}

extra="$*"
# Single-GPU runs first: they are the speedup's baseline.
case ",$modes," in
  *,single,*) modes="single,$(echo ",$modes," | sed 's/,single,/,/g; s/^,//; s/,$//')" ;;
esac
table="$work/table.md"
printf '| Model | Mode | GPUs | Params | Avg Epoch | Comm Time | Throughput | Speedup |\n' >"$table"
printf '|---|---|---:|---:|---:|---:|---:|---:|\n' >>"$table"
failed=0
for m in $(echo "$models" | tr ',' ' '); do
  base=""
  for g in $(echo "$gpus" | tr ',' ' '); do
    for md in $(echo "$modes" | tr ',' ' '); do
      [ "$md" = single ] && [ "$g" -ne 1 ] && continue
      log="$work/$m-$md-$g.out"
      echo "bench.sh: $m $md on $g GPU(s)" >&2
      run "$m" "$md" "$g" "$log"
      status=$?
      if [ $status -ne 0 ] || ! grep -q '^RESULTS_JSON ' "$log"; then
        failed=1
        echo "bench.sh: $m $md on $g GPU(s) failed (exit $status):" >&2
        tail -n 3 "$log.err" >&2
        printf '| %s | %s | %s | | failed (exit %s) | | | |\n' "$m" "$md" "$g" "$status" >>"$table"
        continue
      fi
      line="$work/line"
      grep '^RESULTS_JSON ' "$log" | head -n 1 >"$line"
      epoch=$(field "$line" avg_epoch_s)
      [ "$md" = single ] && [ "$g" -eq 1 ] && base=$epoch
      gpus_label=$g
      em=$(field "$line" emulated_ranks)
      [ -n "$em" ] && [ "$em" != null ] && gpus_label="$g ($em emulated)"
      awk -v m="$m" -v md="$md" -v g="$gpus_label" -v p="$(field "$line" params)" -v e="$epoch" \
          -v c="$(field "$line" comm_s)" -v t="$(field "$line" throughput)" -v b="$base" '
        function commas(x,   s) { s = sprintf("%.0f", x); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
        BEGIN {
          speed = (b != "" && e > 0) ? sprintf("%.2fx", b / e) : "n/a"
          printf "| %s | %s | %s | %s | %.3f s | %.3f s | %s samples/s | %s |\n", m, md, g, commas(p), e, c, commas(t), speed
        }' >>"$table"
    done
  done
done
cat "$table"
[ -n "$output" ] && cp "$table" "$output"
exit $failed
