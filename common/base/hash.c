/* FNV-1a: see hash.h. */
#include "hash.h"

uint64_t ovl_hash_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * OVL_HASH_PRIME;
  return h;
}

uint64_t ovl_hash_str(uint64_t h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * OVL_HASH_PRIME;
  return h;
}
