/*
** Exposed pieces that stayed where they were measured. A collective's exposed pieces (where
** its exposed time lies: analysis.h) are read by two job stages only: the per-dimension
** exposed time of each step (job_dims.c) and the exposed part of each matched call's
** transfer (job_cross_rank.c). `ovl report --mpi` does not send them to the root (64 bytes
** a collective in a generated FSDP job): the process that measured a rank keeps them and
** answers these two questions about it (mpi/mpi_pieces.c), in batches. A job without such ranks passes
** no ovl_remote_pieces and every answer is computed from the rank's own pieces.
**
** Collectives are numbered as the stages walk them: every step's, in step and firing order,
** then the unstepped.
*/
#ifndef OVL_REMOTE_PIECES_H
#define OVL_REMOTE_PIECES_H

#include "../analyze/analysis.h"

/* A step's per-dimension exposed time from pieces: for each dimension d, the length of the
** union of the pieces of the collectives whose dims[i] is d, and whether every one of them
** had exact pieces (exact[d] = 0: the caller falls back to the sum of exposed times). */
typedef struct ovl_dim_exposed {
  int64_t unions[OVL_DIM_COUNT];
  uint8_t exact[OVL_DIM_COUNT];
} ovl_dim_exposed;

/* Skips a collective in ovl_dim_exposed_of (no GPU interval: it counts in no dimension). */
#define OVL_DIM_SKIP 0xff

/* Collective i's pieces (n pairs), or NULL when it has none recorded. */
typedef const int64_t *(*ovl_pieces_fn)(const void *ctx, size_t i, int *n, int *exact);

/* The per-dimension unions of collectives [0, n) (dims[i] < OVL_DIM_COUNT or OVL_DIM_SKIP),
** their pieces read through get. scratch: room for n * OVL_EXPOSED_PIECES pieces (16 bytes
** each). Pure. */
void ovl_dim_exposed_of(ovl_pieces_fn get, const void *ctx, const uint8_t *dims, size_t n, void *scratch,
                        ovl_dim_exposed *out);

/* The questions are asked in batches: each ask queues one, and flush sends every queued question
** together (--mpi: one request to each process holding ranks, every request posted before the
** first answer is awaited, one answer from each) and writes the answers where the asks said.
** The caller asks about every rank, flushing whenever full says so (the queued questions are
** bounded so that they do not raise the asker's peak memory), flushes at the end and only then
** reads the answers. A caller that gives up before flushing calls forget. */
typedef struct ovl_remote_pieces {
  void *self;
  /* 1 when r's pieces are kept elsewhere (and r holds none). */
  int (*holds)(void *self, const ovl_rank_result *r);
  /* Queues: for each step s of r, ovl_dim_exposed_of over its collectives into out[s], dims
  ** giving every step's collectives' dimension in turn (sum of r's steps' ncolls; copied). out
  ** must stay valid until the flush. Status (out of memory); *err says why. */
  int (*ask_dim_exposed)(void *self, const ovl_rank_result *r, const uint8_t *dims, ovl_dim_exposed *out, ovl_err *err);
  /* Queues: for each of n collectives (index[i] in the stages' numbering, increasing): the
  ** exposed time of its pieces inside [cut[i], end[i]) (ovl_exposed_within), written at the
  ** flush into the int64_t at out + i * out_stride bytes. The arrays are copied; out must stay
  ** valid until the flush. Status (out of memory); *err says why. */
  int (*ask_exposed_after)(void *self, const ovl_rank_result *r, const uint32_t *index, const int64_t *cut,
                           const int64_t *end, size_t n, int64_t *out, size_t out_stride, ovl_err *err);
  /* 1 when the queued questions reached the batch's bound: flush before asking more. */
  int (*full)(void *self);
  /* Asks every queued question and writes the answers. Status; *err says why. The queue is
  ** empty after, on failure too (answers then undefined). */
  int (*flush)(void *self, ovl_err *err);
  /* Empties the queue without asking. */
  void (*forget)(void *self);
} ovl_remote_pieces;

#endif
