#!/bin/sh
# ovl set-up: installs what is missing, builds, then runs the demo or the whole test suite.
#
#   ./bootstrap.sh demo   build, then simulate a data-parallel job and report on its trace
#                         (text, and the HTML page ovl-trace/demo.html)
#   ./bootstrap.sh test   build, then run every test, normally and under ASan + UBSan, build
#                         the optimised Release configuration (-O3; with the CUDA toolkit,
#                         the GPU kit's, rehearsed by its dry run: tests/gpu/README.md), and
#                         run each libFuzzer target of tests/fuzz for 60 s under ASan + UBSan
#
# Installing Debian packages needs root: run as root, or have sudo. With the CUDA toolkit
# (under /usr/local/cuda or $CUDA_HOME) the capture library and workloads are built too.
set -eu

cd "$(dirname "$0")"
mode=${1:-demo}
case "$mode" in
  demo|test) ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  *) echo "bootstrap.sh: unknown mode '$mode' (demo or test)" >&2; exit 1 ;;
esac

# Debian packages the build and tests need. Open MPI: `mpirun ... ovl report --mpi` analyses a
# job with one process per node (docs/mpi.md); a build without it works, minus --mpi.
packages="build-essential cmake pkg-config libsqlite3-dev sqlite3 protobuf-c-compiler libprotobuf-c-dev protobuf-compiler zlib1g-dev"
packages="$packages openmpi-bin libopenmpi-dev"
# The tests also open the HTML report in a real browser (headless); python3 runs the checkers;
# the fuzz step builds with clang (libFuzzer ships with clang's runtime libraries).
if [ "$mode" = test ]; then packages="$packages python3 chromium clang"; fi
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "bootstrap: installing$missing"
  if [ "$(id -u)" = 0 ]; then sudo=""
  elif command -v sudo >/dev/null 2>&1; then sudo="sudo"
  else echo "bootstrap: need root (or sudo) to install:$missing" >&2; exit 1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

jobs=$(nproc 2>/dev/null || echo 2)
# Warnings are errors when testing (developers, CI), never for the demo's user build.
werror=OFF
[ "$mode" = test ] && werror=ON
build() {  # build DIR [cmake args...]
  dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOVL_WERROR=$werror "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

build build
if [ "$mode" = demo ]; then
  mkdir -p ovl-trace
  echo "== ovl simulate: the alpha-beta bucketing model (48 layers, 25 MB each)"
  build/ovl simulate
  echo
  echo "== a job whose gradient buckets are too large (16 layers, 400 MB each), written as a trace and analysed"
  # --force: the trace of an earlier demo is replaced (ovl never replaces a trace unasked).
  build/ovl simulate --force --bucket-layers 16 --steps 3 --emit-trace ovl-trace/demo.sqlite >/dev/null
  build/ovl report ovl-trace/demo.sqlite
  echo
  echo "== what smaller buckets would give (the finding's own suggestion)"
  build/ovl whatif --bucket-mb 5,25,100 ovl-trace/demo.sqlite
  echo
  echo "JSON: build/ovl report --json ovl-trace/demo.sqlite"
  # The model's all-reduce latency is given: the demo's buckets are all one size, so whatif
  # cannot fit alpha apart from beta for the page's bucket-size valley.
  build/ovl report --force --alpha 200us --html ovl-trace/demo.html ovl-trace/demo.sqlite
  echo "HTML: $(pwd)/ovl-trace/demo.html (open it in a browser)"
else
  (cd build && ctest --output-on-failure -j "$jobs")
  build build-asan -DOVL_SANITIZE=ON
  (cd build-asan && ctest --output-on-failure -j "$jobs")
  # -O3 warns about things -O2 does not (maybe-uninitialized): the Release build must build
  # too, warnings as errors (the tests ran above; only the build is checked here). With the
  # CUDA toolkit it is the GPU kit's build (tests/gpu/prepare.sh: Release for sm_90, the tests
  # included, what a lent GPU machine is given), then the kit's dry run on it.
  if command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    echo "bootstrap: the GPU kit's Release build (-O3, warnings as errors) and its dry run"
    OVL_WERROR=ON tests/gpu/prepare.sh -j "$jobs"
    kit_out=$(mktemp -d)
    OUT="$kit_out" tests/gpu/device_check.sh --dry-run || { rm -rf "$kit_out"; exit 1; }
    rm -rf "$kit_out"
  else
    echo "bootstrap: Release build (-O3, warnings as errors)"
    build build-release -DCMAKE_BUILD_TYPE=Release -DOVL_BUILD_TESTS=OFF
  fi
  # Fuzzing (tests/fuzz): only the fuzz targets are built with clang, then each runs 60 s.
  if command -v clang >/dev/null 2>&1; then
    echo "bootstrap: fuzz targets (clang, ASan + UBSan), 60 s each"
    cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOVL_WERROR=ON \
      -DOVL_SANITIZE=ON -DOVL_FUZZ=ON -DOVL_WITH_CUDA=OFF >/dev/null
    cmake --build build-fuzz -j "$jobs" --target ovl_fuzzers
    (cd build-fuzz && ctest -L fuzz --output-on-failure -j "$jobs")
  else
    echo "bootstrap: SKIP fuzz targets: clang not found"
  fi
fi
