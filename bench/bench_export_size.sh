#!/bin/bash
# Timeline export size on real traces (the Kineto and Nsight Systems files of ../shared/traces,
# or of TRACES_DIR): per trace, the GPU slices drawn (kernels and memory operations), the
# Perfetto file's bytes per GPU slice (the whole file: host slices, flows, counters, names
# and descriptors included), the bytes of one kernel slice alone (its BEGIN and END packets
# with interned names, measured by ovl_pftrace_check), and the Chrome JSON's size against
# the Perfetto file, plain and gzipped. bench_export.sh measures the synthetic 3 M-kernel case.
#
# usage: bench/bench_export_size.sh [BUILD_DIR] [TRACES_DIR]   (defaults: build, ../shared/traces)
set -euo pipefail
build=${1:-build}
traces=${2:-../shared/traces}
ovl="$build/ovl"
check="$build/tests/ovl_pftrace_check"
for x in "$ovl" "$check"; do [ -x "$x" ] || { echo "build first: $x missing" >&2; exit 1; }; done
[ -d "$traces" ] || { echo "no traces folder: $traces" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/ovl-bench-size.XXXXXX")
trap 'rm -rf "$dir"' EXIT

num() { sed -n "s/.* \([0-9][0-9]*\) $1.*/\1/p" "$dir/out" | head -1; }

printf '| trace | GPU slices | host slices | Perfetto bytes | per GPU slice | kernel slice alone | JSON / Perfetto | JSON.gz / Perfetto | JSON / JSON.gz |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|\n'
inputs=()
for f in "$traces"/kineto-hta/*.json.gz "$traces"/nsys-pipit/*.sqlite; do [ -f "$f" ] && inputs+=("$f"); done
[ -d "$traces/kineto-param-dlrm8" ] && inputs+=("$traces/kineto-param-dlrm8")
for t in "${inputs[@]}"; do
  "$ovl" export --perfetto "$dir/x.pftrace" "$t" >"$dir/out" 2>"$dir/err" || { echo "$t: $(cat "$dir/err")" >&2; continue; }
  kernels=$(num "kernel slices"); memops=$(num "memop slices"); host=$(num "host slices"); pf=$(num bytes)
  "$check" "$dir/x.pftrace" >"$dir/check" || { echo "$t: checker failed" >&2; continue; }
  alone=$(sed -n 's/^bytes_per_kernel_slice //p' "$dir/check")
  "$ovl" export -q --chrome "$dir/x.json" "$t"
  "$ovl" export -q --chrome "$dir/x.json.gz" "$t"
  js=$(stat -c %s "$dir/x.json"); jz=$(stat -c %s "$dir/x.json.gz")
  awk -v n="${t#"$traces"/}" -v g=$((kernels + memops)) -v h="$host" -v p="$pf" -v a="${alone:-0}" -v j="$js" -v z="$jz" \
    'BEGIN { printf "| %s | %d | %d | %d | %.0f | %.0f | %.1f | %.2f | %.0f |\n", n, g, h, p, p / g, a, j / p, z / p, j / z }'
  rm -f "$dir"/x.*
done
