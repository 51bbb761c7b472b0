/* Kernels of two runs by name and class (diff.h): time per step as a distribution over the
** ranks' steps, count per step, new and vanished names. */
#include "diff.h"

#include "base/strmap.h"
#include "base/vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef OVL_VEC(double) dvec;

typedef struct kernel_acc {
  const char *name;        /* borrowed from a profile */
  int comm;
  dvec time[2];            /* per (rank, step) where it ran */
  double count[2];
} kernel_acc;

typedef struct kernels_acc {
  OVL_VEC(kernel_acc) rows;
  ovl_strmap index;
  size_t samples[2];       /* (rank, step) pairs */
} kernels_acc;

static kernel_acc *row_of(kernels_acc *acc, const ovl_prof_kernel *k) {
  size_t len = strlen(k->name) + 3;
  char *key = malloc(len);
  if (!key) return NULL;
  snprintf(key, len, "%c\x1f%s", k->comm ? 'C' : 'K', k->name);
  int64_t i;
  kernel_acc *row = NULL;
  if (ovl_strmap_get(&acc->index, key, &i)) {
    row = &acc->rows.items[i];
  } else {
    kernel_acc fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.name = k->name;
    fresh.comm = k->comm;
    if (!OVL_VEC_PUSH(&acc->rows, fresh)) {
      if (ovl_strmap_put(&acc->index, key, (int64_t)acc->rows.len - 1)) acc->rows.len--;
      else row = &acc->rows.items[acc->rows.len - 1];
    }
  }
  free(key);
  return row;
}

/* A rank's kernels: their time in each of its steps (or, without per-step times, their total
** spread evenly: such a rank adds no spread). */
static int add_rank(kernels_acc *acc, int side, const ovl_prof_rank *r) {
  size_t steps = r->nsteps ? r->nsteps : 1;
  acc->samples[side] += steps;
  for (size_t i = 0; i < r->nkernels; i++) {
    const ovl_prof_kernel *k = &r->kernels[i];
    kernel_acc *row = row_of(acc, k);
    if (!row) return -1;
    row->count[side] += (double)k->count;
    for (size_t s = 0; s < steps; s++) {
      double v = k->step_ns && r->nsteps ? (double)k->step_ns[s] : (double)k->total / (double)steps;
      if (OVL_VEC_PUSH(&row->time[side], v)) return -1;
    }
  }
  return 0;
}

/* Changed, new and vanished names first (their time beyond the noise before the rest), by the
** time per step they move. */
static ovl_order_key kernel_key(const ovl_kernel_diff *k) {
  ovl_order_key key = ovl_change_key(&k->time);
  key.tier += k->status != OVL_DS_SAME;
  return key;
}

static int cmp_kernels(const void *pa, const void *pb) {
  const ovl_kernel_diff *a = pa, *b = pb;
  int c = ovl_order_key_cmp(kernel_key(a), kernel_key(b));
  if (c) return c;
  if (a->comm != b->comm) return a->comm - b->comm;
  return strcmp(a->name, b->name);
}

static int finish(ovl_diff *d, kernels_acc *acc) {
  d->kernels = calloc(acc->rows.len + 1, sizeof *d->kernels);
  if (!d->kernels) return -1;
  for (size_t i = 0; i < acc->rows.len; i++) {
    kernel_acc *row = &acc->rows.items[i];
    ovl_kernel_diff *o = &d->kernels[d->nkernels];
    int on[2] = {row->count[0] > 0 || row->time[0].len > 0, row->count[1] > 0 || row->time[1].len > 0};
    for (int side = 0; side < 2; side++)  /* steps of ranks without it: zeros */
      while (on[side] && row->time[side].len < acc->samples[side])
        if (OVL_VEC_PUSH(&row->time[side], 0.0)) return -1;
    ovl_dist b, a;
    ovl_dist_of(row->time[0].items, row->time[0].len, &b);
    ovl_dist_of(row->time[1].items, row->time[1].len, &a);
    ovl_change_of(&b, &a, OVL_Q_NS, &o->time);
    if (!(o->name = strdup(row->name))) return -1;
    d->nkernels++;
    o->comm = row->comm;
    o->count_before = acc->samples[0] ? row->count[0] / (double)acc->samples[0] : NAN;
    o->count_after = acc->samples[1] ? row->count[1] / (double)acc->samples[1] : NAN;
    double dc = fabs(o->count_after - o->count_before);
    o->status = !on[0] ? OVL_DS_NEW
                : !on[1] ? OVL_DS_VANISHED
                : (o->time.significant || dc > fmax(OVL_DIFF_MIN_COUNT, OVL_DIFF_MIN_REL * o->count_before))
                    ? OVL_DS_CHANGED
                    : OVL_DS_SAME;
  }
  ovl_qsort(d->kernels, d->nkernels, sizeof *d->kernels, cmp_kernels);
  return 0;
}

int ovl_diff_kernels(ovl_diff *d) {
  d->kernels_compared = !d->before->from_report && !d->after->from_report;
  if (!d->kernels_compared) return 0;
  kernels_acc acc;
  memset(&acc, 0, sizeof acc);
  int rc = 0;
  for (int side = 0; !rc && side < 2; side++) {
    const ovl_profile *p = side ? d->after : d->before;
    for (size_t r = 0; !rc && r < p->nranks; r++) rc = add_rank(&acc, side, &p->ranks[r]);
  }
  if (!rc) rc = finish(d, &acc);
  for (size_t i = 0; i < acc.rows.len; i++) {
    OVL_VEC_FREE(&acc.rows.items[i].time[0]);
    OVL_VEC_FREE(&acc.rows.items[i].time[1]);
  }
  OVL_VEC_FREE(&acc.rows);
  ovl_strmap_free(&acc.index);
  return rc;
}
