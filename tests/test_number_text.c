/* The Chrome writer's hand-made number text (export/number_text.h) against printf: every
** power of ten and its neighbours, the extremes, and pseudo-random values of every length. */
#include "check.h"
#include "export/number_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static long compared;

/* Compares what fn wrote at buf (up to end) with printf's text; checks nothing is written past
** OVL_NUMBER_ROOM. */
static void expect(const char *buf, const char *end, const char *want, const char *what, uint64_t v) {
  compared++;
  size_t n = (size_t)(end - buf);
  CHECK(n <= OVL_NUMBER_ROOM);
  CHECK(buf[OVL_NUMBER_ROOM] == '#');
  if (n != strlen(want) || memcmp(buf, want, n) != 0) {
    check_failures++;
    fprintf(stderr, "%s of %" PRIu64 " (bits): got \"%.*s\", printf gives \"%s\"\n", what, v, (int)n, buf, want);
  }
}

static void one(uint64_t bits) {
  char buf[OVL_NUMBER_ROOM + 1], want[64];
  int64_t s = (int64_t)bits;
  memset(buf, '#', sizeof buf);
  snprintf(want, sizeof want, "%" PRIu64, bits);
  expect(buf, ovl_dec_u64(buf, bits), want, "%PRIu64", bits);
  memset(buf, '#', sizeof buf);
  snprintf(want, sizeof want, "%" PRId64, s);
  expect(buf, ovl_dec_i64(buf, s), want, "%PRId64", bits);
  memset(buf, '#', sizeof buf);
  snprintf(want, sizeof want, "%" PRIx64, bits);
  expect(buf, ovl_hex_u64(buf, bits), want, "%PRIx64", bits);
  /* microseconds: the old writer's "%s%" PRIu64 ".%03u" of |ns| */
  uint64_t a = s < 0 ? (uint64_t)0 - bits : bits;
  memset(buf, '#', sizeof buf);
  snprintf(want, sizeof want, "%s%" PRIu64 ".%03u", s < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
  expect(buf, ovl_dec_us(buf, s), want, "us", bits);
}

int main(void) {
  uint64_t p = 1;
  for (int k = 0; k < 20; k++, p *= 10)  /* 10^0 .. 10^19 and their neighbours, both signs */
    for (int d = -2; d <= 2; d++) {
      one(p + (uint64_t)(int64_t)d);
      one((uint64_t)0 - (p + (uint64_t)(int64_t)d));
    }
  const uint64_t extremes[] = {0, 1, 9, 10, 99, 100, 999, 1000, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX - 1,
                               (uint64_t)INT64_MIN, (uint64_t)INT64_MIN + 1, UINT64_MAX, UINT64_MAX - 1, 0xf,
                               0x10, 0xffffffffu, 0x100000000u};
  for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) one(extremes[i]);
  /* xorshift64: values of every bit length (shifted down by 0..63 bits) */
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    one(x >> (i % 64));
  }
  printf("test_number_text: %ld values compared with printf\n", compared);
  CHECK(compared > 4 * 200000);
  return check_summary();
}
