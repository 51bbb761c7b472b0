#!/bin/bash
# Capture library costs, each measured side by side with its baseline in one run:
#  1. the CPU time one NCCL call costs the calling thread (stub NCCL, so the call itself costs
#     ~nothing): without libovl, with this build's libovl.so, and with a previous libovl.so
#     (BEFORE), runs alternated, 1 thread and 8 threads sharing CALLS calls; medians; the
#     ratio after/before of the time libovl adds (goals, issue 32: <= 60 ns per recorded
#     call with 1 thread, <= 70 ns with 8). CALLS stays within what the host buffers hold
#     (64 MiB, ~500,000 calls): a stub call takes nanoseconds, far faster than any real
#     collective, and beyond that flood libovl drops (and counts) instead of waiting;
#  2. the CPU time libovl.so adds to starting a process that never uses CUDA or NCCL
#     (/bin/true): per start of STARTS starts with LD_PRELOAD=libovl.so (and with
#     OVL_DISABLE=1, and with BEFORE) minus without, beside an empty preloaded library;
#  3. writer throughput in rows per second of the writing thread's CPU (what it does with a
#     core to itself) and of wall time, for kernel rows and for NCCL-call rows, against plain
#     SQLite inserts (goal: >= 2 M rows/s with a core).
#
# usage: bench/bench_inject.sh [BUILD_DIR] [CALLS] [ROWS] [STARTS]
#        (defaults: build, 200000, 2000000, 300)
#   BEFORE=/path/to/libovl.so   the previous library to compare with, or
#   BEFORE_REF=main             build that git revision's libovl.so in a temporary worktree
#                               (removed afterwards) and compare with it
# Without either, the comparison with a previous library is left out.
set -euo pipefail
build=${1:-build}
calls=${2:-200000}
rows=${3:-2000000}
starts=${4:-300}
lib="$build/libovl.so"
app="$build/bench/ovl_bench_inject_calls"
writer="$build/bench/ovl_bench_inject_writer"
starter="$build/bench/ovl_bench_inject_start"
for f in "$lib" "$app" "$writer" "$starter"; do
  [ -e "$f" ] || { echo "build first (with the CUDA toolkit): $f missing" >&2; exit 1; }
done
out=$(mktemp -d)
worktree=""
cleanup() {
  [ -n "$worktree" ] && git -C "$(dirname "$0")" worktree remove --force "$worktree" >/dev/null 2>&1
  rm -rf "$out"
}
trap cleanup EXIT

before=${BEFORE:-}
if [ -z "$before" ] && [ -n "${BEFORE_REF:-}" ]; then
  worktree="$out/before-src"
  echo "building libovl.so of $BEFORE_REF ($(git -C "$(dirname "$0")" rev-parse --short "$BEFORE_REF")) in a temporary worktree..." >&2
  git -C "$(dirname "$0")" worktree add --detach "$worktree" "$BEFORE_REF" >/dev/null 2>&1
  cmake -S "$worktree" -B "$out/before-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$out/before-build" -j2 --target ovl_inject >/dev/null
  before="$out/before-build/libovl.so"
fi
[ -z "$before" ] || [ -e "$before" ] || { echo "BEFORE=$before: no such library" >&2; exit 1; }

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"

# 1. The calling threads' CPU time per call (other processes on the machine change it much
# less than wall time) is the cost to the program; wall time per call is shown too.
libs=(plain after)
[ -n "$before" ] && libs=(plain before after)
for threads in 1 8; do
  declare -A cpu=() wall=() recorded=() dropped=()
  for rep in 1 2 3 4 5; do  # alternate: machine noise hits every library alike
    for l in "${libs[@]}"; do
      case $l in
        plain) r=$("$app" $((calls / threads)) "$threads") ;;
        before) r=$(OVL_OUTPUT="$out/$l-$threads-$rep" LD_PRELOAD="$before" "$app" $((calls / threads)) "$threads") ;;
        after) r=$(OVL_OUTPUT="$out/$l-$threads-$rep" LD_PRELOAD="$lib" "$app" $((calls / threads)) "$threads") ;;
      esac
      cpu[$l]+="${r% *}"$'\n'
      wall[$l]+="${r#* }"$'\n'
      if [ "$l" != plain ]; then
        trace=$(ls "$out/$l-$threads-$rep"/*.sqlite)
        recorded[$l]=$(sqlite3 "$trace" "SELECT count(*) FROM collectives")
        dropped[$l]=$(sqlite3 "$trace" "SELECT value FROM meta WHERE key = 'dropped_records'")
        rm -rf "$out/$l-$threads-$rep"
      fi
    done
  done
  declare -A c=() w=()
  for l in "${libs[@]}"; do
    c[$l]=$(printf '%s' "${cpu[$l]}" | median)
    w[$l]=$(printf '%s' "${wall[$l]}" | median)
  done
  line="NCCL call, $threads thread(s), median of 5: CPU per call ${c[plain]} ns without libovl"
  [ -n "$before" ] && line+=", ${c[before]} ns with the previous libovl (+$(sub "${c[before]}" "${c[plain]}") ns)"
  line+=", ${c[after]} ns with this one (+$(sub "${c[after]}" "${c[plain]}") ns)"
  [ -n "$before" ] && line+="; after/before: $(ratio "$(sub "${c[after]}" "${c[plain]}")" "$(sub "${c[before]}" "${c[plain]}")") of the added time"
  line+=" (wall ${w[plain]}"
  [ -n "$before" ] && line+=" / ${w[before]}"
  line+=" / ${w[after]} ns; last runs recorded"
  [ -n "$before" ] && line+=" ${recorded[before]} (dropped ${dropped[before]:-0}) and"
  line+=" ${recorded[after]} (dropped ${dropped[after]}) of $((calls / threads * threads)) calls)"
  echo "$line"
  unset cpu wall recorded dropped c w
done

# 2. Process start: CPU time of the children (immune to other load); wall shown, noisy.
printf 'void ovl_bench_empty(void) {}\n' > "$out/empty.c"
cc -shared -fPIC -o "$out/libempty.so" "$out/empty.c"
modes=(plain empty ovl disabled)
[ -n "$before" ] && modes+=(before)
declare -A cpu wall c w
for rep in 1 2 3 4 5; do
  for mode in "${modes[@]}"; do
    case $mode in
      plain) r=$("$starter" "$starts" /bin/true) ;;
      empty) r=$(LD_PRELOAD="$out/libempty.so" "$starter" "$starts" /bin/true) ;;
      ovl) r=$(LD_PRELOAD="$lib" "$starter" "$starts" /bin/true) ;;
      disabled) r=$(OVL_DISABLE=1 LD_PRELOAD="$lib" "$starter" "$starts" /bin/true) ;;
      before) r=$(LD_PRELOAD="$before" "$starter" "$starts" /bin/true) ;;
    esac
    cpu[$mode]+="${r% *}"$'\n'
    wall[$mode]+="${r#* }"$'\n'
  done
done
for mode in "${modes[@]}"; do
  c[$mode]=$(printf '%s' "${cpu[$mode]}" | median)
  w[$mode]=$(printf '%s' "${wall[$mode]}" | median)
done
line="process start (/bin/true), median of 5 x $starts: CPU per start ${c[plain]} us without a preload; added:"
line+=" libovl.so $(sub "${c[ovl]}" "${c[plain]}") us"
[ -n "$before" ] && line+=" (the previous one $(sub "${c[before]}" "${c[plain]}") us)"
line+=", libovl.so with OVL_DISABLE=1 $(sub "${c[disabled]}" "${c[plain]}") us, an empty library"
line+=" $(sub "${c[empty]}" "${c[plain]}") us (wall ${w[plain]} -> ${w[ovl]} us)"
echo "$line"
"$writer" "$rows" "$out"
echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
