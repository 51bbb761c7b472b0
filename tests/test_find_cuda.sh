#!/bin/sh
# cmake/FindOvlCuda.cmake on fake toolkits (empty files in the right places), headers and
# libraries re-rooted with CMAKE_FIND_ROOT_PATH so that this machine's real toolkit is never
# seen (programs are not: cmake needs the real compiler; each fake has its own nvcc, found first):
#   versioned    a toolkit whose libraries exist only as libX.so.N (no libX.so): found
#   wheels       the pip layout (nvidia/cu13 + nvidia/nccl) through OVL_CUDA_PIP_ROOT: found
#   missing ON   NCCL missing with OVL_WITH_CUDA=ON: the configure fails naming libnccl.so
#   missing AUTO the same with AUTO: configures, says the CUDA parts are not built and why
# Usage: test_find_cuda.sh SOURCE_DIR
set -u
src=$1
work=${TMPDIR:-/tmp}/find-cuda.$$
. "$(dirname "$0")/check.sh"

# fake_toolkit ROOT: headers, nvcc, versioned libraries; NCCL unless $2 = no-nccl
fake_toolkit() {
  mkdir -p "$1/include/nvtx3" "$1/lib64" "$1/bin"
  : > "$1/include/cupti.h"
  echo '#define CUPTI_API_VERSION 130001' > "$1/include/cupti_version.h"
  echo '#define CUDA_VERSION 13000' > "$1/include/cuda.h"
  : > "$1/include/nvtx3/nvToolsExt.h"
  printf '#!/bin/sh\nexit 0\n' > "$1/bin/nvcc" && chmod +x "$1/bin/nvcc"
  for l in libcupti.so.13 libcudart.so.13 libcublas.so.13; do : > "$1/lib64/$l"; done
  if [ "${2:-}" != no-nccl ]; then : > "$1/include/nccl.h"; : > "$1/lib64/libnccl.so.2"; fi
}

configure() {  # configure NAME ROOT [cmake args...]: output in $work/NAME.log, status returned
  name=$1 root=$2; shift 2
  env -u CUDA_HOME -u CUDA_PATH -u NCCL_HOME -u OVL_CUDA_PIP_ROOT \
    cmake -S "$src/tests/cmake/find_cuda" -B "$work/$name" -DOVL_SOURCE_DIR="$src" \
      -DCMAKE_FIND_ROOT_PATH="$root" -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY \
      -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY "$@" > "$work/$name.log" 2>&1
}

mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

fake_toolkit "$work/versioned/usr/local/cuda"
configure versioned "$work/versioned"
check "versioned: configures" test $? -eq 0
check "versioned: found" has "$work/versioned.log" "FIND found=TRUE cupti_major=13"
check "versioned: libnccl.so.2" has "$work/versioned.log" "nccl=$work/versioned/usr/local/cuda/lib64/libnccl.so.2"
check "versioned: libcupti.so.13" has "$work/versioned.log" "cupti=$work/versioned/usr/local/cuda/lib64/libcupti.so.13"

pip="$work/wheels/venv/site-packages/nvidia"
fake_toolkit "$pip/cu13" no-nccl
mkdir -p "$pip/cu13/lib" "$pip/nccl/include" "$pip/nccl/lib"
mv "$pip/cu13/lib64/"* "$pip/cu13/lib/" && rmdir "$pip/cu13/lib64"
: > "$pip/nccl/include/nccl.h"
: > "$pip/nccl/lib/libnccl.so.2"
configure wheels "$work/wheels" -DOVL_CUDA_PIP_ROOT="$pip"
check "wheels: configures" test $? -eq 0
check "wheels: found" has "$work/wheels.log" "FIND found=TRUE"
check "wheels: NCCL from nvidia/nccl" has "$work/wheels.log" "nccl=$pip/nccl/lib/libnccl.so.2"
check "wheels: CUPTI from nvidia/cu13" has "$work/wheels.log" "cupti=$pip/cu13/lib/libcupti.so.13"

fake_toolkit "$work/nonccl/usr/local/cuda" no-nccl
configure missing-on "$work/nonccl" -DOVL_WITH_CUDA=ON
check "missing ON: the configure fails" test $? -ne 0
check "missing ON: names what is missing" has "$work/missing-on.log" "not found: nccl.h, libnccl.so"
check "missing ON: nothing else missing" lacks "$work/missing-on.log" "libcupti.so,"

configure missing-auto "$work/nonccl" -DOVL_WITH_CUDA=AUTO
check "missing AUTO: configures" test $? -eq 0
check "missing AUTO: says it" has "$work/missing-auto.log" "CUDA parts not built (libovl.so, ovl-ddp, GPU tests): not found: nccl.h, libnccl.so"
check "missing AUTO: found FALSE" has "$work/missing-auto.log" "FIND found=FALSE"

if [ $fails -ne 0 ]; then
  for f in "$work"/*.log; do echo "--- $f"; cat "$f"; done
  exit 1
fi
echo "all FindOvlCuda checks passed"
