/*
** A rank's exposed pieces taken out of its results and kept apart, and the two answers the job
** stages read from them (remote_pieces.h): what `--mpi`'s processes keep for the ranks they
** measured (mpi/mpi_pieces.c) and answer the root with. Pure: no I/O.
**
** Collectives are in the stages' numbering: every step's, in step and firing order, then the
** unstepped.
*/
#ifndef OVL_KEPT_PIECES_H
#define OVL_KEPT_PIECES_H

#include "remote_pieces.h"

/* Where one collective's pieces lie in the bounds (analysis.h's fields of the same names). */
typedef struct ovl_kept_coll {
  uint32_t at;
  uint8_t n, exact, has;
} ovl_kept_coll;

typedef struct ovl_kept_pieces {
  int64_t *bounds;         /* the rank's coll_piece_bounds (owned) */
  ovl_kept_coll *colls;    /* ncolls, in the stages' numbering */
  size_t ncolls;
  size_t *step_ncolls;     /* collectives of each step */
  size_t nsteps;
} ovl_kept_pieces;

/* Moves r's pieces into *k (r then holds none). Returns 0, or -1 when memory ran out (r
** unchanged, *k empty). */
int ovl_kept_pieces_take(ovl_rank_result *r, ovl_kept_pieces *k);
void ovl_kept_pieces_free(ovl_kept_pieces *k);

/* For each step s: ovl_dim_exposed_of over its collectives into out[s] (nsteps), dims giving
** every step's collectives' dimension in turn. Returns 0, or -1 when memory ran out. */
int ovl_kept_dim_exposed(const ovl_kept_pieces *k, const uint8_t *dims, ovl_dim_exposed *out);
/* The exposed time of collective j's (< ncolls) pieces inside [cut, end). */
int64_t ovl_kept_exposed_within(const ovl_kept_pieces *k, size_t j, int64_t cut, int64_t end);

#endif
