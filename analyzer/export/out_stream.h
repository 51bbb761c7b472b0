/*
** Buffered output for exporters: a plain file, or gzip when the name ends in ".gz".
** Writers reserve room in the buffer, fill it and commit what they used; the buffer goes to
** the file when full. Write errors are sticky and reported once, by ovl_out_close().
*/
#ifndef OVL_OUT_STREAM_H
#define OVL_OUT_STREAM_H

#include "base/safe_output.h"
#include "base/status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_out {
  char *path;
  ovl_safe_out target; /* the data goes to a temporary file renamed over path on success */
  void *file;       /* FILE* or gzFile, on a duplicate of target.fd */
  int gzip;
  int write_errno;  /* first failure, 0 when none */
  int failed;
  char *buf;
  size_t len, cap;
  uint64_t written; /* bytes handed to the file (before compression) */
} ovl_out;

/* Starts writing path (base/safe_output.h: nothing existing is touched until a successful
** close). Fails with "<path>: cannot write: <why>". */
int ovl_out_open(ovl_out *o, const char *path, ovl_err *err);
/* Room for n bytes at the end of the buffer, or NULL when memory runs out. Inline: the
** Perfetto sink reserves once a packet (millions), and the room is nearly always there. */
char *ovl_out_reserve_slow(ovl_out *o, size_t n);
static inline char *ovl_out_reserve(ovl_out *o, size_t n) {
  return n <= o->cap - o->len ? o->buf + o->len : ovl_out_reserve_slow(o, n);
}
static inline void ovl_out_commit(ovl_out *o, size_t n) { o->len += n; }
/* Appends bytes; returns 0, or -1 when memory runs out. */
int ovl_out_write(ovl_out *o, const void *p, size_t n);
int ovl_out_puts(ovl_out *o, const char *s);
/* Bytes written so far, including those still buffered. */
static inline uint64_t ovl_out_size(const ovl_out *o) { return o->written + o->len; }
/* Flushes and closes; on success the file replaces path, else it is removed and the failed
** write or close reported. Safe on a never-opened ovl_out. */
int ovl_out_close(ovl_out *o, ovl_err *err);
/* Closes and removes what was written (after an error); path is left as it was. */
void ovl_out_discard(ovl_out *o);

#endif
