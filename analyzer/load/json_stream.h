/*
** A streaming (pull) JSON tokenizer: the document is read in fixed-size chunks and handed
** out one token at a time, so memory stays the same whatever the file size.
**
** Invariants and limits:
**   * iterative: nesting is tracked in a bit stack (one bit per level), never on the C
**     stack; a document nested deeper than limits.max_depth is an error;
**   * a string or key longer than limits.max_string is handed out truncated to that length
**     (ovl_json_truncated() says so), the rest is read and dropped; numbers keep at most
**     OVL_JSON_MAX_NUMBER characters;
**   * every token handed out is checked against the grammar; what is skipped
**     (ovl_json_skip_*) is not decoded, only its brackets matched and its strings ended,
**     which is what keeps skipping fast. Errors read "<file>: invalid JSON at byte N: <what>";
**   * the input is parsed where it lies (ovl_input_borrow): a text may point into it, its
**     closing quote overwritten by the NUL; nothing is copied per token unless it straddles
**     two chunks or holds escapes;
**   * accepted beyond RFC 8259, as Python's json module does: NaN, Infinity, -Infinity
**     (as NUMBER tokens) and raw control characters inside strings.
*/
#ifndef OVL_JSON_STREAM_H
#define OVL_JSON_STREAM_H

#include "base/status.h"
#include "byte_input.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ovl_json_token {
  OVL_JSON_EOF = 0,        /* the document ended (only whitespace after it) */
  OVL_JSON_OBJECT_BEGIN,
  OVL_JSON_OBJECT_END,
  OVL_JSON_ARRAY_BEGIN,
  OVL_JSON_ARRAY_END,
  OVL_JSON_KEY,            /* an object key; the value follows */
  OVL_JSON_STRING,
  OVL_JSON_NUMBER,         /* text as written, e.g. "-12.5e3" */
  OVL_JSON_TRUE,
  OVL_JSON_FALSE,
  OVL_JSON_NULL
} ovl_json_token;

#define OVL_JSON_MAX_NUMBER 63

typedef struct ovl_json_limits {
  size_t max_depth;   /* nesting levels; 0: OVL_JSON_DEFAULT_DEPTH */
  size_t max_string;  /* bytes kept of one string; 0: OVL_JSON_DEFAULT_STRING */
} ovl_json_limits;

#define OVL_JSON_DEFAULT_DEPTH 10000
#define OVL_JSON_DEFAULT_STRING (64u * 1024u)

typedef struct ovl_json ovl_json;

/* Reads from `in` (not owned). limits may be NULL for the defaults. */
int ovl_json_open(ovl_byte_input *in, const ovl_json_limits *limits, ovl_json **out, ovl_err *err);
void ovl_json_close(ovl_json *j);

/* The next token. */
int ovl_json_next(ovl_json *j, ovl_json_token *tok, ovl_err *err);
/* Text of the last KEY, STRING or NUMBER token: NUL-terminated (strings may hold NULs from
** \u0000 escapes; *len counts every byte kept). Valid until the next call. */
const char *ovl_json_text(const ovl_json *j, size_t *len);
/* A number of the plain shape -?(0|[1-9][0-9]*)(\.[0-9]+)?, in the parts read as it was
** scanned. */
typedef struct ovl_json_decimal {
  int negative;          /* a '-' was written (also "-0") */
  uint64_t whole;        /* the digits before '.': exact while whole_digits <= 19 */
  int whole_digits;
  uint32_t fraction;     /* the first three digits after '.' as an integer: ".5" gives 5 */
  int fraction_digits;   /* every digit after '.' (0: no '.'); fraction holds min(3, this) */
} ovl_json_decimal;

/* Call right after a NUMBER token: 1 with *d when the number was of the plain shape (most are);
** 0 when another reading is needed (ovl_json_text): an exponent, NaN, or a number the tokenizer
** took the careful way (straddling a chunk end). */
int ovl_json_number_parts(const ovl_json *j, ovl_json_decimal *d);
/* The same, for a number written as an integer of at most 18 digits: 1 with its value. */
int ovl_json_integer(const ovl_json *j, int64_t *v);
/* 1 when the last string or number was longer than the limit and was cut. */
int ovl_json_truncated(const ovl_json *j);
/* Containers open after the last token (the top-level object counts 1). */
size_t ovl_json_depth(const ovl_json *j);

/* Skips one whole value: call where a value comes next (after a KEY, or inside an array).
** Sets *tok to the skipped value's first token, or to OVL_JSON_ARRAY_END when the array
** ended instead. The first token is checked; the inside of a container only for brackets. */
int ovl_json_skip_value(ovl_json *j, ovl_json_token *tok, ovl_err *err);
/* Skips the rest of the innermost open container, through its closing token. */
int ovl_json_skip_container(ovl_json *j, ovl_err *err);

/* Uncompressed byte offset of the next unread byte. */
uint64_t ovl_json_offset(const ovl_json *j);

#endif
