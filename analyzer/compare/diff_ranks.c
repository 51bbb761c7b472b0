/* Ranks of the two runs paired, and each pair's metrics (diff.h). */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

static int any_rank_known(const ovl_profile *p) {
  for (size_t i = 0; i < p->nranks; i++)
    if (p->ranks[i].rank != OVL_NONE) return 1;
  return 0;
}

/* The after rank for before rank i: the same rank number, on the same device when there is a
** choice; -1 when none is left. */
static long partner(const ovl_profile *b, const ovl_profile *a, size_t i, const char *taken) {
  long best = -1;
  for (size_t k = 0; k < a->nranks; k++) {
    if (taken[k] || a->ranks[k].rank != b->ranks[i].rank || b->ranks[i].rank == OVL_NONE) continue;
    if (best < 0 || a->ranks[k].device == b->ranks[i].device) best = (long)k;
    if (a->ranks[k].device == b->ranks[i].device) break;
  }
  return best;
}

static int pair_metrics(const ovl_diff *d, ovl_rank_pair *p) {
  size_t bi = (size_t)p->before, ai = (size_t)p->after;
  ovl_side_metrics b, a;
  if (ovl_side_metrics_of(d->before, &bi, p->before >= 0 ? 1 : 0, &b) ||
      ovl_side_metrics_of(d->after, &ai, p->after >= 0 ? 1 : 0, &a))
    return -1;
  ovl_metrics_compare(&b, &a, &p->m);
  return 0;
}

int ovl_diff_ranks(ovl_diff *d) {
  const ovl_profile *b = d->before, *a = d->after;
  d->ranks = calloc(b->nranks + a->nranks + 1, sizeof *d->ranks);
  char *taken = calloc(a->nranks + 1, 1);
  if (!d->ranks || !taken) {
    free(taken);
    return -1;
  }
  /* One rank each (the usual before/after of a single-GPU profile, even of different ranks):
  ** compared with each other. Else by rank number; without rank numbers, by position. */
  int one_each = b->nranks == 1 && a->nranks == 1;
  int by_number = !one_each && any_rank_known(b) && any_rank_known(a);
  d->ranks_by_number = by_number || (one_each && b->ranks[0].rank == a->ranks[0].rank);
  for (size_t i = 0; i < b->nranks; i++) {
    long k = one_each ? 0 : by_number ? partner(b, a, i, taken) : (i < a->nranks ? (long)i : -1);
    if (k >= 0) taken[k] = 1;
    d->ranks[d->nranks].before = (long)i;
    d->ranks[d->nranks++].after = k;
  }
  for (size_t k = 0; k < a->nranks; k++)
    if (!taken[k]) {
      d->ranks[d->nranks].before = -1;
      d->ranks[d->nranks++].after = (long)k;
    }
  free(taken);
  for (size_t i = 0; i < d->nranks; i++)
    if (pair_metrics(d, &d->ranks[i])) return -1;
  return 0;
}
