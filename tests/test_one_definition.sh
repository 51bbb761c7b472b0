#!/bin/sh
# test_one_definition.sh SOURCE_DIR: what must be defined once in the sources is.
#   - the hash: FNV's constants appear only in common/base/hash.h (every hash goes through it);
#   - NCCL's vocabulary: one table of operation names, in common/base/nccl_ops.c (the capture
#     library and the analyzer share its enum);
#   - the trace schema: its version and column lists come from schema/ovl.sql through the
#     generated store/schema_def.h, never written by hand;
#   - the words that name a collective (a kernel that looks like communication): one list, in
#     analyzer/load/comm_names.c;
#   - the diagnosis' thresholds: every constant of analyzer/diagnose/thresholds.h is in the one
#     table of docs/findings.md ("Thresholds at a glance").
# Each finding is printed as FILE:LINE; exit 1 if any.
src=${1:?usage: test_one_definition.sh SOURCE_DIR}
cd "$src" || exit 2
status=0
files=$(find common analyzer libinject workloads kernels bench -name '*.[ch]' | sort)

for f in $files; do
  [ "$f" = common/base/hash.h ] && continue
  if grep -n -i -E '1099511628211|1469598103934665603|14695981039346656037|cbf29ce484222325|100000001b3' "$f"; then
    echo "^ $f: an FNV constant outside common/base/hash.h (use ovl_hash_bytes / ovl_hash_str / ovl_hash_word)" >&2
    status=1
  fi
  if [ "$f" != common/base/nccl_ops.c ] && grep -n -E '"AllReduce", *"ReduceScatter"' "$f"; then
    echo "^ $f: a second table of NCCL operation names (use common/base/nccl_ops.h)" >&2
    status=1
  fi
  if grep -n -E 'enum[^{]*\{' "$f" >/dev/null && grep -n -E '^[[:space:]]*[A-Z_]*(ALLREDUCE|ALL_REDUCE)[[:space:]]*(=[^,]*)?,' "$f" >/dev/null &&
     [ "$f" != common/base/nccl_ops.h ]; then
    grep -n -E '^[[:space:]]*[A-Z_]*(ALLREDUCE|ALL_REDUCE)[[:space:]]*(=[^,]*)?,' "$f"
    echo "^ $f: a second enum of NCCL operations (use ovl_op of common/base/nccl_ops.h)" >&2
    status=1
  fi
  if grep -n -E '#define OVL_SCHEMA_VERSION|^[[:space:]]*[^[:space:]/*].*\{ *"start", *"end"' "$f"; then
    echo "^ $f: the schema version or a table's columns by hand (use store/schema_def.h, generated from schema/ovl.sql)" >&2
    status=1
  fi
  if [ "${f%.[ch]}" != analyzer/load/comm_names ] && grep -n -E '"all_?reduce", *"' "$f"; then
    echo "^ $f: a second list of the words that name a collective (use ovl_comm_lookalike_word, load/comm_names.h)" >&2
    status=1
  fi
done

table=$(sed -n '/^## Thresholds at a glance/,/^## /p' docs/findings.md)
for c in $(sed -n 's/^#define \(OVL_[A-Z0-9_]*\) .*/\1/p' analyzer/diagnose/thresholds.h); do
  if ! printf '%s\n' "$table" | grep -q "\`$c\`"; then
    echo "analyzer/diagnose/thresholds.h: $c is not in docs/findings.md's \"Thresholds at a glance\" table" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "one hash, one NCCL vocabulary, one schema definition, one list of collective words, one thresholds table"
exit "$status"
