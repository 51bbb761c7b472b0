/* Collectives of two runs matched by communicator, operation and index within the step
** (diff.h): one row per matched call, and one per communicator and operation summing a step's
** calls. Every value is pooled over the ranks' steps of its side. */
#include "diff.h"

#include "base/i64map.h"
#include "base/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef OVL_VEC(double) dvec;
typedef OVL_VEC(int64_t) id_vec;

typedef struct side_acc {
  dvec calls, dur, exposed, bytes;  /* per call (index rows) or per step (sum rows) */
  long occurrences;
  long bucket;
} side_acc;

typedef struct row_acc {
  size_t comm;
  ovl_op op;
  long index;              /* -1: sum row */
  side_acc s[2];           /* before, after */
} row_acc;

typedef struct coll_acc {
  OVL_VEC(row_acc) rows;
  ovl_i64map index;        /* key -> row */
  size_t samples[2];       /* (rank, step) pairs of each side */
} coll_acc;

/* ---- communicators ---- */

/* The communicators of p in order of first use. */
static int comms_of(const ovl_profile *p, id_vec *out) {
  ovl_i64map seen = {0};
  int64_t unknown_seen = 0, dummy;
  for (size_t r = 0; r < p->nranks; r++)
    for (size_t s = 0; s < p->ranks[r].nsteps; s++)
      for (size_t c = 0; c < p->ranks[r].steps[s].ncolls; c++) {
        int64_t id = p->ranks[r].steps[s].colls[c].comm;
        if (id == OVL_NONE ? unknown_seen++ > 0 : ovl_i64map_get(&seen, id, &dummy)) continue;
        if ((id != OVL_NONE && ovl_i64map_put(&seen, id, 1)) || OVL_VEC_PUSH(out, id)) {
          ovl_i64map_free(&seen);
          return -1;
        }
      }
  ovl_i64map_free(&seen);
  return 0;
}

/* Pairs equal ids, then the rest in order of first use; one-sided ones last. */
static int pair_comms(ovl_diff *d) {
  id_vec b = {0}, a = {0};
  int rc = comms_of(d->before, &b) || comms_of(d->after, &a);
  char *used_a = calloc(a.len + 1, 1), *used_b = calloc(b.len + 1, 1);
  d->comms = calloc(a.len + b.len + 1, sizeof *d->comms);
  if (rc || !used_a || !used_b || !d->comms) rc = -1;
  for (size_t i = 0; !rc && i < b.len; i++)
    for (size_t k = 0; k < a.len; k++)
      if (!used_a[k] && a.items[k] == b.items[i]) {
        used_a[k] = used_b[i] = 1;
        d->comms[d->ncomms++] = (ovl_comm_pair){b.items[i], a.items[k], 1, 1, 1};
        break;
      }
  size_t k = 0;
  for (size_t i = 0; !rc && i < b.len; i++) {
    if (used_b[i]) continue;
    while (k < a.len && used_a[k]) k++;
    if (k < a.len) {
      used_a[k] = used_b[i] = 1;
      d->comms[d->ncomms++] = (ovl_comm_pair){b.items[i], a.items[k], 1, 1, 0};
    }
  }
  for (size_t i = 0; !rc && i < b.len; i++)
    if (!used_b[i]) d->comms[d->ncomms++] = (ovl_comm_pair){b.items[i], OVL_NONE, 1, 0, 0};
  for (size_t i = 0; !rc && i < a.len; i++)
    if (!used_a[i]) d->comms[d->ncomms++] = (ovl_comm_pair){OVL_NONE, a.items[i], 0, 1, 0};
  free(used_a);
  free(used_b);
  OVL_VEC_FREE(&a);
  OVL_VEC_FREE(&b);
  return rc;
}

/* Communicator id -> pair, per side (calls without a known communicator: `unknown`). */
typedef struct comm_index {
  ovl_i64map by_id;
  size_t unknown;
} comm_index;

static int index_comms(const ovl_diff *d, int side, comm_index *ci) {
  memset(ci, 0, sizeof *ci);
  for (size_t i = 0; i < d->ncomms; i++) {
    const ovl_comm_pair *c = &d->comms[i];
    if (!(side ? c->has_after : c->has_before)) continue;
    int64_t id = side ? c->after : c->before;
    if (id == OVL_NONE) ci->unknown = i;
    else if (ovl_i64map_put(&ci->by_id, id, (int64_t)i)) return -1;
  }
  return 0;
}

/* The pair holding a communicator of this side (every one is in a pair). */
static size_t comm_pair_of(const comm_index *ci, int64_t id) {
  int64_t i;
  if (id != OVL_NONE && ovl_i64map_get(&ci->by_id, id, &i)) return (size_t)i;
  return ci->unknown;
}

/* ---- rows ---- */

static int64_t row_key(size_t comm, ovl_op op, long index) {
  return ((int64_t)comm << 40) | ((int64_t)op << 32) | (int64_t)(index + 1);
}

static row_acc *row_of(coll_acc *acc, size_t comm, ovl_op op, long index) {
  int64_t key = row_key(comm, op, index), i;
  if (ovl_i64map_get(&acc->index, key, &i)) return &acc->rows.items[i];
  row_acc fresh;
  memset(&fresh, 0, sizeof fresh);
  fresh.comm = comm;
  fresh.op = op;
  fresh.index = index;
  fresh.s[0].bucket = fresh.s[1].bucket = -1;
  if (OVL_VEC_PUSH(&acc->rows, fresh)) return NULL;
  if (ovl_i64map_put(&acc->index, key, (int64_t)acc->rows.len - 1)) {
    acc->rows.len--;
    return NULL;
  }
  return &acc->rows.items[acc->rows.len - 1];
}

static int push(dvec *v, double x) { return OVL_VEC_PUSH(v, x); }

/* A (comm, op) group's sums over one step. */
typedef struct group_sum {
  size_t comm;
  ovl_op op;
  double calls, dur, exposed, bytes;
  int bytes_known;
} group_sum;

/* A step's calls of one side: each into its call row, and summed into its (comm, op) row. */
static int add_step(coll_acc *acc, const comm_index *ci, int side, const ovl_prof_step *st) {
  OVL_VEC(group_sum) groups = {0};
  ovl_i64map group_of = {0};
  int rc = 0;
  for (size_t c = 0; !rc && c < st->ncolls; c++) {
    const ovl_prof_coll *pc = &st->colls[c];
    size_t comm = comm_pair_of(ci, pc->comm);
    row_acc *row = row_of(acc, comm, pc->op, pc->index);
    if (!row) {
      rc = -1;
      break;
    }
    side_acc *s = &row->s[side];
    s->occurrences++;
    if (s->bucket < 0 && pc->gradient) s->bucket = pc->bucket;
    if (push(&s->dur, (double)pc->duration) || push(&s->exposed, (double)pc->exposed) ||
        (pc->bytes != OVL_NONE && push(&s->bytes, (double)pc->bytes))) {
      rc = -1;
      break;
    }
    int64_t key = row_key(comm, pc->op, -1), g;
    if (!ovl_i64map_get(&group_of, key, &g)) {
      group_sum fresh = {comm, pc->op, 0, 0, 0, 0, 1};
      if (OVL_VEC_PUSH(&groups, fresh) || ovl_i64map_put(&group_of, key, (int64_t)groups.len - 1)) {
        rc = -1;
        break;
      }
      g = (int64_t)groups.len - 1;
    }
    group_sum *gs = &groups.items[g];
    gs->calls++;
    gs->dur += (double)pc->duration;
    gs->exposed += (double)pc->exposed;
    if (pc->bytes == OVL_NONE) gs->bytes_known = 0;
    else gs->bytes += (double)pc->bytes;
  }
  /* sum rows: one value per step for every group the step has (absent groups: zeros, in pad) */
  for (size_t g = 0; !rc && g < groups.len; g++) {
    const group_sum *gs = &groups.items[g];
    row_acc *row = row_of(acc, gs->comm, gs->op, -1);
    side_acc *s = row ? &row->s[side] : NULL;
    if (!s || push(&s->calls, gs->calls) || push(&s->dur, gs->dur) || push(&s->exposed, gs->exposed) ||
        (gs->bytes_known && push(&s->bytes, gs->bytes)))
      rc = -1;
    else
      s->occurrences++;
  }
  OVL_VEC_FREE(&groups);
  ovl_i64map_free(&group_of);
  return rc;
}

/* Steps where a group did not run count as zeros (in a run that has it); a call row's calls per
** step are 1 where it ran and 0 elsewhere. */
static int pad(coll_acc *acc) {
  for (size_t i = 0; i < acc->rows.len; i++)
    for (int side = 0; side < 2; side++) {
      side_acc *s = &acc->rows.items[i].s[side];
      int sum_row = acc->rows.items[i].index < 0;
      if (!sum_row)
        for (long k = 0; k < s->occurrences; k++)
          if (push(&s->calls, 1.0)) return -1;
      for (size_t k = (size_t)s->occurrences; k < acc->samples[side]; k++) {
        if (push(&s->calls, 0.0)) return -1;
        /* a run without the group measured no time for it: no distribution (shown "-") */
        if (sum_row && s->occurrences && (push(&s->dur, 0.0) || push(&s->exposed, 0.0))) return -1;
      }
    }
  return 0;
}

static double mean_of(const dvec *v) {
  double sum = 0;
  for (size_t i = 0; i < v->len; i++) sum += v->items[i];
  return v->len ? sum / (double)v->len : NAN;
}

/* The medians compared, or with by_mean the means (calls per step: a call in one step of
** three is 0.33 per step, where the median says 0). */
static void change(dvec *b, dvec *a, ovl_quantity q, int by_mean, ovl_change *out) {
  double mb = mean_of(b), ma = mean_of(a);
  ovl_dist db, da;
  ovl_dist_of(b->items, b->len, &db);
  ovl_dist_of(a->items, a->len, &da);
  if (by_mean) ovl_change_between(b->len ? mb : 0.0, a->len ? ma : 0.0, &db, &da, q, out);
  else ovl_change_of(&db, &da, q, out);
}

static void finish_row(row_acc *r, ovl_coll_diff *o) {
  memset(o, 0, sizeof *o);
  o->comm = r->comm;
  o->op = r->op;
  o->index = r->index;
  change(&r->s[0].calls, &r->s[1].calls, OVL_Q_COUNT, 1, &o->calls);
  /* a call row compares the calls that ran; absent ones have no duration */
  change(&r->s[0].dur, &r->s[1].dur, OVL_Q_NS, 0, &o->duration);
  change(&r->s[0].exposed, &r->s[1].exposed, OVL_Q_NS, 0, &o->exposed);
  change(&r->s[0].bytes, &r->s[1].bytes, OVL_Q_COUNT, 0, &o->bytes);
  o->bucket_before = r->s[0].bucket;
  o->bucket_after = r->s[1].bucket;
  if (r->s[0].occurrences == 0) o->status = OVL_DS_NEW;
  else if (r->s[1].occurrences == 0) o->status = OVL_DS_VANISHED;
  else
    o->status = o->calls.significant || o->duration.significant || o->exposed.significant ||
                        (o->bytes.significant && r->index >= 0)
                    ? OVL_DS_CHANGED
                    : OVL_DS_SAME;
}

/* New and vanished rows first, then significant changes; by the time they move. */
static ovl_order_key row_key_of(const ovl_coll_diff *c) {
  double moved = fabs(isnan(c->exposed.delta) ? 0 : c->exposed.delta) + fabs(isnan(c->duration.delta) ? 0 : c->duration.delta);
  int tier = c->status == OVL_DS_NEW || c->status == OVL_DS_VANISHED ? 2 : c->status == OVL_DS_CHANGED;
  ovl_order_key k = {tier, moved};
  return k;
}

static int cmp_rows(const void *pa, const void *pb) {
  const ovl_coll_diff *a = pa, *b = pb;
  if ((a->index < 0) != (b->index < 0)) return a->index < 0 ? -1 : 1;  /* sums first */
  int c = ovl_order_key_cmp(row_key_of(a), row_key_of(b));
  if (c) return c;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static void acc_free(coll_acc *acc) {
  for (size_t i = 0; i < acc->rows.len; i++)
    for (int side = 0; side < 2; side++) {
      side_acc *s = &acc->rows.items[i].s[side];
      OVL_VEC_FREE(&s->calls);
      OVL_VEC_FREE(&s->dur);
      OVL_VEC_FREE(&s->exposed);
      OVL_VEC_FREE(&s->bytes);
    }
  OVL_VEC_FREE(&acc->rows);
  ovl_i64map_free(&acc->index);
}

int ovl_diff_colls(ovl_diff *d) {
  if (pair_comms(d)) return -1;
  coll_acc acc;
  memset(&acc, 0, sizeof acc);
  int rc = 0;
  for (int side = 0; !rc && side < 2; side++) {
    const ovl_profile *p = side ? d->after : d->before;
    comm_index ci;
    rc = index_comms(d, side, &ci);
    for (size_t r = 0; !rc && r < p->nranks; r++)
      for (size_t s = 0; !rc && s < p->ranks[r].nsteps; s++) {
        acc.samples[side]++;
        rc = add_step(&acc, &ci, side, &p->ranks[r].steps[s]);
      }
    ovl_i64map_free(&ci.by_id);
  }
  if (!rc) rc = pad(&acc);
  if (!rc && !(d->colls = calloc(acc.rows.len + 1, sizeof *d->colls))) rc = -1;
  for (size_t i = 0; !rc && i < acc.rows.len; i++) finish_row(&acc.rows.items[i], &d->colls[d->ncolls++]);
  if (!rc) ovl_qsort(d->colls, d->ncolls, sizeof *d->colls, cmp_rows);
  acc_free(&acc);
  return rc;
}
