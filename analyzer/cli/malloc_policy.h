/*
** How the `ovl` process asks glibc's allocator to behave. Only the CLI calls this; libovl.so
** never does (it must not change the traced program's allocator).
*/
#ifndef OVL_MALLOC_POLICY_H
#define OVL_MALLOC_POLICY_H

/* The size from which a block is mapped on its own and unmapped when freed. */
#define OVL_MMAP_THRESHOLD_BYTES (1024 * 1024)

/* Fixes glibc's mmap threshold at OVL_MMAP_THRESHOLD_BYTES, unless the user set one
** (GLIBC_TUNABLES' glibc.malloc.mmap_threshold, or MALLOC_MMAP_THRESHOLD_). Returns 1 when
** the threshold was set, 0 when left to the user or to a C library without it. */
int ovl_malloc_policy_apply(void);

#endif
