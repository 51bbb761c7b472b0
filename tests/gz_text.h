/*
** Test helper: a (possibly gzip-compressed) file read whole into memory, for tests that count
** things in the raw text of a trace independently of ovl's own parser.
*/
#ifndef OVL_TESTS_GZ_TEXT_H
#define OVL_TESTS_GZ_TEXT_H

#include <stddef.h>

/* The whole decompressed file, NUL-terminated (*n bytes before the NUL); exits 2 when out of
** memory. A file that cannot be opened gives an empty text. The caller frees it. */
char *tb_inflate_file(const char *path, size_t *n);
/* First occurrence of pat in [p, end), or NULL (also when p is NULL): a search that stays
** within a bound, such as one event of the text. */
const char *tb_find_in(const char *p, const char *end, const char *pat);

#endif
