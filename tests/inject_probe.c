/*
** A program that looks for NCCL (and CUPTI, whose calls libovl also interposes) the way
** frameworks do, run under LD_PRELOAD=libovl.so by tests/test_inject_hostile.c. It knows
** nothing of ovl.
**
**   inject_probe none        dlsym(RTLD_DEFAULT, ...) for NCCL's and CUPTI's entry points:
**                            prints what it finds, or a miss without a dlerror() message;
**                            exit 0 when nothing is found, each miss explained (this program
**                            has neither)
**   inject_probe dlopen LIB  the same probe, then dlopen(LIB, RTLD_NOW | RTLD_LOCAL), a
**                            library that uses NCCL (tests/stubs/stub_nccl_user.c, as Python
**                            loads libtorch_cuda.so), and its stub_nccl_user_run(100)
*/
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char *const entry_points[] = {
  "ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclBroadcast", "ncclBcast", "ncclReduce",
  "ncclAlltoAll", "ncclGather", "ncclScatter", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd",
  "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitRankScalable", "ncclCommInitAll", "ncclCommSplit",
  "ncclCommShrink", "ncclCommDestroy", "ncclCommAbort", "ncclGetVersion",
  "cuptiActivityRegisterCallbacks", "cuptiActivityDisable", "cuptiFinalize", "cuptiSubscribe", "cuptiSubscribe_v2",
};

static int probe(void) {
  int found = 0;
  for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
    dlerror();
    if (dlsym(RTLD_DEFAULT, entry_points[i])) {
      printf("probe: found %s\n", entry_points[i]);
      found++;
    } else if (!dlerror()) {  /* callers format it (Python's ctypes crashes on NULL) */
      printf("probe: %s is NULL without an error\n", entry_points[i]);
      found++;
    }
  }
  if (!found) printf("probe: no NCCL or CUPTI\n");
  return found;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "none";
  if (!strcmp(mode, "none")) return probe() ? 1 : 0;
  if (!strcmp(mode, "dlopen") && argc > 2) {
    if (probe()) return 1;
    void *lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      printf("dlopen: %s\n", dlerror());
      return 2;
    }
    int (*run)(int) = (int (*)(int))dlsym(lib, "stub_nccl_user_run");
    if (!run) return 3;
    int failed = run(100);
    printf("user: %d failed calls\n", failed);
    return failed ? 4 : 0;
  }
  fprintf(stderr, "usage: inject_probe none | dlopen LIB\n");
  return 64;
}
