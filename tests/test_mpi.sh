#!/bin/bash
# `mpirun ... ovl <verb> --mpi` (docs/mpi.md) against one process on the same files: the same
# stdout, the same stderr (warnings, errors: the root alone prints) and the same exit status,
# byte for byte, on this machine's MPI with several processes (--oversubscribe with Open MPI).
#   same    --json for 1, 2, 3 and 4 processes: ZeRO-3 on 8 ranks, the real 8-rank DLRM Kineto
#           job (each process converts its share: the conversions stay where they were made);
#           a job of one trace on 4 processes (3 measure nothing); --mpi without mpirun
#   formats on 4 processes: the text report, --all, --compact, --json of 2x2 TP x FSDP, HTA's
#           Kineto traces (several jobs, sampled traces), the H200 traces of tests/data/gpu-h100
#           (ovl-ddp's modes and PyTorch: marks on the GPU's timeline), a CPU-only trace beside
#           GPU ones, two jobs given together, a folder with a file that is not a trace by name;
#           -o FILE; --html (its worst step's timeline read by the process that measured it);
#           whatif; fit
#   local   --mpi-local: each node's own folder. One node given one folder: every process takes
#           its share, the report as one process's; processes given different folders (as
#           nodes would be: mpirun's colon syntax) report what one process gives for the folders
#           in that order; the same file name from two "nodes" is refused
#   errors  a missing TRACE, a file that is not a trace in another process's share, an output
#           that may not be written: exit 1 on every process, one line naming the problem
#           (printed by the root alone), nothing written
# usage: test_mpi.sh PART OVL MPIEXEC TRACES_DIR
set -u
part=$1 ovl=$2 mpiexec=$3 traces=$4
work=${TMPDIR:-/tmp}/mpi-test.$$
# Open MPI as root (containers) and without the cross-memory attach a container may forbid.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
oversubscribe=""
"$mpiexec" --version 2>&1 | grep -qE "Open ?MPI|OpenRTE" && oversubscribe="--oversubscribe"

. "$(dirname "$0")/check.sh"

# Open MPI's session folders (ompi.HOST.UID, prte.* with PRRTE) in TMPDIR are removed by the
# daemon that made them, which may still be exiting when the last process returned (the
# singleton of "--mpi without mpirun" has one; on a loaded machine it takes a moment): the
# test waits, up to 10 s, for those that were not there before it, so that it leaves nothing.
session_folders() { ls -d "${TMPDIR:-/tmp}"/ompi.* "${TMPDIR:-/tmp}"/prte.* 2>/dev/null; }
sessions_before=$(session_folders)
new_session_folders() { session_folders | grep -vxF "$sessions_before"; }
wait_for_mpi_daemons() {
  for _ in $(seq 100); do
    [ -z "$(new_session_folders)" ] && return
    sleep 0.1
  done
}
mkdir -p "$work"
trap 'wait_for_mpi_daemons; rm -rf "$work"' EXIT
cd "$work" || exit 2

# one NAME ARGS...: one process; its stdout, stderr and status in NAME.{out,err,rc}
one() {
  name=$1; shift
  "$ovl" "$@" > "$name.out" 2> "$name.err"
  echo $? > "$name.rc"
}
# many NAME P ARGS...: the same under mpirun with P processes, --mpi after the verb. mpirun's
# own lines (about a process that exited non-zero) are left out of stderr: they are not ovl's.
many() {
  name=$1 p=$2 verb=$3; shift 3
  "$mpiexec" $oversubscribe -n "$p" "$ovl" "$verb" --mpi "$@" > "$name.out" 2> "$name.all"
  echo $? > "$name.rc"
  grep '^ovl:' "$name.all" > "$name.err"
}
same_files() { cmp -s "$1" "$2"; }
# same ONE MANY: stdout, ovl's stderr and the exit status equal (mpirun exits with the status of
# a process that failed: every process exits with the root's)
same() {
  same_files "$1.out" "$2.out" && same_files "$1.err" "$2.err" && same_files "$1.rc" "$2.rc"
}
show_diff() { diff "$1.out" "$2.out" | head -20; diff "$1.err" "$2.err" | head -10; cat "$2.all" 2>/dev/null | head -20; }

compare() {  # compare LABEL P VERB ARGS...: one process vs P processes
  label=$1 p=$2 verb=$3; shift 3
  one "$label.one" "$verb" "$@"
  many "$label.$p" "$p" "$verb" "$@"
  if same "$label.one" "$label.$p"; then
    echo "ok: $label, $p processes ($(wc -c < "$label.one.out") bytes, exit $(cat "$label.one.rc"))"
  else
    echo "FAIL: $label, $p processes"; show_diff "$label.one" "$label.$p"; fails=$((fails + 1))
  fi
}

sim() { "$ovl" simulate "$@" > /dev/null || { echo "FAIL: ovl simulate $*"; exit 1; }; }

case "$part" in
same)
  sim --strategy zero3 --dp 8 --emit-trace zero3
  for p in 1 2 3 4; do
    compare zero3-json "$p" report --json zero3
    compare dlrm8-json "$p" report --json "$traces/kineto-param-dlrm8"
  done
  compare one-trace 4 report --json zero3/rank5.sqlite
  "$ovl" report --mpi --json zero3 > alone.out 2> alone.err
  check "--mpi without mpirun: exit 0" test $? = 0
  check "--mpi without mpirun: one process, the same report" same_files zero3-json.one.out alone.out
  ;;
formats)
  sim --strategy zero3 --dp 8 --emit-trace zero3
  sim --strategy zero3 --dp 2 --tp 2 --emit-trace tpfsdp
  mkdir -p mixed named
  cp "$traces"/kineto-nonccl/cpu_only__rank-34.*.json.gz mixed/
  cp "$traces"/kineto-param-dlrm8/worker[0-2]_step_12.json.gz mixed/
  cp zero3/rank[0-3].sqlite named/ && echo "notes" > named/README.txt
  compare zero3 4 report zero3
  compare dlrm8 4 report "$traces/kineto-param-dlrm8"
  compare zero3-all 4 report --all zero3
  compare tpfsdp-json 4 report --compact --json tpfsdp
  compare hta-json 4 report --json "$traces/kineto-hta"
  compare h200-json 4 report --json "$traces/../gpu-h100/ddp" "$traces/../gpu-h100/pytorch"
  compare mixed 4 report mixed
  compare mixed-json 4 report --json mixed
  compare two-jobs 4 report zero3 tpfsdp
  compare two-jobs-json 4 report --json zero3 tpfsdp
  compare named 4 report named
  compare whatif 4 whatif --bucket-mb 1,4,25,100 --alpha 50us zero3
  compare whatif-json 4 whatif --json --bucket-mb 1,4,25,100 "$traces/kineto-param-dlrm8"
  compare fit 4 fit --json zero3
  # -o FILE: written by the root alone, complete
  "$ovl" report --json -o o.one.json zero3
  "$mpiexec" $oversubscribe -n 4 "$ovl" report --mpi --json -o o.4.json zero3 > o.4.out 2> o.4.err
  check "-o FILE, 4 processes: exit 0, nothing on stdout" test $? = 0 -a ! -s o.4.out
  check "-o FILE, 4 processes: the one-process file" same_files o.one.json o.4.json
  # the HTML page: written to a file by each; the worst step of DLRM's job is another process's
  for job in dlrm8:"$traces/kineto-param-dlrm8" zero3:zero3; do
    name=${job%%:*} args=${job#*:}
    "$ovl" report --html "$name.one.html" "$args" 2> "$name-html.one.err"
    "$mpiexec" $oversubscribe -n 4 "$ovl" report --mpi --html "$name.4.html" "$args" 2> "$name-html.4.err"
    check "$name --html, 4 processes: exit 0" test $? = 0
    check "$name --html: the same page, 4 processes" same_files "$name.one.html" "$name.4.html"
  done
  ;;
local)
  sim --strategy zero3 --dp 8 --emit-trace zero3
  "$ovl" report --json zero3 > l.one.out
  for p in 2 4; do
    "$mpiexec" $oversubscribe -n "$p" "$ovl" report --mpi-local --json zero3 > "l.$p.out" 2> "l.$p.err"
    check "one node, one folder, $p processes: exit 0" test $? = 0
    check "one node, one folder, $p processes: the one-process report" same_files l.one.out "l.$p.out"
  done
  # Four "nodes": each process given its own folder (two ranks each), then two processes to a folder.
  for d in 0 1 2 3; do mkdir -p "node$d" && cp "zero3/rank$((2 * d)).sqlite" "zero3/rank$((2 * d + 1)).sqlite" "node$d/"; done
  "$ovl" report --json node0 node1 node2 node3 > nodes.one.out
  "$mpiexec" $oversubscribe -n 1 "$ovl" report --mpi-local --json node0 : -n 1 "$ovl" report --mpi-local --json node1 : \
    -n 1 "$ovl" report --mpi-local --json node2 : -n 1 "$ovl" report --mpi-local --json node3 > nodes.4.out 2> nodes.4.err
  check "four folders, one process each: exit 0" test $? = 0
  check "four folders, one process each: the report of the folders in order" same_files nodes.one.out nodes.4.out
  "$ovl" report node0 node1 > pairs.one.out
  "$mpiexec" $oversubscribe -n 2 "$ovl" report --mpi-local node0 : -n 2 "$ovl" report --mpi-local node1 \
    > pairs.4.out 2> pairs.4.err
  check "two folders, two processes each: exit 0" test $? = 0
  check "two folders, two processes each: the report of the folders in order" same_files pairs.one.out pairs.4.out
  "$mpiexec" $oversubscribe -n 1 "$ovl" report --mpi-local node0 : -n 1 "$ovl" report --mpi-local node0/rank0.sqlite \
    > dup.out 2> dup.all
  check "the same file from two nodes: exit 1" test $? = 1
  check "the same file from two nodes: one line naming it" \
    test "$(grep -c "^ovl: --mpi-local: node0/rank0.sqlite is found on the nodes of processes 0 and 1" dup.all)" = 1 \
    -a "$(grep -c "^ovl:" dup.all)" = 1
  check "the same file from two nodes: no report" test ! -s dup.out
  ;;
errors)
  sim --strategy zero3 --dp 8 --emit-trace zero3
  mkdir -p bad && cp zero3/*.sqlite bad/ && echo "not a trace" > bad/rank5.sqlite
  compare missing 3 report zero3 missing.sqlite
  check "a missing TRACE: exit 1" test "$(cat missing.3.rc)" = 1
  check "a missing TRACE: one line" test "$(wc -l < missing.3.err)" = 1
  # in a folder, a file that is not a trace is skipped with a warning, on every process alike
  compare skipped 3 report --json bad
  check "a folder's file that is not a trace: exit 0" test "$(cat skipped.3.rc)" = 0
  check "a folder's file that is not a trace: a warning naming it" grep -q "bad/rank5.sqlite" skipped.3.err
  # named on the command line it fails the job: rank5.sqlite is file 5 of 8, process 2's share with 3
  compare bad 3 report --json bad/rank0.sqlite bad/rank1.sqlite bad/rank2.sqlite bad/rank3.sqlite \
    bad/rank4.sqlite bad/rank5.sqlite bad/rank6.sqlite bad/rank7.sqlite
  check "a bad trace elsewhere: exit 1" test "$(cat bad.3.rc)" = 1
  check "a bad trace elsewhere: one line, naming it" \
    test "$(grep -c "bad/rank5.sqlite: not a trace" bad.3.err)" = 1 -a "$(wc -l < bad.3.err)" = 1
  check "a bad trace elsewhere: no report" test ! -s bad.3.out
  compare unwritable 3 report -o zero3/rank0.sqlite zero3
  check "an output that is an input: refused, exit 1" test "$(cat unwritable.3.rc)" = 1
  check "an output that is an input: untouched" same_files zero3/rank0.sqlite bad/rank0.sqlite
  ;;
*) echo "test_mpi.sh: unknown part '$part'" >&2; exit 2 ;;
esac

if [ $fails -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all $part checks passed"
