/*
** Whether this machine can run CUDA work, asked of the driver directly (dlopen libcuda.so.1,
** cuInit, cuDeviceGetCount) so that test programs need not link CUDA. GPU-only tests skip
** with the reason when it says no; tests of "no GPU" behaviour skip when it says yes.
*/
#ifndef OVL_TEST_GPU_PROBE_H
#define OVL_TEST_GPU_PROBE_H

#include <stddef.h>

/* 1 when a CUDA driver with at least one usable device is present; 0 with the reason in why. */
int gpu_present(char *why, size_t size);

#endif
