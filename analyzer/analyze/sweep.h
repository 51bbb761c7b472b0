/*
** The streaming sweep that turns one device's GPU work into overlap metrics.
**
** Work items arrive in non-decreasing start order. The sweep keeps only the items running
** at the current time (a min-heap keyed by end), so memory depends on concurrency, not on
** trace length. Between consecutive events the set of running classes is constant, and
** each such segment [a, b) adds b - a to:
**   compute  when any compute kernel runs,
**   comm     when any communication runs,
**   exposed  when communication runs and no compute does (also to every collective
**            running then: its exposed_ns),
**   memory   when a memop that is not communication runs,
** for the whole device and for the step window containing the segment. All of these are
** lengths of unions over every stream of the device, so overlapping communication on two
** streams counts once, and zero-length or touching items add nothing.
**
** Compute items may carry a kernel signature (sig >= 0): when such an item ends, the sweep
** reports its duration and how long communication ran during it to on_compute_end. The
** device's comm total is the running count of time with communication, so the overlap of
** one item is the growth of that total over its lifetime: O(1) per item.
*/
#ifndef OVL_SWEEP_H
#define OVL_SWEEP_H

#include "classify.h"
#include "step_windows.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_totals {
  int64_t compute, comm, exposed, memory;
  int64_t busy;                  /* union of all GPU work (HTA's idle time is the span minus it) */
  int64_t busy_start, busy_end;  /* first and last instant any work ran; INT64_MAX/INT64_MIN if none */
} ovl_totals;

/* Where a collective's exposed time lies: up to OVL_EXPOSED_PIECES disjoint intervals in
** time order. When more are needed the last one is stretched over the rest (then the pieces
** cover more than the exposed time and `exact` is 0). Cross-rank analysis uses them to tell
** exposure while waiting for peers from exposure while transferring. */
#define OVL_EXPOSED_PIECES 4
typedef struct ovl_exposed_pieces {
  int64_t start[OVL_EXPOSED_PIECES], end[OVL_EXPOSED_PIECES];
  uint8_t n, exact;
} ovl_exposed_pieces;

/* Length of the exposed time inside [lo, hi) of n pieces given as (start, end) pairs in
** bounds[0..2n) (a collective's result keeps its pieces so: analysis.h); exact when the
** pieces were. */
int64_t ovl_exposed_within(const int64_t *bounds, int n, int64_t lo, int64_t hi);

/* How the sweep keeps a collective's pieces: 16 bytes a collective (one per collective is
** alive through the pass: 1.37 M collectives, 21 MB), the first piece in place as its start and
** 32-bit length (most collectives have at most one, shorter than 4.3 s) and the rest in a block
** of the state's `more`, taken when a second piece comes or the first grows too long for its
** length (then len is OVL_PIECE_LONG and its end is the block's first_end). Read them back
** whole with ovl_coll_pieces_get. */
#define OVL_PIECE_LONG UINT32_MAX
#define OVL_PIECE_BLOCKS_MAX ((1u << 28) - 1)  /* blocks a state can hand out (`more`'s 28 bits) */
typedef struct ovl_piece_slot {
  int64_t start;               /* the first piece's, when n > 0 */
  uint32_t len;                /* the first piece's length, < OVL_PIECE_LONG; or OVL_PIECE_LONG */
  uint32_t more : 28;          /* 1 + the index of its block in ovl_coll_state.more; 0: none */
  uint32_t n : 3, exact : 1;   /* n <= OVL_EXPOSED_PIECES */
} ovl_piece_slot;

typedef struct ovl_piece_more {
  int64_t first_end;           /* the first piece's end, when its slot's len is OVL_PIECE_LONG */
  int64_t start[OVL_EXPOSED_PIECES - 1], end[OVL_EXPOSED_PIECES - 1];
} ovl_piece_more;

/* Per-collective state shared by the sweeps of a trace; indexed by collective number. */
typedef struct ovl_coll_state {
  int64_t *exposed;
  int32_t *running;  /* items of the collective running now */
  ovl_piece_slot *pieces;  /* may be NULL: not recorded */
  size_t len;
  ovl_piece_more *more;    /* the pieces after the first: nmore blocks in use */
  size_t nmore, more_cap;
  int pieces_failed;       /* no memory for a block: ovl_sweep_finish fails */
} ovl_coll_state;

/* Collective c's pieces: none, exact, and no block (before its first piece, or a pass again). */
void ovl_coll_pieces_clear(ovl_coll_state *cs, size_t c);
/* Every block given back for reuse: before a pass again, whose collectives' slots are each
** cleared (ovl_coll_pieces_clear). */
void ovl_coll_pieces_restart(ovl_coll_state *cs);
/* Collective c's pieces, whole. */
void ovl_coll_pieces_get(const ovl_coll_state *cs, size_t c, ovl_exposed_pieces *out);
/* The blocks given back (the slots are the owner's). */
void ovl_coll_pieces_free(ovl_coll_state *cs);

typedef struct ovl_sweep_item {
  int64_t start, end;
  ovl_work_class cls;
  const int32_t *colls;  /* collectives this work executes; must outlive the item's run */
  uint32_t ncolls;       /* entries in colls, or 1 with colls NULL to use coll */
  int32_t coll;
  long close_step;       /* >= 0: when this item ends, that step's window closes and the next opens */
  int32_t sig;           /* compute: kernel signature reported at its end, or -1 */
} ovl_sweep_item;

typedef struct ovl_sweep_entry {
  int64_t end;
  int64_t start, comm_at_start;  /* for on_compute_end */
  const int32_t *colls;
  uint32_t ncolls;
  int32_t coll;
  int32_t cls;
  int32_t sig;
  long close_step;
} ovl_sweep_entry;

/* Called when a compute item with a signature ends: its duration and the ns of it during
** which communication ran on the device. */
typedef void (*ovl_compute_end_fn)(void *ctx, int32_t sig, int64_t duration, int64_t overlapped);

struct ovl_sweep;
/* Called for every stretch [a, b) (a < b) during which the running work does not change, idle
** stretches between work included, in time order: s->running and s->active_colls describe
** it. What the timeline export's counters (exposed communication, bytes in flight) are drawn
** from, so they are the analysis's own accounting. */
typedef void (*ovl_segment_fn)(void *ctx, const struct ovl_sweep *s, int64_t a, int64_t b);

typedef struct ovl_sweep {
  int64_t now;
  int64_t last_start;       /* of the last item added: items come in start order */
  int started;
  ovl_sweep_entry *heap;
  size_t heap_len, heap_cap;
  int running[3];           /* per ovl_work_class */
  int32_t *active_colls;    /* distinct collectives with running > 0 */
  size_t nactive, active_cap;
  ovl_coll_state *colls;
  ovl_step_windows *windows;
  ovl_totals total;
  ovl_totals *steps;        /* windows->n entries */
  ovl_compute_end_fn on_compute_end;  /* may be NULL */
  void *on_compute_end_ctx;
  ovl_segment_fn on_segment;          /* may be NULL */
  void *on_segment_ctx;
} ovl_sweep;

void ovl_totals_init(ovl_totals *t);
/* windows may have n = 0. colls must cover every index items will name. */
int ovl_sweep_init(ovl_sweep *s, ovl_step_windows *windows, ovl_coll_state *colls);
void ovl_sweep_free(ovl_sweep *s);
/* Accounts time up to t (>= the last item's start). */
int ovl_sweep_advance(ovl_sweep *s, int64_t t);
/* Adds an item starting at or after every earlier item. */
int ovl_sweep_add(ovl_sweep *s, const ovl_sweep_item *item);
/* Runs every remaining item to its end. -1 when a collective's pieces lacked memory for a
** block at any time of the sweep (ovl_coll_state.pieces_failed: those pieces are incomplete). */
int ovl_sweep_finish(ovl_sweep *s);

#endif
