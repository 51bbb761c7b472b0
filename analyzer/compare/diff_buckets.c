/* Gradient buckets of two runs (diff.h): firing order against readiness, and the layout. */
#include "diff.h"

#include "base/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The step's gradient buckets in firing order, and in readiness order when known. */
static void orders(const ovl_prof_step *st, ovl_bucket_side *s) {
  s->nfired = s->nready = 0;
  s->numbered = 1;
  int ready_known = 1;
  for (size_t i = 0; i < st->ncolls && s->nfired < OVL_DIFF_MAX_BUCKETS; i++) {
    const ovl_prof_coll *c = &st->colls[i];
    if (!c->gradient) continue;
    long bucket = c->bucket >= 0 ? c->bucket : (long)s->nfired;  /* unnumbered: by position */
    if (c->bucket < 0) s->numbered = 0;
    s->fired[s->nfired++] = bucket;
    if (c->ready_order < 0) ready_known = 0;
  }
  if (!ready_known) return;
  for (size_t pos = 0; pos < s->nfired; pos++)
    for (size_t i = 0, g = 0; i < st->ncolls; i++) {
      if (!st->colls[i].gradient) continue;
      if (g < s->nfired && st->colls[i].ready_order == (int)pos) s->ready[s->nready++] = s->fired[g];
      g++;
    }
  if (s->nready != s->nfired) s->nready = 0;  /* readiness ranks with gaps: not an order */
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static void side_of(const ovl_profile *p, ovl_bucket_side *s) {
  memset(s, 0, sizeof *s);
  s->step = -1;
  s->bytes_per_bucket = s->buckets_per_step = NAN;
  size_t total = 0, nbytes = 0;
  for (size_t r = 0; r < p->nranks; r++) total += p->ranks[r].nsteps;
  double *counts = malloc((total ? total : 1) * sizeof *counts);
  double *bytes = NULL;
  size_t ncounts = 0, nb = 0;
  for (size_t r = 0; r < p->nranks; r++)
    for (size_t i = 0; i < p->ranks[r].nsteps; i++) nbytes += p->ranks[r].steps[i].ncolls;
  bytes = malloc((nbytes ? nbytes : 1) * sizeof *bytes);
  const ovl_prof_step *rep = NULL;
  int64_t rep_rank = OVL_NONE;
  for (size_t r = 0; r < p->nranks; r++)
    for (size_t i = 0; i < p->ranks[r].nsteps; i++) {
      const ovl_prof_step *st = &p->ranks[r].steps[i];
      long grads = 0;
      for (size_t c = 0; c < st->ncolls; c++)
        if (st->colls[c].gradient) {
          grads++;
          if (bytes && st->colls[c].bytes != OVL_NONE) bytes[nb++] = (double)st->colls[c].bytes;
        }
      s->steps++;
      if (grads == 0) continue;
      s->grad_steps++;
      s->misordered_steps += st->misordered != 0;
      if (counts) counts[ncounts++] = (double)grads;
      if (!rep || (st->misordered && !rep->misordered)) {
        rep = st;
        rep_rank = p->ranks[r].rank;
      }
    }
  if (counts && ncounts) {
    ovl_dist d;
    ovl_dist_of(counts, ncounts, &d);
    s->buckets_per_step = d.median;
  }
  if (bytes && nb) {
    ovl_qsort(bytes, nb, sizeof *bytes, cmp_double);
    s->bytes_per_bucket = ovl_quantile(bytes, nb, 0.5);
  }
  free(counts);
  free(bytes);
  if (rep) {
    orders(rep, s);
    s->rank = rep_rank;
    s->step = rep->index;
  }
}

static int same_order(const ovl_bucket_side *a, const ovl_bucket_side *b) {
  return a->nfired == b->nfired && memcmp(a->fired, b->fired, a->nfired * sizeof *a->fired) == 0;
}

void ovl_diff_buckets(ovl_diff *d) {
  ovl_bucket_diff *b = &d->buckets;
  side_of(d->before, &b->before);
  side_of(d->after, &b->after);
  if (b->before.grad_steps == 0 && b->after.grad_steps == 0) return;
  /* another number of buckets is a layout change; the order changes when the same buckets fire
  ** otherwise, or one run fires against readiness and the other does not */
  b->order_changed = (b->before.misordered_steps > 0) != (b->after.misordered_steps > 0) ||
                     (b->before.grad_steps && b->after.grad_steps && b->before.nfired == b->after.nfired &&
                      !same_order(&b->before, &b->after));
  ovl_dist none = {0, 0, 0, 0, 0};
  ovl_change size;
  ovl_change_between(b->before.bytes_per_bucket, b->after.bytes_per_bucket, &none, &none, OVL_Q_COUNT, &size);
  b->layout_changed = b->before.buckets_per_step != b->after.buckets_per_step || size.significant ||
                      (b->before.grad_steps == 0) != (b->after.grad_steps == 0);
}
