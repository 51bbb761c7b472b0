/*
** How the `ovl` process asks glibc's allocator to behave. Only the CLI calls this; libovl.so
** never does (it must not change the traced program's allocator).
*/
#ifndef OVL_MALLOC_POLICY_H
#define OVL_MALLOC_POLICY_H

/* The size from which a block is mapped on its own and unmapped when freed: the analysis's
** per-collective and per-step arrays are larger, the export's 1 MB chunks and the buffers
** made and freed over and over smaller (mapped each time, they cost 0.2-0.3 s of page faults
** on a 3 M-kernel export at 1 MiB). */
#define OVL_MMAP_THRESHOLD_BYTES (4 * 1024 * 1024)

/* Fixes glibc's mmap threshold at OVL_MMAP_THRESHOLD_BYTES, unless the user set one
** (GLIBC_TUNABLES' glibc.malloc.mmap_threshold, or MALLOC_MMAP_THRESHOLD_). Returns 1 when
** the threshold was set, 0 when left to the user or to a C library without it. */
int ovl_malloc_policy_apply(void);

#endif
