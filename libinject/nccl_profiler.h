/*
** libovl.so as NCCL's profiler plugin (nccl_profiler.c): what the rest of libovl asks of it.
** The plugin itself is reached only by NCCL, through the exported ncclProfiler_v5 and
** ncclProfiler_v4 tables (nccl_profiler_abi.h).
*/
#ifndef OVL_INJECT_NCCL_PROFILER_H
#define OVL_INJECT_NCCL_PROFILER_H

#include <stddef.h>

/* meta.nccl_profiler: which interface NCCL loaded and what came through it, e.g. "v5: 2
** communicators, 1200 calls (1200 joined to the NCCL hooks), 9600 channel intervals";
** "" while NCCL never initialised the plugin. Any thread. */
void ovl_nccl_profiler_describe(char *buf, size_t size);

#endif
