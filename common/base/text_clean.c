/* Well-formed, printable text: see text_clean.h. */
#include "text_clean.h"

#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

size_t ovl_utf8_len(const unsigned char *p) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned cp;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0; /* overlong, too big */
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;                                          /* surrogates */
  return n;
}

/* The length of a printable character at p, 0 when it must be replaced. */
static size_t printable_len(const unsigned char *p) {
  if (*p < 0x20 || *p == 0x7F) return 0;
  size_t n = ovl_utf8_len(p);
  if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) return 0; /* C1 controls U+0080..U+009F */
  return n;
}

int ovl_text_is_clean(const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t n = printable_len(p);
    if (!n) return 0;
    p += n;
  }
  return 1;
}

void ovl_text_clean_into(const char *s, char *buf, size_t cap) {
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t n = printable_len(p);
    const char *src = n ? (const char *)p : replacement;
    size_t m = n ? n : 3;
    if (k + m >= cap) break;
    memcpy(buf + k, src, m);
    k += m;
    p += n ? n : 1;
  }
  buf[k] = 0;
}

char *ovl_text_clean_dup(const char *s) {
  size_t cap = 3 * strlen(s) + 1; /* every byte may become three */
  char *out = malloc(cap);
  if (out) ovl_text_clean_into(s, out, cap);
  return out;
}
