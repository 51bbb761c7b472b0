/*
** Large, long-lived arrays backed by huge pages where the kernel offers them on request.
**
** Every first touch of a 4 KiB page is a page fault; on a virtual machine each costs about
** 13 us of CPU, so filling a 10 MB array takes some 2,500 of them. The analysis's big arrays
** (one row per collective, the reorder window) are filled once and live for the whole run:
** asking for transparent huge pages (MADV_HUGEPAGE) before they are touched makes that a few
** faults per 2 MiB. Where the kernel runs THP in "always" mode this changes nothing, in
** "never" mode the request is ignored; either way the memory is plain malloc memory, freed
** with free() and resized with these functions or realloc().
**
** Only the whole huge pages inside a block are advised, so a block never reaches beyond what
** was asked for; one smaller than a huge page is left as it is.
*/
#ifndef OVL_HUGE_PAGES_H
#define OVL_HUGE_PAGES_H

#include <stddef.h>
#include <stdint.h>

#define OVL_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* The whole huge pages inside [addr, addr + bytes): sets *lo <= *hi, both multiples of
** OVL_HUGE_PAGE_BYTES within the range; *lo == *hi when none fits. */
void ovl_huge_range(uintptr_t addr, size_t bytes, uintptr_t *lo, uintptr_t *hi);

/* Asks for huge pages under the whole huge pages of [p, p + bytes). Advice only: memory
** already touched stays as it is, failures are ignored. */
void ovl_huge_advise(void *p, size_t bytes);

/* malloc(bytes), advised before anything touches it; a block of a huge page or more starts on
** a huge page boundary (and is rounded up to end on one when that adds at most an eighth).
** NULL when memory runs out. */
void *ovl_huge_malloc(size_t bytes);

/* Resizes p (old_bytes of which are kept) to new_bytes like realloc, but a large result is
** advised before the old contents are copied in, so the copy does not fault page by page.
** On failure returns NULL and p is unchanged. */
void *ovl_huge_realloc(void *p, size_t old_bytes, size_t new_bytes);

/* Gives the allocator's free pages back to the kernel where it keeps them (glibc: malloc_trim;
** elsewhere nothing). glibc serves blocks below its mmap threshold, which grows to 32 MiB once
** a larger block is freed, from its heap, and keeps the pages of those freed there resident:
** a stage that frees many such blocks (the analysis pass's) calls this before the next one
** allocates beside what is left. */
void ovl_heap_trim(void);

#endif
