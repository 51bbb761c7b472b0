/* Test helper: see gz_text.h. */
#include "gz_text.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

char *tb_inflate_file(const char *path, size_t *n) {
  gzFile g = gzopen(path, "rb");
  size_t cap = 1 << 20, len = 0;
  char *buf = malloc(cap + 1);
  int got;
  while (g && buf && (got = gzread(g, buf + len, (unsigned)(cap - len))) > 0) {
    len += (size_t)got;
    if (len == cap) {
      char *grown = realloc(buf, (cap *= 2) + 1);
      if (!grown) free(buf);
      buf = grown;
    }
  }
  if (g) gzclose(g);
  if (!buf) exit(2);
  buf[len] = 0;
  *n = len;
  return buf;
}

const char *tb_find_in(const char *p, const char *end, const char *pat) {
  size_t m = strlen(pat);
  while (p && end - p >= (ptrdiff_t)m) {
    p = memchr(p, pat[0], (size_t)(end - p) - m + 1);
    if (p && memcmp(p, pat, m) == 0) return p;
    if (p) p++;
  }
  return NULL;
}
