/*
** Buffered output for exporters: a plain file, or gzip when the name ends in ".gz".
** Writers reserve room in the buffer, fill it and commit what they used; the buffer goes to
** the file when full. Write errors are sticky and reported once, by ovl_out_close().
**
** A second thread can produce part of the same file (the Perfetto export's host pass): its
** ovl_out is opened on a queue instead of a file (ovl_out_open_queue) and hands each full
** buffer, whole packets only, to the queue (several producers may share one); the ovl_out that owns the file, attached to the
** queue, writes the chunks ready after each of its own buffers, and ovl_out_drain writes
** the rest once the producer is done. The queue holds a few chunks at most: a producer
** ahead of the file waits, so memory stays bounded.
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
  uint64_t written_back; /* `written` when the file's disk writes were last started */
  struct ovl_out_queue *queue;  /* producer: where full buffers go (no file); else chunks to write, or NULL */
  int producer;
} ovl_out;

typedef struct ovl_out_queue ovl_out_queue;

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

/* ---- a second producer (see above) ---- */
/* A queue of at most max_chunks full buffers from `producers` producers (each chunk is
** one producer's, whole packets); NULL when memory runs out. */
ovl_out_queue *ovl_out_queue_new(size_t max_chunks, size_t producers);
void ovl_out_queue_free(ovl_out_queue *q);
/* Opens o as a producer into q: no file; reserve returns NULL once the queue is cancelled. */
int ovl_out_open_queue(ovl_out *o, ovl_out_queue *q, ovl_err *err);
/* The producer's end (its thread): hands over what is buffered (ok) or nothing, and tells
** the consumer it is done; o is closed, o->failed kept (cancelled, or out of memory). */
void ovl_out_producer_done(ovl_out *o, int ok);
/* The consumer (the ovl_out that owns the file) writes q's chunks after its own buffers. */
void ovl_out_attach(ovl_out *o, ovl_out_queue *q);
/* Writes its own buffer, then q's chunks as they come until every producer is done (or
** drops them when cancel), then detaches q. */
void ovl_out_drain(ovl_out *o, int cancel);

#endif
