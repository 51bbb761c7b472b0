/* The `ovl` process's allocator policy: see malloc_policy.h. */
#include "malloc_policy.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int ovl_malloc_policy_apply(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
  /* glibc raises its threshold to the size of each mapped block freed (up to 32 MB): after the
  ** first big array is freed, the next ones of a few MB come from the heap, whose pages it
  ** keeps after free. The analysis frees and allocates such arrays stage after stage, so the
  ** kept pages added up at the peak (1.37 M collectives: 344 -> 312 MB with the threshold
  ** fixed). Setting it fixes it: glibc raises it no more. */
  const char *tunables = getenv("GLIBC_TUNABLES");
  if (getenv("MALLOC_MMAP_THRESHOLD_") || (tunables && strstr(tunables, "mmap_threshold"))) return 0;
  return mallopt(M_MMAP_THRESHOLD, OVL_MMAP_THRESHOLD_BYTES) == 1;
#else
  return 0;
#endif
}
