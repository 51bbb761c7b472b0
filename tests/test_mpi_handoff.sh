#!/bin/sh
# `ovl` is linked without MPI and hands a --mpi command to `ovl-mpi` beside it
# (analyzer/mpi/mpi_job.h, ovl_mpi_sibling): every other command starts without loading libmpi.
#   - `ovl --version` loads no libmpi; `ovl-mpi --version` does (so the check can see it)
#   - `ovl` copied alone: --mpi fails with one line naming the missing program, exit 2, stdout
#     empty; a command without --mpi still works there
# (that --mpi reports through the hand-off are the one process's: test_mpi.sh)
# usage: test_mpi_handoff.sh OVL OVL_MPI TRACE
set -u
ovl=$1 ovl_mpi=$2 trace=$3
work=${TMPDIR:-/tmp}/mpi-handoff.$$
. "$(dirname "$0")/check.sh"
mkdir -p "$work/alone"
trap 'rm -rf "$work"' EXIT

LD_DEBUG=libs "$ovl" --version > /dev/null 2> "$work/ovl.libs"
LD_DEBUG=libs "$ovl_mpi" --version > /dev/null 2> "$work/ovl-mpi.libs"
check "ovl starts without libmpi" lacks "$work/ovl.libs" "libmpi"
check "ovl-mpi loads libmpi" has "$work/ovl-mpi.libs" "libmpi"

cp "$ovl" "$work/alone/ovl"
"$work/alone/ovl" report --mpi "$trace" > "$work/alone.out" 2> "$work/alone.err"
rc=$?
check "ovl alone: --mpi exits 2" [ "$rc" = 2 ]
check "ovl alone: nothing on stdout" [ ! -s "$work/alone.out" ]
check "ovl alone: one line" [ "$(wc -l < "$work/alone.err")" = 1 ]
check "ovl alone: names the missing program" has "$work/alone.err" "cannot start $work/alone/ovl-mpi"
"$work/alone/ovl" report "$trace" > "$work/plain.out" 2> "$work/plain.err"
check "ovl alone: a report without --mpi works" [ $? = 0 ] && [ -s "$work/plain.out" ]
[ "$fails" = 0 ] || { cat "$work/alone.err"; exit 1; }
