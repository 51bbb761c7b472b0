/* The CLI's allocator policy (analyzer/cli/malloc_policy.c): big blocks are mapped on their own
** even after a bigger one was freed, and a threshold the user set is left alone. */
#include "../analyzer/cli/malloc_policy.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OVL_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define OVL_TEST_ASAN 1
#endif

#if defined(__GLIBC__) && !defined(OVL_TEST_ASAN)
#include <malloc.h>

/* Blocks of the heap that are mapped on their own, now. */
static size_t mapped_blocks(void) { return (size_t)mallinfo2().hblks; }

/* A block of `bytes`, touched, freed: with glibc's default the threshold rises to its size. */
static void churn(size_t bytes) {
  char *p = malloc(bytes);
  CHECK(p != NULL);
  if (p) memset(p, 1, bytes);
  free(p);
}

int main(void) {
  unsetenv("MALLOC_MMAP_THRESHOLD_");
  unsetenv("GLIBC_TUNABLES");
  CHECK(ovl_malloc_policy_apply() == 1);
  churn(16u << 20);  /* without the policy, the threshold would now be 16 MiB (at most 32) */
  size_t before = mapped_blocks();
  size_t mid_bytes = 2 * (size_t)OVL_MMAP_THRESHOLD_BYTES;  /* above the threshold, below 16 MiB */
  char *mid = malloc(mid_bytes);
  CHECK(mid != NULL);
  if (mid) memset(mid, 2, mid_bytes);
  CHECK(mapped_blocks() == before + 1);
  free(mid);
  CHECK(mapped_blocks() == before);  /* unmapped: its pages are given back */
  char *small = malloc(OVL_MMAP_THRESHOLD_BYTES / 4);
  CHECK(small != NULL);
  CHECK(mapped_blocks() == before);  /* small blocks still come from the heap */
  free(small);

  /* The user's own threshold wins. */
  setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=65536", 1);
  CHECK(ovl_malloc_policy_apply() == 0);
  unsetenv("GLIBC_TUNABLES");
  setenv("MALLOC_MMAP_THRESHOLD_", "65536", 1);
  CHECK(ovl_malloc_policy_apply() == 0);
  return check_summary();
}
#else
#include <stdio.h>
int main(void) {
  fprintf(stderr, "SKIP: the allocator policy needs glibc's own allocator (this build replaces it)\n");
  return 77;
}
#endif
