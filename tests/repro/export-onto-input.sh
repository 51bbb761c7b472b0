#!/bin/bash
# Reproducer export-onto-input.sh: an output that is one of the inputs (by name, through a
# hard link, or as both export formats at once) is refused before anything is read or written.
. "$(dirname "$0")/lib.sh"
cp "$DATA/base-ovl.sqlite" "$d/t.sqlite"
chmod u+w "$d/t.sqlite"
before=$(sum "$d/t.sqlite")
ln "$d/t.sqlite" "$d/alias.sqlite"
for args in "export --perfetto $d/t.sqlite" "export --chrome $d/t.sqlite" "export --chrome $d/alias.sqlite" \
            "report -o $d/t.sqlite" "report --json -o $d/alias.sqlite" "fit -o $d/t.sqlite" \
            "whatif --bucket-mb 25 -o $d/t.sqlite" "report --html $d/t.sqlite" "report --html $d/alias.sqlite"; do
  run "$d/out" "$d/err" $args "$d/t.sqlite"
  check "$args: exit 1" [ "$rc" = 1 ]
  check "$args: one ovl: line naming the output" \
    [ "$(wc -l < "$d/err")" = 1 -a "$(grep -c "^ovl: $d/.*input" "$d/err")" = 1 ]
  check "$args: input unchanged" [ "$(sum "$d/t.sqlite")" = "$before" ]
  check "$args: nothing else written" only_files "$d" alias.sqlite err out t.sqlite
done
# Two outputs naming one file.
run "$d/out" "$d/err" export --perfetto "$d/x.out" --chrome "$d/./x.out" "$d/t.sqlite"
check "--perfetto and --chrome on one file: exit 1" [ "$rc" = 1 ]
check "--perfetto and --chrome on one file: nothing written" only_files "$d" alias.sqlite err out t.sqlite
# The same verbs with a fresh output work, and write exactly that file.
run "$d/out" "$d/err" export --perfetto "$d/x.pftrace" "$d/t.sqlite"
check "export to a new file: exit 0" [ "$rc" = 0 ]
check "export to a new file: the file and nothing else" only_files "$d" alias.sqlite err out t.sqlite x.pftrace
finish
