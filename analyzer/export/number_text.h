/*
** Numbers as text without printf, for the Chrome JSON writer (chrome_sink.c), where one
** vsnprintf per field cost more than the rest of the export. Each function writes at d, which
** must have OVL_NUMBER_ROOM bytes to spare, writes no NUL, and returns the end; the text is
** exactly what the printf conversion named in its comment gives (tests/test_number_text.c).
*/
#ifndef OVL_NUMBER_TEXT_H
#define OVL_NUMBER_TEXT_H

#include <stddef.h>
#include <stdint.h>

#define OVL_NUMBER_ROOM 24  /* "-" and 20 digits, or "-", 17 digits, "." and 3 decimals */

static const char OVL_DIGIT_PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes v in decimal at d (as %PRIu64), two digits a step from the last; returns the end. */
static inline char *ovl_dec_u64(char *d, uint64_t v) {
  size_t n = 1;
  for (uint64_t p = 10; n < 20 && v >= p; p *= 10) n++;  /* 10^19 < 2^64 < 10^20 */
  char *e = d + n;
  while (v >= 100) {
    unsigned r = (unsigned)(v % 100);
    v /= 100;
    e -= 2;
    e[0] = OVL_DIGIT_PAIRS[2 * r];
    e[1] = OVL_DIGIT_PAIRS[2 * r + 1];
  }
  if (v >= 10) {
    e[-2] = OVL_DIGIT_PAIRS[2 * v];
    e[-1] = OVL_DIGIT_PAIRS[2 * v + 1];
  } else {
    e[-1] = (char)('0' + v);
  }
  return d + n;
}

/* As %PRId64. */
static inline char *ovl_dec_i64(char *d, int64_t v) {
  if (v >= 0) return ovl_dec_u64(d, (uint64_t)v);
  *d++ = '-';
  return ovl_dec_u64(d, (uint64_t)0 - (uint64_t)v);
}

/* ns as microseconds with exactly three decimals. */
static inline char *ovl_dec_us(char *d, int64_t ns) {
  uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  if (ns < 0) *d++ = '-';
  d = ovl_dec_u64(d, a / 1000);
  unsigned r = (unsigned)(a % 1000);
  d[0] = '.';
  d[1] = (char)('0' + r / 100);
  d[2] = (char)('0' + r / 10 % 10);
  d[3] = (char)('0' + r % 10);
  return d + 4;
}

/* As %PRIx64. */
static inline char *ovl_hex_u64(char *d, uint64_t v) {
  char digits[16];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  while (n) *d++ = digits[--n];
  return d;
}

#endif
