/*
** Fake CUDA runtime (TEST DOUBLE): an empty library built as libcudart.so.13 beside the fake
** libcupti.so.13, so that a test program can load "the CUDA runtime" from a directory the
** loader does not search, as a pip wheel's nvidia/cu13/lib is; libovl must then find CUPTI
** beside it (libinject/cupti_locate.h).
*/
__attribute__((visibility("default"))) int fake_cudart_version(void) { return 13000; }
