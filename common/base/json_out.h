/*
** A small streaming JSON writer. Values go straight to a FILE*, so a report of any size
** is never held in memory. The writer inserts commas and (optionally) indentation; keys
** are passed with each value and must be NULL inside arrays and at the top level.
** Non-finite doubles are written as null, since JSON has no NaN.
*/
#ifndef OVL_JSON_OUT_H
#define OVL_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

#define OVL_JSON_MAX_DEPTH 64

typedef struct ovl_json {
  FILE *out;
  int pretty;
  int depth;
  unsigned char has_items[OVL_JSON_MAX_DEPTH];
  /* Set by a caller that could not produce a value (out of memory): the document is then
  ** incomplete, and whoever writes it must not keep it. */
  int incomplete;
} ovl_json;

void ovl_json_init(ovl_json *j, FILE *out, int pretty);
void ovl_json_object_begin(ovl_json *j, const char *key);
void ovl_json_object_end(ovl_json *j);
void ovl_json_array_begin(ovl_json *j, const char *key);
void ovl_json_array_end(ovl_json *j);
void ovl_json_int(ovl_json *j, const char *key, int64_t v);
void ovl_json_double(ovl_json *j, const char *key, double v);
void ovl_json_bool(ovl_json *j, const char *key, int v);
void ovl_json_null(ovl_json *j, const char *key);
void ovl_json_string(ovl_json *j, const char *key, const char *s);
/* Writes `s` as a quoted, escaped JSON string (no key, no comma handling). */
void ovl_json_write_escaped(FILE *out, const char *s);
/* Ends the document with a newline. */
void ovl_json_finish(ovl_json *j);

#endif
