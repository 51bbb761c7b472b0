/*
** The bounded hand-over of host events from application threads to the writer thread.
**
** Each producing thread appends to its own chain of fixed-size chunks (no lock, no atomic
** read-modify-write: one release store publishes an event); the writer drains every
** thread's chain in order. Memory is bounded: chunks come from a pool of at most `limit`
** bytes, and an event that finds no room is dropped and counted, never waited for.
** Events of one thread are drained in the order they were appended; events of different
** threads in no particular order.
**
** Producers: any thread. ovl_hostbuf_drain: one thread at a time (the writer).
*/
#ifndef OVL_INJECT_HOST_BUFFER_H
#define OVL_INJECT_HOST_BUFFER_H

#include "host_events.h"

#include <stddef.h>
#include <stdint.h>

#define OVL_HOSTBUF_CHUNK_BYTES (64 * 1024)

/* Memory limit for all chunks (rounded to whole chunks, at least 2). Callable any time. */
void ovl_hostbuf_set_limit(size_t bytes);
/* Called (from a producer) when more than half the limit is in use: wake the writer. */
void ovl_hostbuf_set_pressure_fn(void (*fn)(void));

/* Room for an event of `size` bytes (a multiple of 8, at most 64 KiB - 8) in the calling
** thread's chain, or NULL when the pool is exhausted (the event is counted as dropped).
** Fill it, then publish it with ovl_hostbuf_commit(size) before the next reserve. */
void *ovl_hostbuf_reserve(size_t size);
void ovl_hostbuf_commit(size_t size);
/* reserve + copy + commit. Returns 0, or -1 when dropped. */
int ovl_hostbuf_append(const void *event, size_t size);

/* Consumes one event; returns nonzero to end the drain after it. */
typedef int (*ovl_event_fn)(void *ctx, const ovl_event_header *ev);
/* Calls fn for every event published before the call and not yet drained (events published
** meanwhile wait for the next drain, so the work is bounded however fast threads append),
** until fn asks to stop; returns how many. Frees the chains of threads that have exited
** once they are empty. */
size_t ovl_hostbuf_drain(ovl_event_fn fn, void *ctx);
/* Events dropped so far for want of memory. */
uint64_t ovl_hostbuf_dropped(void);

#endif
