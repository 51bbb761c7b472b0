/*
** Read-ahead thread: see read_ahead.h.
**
** A ring of RING_SLOTS buffers of SLOT_BYTES. Each slot is EMPTY (the producer's to fill) or
** FULL (the consumer's to drain); the producer fills them in ring order and the consumer
** drains them in the same order, so one mutex and two condition variables are all the
** coordination there is. A slot carries the fill's status: the first failing slot ends the
** stream, and the producer stops producing after it.
*/
#define _GNU_SOURCE  /* MADV_POPULATE_WRITE */
#include "read_ahead.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RING_SLOTS 4
#define SLOT_BYTES (1u << 20)

typedef struct slot {
  char *data;
  size_t len, pos;   /* bytes filled; bytes the consumer took */
  double fraction;
  int full;
  int rc;            /* fill's status; err holds its message when not OVL_OK */
  ovl_err err;
} slot;

struct ovl_read_ahead {
  ovl_read_ahead_fill fill;
  void *ctx;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t filled, drained;
  slot ring[RING_SLOTS];
  size_t head;       /* the slot the consumer drains */
  int lent;          /* the head slot is lent (ovl_read_ahead_borrow) until the next call */
  int stop;          /* set by the consumer: the producer ends at its next look */
  int done;          /* the consumer saw the end or an error: nothing more to read */
};

/* Maps a slot's pages in one call, on this thread, before its first fill: faulting them in
** one at a time as inflate first writes them cost ~4x as much on a VM (a trap per 4 KiB page,
** ~20 us each: a fifth of inflating 1 MiB). A hint: on a kernel without it the fill faults
** them in as before. */
static void populate(char *data) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return;
  uintptr_t first = ((uintptr_t)data + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
  uintptr_t last = ((uintptr_t)data + SLOT_BYTES) & ~((uintptr_t)page - 1);
  if (last > first) madvise((void *)first, last - first, MADV_POPULATE_WRITE);
#else
  (void)data;
#endif
}

static void *produce(void *arg) {
  ovl_read_ahead *ra = arg;
  for (size_t i = 0; i < RING_SLOTS; i++) populate(ra->ring[i].data);  /* the consumer has none yet */
  for (size_t i = 0;; i = (i + 1) % RING_SLOTS) {
    slot *s = &ra->ring[i];
    pthread_mutex_lock(&ra->lock);
    while (s->full && !ra->stop) pthread_cond_wait(&ra->drained, &ra->lock);
    int stop = ra->stop;
    pthread_mutex_unlock(&ra->lock);
    if (stop) return NULL;
    /* The slot is EMPTY: the consumer does not touch it until it is marked FULL. */
    s->len = s->pos = 0;
    s->fraction = -1;
    s->rc = ra->fill(ra->ctx, s->data, SLOT_BYTES, &s->len, &s->fraction, &s->err);
    pthread_mutex_lock(&ra->lock);
    s->full = 1;
    pthread_cond_signal(&ra->filled);
    pthread_mutex_unlock(&ra->lock);
    if (s->rc || s->len == 0) return NULL;  /* an error or the end: nothing follows */
  }
}

int ovl_read_ahead_start(ovl_read_ahead_fill fill, void *ctx, ovl_read_ahead **out, ovl_err *err) {
  *out = NULL;
  ovl_read_ahead *ra = calloc(1, sizeof *ra);
  if (!ra) return ovl_oom(err, "read-ahead");
  ra->fill = fill;
  ra->ctx = ctx;
  for (int i = 0; i < RING_SLOTS; i++)
    if (!(ra->ring[i].data = malloc(SLOT_BYTES))) {
      for (int k = 0; k < i; k++) free(ra->ring[k].data);
      free(ra);
      return ovl_oom(err, "read-ahead buffers");
    }
  int locks = pthread_mutex_init(&ra->lock, NULL) == 0;
  int conds = locks && pthread_cond_init(&ra->filled, NULL) == 0;
  int conds2 = conds && pthread_cond_init(&ra->drained, NULL) == 0;
  /* The producer is born with every signal blocked: they go to the threads that handle them. */
  sigset_t all, old;
  sigfillset(&all);
  int masked = conds2 && pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
  int started = conds2 && pthread_create(&ra->thread, NULL, produce, ra) == 0;
  if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!started) {
    if (conds2) pthread_cond_destroy(&ra->drained);
    if (conds) pthread_cond_destroy(&ra->filled);
    if (locks) pthread_mutex_destroy(&ra->lock);
    for (int i = 0; i < RING_SLOTS; i++) free(ra->ring[i].data);
    free(ra);
    return ovl_fail(err, OVL_EINTERNAL, "cannot start the read-ahead thread");
  }
  *out = ra;
  return OVL_OK;
}

/* Hands the head slot back to the producer and moves on to the next one. */
static void release_head(ovl_read_ahead *ra) {
  slot *s = &ra->ring[ra->head];
  pthread_mutex_lock(&ra->lock);
  s->full = 0;
  pthread_cond_signal(&ra->drained);
  pthread_mutex_unlock(&ra->lock);
  ra->head = (ra->head + 1) % RING_SLOTS;
  ra->lent = 0;
}

/* The head slot once it is FULL and has bytes left; NULL at the end or on fill's error
** (*rc says which). */
static slot *next_full(ovl_read_ahead *ra, int *rc, ovl_err *err) {
  *rc = OVL_OK;
  if (ra->lent) release_head(ra);
  if (ra->done) return NULL;
  slot *s = &ra->ring[ra->head];
  pthread_mutex_lock(&ra->lock);
  while (!s->full) pthread_cond_wait(&ra->filled, &ra->lock);
  pthread_mutex_unlock(&ra->lock);
  if (s->rc) {
    ra->done = 1;
    if (err) *err = s->err;
    *rc = s->rc;
    return NULL;
  }
  if (s->len == 0) {
    ra->done = 1;
    return NULL;
  }
  assert(s->pos < s->len);
  return s;
}

int ovl_read_ahead_read(ovl_read_ahead *ra, char *buf, size_t cap, size_t *got, double *fraction, ovl_err *err) {
  *got = 0;
  *fraction = -1;
  int rc;
  slot *s = next_full(ra, &rc, err);
  if (!s) return rc;
  size_t n = s->len - s->pos < cap ? s->len - s->pos : cap;
  memcpy(buf, s->data + s->pos, n);
  s->pos += n;
  *got = n;
  *fraction = s->fraction;
  if (s->pos == s->len) release_head(ra);  /* drained: back to the producer */
  return OVL_OK;
}

int ovl_read_ahead_borrow(ovl_read_ahead *ra, char **data, size_t *got, double *fraction, ovl_err *err) {
  *data = NULL;
  *got = 0;
  *fraction = -1;
  int rc;
  slot *s = next_full(ra, &rc, err);
  if (!s) return rc;
  *data = s->data + s->pos;
  *got = s->len - s->pos;
  *fraction = s->fraction;
  s->pos = s->len;
  ra->lent = 1;  /* handed back at the next call */
  return OVL_OK;
}

void ovl_read_ahead_stop(ovl_read_ahead *ra) {
  if (!ra) return;
  pthread_mutex_lock(&ra->lock);
  ra->stop = 1;
  pthread_cond_signal(&ra->drained);
  pthread_mutex_unlock(&ra->lock);
  pthread_join(ra->thread, NULL);
  pthread_cond_destroy(&ra->drained);
  pthread_cond_destroy(&ra->filled);
  pthread_mutex_destroy(&ra->lock);
  for (int i = 0; i < RING_SLOTS; i++) free(ra->ring[i].data);
  free(ra);
}
