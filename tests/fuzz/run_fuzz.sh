#!/bin/sh
# run_fuzz.sh FUZZER SECONDS DICT MAX_LEN ARTIFACT_DIR FUZZ_SEEDS SEED_DIR [MORE_SEEDS...]
#
# Runs one libFuzzer target for SECONDS from its committed corpus (SEED_DIR: seeds and the
# regression inputs of every defect found) and MORE_SEEDS: folders, or @ovl / @nsys for the
# SQLite seeds FUZZ_SEEDS builds. New inputs go to a scratch corpus under TMPDIR, removed
# afterwards; a crash, leak or hang leaves its input in ARTIFACT_DIR and fails the run.
# The last lines of libFuzzer's output (execs, cov, ft) are printed for the record.
# Extra libFuzzer flags: $OVL_FUZZ_FLAGS (e.g. "-fork=1 -ignore_crashes=1" for long runs);
# $OVL_FUZZ_LOG, when set, receives libFuzzer's whole output.
set -u
fuzzer=$1 seconds=$2 dict=$3 max_len=$4 artifacts=$5 seeds_tool=$6
shift 6
work=$(mktemp -d "${TMPDIR:-/tmp}/ovl-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/new" "$work/generated" "$artifacts" || exit 2
dirs=""
for d in "$@"; do
  case "$d" in
    @ovl) "$seeds_tool" "$work/generated" "$work" >/dev/null || exit 2
          rm -f "$work"/*.sqlite; dirs="$dirs $work/generated" ;;
    @nsys) "$seeds_tool" "$work" "$work/generated" >/dev/null || exit 2
           rm -f "$work"/*.sqlite; dirs="$dirs $work/generated" ;;
    *) dirs="$dirs $d" ;;
  esac
done
name=$(basename "$fuzzer")
echo "run_fuzz: $name for ${seconds}s, seeds:$dirs"
# The sanitizers' reports end the run (-fno-sanitize-recover); leaks are findings too.
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$seconds" -dict="$dict" -max_len="$max_len" -timeout=20 -rss_limit_mb=2560 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$name-" ${OVL_FUZZ_FLAGS:-} "$work/new" $dirs >"$work/log" 2>&1
rc=$?
[ -n "${OVL_FUZZ_LOG:-}" ] && cp "$work/log" "$OVL_FUZZ_LOG"
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|^Done|ERROR|SUMMARY|Test unit written|runtime error' "$work/log" | tail -n 25
if [ "$rc" -ne 0 ]; then
  echo "run_fuzz: $name failed (exit $rc); the full log follows" >&2
  tail -n 80 "$work/log" >&2
fi
exit "$rc"
