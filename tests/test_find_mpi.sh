#!/bin/sh
# cmake/FindOvlMpi.cmake with a fake MPI compiler wrapper (a shell script answering as Open
# MPI's does) that names an include folder which does not exist, as Debian's openmpi-bin
# without libopenmpi-dev does (FindMPI's own test build then fails the whole configure):
#   half AUTO    configures, says the MPI parts are not built and why
#   half ON      the configure fails naming the missing folder
#   OFF          looks for nothing
#   project      the whole project configures with the half-installed MPI (workloads/ asks
#                cmake/FindOvlMpi.cmake, never FindMPI directly)
#   real         this machine's MPI, when it has one: found, with mpiexec
# Usage: test_find_mpi.sh SOURCE_DIR
set -u
src=$1
work=${TMPDIR:-/tmp}/find-mpi.$$
. "$(dirname "$0")/check.sh"

configure() {  # configure NAME SOURCE [cmake args...]: output in $work/NAME.log, status returned
  name=$1 dir=$2; shift 2
  cmake -S "$dir" -B "$work/$name" -DOVL_SOURCE_DIR="$src" "$@" > "$work/$name.log" 2>&1
}

mkdir -p "$work/fake/bin"
trap 'rm -rf "$work"' EXIT
missing="$work/fake/missing/include"
cat > "$work/fake/bin/mpicc" <<WRAPPER
#!/bin/sh
# test double: the wrapper of a half-installed Open MPI (its folders do not exist)
for a in "\$@"; do
  case "\$a" in
    -showme:incdirs) echo "$missing"; exit 0 ;;
    -showme:libdirs) echo "$work/fake/missing/lib"; exit 0 ;;
    -showme:compile) echo "-I$missing -pthread"; exit 0 ;;
    -showme:link) echo "-pthread -L$work/fake/missing/lib -lmpi"; exit 0 ;;
    -showme:libs) echo "mpi"; exit 0 ;;
    -showme:version) echo "mpicc: Open MPI 4.1.4 (Language: C)"; exit 0 ;;
    -showme|-show) echo "cc -I$missing -pthread -L$work/fake/missing/lib -lmpi"; exit 0 ;;
  esac
done
exec cc "\$@"
WRAPPER
chmod +x "$work/fake/bin/mpicc"
fake="-DMPI_C_COMPILER=$work/fake/bin/mpicc"
module="$src/tests/cmake/find_mpi"

configure half-auto "$module" "$fake"
check "half AUTO: configures" test $? -eq 0
check "half AUTO: not found" has "$work/half-auto.log" "FIND found=FALSE"
check "half AUTO: says why" has "$work/half-auto.log" "MPI parts not built (ovl report --mpi): the MPI compiler wrapper $work/fake/bin/mpicc names the include folder $missing, which does not exist"

configure half-on "$module" "$fake" -DOVL_MPI=ON
check "half ON: the configure fails" test $? -ne 0
check "half ON: names the folder" has "$work/half-on.log" "OVL_MPI=ON: MPI not usable: the MPI compiler wrapper $work/fake/bin/mpicc names the include folder $missing"

configure off "$module" -DOVL_MPI=OFF
check "OFF: configures" test $? -eq 0
check "OFF: not found, saying so" has "$work/off.log" "MPI parts not built (ovl report --mpi): OVL_MPI=OFF"

# The whole project, as a user's first `cmake` would run it (tests off: only the configure).
configure project "$src" "$fake" -DOVL_BUILD_TESTS=OFF
check "project with a half-installed MPI: configures" test $? -eq 0
check "project: MPI parts not built, saying why" has "$work/project.log" "MPI parts FALSE (OVL_MPI=AUTO)"

if command -v mpicc >/dev/null 2>&1; then
  configure real "$module"
  if has "$work/real.log" "FIND found=TRUE"; then
    check "real: found with mpiexec" has "$work/real.log" "mpiexec=/"
  else
    echo "note: this machine's mpicc is not a usable MPI here:"; grep "MPI parts" "$work/real.log"
  fi
else
  echo "note: no mpicc on this machine: the real-MPI case is not checked"
fi

if [ $fails -ne 0 ]; then
  for f in "$work"/*.log; do echo "--- $f"; cat "$f"; done
  exit 1
fi
echo "all FindOvlMpi checks passed"
