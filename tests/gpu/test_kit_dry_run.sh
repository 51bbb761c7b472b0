#!/bin/sh
# The GPU kit keeps working without a GPU: device_check.sh --dry-run on this build runs every
# stage (the GPU steps skip with their reason), writes the same files as on the GPU machine
# (summary.txt with one line per stage, logs.txt with each stage's output, traces.tar.gz: the
# device tool brings back at most 8 files in all, counting those in folders), and STAGES reruns
# a subset.
# Usage: test_kit_dry_run.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
out=${TMPDIR:-/tmp}/kit-out
fails=0
check() {  # check DESCRIPTION COMMAND...
  what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

OUT="$out" "$src/tests/gpu/device_check.sh" --dry-run --kit "$build" > "$out.stdout" 2>&1
rc=$?
cat "$out.stdout"
check "exit status 0" test $rc -eq 0
check "summary header says dry run" grep -q "DRY RUN" "$out/summary.txt"
for stage in probe ctest capture ddp verify buckets table overhead pytorch profiler pack; do
  check "$stage: one summary line" test "$(grep -c "^$stage " "$out/summary.txt")" -eq 1
  check "$stage: ok or skipped with a reason" grep -Eq "^$stage +(ok|skipped) +[0-9]+s  [^ ]" "$out/summary.txt"
  check "$stage: its log" grep -Eq "^===== $stage: (ok|skipped) =====" "$out/logs.txt"
done
check "the GPU tests ran through ctest -L gpu" grep -q "gpu tests: 0 passed, 4 skipped, 0 failed" "$out/summary.txt"
check "the GPU-only stages say why they skip" grep -Eq "^pytorch +skipped .*no PyTorch with a usable GPU" "$out/summary.txt"
check "the traces archive" tar tzf "$out/traces.tar.gz" > /dev/null
check "at most 8 files in OUT, folders included" test "$(find "$out" -type f | wc -l)" -le 8
check "the table stage's table is packed" sh -c "tar tzf '$out/traces.tar.gz' | grep -q 'table.md'"
check "the stage logs are packed" sh -c "tar tzf '$out/traces.tar.gz' | grep -q 'logs/ddp.log'"

rm -rf "$out"
STAGES="probe pack" OUT="$out" "$src/tests/gpu/device_check.sh" --dry-run --kit "$build" > "$out.stdout" 2>&1
check "STAGES: exit status 0" test $? -eq 0
check "STAGES: only the stages named" test "$(grep -cE '^[a-z]+ +(ok|skipped|FAILED|TIMEOUT) ' "$out/summary.txt")" -eq 2
STAGES="nosuch" OUT="$out" "$src/tests/gpu/device_check.sh" --dry-run --kit "$build" > "$out.stdout" 2>&1
check "an unknown stage fails" test $? -ne 0
OUT="" "$src/tests/gpu/device_check.sh" --dry-run > "$out.stdout" 2>&1
check "no OUT: a usage error" test $? -eq 1
rm -rf "$out" "$out.stdout"
[ $fails -eq 0 ] && echo "GPU kit dry run: all checks passed"
exit $((fails != 0))
