/* A rank's exposed pieces kept apart and the stages' answers from them: see kept_pieces.h. */
#include "kept_pieces.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static void keep_coll(ovl_coll_result *c, ovl_kept_coll *out) {
  *out = (ovl_kept_coll){c->pieces_at, c->npieces, (uint8_t)c->pieces_exact, (uint8_t)c->has_pieces};
  c->has_pieces = c->pieces_exact = 0;
  c->npieces = 0;
  c->pieces_at = 0;
}

int ovl_kept_pieces_take(ovl_rank_result *r, ovl_kept_pieces *k) {
  memset(k, 0, sizeof *k);
  size_t n = r->nunstepped;
  for (size_t s = 0; s < r->nsteps; s++) n += r->steps[s].ncolls;
  k->colls = malloc((n ? n : 1) * sizeof *k->colls);
  k->step_ncolls = malloc((r->nsteps ? r->nsteps : 1) * sizeof *k->step_ncolls);
  if (!k->colls || !k->step_ncolls) {
    ovl_kept_pieces_free(k);
    return -1;
  }
  for (size_t s = 0; s < r->nsteps; s++) {
    k->step_ncolls[s] = r->steps[s].ncolls;
    for (size_t i = 0; i < r->steps[s].ncolls; i++) keep_coll(&r->steps[s].colls[i], &k->colls[k->ncolls++]);
  }
  for (size_t i = 0; i < r->nunstepped; i++) keep_coll(&r->unstepped[i], &k->colls[k->ncolls++]);
  k->nsteps = r->nsteps;
  k->bounds = r->coll_piece_bounds;
  r->coll_piece_bounds = NULL;
  return 0;
}

void ovl_kept_pieces_free(ovl_kept_pieces *k) {
  free(k->bounds);
  free(k->colls);
  free(k->step_ncolls);
  memset(k, 0, sizeof *k);
}

static const int64_t *pieces_of(const ovl_kept_pieces *k, size_t j) {
  const ovl_kept_coll *c = &k->colls[j];
  return c->has && k->bounds ? k->bounds + 2 * (size_t)c->at : NULL;
}

/* A step's collectives as ovl_dim_exposed_of reads them. */
typedef struct kept_step {
  const ovl_kept_pieces *k;
  size_t first;
} kept_step;

static const int64_t *step_pieces(const void *ctx, size_t i, int *n, int *exact) {
  const kept_step *ks = ctx;
  const ovl_kept_coll *c = &ks->k->colls[ks->first + i];
  *n = c->n;
  *exact = c->exact;
  return pieces_of(ks->k, ks->first + i);
}

int ovl_kept_dim_exposed(const ovl_kept_pieces *k, const uint8_t *dims, ovl_dim_exposed *out) {
  size_t most = 0;
  for (size_t s = 0; s < k->nsteps; s++)
    if (k->step_ncolls[s] > most) most = k->step_ncolls[s];
  void *scratch = malloc((most ? most : 1) * OVL_EXPOSED_PIECES * 2 * sizeof(int64_t));
  if (!scratch) return -1;
  for (size_t s = 0, first = 0; s < k->nsteps; first += k->step_ncolls[s++]) {
    kept_step ks = {k, first};
    ovl_dim_exposed_of(step_pieces, &ks, dims + first, k->step_ncolls[s], scratch, &out[s]);
  }
  free(scratch);
  return 0;
}

int64_t ovl_kept_exposed_within(const ovl_kept_pieces *k, size_t j, int64_t cut, int64_t end) {
  assert(j < k->ncolls);
  const int64_t *p = pieces_of(k, j);
  return p ? ovl_exposed_within(p, k->colls[j].n, cut, end) : 0;
}
