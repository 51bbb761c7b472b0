/*
** Reading ahead on a thread of its own: a producer thread calls a fill function (zlib's
** inflate, for gzip input; read(2), for plain input when asked) into a ring of buffers while
** the caller consumes the ones filled before, so that decompressing (or the kernel's copy)
** and parsing overlap: a .json.gz costs about the longer of the two instead of their sum.
**
** Invariants:
**   * the fill function runs on the producer thread only, one call at a time, and never after
**     ovl_read_ahead_stop() returned; its context is the producer's until then;
**   * bytes come out in the order fill produced them; an error of fill is returned by
**     ovl_read_ahead_read() after every byte produced before it, exactly as fill reported it;
**   * stopping (at the end, on an error or on a parse error of the consumer) wakes the
**     producer and joins it: no thread outlives the reader.
*/
#ifndef OVL_READ_AHEAD_H
#define OVL_READ_AHEAD_H

#include "base/status.h"

#include <stddef.h>

/* Fills buf with up to cap bytes; *got = 0 at the end. *fraction: the share of the input
** consumed so far (for progress), or a negative number when unknown. */
typedef int (*ovl_read_ahead_fill)(void *ctx, char *buf, size_t cap, size_t *got, double *fraction, ovl_err *err);

typedef struct ovl_read_ahead ovl_read_ahead;

/* Starts the producer. Fails (OVL_EINTERNAL or out of memory) when no thread can be started:
** the caller then reads synchronously. */
int ovl_read_ahead_start(ovl_read_ahead_fill fill, void *ctx, ovl_read_ahead **out, ovl_err *err);
/* The next bytes, up to cap: *got = 0 at the end. *fraction as fill gave it for these bytes. */
int ovl_read_ahead_read(ovl_read_ahead *ra, char *buf, size_t cap, size_t *got, double *fraction, ovl_err *err);
/* The next bytes in place: *data points into the ring, writable, valid until the next call of
** either read function (which hands the slot back to the producer). No copy. */
int ovl_read_ahead_borrow(ovl_read_ahead *ra, char **data, size_t *got, double *fraction, ovl_err *err);
/* Stops the producer, joins it and frees everything. NULL is a no-op. */
void ovl_read_ahead_stop(ovl_read_ahead *ra);

#endif
