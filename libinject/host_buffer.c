/*
** Per-thread chunk chains: see host_buffer.h.
**
** Invariants:
**  * a chunk is written only by the thread whose chain it is in, and only at offsets >= its
**    published `used`; the writer reads only below `used` (acquire/release pairs);
**  * a producer publishes `next` only after the final store to the old chunk's `used`, so
**    once the writer sees `next` it can read the old chunk to its end and recycle it;
**  * a producer publishes `tail` only after `next` (and, for its first chunk, `head`): a
**    drain bounds itself to the tail and its `used` as they were when it started, so
**    producers that keep appending never keep the writer from finishing a drain;
**  * a chain's counters are written by its thread only; `calls` is stored before the
**    event's `used`, so every event the writer drains is already among the calls it reads;
**  * a chain's thread stores `exited` after its last event; the writer frees a chain only
**    after seeing `exited` and then draining it, and keeps its counts (retired_*);
**  * `exhausted` is set and cleared under pool_lock only: set when a producer found no
**    chunk, cleared whenever one is put back or the limit rises. While it is set, producers
**    drop without touching the lock.
*/
#define _GNU_SOURCE
#include "host_buffer.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  /* Linux 5.14 */
#endif

/* The producer's fields and the writer's sit on separate cache lines: a writer draining the
** chunk a thread is filling must not take that line from it at every event. */
typedef struct chunk {
  _Atomic(struct chunk *) next;
  atomic_uint used;           /* bytes published by the producer */
  _Alignas(64) unsigned read; /* bytes consumed by the writer */
  struct chunk *free_next;    /* in a pool list */
  _Alignas(64) unsigned char data[];
} chunk;

#define CHUNK_DATA (OVL_HOSTBUF_CHUNK_BYTES - offsetof(chunk, data))
#define SLAB_BYTES (2u << 20)  /* mapped at a time: one transparent huge page where allowed */
#define SLAB_CHUNKS (SLAB_BYTES / OVL_HOSTBUF_CHUNK_BYTES)
_Static_assert(SLAB_CHUNKS == OVL_HOSTBUF_SLAB_CHUNKS, "host_buffer.h names the slab's chunks");
/* The stock of warm chunks the writer keeps for producers: 16 MiB at first (260,000 calls;
** 8 MiB cost 8 threads' 200,000-call burst ~13 ns a call in faults on fresh memory),
** doubled (up to 32 MiB) each time a producer found it empty, so that a burst of calls finds
** warm memory. Below a quarter, producers wake the writer. */
#define READY_FIRST 256
#define READY_MAX 512

typedef struct thread_chain {
  _Atomic(chunk *) tail;    /* written by the producer; read by the writer for a snapshot */
  atomic_uint_fast64_t calls, dropped;  /* written by the producer only */
  atomic_int exited;
  int64_t tid;              /* the thread's kernel id, set before the chain is registered */
  _Alignas(64) struct thread_chain *reg_next;  /* the writer's line */
  chunk *head;              /* writer side; set by the producer only while tail is NULL */
} thread_chain;

/* The pool: free chunks (pages faulted in, warm), and the uncut rest of the last mapped slab
** (cold: never touched). */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static chunk *ready;
static atomic_size_t nready;
static size_t carved, limit_chunks = 512;  /* under pool_lock */
static atomic_size_t in_use;  /* chunks in chains (written under pool_lock, read anywhere) */
static unsigned char *slab_next;
static size_t slab_left;
static atomic_int exhausted;
static atomic_size_t ready_target = READY_FIRST;
static void (*pressure_fn)(void);

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_chain *registry;

static pthread_key_t chain_key;
static pthread_once_t chain_key_once = PTHREAD_ONCE_INIT;
static __thread thread_chain *my_chain;

/* Calls of threads without a chain (out of memory) and of freed chains. */
static atomic_uint_fast64_t orphan_calls, orphan_dropped;
static atomic_uint_fast64_t retired_calls, retired_dropped;

void ovl_hostbuf_set_limit(size_t bytes) {
  size_t n = bytes / OVL_HOSTBUF_CHUNK_BYTES;
  pthread_mutex_lock(&pool_lock);
  limit_chunks = n < 2 ? 2 : n;
  atomic_store_explicit(&exhausted, 0, memory_order_relaxed);
  pthread_mutex_unlock(&pool_lock);
}

void ovl_hostbuf_set_pressure_fn(void (*fn)(void)) { pressure_fn = fn; }

/* ---------------------------------------------------------------------------------- */
/* The pool                                                                           */
/* ---------------------------------------------------------------------------------- */

static void push(chunk **list, chunk *c) {
  c->free_next = *list;
  *list = c;
}

static chunk *pop(chunk **list) {
  chunk *c = *list;
  if (c) *list = c->free_next;
  return c;
}

/* n chunks of fresh memory, aligned to SLAB_BYTES so that the kernel can back it with a
** huge page: a first touch then costs one fault per 2 MiB instead of one per 4 KiB (on the
** development VM, 9 instead of 500 ns per 128-byte event written to fresh memory). */
static unsigned char *map_slab(size_t n) {
  size_t bytes = n * OVL_HOSTBUF_CHUNK_BYTES, span = bytes + SLAB_BYTES;
  unsigned char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  unsigned char *aligned = (unsigned char *)(((uintptr_t)p + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1));
  if (aligned > p) munmap(p, (size_t)(aligned - p));
  if (aligned + bytes < p + span) munmap(aligned + bytes, (size_t)(p + span - (aligned + bytes)));
  (void)madvise(aligned, bytes, MADV_HUGEPAGE);  /* a hint: refused where THP is off */
  return aligned;
}

/* A chunk never used yet, cut from the current slab (mapping a new one when needed), or NULL
** at the limit. Pages are not touched: the chunk is cold. Called with pool_lock held. */
static chunk *carve(void) {
  if (carved >= limit_chunks) return NULL;
  if (slab_left == 0) {
    size_t n = limit_chunks - carved < SLAB_CHUNKS ? limit_chunks - carved : SLAB_CHUNKS;
    if (!(slab_next = map_slab(n))) return NULL;
    slab_left = n;
  }
  chunk *c = (chunk *)slab_next;
  slab_next += OVL_HOSTBUF_CHUNK_BYTES;
  slab_left--;
  carved++;
  return c;
}

static void chunk_reset(chunk *c) {
  atomic_init(&c->next, NULL);
  atomic_init(&c->used, 0);
  c->read = 0;
}

/* A chunk for a producer: a ready one if any, else a new one (the producer then takes the
** page faults), else NULL: the pool is exhausted until a chunk is put back. */
static chunk *chunk_get(void) {
  if (atomic_load_explicit(&exhausted, memory_order_relaxed)) return NULL;  /* no lock while dropping */
  pthread_mutex_lock(&pool_lock);
  size_t target = atomic_load_explicit(&ready_target, memory_order_relaxed);
  chunk *c = pop(&ready);
  if (c) {
    atomic_fetch_sub_explicit(&nready, 1, memory_order_relaxed);
  } else {
    if (target < READY_MAX) atomic_store_explicit(&ready_target, target * 2, memory_order_relaxed);
    c = carve();
  }
  if (c) atomic_fetch_add_explicit(&in_use, 1, memory_order_relaxed);
  else atomic_store_explicit(&exhausted, 1, memory_order_relaxed);
  int wake = c && (atomic_load_explicit(&in_use, memory_order_relaxed) * 2 > limit_chunks ||
                   atomic_load_explicit(&nready, memory_order_relaxed) < target / 4);
  pthread_mutex_unlock(&pool_lock);
  if (!c) return NULL;
  chunk_reset(c);
  if (wake && pressure_fn) pressure_fn();
  return c;
}

/* A drained chunk back to the pool, warm: reusing it costs nothing. Its pages are never
** given back (memory stays bounded by the limit): MADV_DONTNEED costs a TLB shootdown on
** every CPU, which took the writer 0.5 s for a flood's 1,000 chunks on two busy cores. */
static void chunk_put(chunk *c) {
  pthread_mutex_lock(&pool_lock);
  push(&ready, c);
  atomic_fetch_add_explicit(&nready, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(&in_use, 1, memory_order_relaxed);
  atomic_store_explicit(&exhausted, 0, memory_order_relaxed);
  pthread_mutex_unlock(&pool_lock);
}

/* Faults in a chunk's pages in one system call (before Linux 5.14: by writing to each),
** then reads a byte of each from user space: under a hypervisor that shadows page tables
** the first user access to a page traps to the host even when the kernel mapped it, ~4 us
** a page measured on the development VM, which a producer would otherwise pay (~130 ns a
** call). On bare metal the reads cost next to nothing. */
static void populate(chunk *c) {
  static size_t page;
  if (!page) page = sysconf(_SC_PAGESIZE) > 0 ? (size_t)sysconf(_SC_PAGESIZE) : 4096;
  volatile unsigned char *p = (volatile unsigned char *)c;
  int done = madvise(c, OVL_HOSTBUF_CHUNK_BYTES, MADV_POPULATE_WRITE) == 0;
  for (size_t off = 0; off < OVL_HOSTBUF_CHUNK_BYTES; off += page) {
    if (done) (void)p[off];
    else p[off] = 0;
  }
}

int ovl_hostbuf_wants_drain(void) {
  pthread_mutex_lock(&pool_lock);
  int full = atomic_load_explicit(&in_use, memory_order_relaxed) * 2 > limit_chunks;
  pthread_mutex_unlock(&pool_lock);
  return full || atomic_load_explicit(&exhausted, memory_order_relaxed);
}

size_t ovl_hostbuf_prepare(size_t at_most) {
  size_t done = 0;
  while ((!at_most || done < at_most) &&
         atomic_load_explicit(&nready, memory_order_relaxed) < atomic_load_explicit(&ready_target, memory_order_relaxed)) {
    pthread_mutex_lock(&pool_lock);
    chunk *c = carve();
    pthread_mutex_unlock(&pool_lock);
    if (!c) break;  /* at the limit: every chunk is in use or ready */
    populate(c);
    pthread_mutex_lock(&pool_lock);
    push(&ready, c);
    atomic_fetch_add_explicit(&nready, 1, memory_order_relaxed);
    atomic_store_explicit(&exhausted, 0, memory_order_relaxed);
    pthread_mutex_unlock(&pool_lock);
    done++;
  }
  return done;
}

/* ---------------------------------------------------------------------------------- */
/* Producers                                                                          */
/* ---------------------------------------------------------------------------------- */

static void chain_gone(void *p) {
  thread_chain *t = p;
  my_chain = NULL;
  atomic_store_explicit(&t->exited, 1, memory_order_release);
}

static void make_key(void) { pthread_key_create(&chain_key, chain_gone); }

/* The calling thread's chain, created (without a chunk yet) on its first event. */
static thread_chain *this_thread(void) {
  if (my_chain) return my_chain;
  pthread_once(&chain_key_once, make_key);
  thread_chain *t = aligned_alloc(_Alignof(thread_chain), sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->tid = (int64_t)syscall(SYS_gettid);
  pthread_mutex_lock(&registry_lock);
  t->reg_next = registry;
  registry = t;
  pthread_mutex_unlock(&registry_lock);
  pthread_setspecific(chain_key, t);
  my_chain = t;
  return t;
}

/* Single-writer counters: a load and a store, no read-modify-write. */
static void bump(atomic_uint_fast64_t *v, memory_order order) {
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1, order);
}

/* `calls` before `dropped` (release): whoever sees the drop sees the call (counts_now). */
static void count_drop(thread_chain *t) {
  if (!t) {
    atomic_fetch_add_explicit(&orphan_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&orphan_dropped, 1, memory_order_release);
    return;
  }
  bump(&t->calls, memory_order_relaxed);
  bump(&t->dropped, memory_order_release);
}

/* Room for `size` bytes at the end of t's chain, moving to a new chunk when the tail is full. */
static void *room(thread_chain *t, size_t size) {
  chunk *c = atomic_load_explicit(&t->tail, memory_order_relaxed);
  unsigned used = c ? atomic_load_explicit(&c->used, memory_order_relaxed) : 0;
  if (!c || used + size > CHUNK_DATA) {
    chunk *n = chunk_get();
    if (!n) return NULL;
    if (c) atomic_store_explicit(&c->next, n, memory_order_release);
    else t->head = n;
    atomic_store_explicit(&t->tail, n, memory_order_release);
    c = n;
    used = 0;
  }
  return c->data + used;
}

static void *reserve(thread_chain *t, size_t size) {
  assert(size % 8 == 0 && size >= sizeof(ovl_event_header));
  void *slot = t && size <= CHUNK_DATA ? room(t, size) : NULL;
  if (!slot) count_drop(t);
  return slot;
}

static void publish(thread_chain *t, size_t size) {
  bump(&t->calls, memory_order_relaxed);  /* before `used`: the writer never drains an uncounted event */
  chunk *c = atomic_load_explicit(&t->tail, memory_order_relaxed);
  unsigned used = atomic_load_explicit(&c->used, memory_order_relaxed) + (unsigned)size;
  atomic_store_explicit(&c->used, used, memory_order_release);
}

void *ovl_hostbuf_reserve(size_t size) { return reserve(this_thread(), size); }

void ovl_hostbuf_commit(size_t size) { publish(my_chain, size); }

int ovl_hostbuf_append(const void *event, size_t size) {
  thread_chain *t = this_thread();
  void *slot = reserve(t, size);
  if (!slot) return -1;
  memcpy(slot, event, size);
  publish(t, size);
  return 0;
}

void ovl_hostbuf_count_unrecorded(void) { count_drop(this_thread()); }

/* ---------------------------------------------------------------------------------- */
/* The writer                                                                         */
/* ---------------------------------------------------------------------------------- */

/* Consumes the events of one chunk below `used`; returns 1 when fn asked to stop. */
static int drain_chunk(chunk *c, unsigned used, int64_t tid, ovl_event_fn fn, void *ctx, size_t *count) {
  while (c->read + sizeof(ovl_event_header) <= used) {
    const ovl_event_header *ev = (const ovl_event_header *)(c->data + c->read);
    if (ev->size < sizeof *ev || c->read + ev->size > used) {  /* cannot happen; never loop on it */
      c->read = used;
      break;
    }
    int stop = fn(ctx, ev, tid);
    c->read += ev->size;
    ++*count;
    if (stop) return 1;
  }
  return 0;
}

/* Where a chain's producer was when a drain began: the drain goes no further. */
typedef struct chain_end {
  thread_chain *t;
  chunk *end;        /* NULL: the thread has no chunk yet */
  unsigned end_used;
  int exited;        /* the thread had exited: `end` is its last chunk */
} chain_end;

static void mark_end(chain_end *e, thread_chain *t) {
  e->t = t;
  e->exited = atomic_load_explicit(&t->exited, memory_order_acquire);
  e->end = atomic_load_explicit(&t->tail, memory_order_acquire);
  e->end_used = e->end ? atomic_load_explicit(&e->end->used, memory_order_acquire) : 0;
}

/* Drains one chain up to its end mark. Returns 1 when fn asked to stop; sets *gone when
** the chain's thread had exited and everything is drained (free it). */
static int drain_chain(const chain_end *e, ovl_event_fn fn, void *ctx, size_t *count, int *gone) {
  thread_chain *t = e->t;
  *gone = 0;
  if (!e->end) {
    *gone = e->exited;
    return 0;
  }
  while (t->head != e->end) {  /* chunks the producer had left: complete, `next` published */
    chunk *c = t->head;
    if (drain_chunk(c, atomic_load_explicit(&c->used, memory_order_acquire), t->tid, fn, ctx, count)) return 1;
    t->head = atomic_load_explicit(&c->next, memory_order_acquire);
    chunk_put(c);
  }
  if (drain_chunk(e->end, e->end_used, t->tid, fn, ctx, count)) return 1;
  *gone = e->exited && e->end->read == e->end_used;
  return 0;
}

/* Frees the chains marked gone (head NULL), keeping their counts. */
static void free_gone_chains(void) {
  pthread_mutex_lock(&registry_lock);
  for (thread_chain **p = &registry; *p;) {
    thread_chain *t = *p;
    if (t->head == NULL && atomic_load_explicit(&t->exited, memory_order_acquire) &&
        atomic_load_explicit(&t->tail, memory_order_relaxed) == NULL) {
      *p = t->reg_next;
      atomic_fetch_add_explicit(&retired_calls, atomic_load_explicit(&t->calls, memory_order_acquire),
                                memory_order_relaxed);
      atomic_fetch_add_explicit(&retired_dropped, atomic_load_explicit(&t->dropped, memory_order_acquire),
                                memory_order_relaxed);
      free(t);
    } else {
      p = &t->reg_next;
    }
  }
  pthread_mutex_unlock(&registry_lock);
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
      thread_chain *t = snap[i].t;
      if (t->head) chunk_put(t->head);
      t->head = NULL;
      atomic_store_explicit(&t->tail, NULL, memory_order_relaxed);  /* the thread is gone: nobody appends */
      any_gone = 1;
    }
    if (stop) break;
  }
  if (any_gone) free_gone_chains();
  return count;
}

void ovl_hostbuf_counts_now(ovl_hostbuf_counts *c) {
  /* `dropped` first (acquire): every drop it sees is in `calls` too, so calls - dropped never
  ** falls below the events appended (it may include a few dropped meanwhile). */
  uint64_t calls = 0, dropped = 0;
  pthread_mutex_lock(&registry_lock);
  dropped = atomic_load_explicit(&retired_dropped, memory_order_acquire) +
            atomic_load_explicit(&orphan_dropped, memory_order_acquire);
  for (thread_chain *t = registry; t; t = t->reg_next) dropped += atomic_load_explicit(&t->dropped, memory_order_acquire);
  calls = atomic_load_explicit(&retired_calls, memory_order_relaxed) +
          atomic_load_explicit(&orphan_calls, memory_order_relaxed);
  for (thread_chain *t = registry; t; t = t->reg_next) calls += atomic_load_explicit(&t->calls, memory_order_acquire);
  pthread_mutex_unlock(&registry_lock);
  c->calls = calls;
  c->dropped = dropped;
}

uint64_t ovl_hostbuf_dropped(void) {
  ovl_hostbuf_counts c;
  ovl_hostbuf_counts_now(&c);
  return c.dropped;
}
