#!/bin/sh
# Prepares the GPU kit (tests/gpu/README.md), here, on a machine with the CUDA toolkit and no
# GPU: a Release build for sm_90 (H100) in build-gpu/ (ignored by git), with the shared
# libraries the GPU machine lacks (SQLite, protobuf-c, zlib) copied into build-gpu/kit-lib,
# found by the binaries' RUNPATH ($ORIGIN-relative: no path of this machine).
#
# The build records its paths (ctest files, the tests' compiled-in program paths) as
# /tmp/ovl-gpu/src (this checkout) and /tmp/ovl-gpu/build (build-gpu), two links that
# device_check.sh makes again on the GPU machine, wherever the checkout lands there.
#
# usage: tests/gpu/prepare.sh [-j N]
#   OVL_WERROR=ON   warnings are errors (bootstrap.sh test sets it)
#   CUDA_ARCH=90    the CUDA architectures to build for
# Prints what must travel and its size; fails above 48 MiB (the device carries 64 MiB with
# the working tree).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
kit="$root/build-gpu"
canon=/tmp/ovl-gpu
jobs=$(nproc 2>/dev/null || echo 2)
limit_mib=48
case "${1:-}" in
  -j) jobs=${2:?-j needs a number} ;;
  -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
  "") ;;
  *) echo "prepare.sh: unknown argument '$1'" >&2; exit 1 ;;
esac
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "prepare.sh: the CUDA toolkit (nvcc) is needed to build the GPU kit" >&2; exit 1; }

mkdir -p "$kit" "$canon"
ln -sfn "$root" "$canon/src"
ln -sfn "$kit" "$canon/build"

echo "prepare: Release build for sm_${CUDA_ARCH:-90} in build-gpu (paths recorded as $canon)"
# Every binary looks for the carried libraries beside itself, one and two folders up. No MPI:
# the kit runs on one GPU machine, which need not have this machine's MPI libraries.
rpath='$ORIGIN/kit-lib;$ORIGIN/../kit-lib;$ORIGIN/../../kit-lib'
cmake -S "$canon/src" -B "$canon/build" -DCMAKE_BUILD_TYPE=Release -DOVL_WITH_CUDA=ON -DOVL_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DOVL_WERROR="${OVL_WERROR:-OFF}" \
  -DCMAKE_BUILD_RPATH="$rpath" >"$kit/configure.log" 2>&1 || { cat "$kit/configure.log" >&2; exit 1; }
cmake --build "$canon/build" -j "$jobs"

# The libraries the GPU machine lacks, resolved here and copied (not linked) beside the build
# (a copy from an earlier run is removed first: ldd would find it through the RUNPATH).
rm -rf "$kit/kit-lib"
mkdir -p "$kit/kit-lib"
for lib in libsqlite3.so.0 libprotobuf-c.so.1 libz.so.1; do
  path=$(ldd "$kit/ovl" | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] && [ -f "$path" ] || { echo "prepare.sh: ovl does not load $lib here" >&2; exit 1; }
  cp -L "$path" "$kit/kit-lib/$lib"
done

# The commit the kit was built from: the GPU machine's copy of the tree may carry another
# .git HEAD (on the first H200 runs every summary named the session's first commit).
(cd "$root" && git describe --always --dirty 2>/dev/null || echo "no git") > "$kit/kit-commit.txt"

# What must travel: the binaries, libraries and ctest files. Objects and static libraries
# do not (a rerun of this script rebuilds them).
find "$kit" \( -name '*.o' -o -name '*.a' \) -type f -delete
size=$(du -sk "$kit" | awk '{ print $1 }')
echo "prepare: build-gpu is $((size / 1024)) MiB ($size KiB); the GPU machine is given it with carry: [\"build-gpu\"]"
if [ "$size" -gt $((limit_mib * 1024)) ]; then
  echo "prepare.sh: build-gpu is over $limit_mib MiB: too much to carry" >&2
  exit 1
fi
for bin in ovl libovl.so ovl-ddp tests/gpu_workload; do
  missing=$(ldd "$kit/$bin" | grep "not found" || true)
  [ -z "$missing" ] || { echo "prepare.sh: $bin: $missing" >&2; exit 1; }
done
echo "prepare: done; next: tests/gpu/device_check.sh --dry-run here, then the device call in tests/gpu/README.md"
