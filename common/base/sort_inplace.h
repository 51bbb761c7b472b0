/*
** A sort that allocates nothing, for large arrays whose order is total.
**
** glibc's qsort is a merge sort that allocates a buffer the size of the array (a large array's
** sort briefly needs twice its memory: the peak of the cross-rank stage). This one sorts in
** place (introsort: quicksort, heapsort past a depth limit, insertion sort for short runs).
** It is not stable: use it only where no two distinct elements compare equal, so that the
** result is the one every correct sort gives.
*/
#ifndef OVL_SORT_INPLACE_H
#define OVL_SORT_INPLACE_H

#include <stddef.h>

/* Sorts base[0..n) of elements of size bytes (at most OVL_SORT_MAX_SIZE) by cmp; n may be 0. */
#define OVL_SORT_MAX_SIZE 64
void ovl_sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
