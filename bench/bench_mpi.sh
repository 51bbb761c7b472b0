#!/bin/bash
# `mpirun ... ovl report --mpi` on a large simulated job (issue 30; docs/mpi.md): RANKS FSDP-like
# ranks (bench/gen_fsdp_job.c: 96 collectives and 1,060 kernels a step, 10 steps, rank 7 a
# straggler, rank 100 8 ms late at one collective, clocks offset up to +-50 ms).
#   strong: the whole job by one process (`ovl report`), then by `mpirun -n P ovl report
#           --mpi` for P = 1, 2, 4, alternated, REPEATS times each: wall time, CPU time (all
#           processes), peak RSS of every process (the root's and the largest other's)
#   weak:   WEAK ranks per process (default RANKS/4: 1,024): the first WEAK x P ranks by P
#           processes, P = 1..4, each beside one process on the same ranks
# Every run's report must equal the one process's report of the same ranks byte for byte, and
# name rank 7 the straggler and rank 100 last at one collective; a run that does not fails the
# bench. Prints markdown rows (medians over the repeats) for bench/results/mpi.md.
#
# usage: bench/bench_mpi.sh [BUILD_DIR] [RANKS] [REPEATS] [WEAK]   (defaults: build, 4096, 2, RANKS/4)
# Traces are generated once into $OVL_BENCH_DIR (default /tmp/ovl-bench): about 0.4 MB a rank.
set -euo pipefail
build=${1:-build}
ranks=${2:-4096}
repeats=${3:-2}
weak=${4:-$((ranks / 4))}
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
gen="$build/bench/ovl_bench_gen_fsdp_job"
ovl=$(cd "$(dirname "$build/ovl")" && pwd)/ovl
mpirun=$(command -v mpirun || command -v mpiexec || true)
[ -x "$gen" ] && [ -x "$ovl" ] || { echo "build first: $gen, $ovl missing" >&2; exit 1; }
[ -n "$mpirun" ] || { echo "no mpirun or mpiexec: install openmpi-bin (./bootstrap.sh does)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed for peak RSS (apt-get install time)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
over=""
# Open MPI: more processes than CPUs allowed, and no binding (as docs/mpi.md runs it: a process
# bound to one core measures on one core)
"$mpirun" --version 2>&1 | grep -qE "Open ?MPI|OpenRTE" && over="--oversubscribe --bind-to none"
mkdir -p "$dir"

job="$dir/fsdp-$ranks"
if [ ! -f "$job/.complete" ]; then
  rm -rf "$job"
  "$gen" "$job" "$ranks" >&2
  touch "$job/.complete"
fi
# subset N: the first N ranks, as links (one job still: same communicator and world size)
subset() {
  local d="$dir/fsdp-$ranks-first$1"
  if [ "$1" -ge "$ranks" ]; then echo "$job"; return; fi
  if [ ! -f "$d/.complete" ]; then
    rm -rf "$d" && mkdir -p "$d"
    local files
    mapfile -t files < <(ls "$job" | grep '\.sqlite$')
    for f in "${files[@]:0:$1}"; do ln -s "$job/$f" "$d/$f"; done
    touch "$d/.complete"
  fi
  echo "$d"
}

out="$dir/mpi-run"
# run P TRACES: P = 0 is one process without MPI. Prints "wall cpu root_rss max_other_rss
# all_rss slowest_cpu" (seconds, KiB; slowest_cpu: the CPU time of the busiest process, the
# wall time the run would take with a free core per process); the report is left in
# $out/report.txt.
run() {
  local p=$1 traces=$2 t0 t1
  rm -rf "$out" && mkdir -p "$out"
  t0=$(date +%s.%N)
  if [ "$p" = 0 ]; then
    /usr/bin/time -f "%M %U %S" -o "$out/rss.0" "$ovl" report "$traces" > "$out/report.txt" 2> "$out/err.txt"
  else
    "$mpirun" $over -n "$p" sh -c 'exec /usr/bin/time -f "%M %U %S" -o "$0/rss.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" "$@"' \
      "$out" "$ovl" report --mpi "$traces" > "$out/report.txt" 2> "$out/err.txt"
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f ", b - a }'
  for f in "$out"/rss.*; do tail -1 "$f" | sed "s|^|${f##*.} |"; done | sort -n | awk '
    { cpu += $3 + $4; rss[$1] = $2; if ($3 + $4 > slow) slow = $3 + $4; n++ }
    END { other = 0; all = ""; for (i = 0; i < n; i++) { if (i > 0 && rss[i] > other) other = rss[i]; all = all (i ? "," : "") rss[i] }
          printf "%.2f %d %d %s %.2f\n", cpu, rss[0], other, all, slow }'
}

# check NAME REFERENCE: the run's report is the reference's and finds the injected faults
check() {
  cmp -s "$out/report.txt" "$2" || { echo "FAIL: $1: the report differs from one process's" >&2; exit 1; }
  grep -qE '^ +7 .* straggler$' "$out/report.txt" || { echo "FAIL: $1: rank 7 not named the straggler" >&2; exit 1; }
  grep -qE '^ +100 +[0-9.]+% +[0-9.]+% .* 1/[0-9]+ ' "$out/report.txt" ||
    { echo "FAIL: $1: rank 100 not last at one collective" >&2; exit 1; }
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "job: $ranks ranks ($(du -shL "$job" | cut -f1) on disk), $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A wall cpu root other all slowest
for r in $(seq 1 "$repeats"); do
  for p in 0 1 2 4; do
    read -r w c rr oo aa ss < <(run "$p" "$job")
    if [ "$p" = 0 ] && [ "$r" = 1 ]; then cp "$out/report.txt" "$dir/mpi-reference.txt"; fi
    check "strong P=$p" "$dir/mpi-reference.txt"
    wall[$p]+="$w "; cpu[$p]+="$c "; root[$p]+="$rr "; other[$p]+="$oo "; all[$p]="$aa"; slowest[$p]+="$ss "
    echo "  run $r, P=$p: ${w} s, cpu ${c} s (busiest process ${ss} s), RSS KiB by process: $aa (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
done
echo
echo "| processes | wall (median) | CPU, all processes | CPU, busiest process | root peak RSS | largest other peak RSS | every process's peak RSS (MiB) |"
echo "|---|---:|---:|---:|---:|---:|---|"
for p in 0 1 2 4; do
  w=$(echo ${wall[$p]} | tr ' ' '\n' | median); c=$(echo ${cpu[$p]} | tr ' ' '\n' | median)
  ss=$(echo ${slowest[$p]} | tr ' ' '\n' | median)
  rr=$(echo ${root[$p]} | tr ' ' '\n' | median); oo=$(echo ${other[$p]} | tr ' ' '\n' | median)
  label=$([ "$p" = 0 ] && echo "one (no MPI)" || echo "mpirun -n $p")
  mib=$(echo "${all[$p]}" | tr ',' '\n' | awk '{ printf "%s%.0f", (NR > 1 ? ", " : ""), $1 / 1024 }')
  awk -v l="$label" -v w="$w" -v c="$c" -v s="$ss" -v r="$rr" -v o="$oo" -v m="$mib" \
    'BEGIN { ot = "-"; if (o > 0) ot = sprintf("%.0f MiB", o / 1024)
             printf "| %s | %.1f s | %.1f s | %.1f s | %.0f MiB | %s | %s |\n", l, w, c, s, r / 1024, ot, m }'
done

# The goals, from the medians: per-process peak against 1.2 x one process's / P (the root's
# summaries aside: its peak above the largest other's), speed-up in wall and in the busiest
# process's CPU, and the root's extra memory per collective of the job (collectives: from the
# report's collectives matched on every rank, times the ranks).
colls=$(sed -nE 's/.*: ([0-9]+) collectives matched on every rank.*/\1/p' "$dir/mpi-reference.txt" | head -1)
[ -n "$colls" ] || { echo "FAIL: the report says no collectives matched on every rank" >&2; exit 1; }
med() { echo $1 | tr ' ' '\n' | median; }
echo
echo "collectives per rank: $colls (rank 0's); job: $((colls * ranks)) collectives"
echo
echo "| processes | per-process peak, largest non-root | 1.2 x one's / P | root peak | root above the largest other, per collective of the job | speed-up, wall | speed-up, busiest process's CPU |"
echo "|---|---:|---:|---:|---:|---:|---:|"
w0=$(med "${wall[0]}"); s0=$(med "${slowest[0]}"); r0=$(med "${root[0]}")
for p in 1 2 4; do
  w=$(med "${wall[$p]}"); s=$(med "${slowest[$p]}"); rr=$(med "${root[$p]}"); oo=$(med "${other[$p]}")
  awk -v p="$p" -v w0="$w0" -v s0="$s0" -v r0="$r0" -v w="$w" -v s="$s" -v rr="$rr" -v oo="$oo" -v n="$((colls * ranks))" \
    'BEGIN { ot = "-"; extra = "-"; if (oo > 0) { ot = sprintf("%.0f MiB", oo / 1024); extra = sprintf("%.0f B", (rr - oo) * 1024 / n) }
             printf "| mpirun -n %d | %s | %.0f MiB | %.0f MiB | %s | %.2f | %.2f |\n", p, ot, 1.2 * r0 / p / 1024, rr / 1024, extra,
             w0 / w, s0 / s }'
done

echo
echo "| weak: ranks | one process: wall | its CPU | its peak RSS | processes | wall | CPU, all | CPU, busiest | root peak RSS | largest other peak RSS |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in 1 2 3 4; do
  n=$((weak * p))
  traces=$(subset "$n")
  if [ "$n" = "$ranks" ]; then  # the strong runs' job: their first repeat, not measured again
    read -r w1 c1 r1 s1 <<< "${wall[0]%% *} ${cpu[0]%% *} ${root[0]%% *} ${slowest[0]%% *}"
    read -r w c rr oo ss <<< "${wall[$p]%% *} ${cpu[$p]%% *} ${root[$p]%% *} ${other[$p]%% *} ${slowest[$p]%% *}"
    aa=${all[$p]}
  else
  read -r w1 c1 r1 o1 a1 s1 < <(run 0 "$traces")
  cp "$out/report.txt" "$dir/mpi-reference-$n.txt"
  read -r w c rr oo aa ss < <(run "$p" "$traces")
  check "weak P=$p" "$dir/mpi-reference-$n.txt"
  fi
  echo "  weak P=$p: one ${w1} s (cpu ${c1} s, ${r1} KiB); mpirun ${w} s, cpu ${c} s (busiest ${ss} s), RSS KiB $aa" >&2
  awk -v n="$n" -v p="$p" -v w1="$w1" -v c1="$c1" -v r1="$r1" -v w="$w" -v c="$c" -v s="$ss" -v r="$rr" -v o="$oo" \
    'BEGIN { ot = "-"; if (o > 0) ot = sprintf("%.0f MiB", o / 1024)
             printf "| %d | %.1f s | %.1f s | %.0f MiB | %d | %.1f s | %.1f s | %.1f s | %.0f MiB | %s |\n", n, w1, c1, r1 / 1024, p, w,
             c, s, r / 1024, ot }'
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
