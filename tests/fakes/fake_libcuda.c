/*
** Fake CUDA driver (TEST DOUBLE), built as libcuda.so.1: it answers only the two questions
** tests/gpu_probe.c asks (cuInit, cuDeviceGetCount: one device), so that a test can check
** what a GPU test does where a GPU is present: test_inject_faults_gpu_skip puts it first on
** LD_LIBRARY_PATH for a test program that loads no CUDA library of its own.
*/
#define EXPORT __attribute__((visibility("default")))

EXPORT int cuInit(unsigned flags) {
  (void)flags;
  return 0;
}

EXPORT int cuDeviceGetCount(int *count) {
  *count = 1;
  return 0;
}
