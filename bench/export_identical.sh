#!/bin/bash
# No export changes: runs `ovl export -q --perfetto F --chrome G` with a BASE binary and a NEW
# one on every trace file and trace folder under ../shared/traces and tests/data (and on any
# EXTRA traces named after them), and compares, byte for byte, the two Perfetto files, the
# two Chrome JSON files, and what each printed with its exit status. A trace both refuse
# (no file from either, same message) counts as identical.
#
# usage: bench/export_identical.sh BASE_OVL NEW_OVL [EXTRA_TRACE...]
#   e.g. bench/export_identical.sh /work/main/build-rel/ovl build-rel/ovl /tmp/ovl-bench/bench-300000-150.sqlite
# Both draw on one thread (OVL_EXPORT_THREADS=0): drawn on several, the packets' order in the
# Perfetto file varies from run to run, even between two runs of one binary.
# Exit status: 0 when every export is identical, 1 when one differs, 2 on a usage error.
set -uo pipefail
export OVL_EXPORT_THREADS=0
[ $# -ge 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 BASE_OVL NEW_OVL [EXTRA_TRACE...]" >&2; exit 2; }
base=$1 new=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/export_identical.XXXXXX")
trap 'rm -rf "$out"' EXIT
mapfile -t files < <(find "$root/../shared/traces" "$root/tests/data" -type f \
  \( -name '*.sqlite' -o -name '*.json' -o -name '*.json.gz' \) | sort)
mapfile -t folders < <(printf '%s\n' "${files[@]}" | xargs -n1 dirname | sort -u)
same=0 differ=0 refused=0
for t in "${files[@]}" "${folders[@]}" "$@"; do
  for side in base new; do
    bin=$base
    [ $side = new ] && bin=$new
    rm -f "$out/$side.pf" "$out/$side.json"
    "$bin" export -q --perfetto "$out/$side.pf" --chrome "$out/$side.json" "$t" >"$out/$side.out" 2>&1
    echo "exit $?" >>"$out/$side.out"
  done
  ok=1
  cmp -s "$out/base.out" "$out/new.out" || ok=0
  for f in pf json; do
    if [ -e "$out/base.$f" ] || [ -e "$out/new.$f" ]; then cmp -s "$out/base.$f" "$out/new.$f" || ok=0; fi
  done
  if [ $ok = 1 ]; then
    same=$((same + 1))
    [ -e "$out/base.pf" ] || refused=$((refused + 1))
  else
    differ=$((differ + 1))
    echo "DIFFER: $t"
  fi
done
echo "exports: $same identical ($refused of them refused by both), $differ different"
[ $differ = 0 ]
