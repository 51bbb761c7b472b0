/*
** Per-thread chunk chains: see host_buffer.h.
**
** Invariants:
**  * a chunk is written only by the thread whose chain it is in, and only at offsets >= its
**    published `used`; the writer reads only below `used` (acquire/release pairs);
**  * a producer publishes `next` only after the final store to the old chunk's `used`, so
**    once the writer sees `next` it can read the old chunk to its end and recycle it;
**  * a producer publishes `tail` only after `next`: a drain bounds itself to the tail and
**    its `used` as they were when it started, so producers that keep appending never keep
**    the writer from finishing a drain (and committing);
**  * a chain's thread stores `exited` after its last event; the writer frees a chain only
**    after seeing `exited` and then draining it.
*/
#include "host_buffer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
  _Atomic(struct chunk *) next;
  atomic_uint used;           /* bytes published by the producer */
  unsigned read;              /* bytes consumed by the writer */
  struct chunk *free_next;    /* in the pool's free list */
  _Alignas(8) unsigned char data[];
} chunk;

#define CHUNK_DATA (OVL_HOSTBUF_CHUNK_BYTES - offsetof(chunk, data))
#define FREE_KEEP 128  /* spare chunks (8 MiB) kept: fresh memory costs a page fault per 4 KiB */

typedef struct thread_chain {
  struct thread_chain *reg_next;
  chunk *head;              /* writer side */
  _Atomic(chunk *) tail;    /* written by the producer; read by the writer for a snapshot */
  atomic_int exited;
} thread_chain;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static chunk *free_list;
static size_t nfree, allocated, limit_chunks = 512;
static void (*pressure_fn)(void);

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_chain *registry;

static pthread_key_t chain_key;
static pthread_once_t chain_key_once = PTHREAD_ONCE_INIT;
static __thread thread_chain *my_chain;

static atomic_uint_fast64_t dropped;

void ovl_hostbuf_set_limit(size_t bytes) {
  size_t n = bytes / OVL_HOSTBUF_CHUNK_BYTES;
  pthread_mutex_lock(&pool_lock);
  limit_chunks = n < 2 ? 2 : n;
  pthread_mutex_unlock(&pool_lock);
}

void ovl_hostbuf_set_pressure_fn(void (*fn)(void)) { pressure_fn = fn; }

static chunk *chunk_get(void) {
  chunk *c = NULL;
  int pressure = 0;
  pthread_mutex_lock(&pool_lock);
  if (free_list) {
    c = free_list;
    free_list = c->free_next;
    nfree--;
  } else if (allocated < limit_chunks && (c = malloc(OVL_HOSTBUF_CHUNK_BYTES)) != NULL) {
    allocated++;
  }
  if (c) pressure = (allocated - nfree) * 2 > limit_chunks;
  pthread_mutex_unlock(&pool_lock);
  if (!c) return NULL;
  atomic_init(&c->next, NULL);
  atomic_init(&c->used, 0);
  c->read = 0;
  if (pressure && pressure_fn) pressure_fn();
  return c;
}

static void chunk_put(chunk *c) {
  pthread_mutex_lock(&pool_lock);
  if (nfree < FREE_KEEP) {
    c->free_next = free_list;
    free_list = c;
    nfree++;
    c = NULL;
  } else {
    allocated--;
  }
  pthread_mutex_unlock(&pool_lock);
  free(c);
}

static void chain_gone(void *p) {
  thread_chain *t = p;
  my_chain = NULL;
  atomic_store_explicit(&t->exited, 1, memory_order_release);
}

static void make_key(void) { pthread_key_create(&chain_key, chain_gone); }

static thread_chain *this_thread(void) {
  if (my_chain) return my_chain;
  pthread_once(&chain_key_once, make_key);
  thread_chain *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  if (!(t->head = chunk_get())) {
    free(t);
    return NULL;
  }
  atomic_init(&t->tail, t->head);
  pthread_mutex_lock(&registry_lock);
  t->reg_next = registry;
  registry = t;
  pthread_mutex_unlock(&registry_lock);
  pthread_setspecific(chain_key, t);
  my_chain = t;
  return t;
}

void *ovl_hostbuf_reserve(size_t size) {
  thread_chain *t = this_thread();
  if (!t || size > CHUNK_DATA) {
    atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
    return NULL;
  }
  chunk *c = atomic_load_explicit(&t->tail, memory_order_relaxed);
  unsigned used = atomic_load_explicit(&c->used, memory_order_relaxed);
  if (used + size > CHUNK_DATA) {
    chunk *n = chunk_get();
    if (!n) {
      atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
      return NULL;
    }
    atomic_store_explicit(&c->next, n, memory_order_release);
    atomic_store_explicit(&t->tail, n, memory_order_release);
    c = n;
    used = 0;
  }
  return c->data + used;
}

void ovl_hostbuf_commit(size_t size) {
  chunk *c = atomic_load_explicit(&my_chain->tail, memory_order_relaxed);
  unsigned used = atomic_load_explicit(&c->used, memory_order_relaxed);
  atomic_store_explicit(&c->used, used + (unsigned)size, memory_order_release);
}

int ovl_hostbuf_append(const void *event, size_t size) {
  void *slot = ovl_hostbuf_reserve(size);
  if (!slot) return -1;
  memcpy(slot, event, size);
  ovl_hostbuf_commit(size);
  return 0;
}

/* Consumes the events of one chunk below `used`; returns 1 when fn asked to stop. */
static int drain_chunk(chunk *c, unsigned used, ovl_event_fn fn, void *ctx, size_t *count) {
  while (c->read + sizeof(ovl_event_header) <= used) {
    const ovl_event_header *ev = (const ovl_event_header *)(c->data + c->read);
    if (ev->size < sizeof *ev || c->read + ev->size > used) {  /* cannot happen; never loop on it */
      c->read = used;
      break;
    }
    int stop = fn(ctx, ev);
    c->read += ev->size;
    ++*count;
    if (stop) return 1;
  }
  return 0;
}

/* Where a chain's producer was when a drain began: the drain goes no further. */
typedef struct chain_end {
  thread_chain *t;
  chunk *end;
  unsigned end_used;
  int exited;  /* the thread had exited: `end` is its last chunk */
} chain_end;

static void mark_end(chain_end *e, thread_chain *t) {
  e->t = t;
  e->exited = atomic_load_explicit(&t->exited, memory_order_acquire);
  e->end = atomic_load_explicit(&t->tail, memory_order_acquire);
  e->end_used = atomic_load_explicit(&e->end->used, memory_order_acquire);
}

/* Drains one chain up to its end mark. Returns 1 when fn asked to stop; sets *gone when
** the chain's thread had exited and everything is drained (free it). */
static int drain_chain(const chain_end *e, ovl_event_fn fn, void *ctx, size_t *count, int *gone) {
  thread_chain *t = e->t;
  *gone = 0;
  while (t->head != e->end) {  /* chunks the producer had left: complete, `next` published */
    chunk *c = t->head;
    if (drain_chunk(c, atomic_load_explicit(&c->used, memory_order_acquire), fn, ctx, count)) return 1;
    t->head = atomic_load_explicit(&c->next, memory_order_acquire);
    chunk_put(c);
  }
  if (drain_chunk(e->end, e->end_used, fn, ctx, count)) return 1;
  *gone = e->exited && e->end->read == e->end_used;
  return 0;
}

size_t ovl_hostbuf_drain(ovl_event_fn fn, void *ctx) {
  /* Mark every chain's end first, all at once: chunks freed while draining one chain and
  ** refilled by another producer wait for the next drain. Threads registering meanwhile
  ** never wait for the drain. */
  static chain_end *snap;
  static size_t snap_cap;
  size_t n = 0, count = 0;
  pthread_mutex_lock(&registry_lock);
  for (thread_chain *t = registry; t; t = t->reg_next) {
    if (n == snap_cap) {
      size_t cap = snap_cap ? snap_cap * 2 : 64;
      chain_end *s = realloc(snap, cap * sizeof *s);
      if (!s) break;  /* the rest waits for the next drain */
      snap = s;
      snap_cap = cap;
    }
    mark_end(&snap[n++], t);
  }
  pthread_mutex_unlock(&registry_lock);

  int any_gone = 0;
  for (size_t i = 0; i < n; i++) {
    int gone = 0;
    int stop = drain_chain(&snap[i], fn, ctx, &count, &gone);
    if (gone) {
      chunk_put(snap[i].t->head);
      snap[i].t->head = NULL;
      any_gone = 1;
    }
    if (stop) break;
  }
  if (any_gone) {
    pthread_mutex_lock(&registry_lock);
    for (thread_chain **p = &registry; *p;) {
      thread_chain *t = *p;
      if (t->head == NULL) {
        *p = t->reg_next;
        free(t);
      } else {
        p = &t->reg_next;
      }
    }
    pthread_mutex_unlock(&registry_lock);
  }
  return count;
}

uint64_t ovl_hostbuf_dropped(void) { return atomic_load_explicit(&dropped, memory_order_relaxed); }
