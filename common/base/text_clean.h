/*
** Text read from a trace (kernel names, hostnames, NVTX ranges) goes to JSON, Chrome and
** Perfetto files and to the terminal. Invalid UTF-8 would make those files invalid, and control
** characters (escape sequences) would act on the user's terminal: both are replaced by U+FFFD
** when the text is read.
*/
#ifndef OVL_TEXT_CLEAN_H
#define OVL_TEXT_CLEAN_H

#include <stddef.h>

/* The length (1..4) of the well-formed UTF-8 sequence at p, 0 when malformed (overlong,
** surrogate, beyond U+10FFFF, cut short). p is NUL-terminated. */
size_t ovl_utf8_len(const unsigned char *p);
/* 1 when s is well-formed UTF-8 without control characters (C0, DEL, C1). */
int ovl_text_is_clean(const char *s);
/* A malloc'd copy of s with each malformed byte and each control character replaced by
** U+FFFD; NULL when memory runs out. */
char *ovl_text_clean_dup(const char *s);
/* The same into buf (cap >= 4), truncated on a character boundary. */
void ovl_text_clean_into(const char *s, char *buf, size_t cap);

#endif
