/* Findings of two runs by code (diff.h): appeared, disappeared, persisting. */
#include "diff.h"

#include "base/sane_values.h"
#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef OVL_VEC(ovl_finding_diff) finding_vec;

static ovl_finding_diff *row_of(finding_vec *v, const char *code) {
  for (size_t i = 0; i < v->len; i++)
    if (strcmp(v->items[i].code, code) == 0) return &v->items[i];
  ovl_finding_diff fresh;
  memset(&fresh, 0, sizeof fresh);
  snprintf(fresh.code, sizeof fresh.code, "%s", code);
  if (OVL_VEC_PUSH(v, fresh)) return NULL;
  return &v->items[v->len - 1];
}

/* The largest finding of a code speaks for it: its message, confidence and evidence. */
static void keep_message(ovl_finding_side *s, const ovl_prof_finding *f, int64_t *best) {
  if (!s->message || f->recoverable > *best) {
    s->message = f->message;
    s->confidence = f->confidence;
    s->evidence = f->evidence;
    *best = f->recoverable;
  }
}

/* A rank's findings of every code into side `side` of the rows. */
static int add_rank(finding_vec *v, int side, const ovl_prof_rank *r) {
  for (size_t i = 0; i < r->nfindings; i++) {
    const ovl_prof_finding *f = &r->findings[i];
    int first = 1;  /* the first finding of its code in this rank does the rank's sums */
    for (size_t k = 0; k < i && first; k++) first = strcmp(r->findings[k].code, f->code) != 0;
    if (!first) continue;
    ovl_finding_diff *row = row_of(v, f->code);
    if (!row) return -1;
    ovl_finding_side *s = side ? &row->after : &row->before;
    int64_t rank_level = 0, step_level = 0, best = INT64_MIN;
    long steps = 0, summarised = 0;
    int has_rank_level = 0;
    for (size_t k = i; k < r->nfindings; k++) {
      const ovl_prof_finding *o = &r->findings[k];
      if (strcmp(o->code, f->code) != 0) continue;
      if (o->step < 0) {
        has_rank_level = 1;
        rank_level = ovl_sat_add(rank_level, o->recoverable);
        summarised += o->steps_affected;
      } else {
        step_level = ovl_sat_add(step_level, o->recoverable);
        steps++;
      }
    }
    /* a rank-level finding sums its steps' (steps_affected): count them once */
    s->recoverable = ovl_sat_add(s->recoverable, has_rank_level ? rank_level : step_level);
    s->steps += steps ? steps : summarised;
    s->ranks++;
    for (size_t k = i; k < r->nfindings; k++)
      if (strcmp(r->findings[k].code, f->code) == 0 && (r->findings[k].step < 0 || !has_rank_level))
        keep_message(s, &r->findings[k], &best);
  }
  return 0;
}

static int add_job(finding_vec *v, int side, const ovl_profile *p) {
  for (size_t i = 0; i < p->nfindings; i++) {
    const ovl_prof_finding *f = &p->findings[i];
    ovl_finding_diff *row = row_of(v, f->code);
    if (!row) return -1;
    ovl_finding_side *s = side ? &row->after : &row->before;
    int64_t best = s->message ? INT64_MAX : INT64_MIN;  /* ranks' messages first */
    s->recoverable = ovl_sat_add(s->recoverable, f->recoverable);
    keep_message(s, f, &best);
  }
  return 0;
}

static int present(const ovl_finding_side *s) { return s->message != NULL; }

static int rank_of_status(ovl_diff_status s) {
  return s == OVL_DS_NEW ? 0 : s == OVL_DS_VANISHED ? 1 : s == OVL_DS_CHANGED ? 2 : 3;
}

static int cmp_findings(const void *pa, const void *pb) {
  const ovl_finding_diff *a = pa, *b = pb;
  int ra = rank_of_status(a->status), rb = rank_of_status(b->status);
  if (ra != rb) return ra - rb;
  int64_t wa = a->before.recoverable > a->after.recoverable ? a->before.recoverable : a->after.recoverable;
  int64_t wb = b->before.recoverable > b->after.recoverable ? b->before.recoverable : b->after.recoverable;
  if (wa != wb) return wa > wb ? -1 : 1;
  return strcmp(a->code, b->code);
}

int ovl_diff_findings(ovl_diff *d) {
  finding_vec v = {0};
  int rc = 0;
  for (int side = 0; !rc && side < 2; side++) {
    const ovl_profile *p = side ? d->after : d->before;
    for (size_t r = 0; !rc && r < p->nranks; r++) rc = add_rank(&v, side, &p->ranks[r]);
    if (!rc) rc = add_job(&v, side, p);
  }
  if (rc) {
    OVL_VEC_FREE(&v);
    return -1;
  }
  for (size_t i = 0; i < v.len; i++) {
    ovl_finding_diff *f = &v.items[i];
    if (!present(&f->before)) f->status = OVL_DS_NEW;
    else if (!present(&f->after)) f->status = OVL_DS_VANISHED;
    else {
      ovl_dist none = {0, 0, 0, 0, 0};
      ovl_change c;
      ovl_change_between((double)f->before.recoverable, (double)f->after.recoverable, &none, &none, OVL_Q_NS, &c);
      int conf_changed = strcmp(f->before.confidence, f->after.confidence) != 0;
      f->status = c.significant || f->before.steps != f->after.steps || conf_changed ? OVL_DS_CHANGED : OVL_DS_SAME;
    }
  }
  ovl_qsort(v.items, v.len, sizeof *v.items, cmp_findings);
  d->findings = v.items;
  d->nfindings = v.len;
  return 0;
}
