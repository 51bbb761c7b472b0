/* Huge-page advice for large arrays: see huge_pages.h. */
#include "huge_pages.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void ovl_huge_range(uintptr_t addr, size_t bytes, uintptr_t *lo, uintptr_t *hi) {
  const uintptr_t page = OVL_HUGE_PAGE_BYTES;
  *lo = *hi = 0;
  if (bytes < page || addr > UINTPTR_MAX - bytes) return;
  uintptr_t first = (addr + page - 1) & ~(page - 1);
  uintptr_t last = (addr + bytes) & ~(page - 1);
  if (first >= last || first < addr) return;
  *lo = first;
  *hi = last;
  assert(*lo % page == 0 && *hi % page == 0 && *lo >= addr && *hi <= addr + bytes);
}

void ovl_huge_advise(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (!p || bytes < OVL_HUGE_PAGE_BYTES) return;
  uintptr_t lo, hi;
  ovl_huge_range((uintptr_t)p, bytes, &lo, &hi);
  if (lo < hi) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);  /* advice: a refusal costs nothing */
#else
  (void)p;
  (void)bytes;
#endif
}

void *ovl_huge_malloc(size_t bytes) {
  if (bytes < OVL_HUGE_PAGE_BYTES) return malloc(bytes ? bytes : 1);
  /* Starting on a huge page boundary, and ending on one when that adds at most an eighth:
  ** a tail left to small pages would take a fault per 4 KiB. */
  size_t whole = (bytes + OVL_HUGE_PAGE_BYTES - 1) / OVL_HUGE_PAGE_BYTES * OVL_HUGE_PAGE_BYTES;
  if (whole >= bytes && whole - bytes <= bytes / 8) bytes = whole;
  void *p = NULL;
  if (posix_memalign(&p, OVL_HUGE_PAGE_BYTES, bytes) != 0) return NULL;
  ovl_huge_advise(p, bytes);
  return p;
}

void *ovl_huge_realloc(void *p, size_t old_bytes, size_t new_bytes) {
  if (!p) return ovl_huge_malloc(new_bytes);
  if (new_bytes < OVL_HUGE_PAGE_BYTES || new_bytes <= old_bytes) return realloc(p, new_bytes ? new_bytes : 1);
  void *q = ovl_huge_malloc(new_bytes);
  if (!q) return NULL;
  memcpy(q, p, old_bytes);
  free(p);
  return q;
}

void ovl_heap_trim(void) {
#if defined(__GLIBC__)
  (void)malloc_trim(0);
#endif
}
