/*
** Minimal assertions for ctest programs. A failed CHECK prints where and why and marks the
** test failed; the program goes on so one run shows every failure. End main() with
** `return check_summary();`, which returns 1 if anything failed.
*/
#ifndef OVL_TEST_CHECK_H
#define OVL_TEST_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                              \
  do {                                                                           \
    check_count++;                                                               \
    if (!(cond)) {                                                               \
      check_failures++;                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

#define CHECK_I64(a, b)                                                                          \
  do {                                                                                           \
    int64_t check_a_ = (int64_t)(a), check_b_ = (int64_t)(b);                                    \
    check_count++;                                                                               \
    if (check_a_ != check_b_) {                                                                  \
      check_failures++;                                                                          \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%" PRId64 " != %" PRId64 ")\n", __FILE__, \
              __LINE__, #a, #b, check_a_, check_b_);                                             \
    }                                                                                            \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                       \
  do {                                                                                              \
    double check_a_ = (double)(a), check_b_ = (double)(b);                                          \
    check_count++;                                                                                  \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                                                    \
      check_failures++;                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s ~ %s (%.9g vs %.9g, tol %g)\n", __FILE__, __LINE__, \
              #a, #b, check_a_, check_b_, (double)(tol));                                          \
    }                                                                                               \
  } while (0)

#define CHECK_STR(a, b)                                                                            \
  do {                                                                                             \
    const char *check_a_ = (a), *check_b_ = (b);                                                   \
    check_count++;                                                                                 \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                               \
      check_failures++;                                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" vs \"%s\")\n", __FILE__, __LINE__, #a, \
              #b, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)");                 \
    }                                                                                              \
  } while (0)

static inline int check_summary(void) {
  if (check_count == 0) {
    fprintf(stderr, "no checks ran\n");
    return 1;
  }
  fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif
