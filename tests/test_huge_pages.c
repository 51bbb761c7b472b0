/*
** base/huge_pages: the whole huge pages inside a block (the only part ever advised), contents
** kept through every resize path, and, where the kernel grants transparent huge pages on
** request, a large block filled with far fewer page faults than its 4 KiB pages.
*/
#include "base/huge_pages.h"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define HP ((uintptr_t)OVL_HUGE_PAGE_BYTES)

static void check_ranges(void) {
  uintptr_t lo = 1, hi = 1;
  ovl_huge_range(10 * HP, 3 * HP, &lo, &hi);  /* aligned: all of it */
  CHECK(lo == 10 * HP && hi == 13 * HP);
  ovl_huge_range(10 * HP + 4096, 3 * HP, &lo, &hi);  /* the two whole pages inside */
  CHECK(lo == 11 * HP && hi == 13 * HP);
  ovl_huge_range(10 * HP + 4096, 2 * HP - 4096, &lo, &hi);  /* ends one small page short */
  CHECK(lo == 11 * HP && hi == 12 * HP - 0 && hi - lo == HP);
  ovl_huge_range(10 * HP + 4096, 2 * HP - 8192, &lo, &hi);  /* no whole page */
  CHECK(lo == hi);
  ovl_huge_range(10 * HP, HP - 1, &lo, &hi);  /* smaller than a page */
  CHECK(lo == hi);
  ovl_huge_range(10 * HP, 0, &lo, &hi);
  CHECK(lo == hi);
  ovl_huge_range(UINTPTR_MAX - HP, 4 * HP, &lo, &hi);  /* past the address space */
  CHECK(lo == hi);
}

/* Every byte holds a pattern of its index: any byte lost or moved shows. */
static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31 + seed);
}

static int filled(const unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(i * 31 + seed)) return 0;
  return 1;
}

static void check_resizes(void) {
  /* small -> small -> large -> larger -> smaller, contents kept each time */
  static const size_t sizes[] = {100, 5000, 3 * OVL_HUGE_PAGE_BYTES + 12345, 9 * OVL_HUGE_PAGE_BYTES, 1000};
  unsigned char *p = ovl_huge_realloc(NULL, 0, sizes[0]);
  CHECK(p != NULL);
  if (!p) return;
  fill(p, sizes[0], 7);
  size_t have = sizes[0];
  for (size_t k = 1; k < sizeof sizes / sizeof *sizes; k++) {
    unsigned char *q = ovl_huge_realloc(p, have, sizes[k]);
    CHECK(q != NULL);
    if (!q) break;
    p = q;
    size_t kept = have < sizes[k] ? have : sizes[k];
    CHECK(filled(p, kept, 7));
    fill(p, sizes[k], 7);
    have = sizes[k];
  }
  free(p);

  unsigned char *big = ovl_huge_malloc(5 * OVL_HUGE_PAGE_BYTES + 3);
  CHECK(big != NULL && (uintptr_t)big % HP == 0);  /* starts on a huge page: only its tail is small pages */
  if (big) {
    fill(big, 5 * OVL_HUGE_PAGE_BYTES + 3, 3);
    CHECK(filled(big, 5 * OVL_HUGE_PAGE_BYTES + 3, 3));
  }
  free(big);
  unsigned char *none = ovl_huge_malloc(0);  /* a valid, freeable block, like malloc(1) */
  CHECK(none != NULL);
  free(none);
}

/* The mode the kernel runs transparent huge pages in, from its bracketed word. */
static int thp_on_request(void) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  char line[128] = "";
  int ok = fgets(line, sizeof line, f) && (strstr(line, "[madvise]") || strstr(line, "[always]"));
  fclose(f);
  return ok;
}

static long minor_faults(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : -1;
}

static int address_sanitized(void) {
#if defined(__SANITIZE_ADDRESS__)
  return 1;
#else
  return 0;
#endif
}

static void check_faults(void) {
  if (address_sanitized()) {
    printf("fault count: skipped (AddressSanitizer's shadow memory takes faults of its own)\n");
    return;
  }
  if (!thp_on_request()) {
    printf("fault count: skipped (the kernel grants no transparent huge pages on request here)\n");
    return;
  }
  const size_t bytes = 32 * OVL_HUGE_PAGE_BYTES;  /* 16,384 small pages */
  unsigned char *p = ovl_huge_malloc(bytes);
  CHECK(p != NULL);
  if (!p) return;
  long before = minor_faults();
  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
  long faults = minor_faults() - before;
  free(p);
  printf("fault count: %ld first touches of %zu small pages\n", faults, bytes / 4096);
  CHECK(faults >= 0 && faults < (long)(bytes / 4096) / 4);
}

int main(void) {
  check_ranges();
  check_resizes();
  check_faults();
  return check_summary();
}
