/*
** The bounded hand-over of host events from application threads to the writer thread.
**
** Each producing thread appends to its own chain of fixed-size chunks (no lock, no atomic
** read-modify-write: one release store publishes an event); the writer drains every
** thread's chain in order. Memory is bounded: chunks come from a pool of at most `limit`
** bytes, and an event that finds no room is dropped and counted, never waited for. Events
** of one thread are drained in the order they were appended; events of different threads
** in no particular order.
**
** Accounting: every call a hook hands over is counted on its thread (ovl_hostbuf_counts):
** appended, or dropped for want of room, or let through unrecorded (the capture closing or
** stopped). So at any moment calls = events drained + events still buffered + dropped, and
** the writer can say in meta what happened to every call.
**
** Memory comes from mapped slabs (huge pages where allowed) cut into chunks. The writer
** keeps a stock of chunks whose pages are already faulted in (ovl_hostbuf_prepare), so that
** a program thread taking a fresh chunk takes no page faults; drained chunks go back to the
** stock, warm (memory once touched stays, within the limit). Once the pool is exhausted,
** producers drop without taking any lock until a chunk is freed.
**
** Producers: any thread. ovl_hostbuf_drain, _prepare, _counts: one thread (the writer).
*/
#ifndef OVL_INJECT_HOST_BUFFER_H
#define OVL_INJECT_HOST_BUFFER_H

#include "host_events.h"

#include <stddef.h>
#include <stdint.h>

#define OVL_HOSTBUF_CHUNK_BYTES (64 * 1024)

/* Memory limit for all chunks (rounded to whole chunks, at least 2). Callable any time. */
void ovl_hostbuf_set_limit(size_t bytes);
/* Called (from a producer) when more than half the limit is in use or the stock of ready
** chunks runs low: wake the writer. */
void ovl_hostbuf_set_pressure_fn(void (*fn)(void));

/* Room for the event of one call, `size` bytes (a multiple of 8, at most 64 KiB - 8), in the
** calling thread's chain, or NULL when the pool is exhausted (the call is counted as
** dropped). Fill it, then publish it with ovl_hostbuf_commit(size) before the next reserve. */
void *ovl_hostbuf_reserve(size_t size);
void ovl_hostbuf_commit(size_t size);
/* reserve + copy + commit for the event of one call. Returns 0, or -1 when dropped. */
int ovl_hostbuf_append(const void *event, size_t size);
/* A call the hooks let through without recording it (the capture closing, or stopped after
** a write error): counted as dropped. */
void ovl_hostbuf_count_unrecorded(void);

/* Consumes one event, appended by the thread of kernel id `tid`; returns nonzero to end the
** drain after it. */
typedef int (*ovl_event_fn)(void *ctx, const ovl_event_header *ev, int64_t tid);
/* Calls fn for every event published before the call and not yet drained (events published
** meanwhile wait for the next drain, so the work is bounded however fast threads append),
** until fn asks to stop; returns how many. Frees the chains of threads that have exited
** once they are empty. */
size_t ovl_hostbuf_drain(ovl_event_fn fn, void *ctx);
/* Faults in the pages of spare chunks until the stock of ready chunks is full (or the
** limit reached, or at_most chunks were done when it is not 0), so that producers find warm
** memory. Cheap when the stock is full. Returns how many chunks it made ready. */
size_t ovl_hostbuf_prepare(size_t at_most);
#define OVL_HOSTBUF_SLAB_CHUNKS 32  /* the chunks of one 2 MiB slab (one huge page) */
/* Whether the chains hold more than half the limit (or it is exhausted): drain now. A wake
** without it only asked for warm chunks. */
int ovl_hostbuf_wants_drain(void);

typedef struct ovl_hostbuf_counts {
  uint64_t calls;    /* calls counted so far: events appended + dropped */
  uint64_t dropped;  /* of those, dropped for want of room or let through unrecorded */
} ovl_hostbuf_counts;
/* The counts as of now (threads still calling move on meanwhile). Every event the drain
** has handed out is among `calls - dropped`. */
void ovl_hostbuf_counts_now(ovl_hostbuf_counts *c);
/* Calls dropped so far (for want of room or unrecorded). Any thread. */
uint64_t ovl_hostbuf_dropped(void);

#endif
