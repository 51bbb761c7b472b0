#!/bin/bash
# Reproducer import-unlinks-output.sh: an output that exists and is not a regular file (a
# device, a symbolic link, a FIFO) is refused and left alone; a failed import leaves the
# previous output as it was; no path writes through a link.
. "$(dirname "$0")/lib.sh"
targets="link fifo"
if mknod "$d/null" c 1 3 2>/dev/null; then targets="null $targets"; else echo "note: mknod not permitted, device case skipped"; fi
echo "link target" > "$d/target"
ln -s target "$d/link"
mkfifo "$d/fifo"
for t in $targets; do
  for input in k-valid.json base-ovl.sqlite; do  # conversion and copy paths
    run "$d/out" "$d/err" import -q "$DATA/$input" -o "$d/$t"
    check "import $input -o $t: exit 1" [ "$rc" = 1 ]
    check "import $input -o $t: the reason is named" grep -q "^ovl: $d/$t: the output exists and is" "$d/err"
  done
  run "$d/out" "$d/err" report -o "$d/$t" "$DATA/base-ovl.sqlite"
  check "report -o $t: exit 1" [ "$rc" = 1 ]
done
[ -e "$d/null" ] && check "the device is still a device" [ -c "$d/null" ]
check "the link is still a link to the same target" [ -L "$d/link" -a "$(readlink "$d/link")" = target ]
check "nothing written through the link" [ "$(cat "$d/target")" = "link target" ]
check "the FIFO is still a FIFO" [ -p "$d/fifo" ]
cp "$DATA/base-ovl.sqlite" "$d/prev.sqlite"
before=$(sum "$d/prev.sqlite")
printf '{"traceEvents":[' > "$d/bad.json"
run "$d/out" "$d/err" import "$d/bad.json" -o "$d/prev.sqlite"
check "failed import: exit 1" [ "$rc" = 1 ]
check "failed import: the previous output is unchanged" [ "$(sum "$d/prev.sqlite")" = "$before" ]
check "failed import: no temporary file left" [ -z "$(ls -A "$d" | grep -e '\.ovl-' -e '-wal$' -e '-shm$' -e '-journal$')" ]
# The previous output is a trace: replaced only with --force (issue 33: never replace a trace
# unasked; the filed reproducer replaced it without).
run "$d/out" "$d/err" import -q "$DATA/k-valid.json" -o "$d/prev.sqlite"
check "a good import onto a trace without --force: exit 1" [ "$rc" = 1 ]
check "a good import onto a trace without --force: the reason is named" grep -q "^ovl: $d/prev.sqlite: exists and is a trace" "$d/err"
check "a good import onto a trace without --force: unchanged" [ "$(sum "$d/prev.sqlite")" = "$before" ]
run "$d/out" "$d/err" import -q --force "$DATA/k-valid.json" -o "$d/prev.sqlite"
check "a good import replaces the previous output: exit 0" [ "$rc" = 0 ]
check "a good import replaces the previous output" [ "$(sum "$d/prev.sqlite")" != "$before" ]
finish
