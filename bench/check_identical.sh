#!/bin/bash
# No result changes: builds BASE_REF (a commit, default main) from a copy of its files and
# compares, byte for byte, what its `ovl report` and this tree's print for every trace under
# ../shared/traces and tests/data: each file (JSON report and text report, with the exit
# status and error messages), and each folder of traces as one job.
#
# usage: bench/check_identical.sh [BASE_REF] [BUILD_DIR]   (defaults: main, build)
# The base build is kept in $OVL_BENCH_DIR/base-<commit> (default /tmp/ovl-bench) for reruns.
# Exit status: 0 when every output is identical, 1 when one differs, 2 on a usage or build error.
set -euo pipefail
base_ref=${1:-main}
build=${2:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${OVL_BENCH_DIR:-/tmp/ovl-bench}
new="$build/ovl"
[ -x "$new" ] || { echo "check_identical: build first: $new missing" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --verify "$base_ref^{commit}" 2>/dev/null) ||
  { echo "check_identical: $base_ref: not a commit" >&2; exit 2; }
mkdir -p "$dir"
base_src="$dir/base-$commit"
base="$base_src/build/ovl"
if [ ! -x "$base" ]; then
  echo "building $base_ref ($commit) in $base_src"
  # A plain copy of the commit's files (git archive), not a worktree: nothing is registered.
  rm -rf "$base_src" && mkdir -p "$base_src"
  git -C "$root" archive "$commit" | tar -x -C "$base_src"
  cmake -S "$base_src" -B "$base_src/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$base_src/build" -j2 --target ovl >/dev/null
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Traces: the files report reads (ovl and Nsight Systems SQLite, Kineto JSON), and the
# folders that hold them directly.
mapfile -t files < <(find "$root/../shared/traces" "$root/tests/data" -type f \
  \( -name '*.sqlite' -o -name '*.json' -o -name '*.json.gz' \) | sort)
mapfile -t folders < <(printf '%s\n' "${files[@]}" | xargs -n1 dirname | sort -u)

same=0 differ=0
# run BINARY TAG INPUT ARGS...: the output, errors and exit status of one report.
run() {
  local bin=$1 tag=$2 input=$3; shift 3
  local rc=0
  "$bin" report "$@" "$input" >"$out/$tag.out" 2>"$out/$tag.err" || rc=$?
  echo "$rc" >"$out/$tag.rc"
}
for input in "${files[@]}" "${folders[@]}"; do
  for mode in json text; do
    args=()
    [ "$mode" = json ] && args=(--json)
    run "$base" base "$input" "${args[@]}"
    run "$new" new "$input" "${args[@]}"
    if cmp -s "$out/base.out" "$out/new.out" && cmp -s "$out/base.err" "$out/new.err" &&
       cmp -s "$out/base.rc" "$out/new.rc"; then
      same=$((same + 1))
    else
      differ=$((differ + 1))
      echo "DIFFERS ($mode, exit $(cat "$out/base.rc") -> $(cat "$out/new.rc")): ${input#"$root/"}"
    fi
  done
done
echo "base $base_ref ($commit) vs $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+changes'):" \
  "${#files[@]} files and ${#folders[@]} folders, json and text: $same identical, $differ different"
[ "$differ" -eq 0 ]
