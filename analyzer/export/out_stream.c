/* Buffered exporter output: see out_stream.h. */
#include "out_stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_BUFFER (1u << 20)
/* Bytes handed to the file between two starts of its disk writes (ovl_safe_out_writeback): a
** 256 MB export's closing fsync waited ~0.4 s for all of it at once; started as it goes, the
** disk works while the next packets are drawn. */
#define WRITEBACK_EVERY ((uint64_t)16 << 20)

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int ovl_out_open(ovl_out *o, const char *path, ovl_err *err) {
  memset(o, 0, sizeof *o);
  o->gzip = ends_with(path, ".gz");
  o->path = strdup(path);
  o->buf = malloc(OUT_BUFFER);
  o->cap = OUT_BUFFER;
  if (!o->path || !o->buf) {
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    return ovl_oom(err, "output buffer");
  }
  int rc = ovl_safe_out_begin(&o->target, path, err);
  if (rc) {
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    return rc;
  }
  errno = 0;
  int fd = dup(o->target.fd);
  o->file = fd < 0 ? NULL : o->gzip ? (void *)gzdopen(fd, "wb6") : (void *)fdopen(fd, "wb");
  if (!o->file) {
    int e = errno;
    if (fd >= 0) close(fd);
    ovl_safe_out_abort(&o->target);
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    return ovl_fail(err, OVL_EUSER, "%s: cannot write: %s", path, e ? strerror(e) : "cannot open");
  }
  return OVL_OK;
}

/* A second producer's full buffers, in the order produced (out_stream.h). */
typedef struct out_chunk {
  char *buf;
  size_t len;
} out_chunk;

struct ovl_out_queue {
  pthread_mutex_t mu;
  pthread_cond_t changed;   /* a chunk was queued or taken, the producer is done, or cancelled */
  out_chunk *ring;
  size_t head, n, cap;
  size_t producers;         /* not done yet */
  int cancelled;
};

ovl_out_queue *ovl_out_queue_new(size_t max_chunks, size_t producers) {
  ovl_out_queue *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  q->producers = producers;
  q->cap = max_chunks ? max_chunks : 1;
  q->ring = calloc(q->cap, sizeof *q->ring);
  if (!q->ring || pthread_mutex_init(&q->mu, NULL)) {
    free(q->ring);
    free(q);
    return NULL;
  }
  if (pthread_cond_init(&q->changed, NULL)) {
    pthread_mutex_destroy(&q->mu);
    free(q->ring);
    free(q);
    return NULL;
  }
  return q;
}

void ovl_out_queue_free(ovl_out_queue *q) {
  if (!q) return;
  for (size_t i = 0; i < q->n; i++) free(q->ring[(q->head + i) % q->cap].buf);
  pthread_cond_destroy(&q->changed);
  pthread_mutex_destroy(&q->mu);
  free(q->ring);
  free(q);
}

static void write_bytes(ovl_out *o, const char *p, size_t n) {
  if (n && !o->failed) {
    int ok;
    errno = 0;
    if (o->gzip) ok = gzwrite((gzFile)o->file, p, (unsigned)n) == (int)n;
    else ok = fwrite(p, 1, n, (FILE *)o->file) == n;
    if (!ok) {
      o->failed = 1;
      o->write_errno = errno;
    }
  }
  o->written += n;
  if (o->written - o->written_back >= WRITEBACK_EVERY) {
    o->written_back = o->written;
    if (!o->failed) ovl_safe_out_writeback(&o->target);  /* what stdio or zlib still holds goes next time */
  }
}

/* Producer: hands the buffer over (waiting while the queue is full) and takes a new one
** (the consumer frees what it wrote: a buffer may have grown for a large packet). Fails
** (o->failed) when the consumer cancelled or memory runs out. */
static void hand_over(ovl_out *o) {
  ovl_out_queue *q = o->queue;
  pthread_mutex_lock(&q->mu);
  while (q->n == q->cap && !q->cancelled) pthread_cond_wait(&q->changed, &q->mu);
  if (!q->cancelled) {
    q->ring[(q->head + q->n++) % q->cap] = (out_chunk){o->buf, o->len};
    pthread_cond_broadcast(&q->changed);
    o->buf = NULL;
  }
  pthread_mutex_unlock(&q->mu);
  if (o->buf) {  /* cancelled: the buffer stays ours, its bytes are dropped */
    o->failed = 1;
  } else {
    o->buf = malloc(OUT_BUFFER);
    o->cap = o->buf ? OUT_BUFFER : 0;
    if (!o->buf) o->failed = 1;
  }
  o->written += o->len;
  o->len = 0;
}

/* Consumer: writes the chunks queued (all of them, or until every producer is done when
** wait). */
static void write_queued(ovl_out *o, int wait, int cancel) {
  ovl_out_queue *q = o->queue;
  pthread_mutex_lock(&q->mu);
  if (cancel) {
    q->cancelled = 1;
    pthread_cond_broadcast(&q->changed);
  }
  for (;;) {
    if (!q->n) {
      if (!wait || !q->producers) break;
      pthread_cond_wait(&q->changed, &q->mu);
      continue;
    }
    out_chunk c = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->mu);  /* the producer fills its next buffer meanwhile */
    if (!cancel) write_bytes(o, c.buf, c.len);
    free(c.buf);
    pthread_mutex_lock(&q->mu);
  }
  pthread_mutex_unlock(&q->mu);
}

static void flush(ovl_out *o) {
  if (o->producer) {
    if (!o->failed) hand_over(o);
    o->len = 0;
    return;
  }
  write_bytes(o, o->buf, o->len);
  o->len = 0;
  if (o->queue) write_queued(o, 0, 0);
}

int ovl_out_open_queue(ovl_out *o, ovl_out_queue *q, ovl_err *err) {
  memset(o, 0, sizeof *o);
  o->buf = malloc(OUT_BUFFER);
  if (!o->buf) return ovl_oom(err, "output buffer");
  o->cap = OUT_BUFFER;
  o->queue = q;
  o->producer = 1;
  return OVL_OK;
}

void ovl_out_producer_done(ovl_out *o, int ok) {
  ovl_out_queue *q = o->queue;
  if (ok && o->len && !o->failed) hand_over(o);
  free(o->buf);
  int failed = o->failed || !ok;
  memset(o, 0, sizeof *o);  /* before done: the consumer may then free o's owner */
  o->failed = failed;       /* for the consumer, after done */
  pthread_mutex_lock(&q->mu);
  q->producers--;
  pthread_cond_broadcast(&q->changed);
  pthread_mutex_unlock(&q->mu);
}

void ovl_out_attach(ovl_out *o, ovl_out_queue *q) { o->queue = q; }

void ovl_out_drain(ovl_out *o, int cancel) {
  if (!o->queue) return;
  if (!cancel) {  /* its own packets first: the producer's tracks hang below processes declared in them */
    write_bytes(o, o->buf, o->len);
    o->len = 0;
  }
  write_queued(o, 1, cancel);
  o->queue = NULL;
}

char *ovl_out_reserve_slow(ovl_out *o, size_t n) {
  if (o->len + n <= o->cap) return o->buf + o->len;
  flush(o);
  if (o->producer && o->failed) return NULL;  /* cancelled, or no buffer */
  if (n > o->cap) {
    char *b = realloc(o->buf, n);
    if (!b) return NULL;
    o->buf = b;
    o->cap = n;
  }
  return o->buf;
}

int ovl_out_write(ovl_out *o, const void *p, size_t n) {
  char *dst = ovl_out_reserve(o, n);
  if (!dst) return -1;
  memcpy(dst, p, n);
  ovl_out_commit(o, n);
  return 0;
}

int ovl_out_puts(ovl_out *o, const char *s) { return ovl_out_write(o, s, strlen(s)); }

int ovl_out_close(ovl_out *o, ovl_err *err) {
  if (!o->file) return OVL_OK;
  flush(o);
  int closed = o->gzip ? gzclose((gzFile)o->file) == Z_OK : fclose((FILE *)o->file) == 0;
  if (!closed && !o->failed) {
    o->failed = 1;
    o->write_errno = errno;
  }
  int rc = OVL_OK;
  if (o->failed) {
    rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", o->path,
                  o->write_errno ? strerror(o->write_errno) : "output error");
    ovl_safe_out_abort(&o->target);
  } else {
    rc = ovl_safe_out_commit(&o->target, err);
  }
  free(o->path);
  free(o->buf);
  memset(o, 0, sizeof *o);
  return rc;
}

void ovl_out_discard(ovl_out *o) {
  if (!o->file) return;
  o->len = 0;
  o->failed = 1;  /* nothing more reaches the file; closing removes the temporary file */
  ovl_err ignored;
  ovl_out_close(o, &ignored);
}
