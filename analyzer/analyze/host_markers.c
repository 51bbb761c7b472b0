/* Host-side markers: see host_markers.h. */
#include "host_markers.h"

#include "base/vec.h"
#include "nvtx_conventions.h"

#include <stdint.h>
#include <stdlib.h>

static int cmp_range(const void *pa, const void *pb) {
  const ovl_host_range *a = pa, *b = pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return (a->end < b->end) - (a->end > b->end);  /* outer range first */
}

static int cmp_mark(const void *pa, const void *pb) {
  const ovl_grad_mark *a = pa, *b = pb;
  return (a->t > b->t) - (a->t < b->t);
}

typedef struct collect_ctx {
  ovl_host_markers *hm;
  const ovl_analysis_ctx *actx;
} collect_ctx;

static int on_nvtx(void *p, const ovl_nvtx_row *row) {
  collect_ctx *c = p;
  int is_range = row->end != OVL_NONE;
  ovl_nvtx_meaning m;
  ovl_nvtx_interpret(row->domain, row->name, is_range,
                     c->actx->has_step_pattern ? &c->actx->step_pattern : NULL, &m);
  int fail = 0;
  switch (m.kind) {
    case OVL_NVTX_STEP:
      fail = OVL_VEC_PUSH(&c->hm->steps, ((ovl_host_range){row->start, row->end, row->tid, -1, m.step_number}));
      break;
    case OVL_NVTX_BUCKET:
      fail = OVL_VEC_PUSH(&c->hm->buckets, ((ovl_host_range){row->start, row->end, row->tid, m.bucket, -1}));
      break;
    case OVL_NVTX_DIM:
      fail = OVL_VEC_PUSH(&c->hm->dims, ((ovl_host_range){row->start, row->end, row->tid, m.bucket, -1}));
      break;
    case OVL_NVTX_GRAD_READY:
      if (m.bucket >= 0)
        fail = OVL_VEC_PUSH(&c->hm->marks,
                             ((ovl_grad_mark){row->start, m.bucket, m.bytes, row->tid, -1, OVL_NONE, OVL_NONE}));
      break;
    default:
      break;
  }
  return fail ? OVL_EINTERNAL : OVL_OK;
}

int ovl_host_markers_collect(ovl_trace *t, const ovl_analysis_ctx *ctx, ovl_host_markers *hm, ovl_err *err) {
  collect_ctx c = {hm, ctx};
  int rc = ovl_trace_scan_nvtx(t, on_nvtx, &c, err);
  if (rc == OVL_EINTERNAL && !err->msg[0]) rc = ovl_oom(err, "NVTX markers");
  if (rc) return rc;
  ovl_qsort(hm->steps.items, hm->steps.len, sizeof *hm->steps.items, cmp_range);
  ovl_qsort(hm->buckets.items, hm->buckets.len, sizeof *hm->buckets.items, cmp_range);
  ovl_qsort(hm->dims.items, hm->dims.len, sizeof *hm->dims.items, cmp_range);
  ovl_qsort(hm->marks.items, hm->marks.len, sizeof *hm->marks.items, cmp_mark);
  /* Keep outermost, non-overlapping step ranges (nested ranges or a second thread's copy). */
  size_t kept = 0;
  for (size_t i = 0; i < hm->steps.len; i++) {
    if (kept > 0 && hm->steps.items[i].start < hm->steps.items[kept - 1].end) continue;
    hm->steps.items[kept++] = hm->steps.items[i];
  }
  hm->steps.len = kept;
  for (size_t i = 0; i < hm->marks.len; i++) hm->marks.items[i].step = ovl_host_step_at(hm, hm->marks.items[i].t);
  return OVL_OK;
}

long ovl_host_step_at(const ovl_host_markers *hm, int64_t t) {
  size_t lo = 0, hi = hm->steps.len;  /* first range with start > t */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (hm->steps.items[mid].start <= t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  return t < hm->steps.items[lo - 1].end ? (long)(lo - 1) : -1;
}

/* One part of the parallel api scan: correlation bounds per step, merged afterwards; and per
** grad_ready mark the latest launch on its thread between the previous mark and it. */
typedef struct projection_part {
  const ovl_host_markers *hm;
  int64_t *corr_min, *corr_max;
  long last_step;  /* api rows come roughly in time order: try the previous step first */
  int64_t *mark_start, *mark_corr;  /* per mark: OVL_NONE, or that launch's start and id */
} projection_part;

/* The first mark on thread tid at or after time t (marks are sorted by time), or -1; a
** bounded look past marks of other threads. */
static long mark_after(const ovl_host_markers *hm, int64_t t, int64_t tid) {
  size_t lo = 0, hi = hm->marks.len;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (hm->marks.items[mid].t < t) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo, looked = 0; i < hm->marks.len && looked < 64; i++, looked++)
    if (tid == OVL_NONE || hm->marks.items[i].tid == OVL_NONE || hm->marks.items[i].tid == tid) return (long)i;
  return -1;
}

static int on_api(void *p, const ovl_api_row *row) {
  projection_part *part = p;
  const ovl_host_markers *hm = part->hm;
  if (part->mark_start) {
    long j = mark_after(hm, row->start, row->tid);
    if (j >= 0 && (part->mark_start[j] == OVL_NONE || row->start > part->mark_start[j])) {
      part->mark_start[j] = row->start;
      part->mark_corr[j] = row->correlation;
    }
  }
  long s = part->last_step;
  if (s < 0 || row->start < hm->steps.items[s].start || row->start >= hm->steps.items[s].end)
    s = ovl_host_step_at(hm, row->start);
  if (s < 0) return OVL_OK;
  part->last_step = s;
  if (part->corr_min[s] == OVL_NONE || row->correlation < part->corr_min[s]) part->corr_min[s] = row->correlation;
  if (part->corr_max[s] == OVL_NONE || row->correlation > part->corr_max[s]) part->corr_max[s] = row->correlation;
  return OVL_OK;
}

#define PROJECTION_THREADS 2

/* Each mark's launch: the latest of the parts' candidates, else the previous mark's on its
** thread (no launch in between). Threads are few: the last launch of each is kept in a
** small table; a thread beyond it gets none. */
static void project_marks(ovl_host_markers *hm, const projection_part *parts) {
  enum { MAX_THREADS = 16 };
  int64_t tids[MAX_THREADS], starts[MAX_THREADS], corrs[MAX_THREADS];
  size_t ntids = 0;
  for (size_t i = 0; i < hm->marks.len; i++) {
    ovl_grad_mark *m = &hm->marks.items[i];
    int64_t start = OVL_NONE, corr = OVL_NONE;
    for (size_t k = 0; k < PROJECTION_THREADS; k++)
      if (parts[k].mark_start[i] != OVL_NONE && (start == OVL_NONE || parts[k].mark_start[i] > start)) {
        start = parts[k].mark_start[i];
        corr = parts[k].mark_corr[i];
      }
    size_t slot = 0;
    while (slot < ntids && tids[slot] != m->tid) slot++;
    if (slot == ntids && ntids < MAX_THREADS) {
      tids[ntids] = m->tid;
      starts[ntids] = corrs[ntids] = OVL_NONE;
      ntids++;
    }
    if (slot < ntids) {
      if (start == OVL_NONE || (starts[slot] != OVL_NONE && starts[slot] > start)) {
        start = starts[slot];
        corr = corrs[slot];
      }
      starts[slot] = start;
      corrs[slot] = corr;
    }
    m->launch_corr = corr;
    m->gpu_t = OVL_NONE;
  }
}

static int index_marks(ovl_host_markers *hm, ovl_err *err) {
  for (size_t i = hm->marks.len; i-- > 0;)  /* backwards: the first mark of a launch wins */
    if (hm->marks.items[i].launch_corr != OVL_NONE &&
        ovl_i64map_put(&hm->mark_of_launch, hm->marks.items[i].launch_corr, (int64_t)i))
      return ovl_oom(err, "mark projection");
  return OVL_OK;
}

void ovl_host_markers_work_end(ovl_host_markers *hm, int64_t correlation, int64_t end) {
  int64_t first;
  if (correlation == OVL_NONE || !ovl_i64map_get(&hm->mark_of_launch, correlation, &first)) return;
  for (size_t i = (size_t)first; i < hm->marks.len && hm->marks.items[i].launch_corr == correlation; i++)
    if (hm->marks.items[i].gpu_t == OVL_NONE || end > hm->marks.items[i].gpu_t) hm->marks.items[i].gpu_t = end;
}

int ovl_host_markers_project(ovl_trace *t, ovl_host_markers *hm, ovl_err *err) {
  hm->by_correlation = 0;
  size_t n = hm->steps.len;
  if (n == 0) return OVL_OK;
  hm->corr_min = malloc(n * sizeof *hm->corr_min);
  hm->corr_max = malloc(n * sizeof *hm->corr_max);
  hm->ranged_min = malloc(n * sizeof *hm->ranged_min);
  hm->ranged_max = malloc(n * sizeof *hm->ranged_max);
  hm->ranged_step = malloc(n * sizeof *hm->ranged_step);
  if (!hm->corr_min || !hm->corr_max || !hm->ranged_min || !hm->ranged_max || !hm->ranged_step)
    return ovl_oom(err, "step projection");
  projection_part parts[PROJECTION_THREADS];
  void *ctxs[PROJECTION_THREADS];
  int rc = OVL_OK;
  size_t nm = hm->marks.len;
  for (size_t k = 0; k < PROJECTION_THREADS; k++) {
    parts[k] = (projection_part){hm, malloc(n * sizeof(int64_t)), malloc(n * sizeof(int64_t)), -1, NULL, NULL};
    ctxs[k] = &parts[k];
    if (!parts[k].corr_min || !parts[k].corr_max) rc = ovl_oom(err, "step projection");
    for (size_t i = 0; !rc && i < n; i++) parts[k].corr_min[i] = parts[k].corr_max[i] = OVL_NONE;
    if (!rc && nm) {
      parts[k].mark_start = malloc(nm * sizeof(int64_t));
      parts[k].mark_corr = malloc(nm * sizeof(int64_t));
      if (!parts[k].mark_start || !parts[k].mark_corr) rc = ovl_oom(err, "mark projection");
      for (size_t i = 0; !rc && i < nm; i++) parts[k].mark_start[i] = parts[k].mark_corr[i] = OVL_NONE;
    }
  }
  if (!rc) rc = ovl_trace_scan_api_split(t, 1, PROJECTION_THREADS, on_api, ctxs, err);
  for (size_t i = 0; i < n; i++) {
    hm->corr_min[i] = hm->corr_max[i] = OVL_NONE;
    for (size_t k = 0; !rc && k < PROJECTION_THREADS; k++) {
      if (parts[k].corr_min[i] == OVL_NONE) continue;
      if (hm->corr_min[i] == OVL_NONE || parts[k].corr_min[i] < hm->corr_min[i]) hm->corr_min[i] = parts[k].corr_min[i];
      if (hm->corr_max[i] == OVL_NONE || parts[k].corr_max[i] > hm->corr_max[i]) hm->corr_max[i] = parts[k].corr_max[i];
    }
  }
  if (!rc && nm) project_marks(hm, parts);
  if (!rc && nm) rc = index_marks(hm, err);
  for (size_t k = 0; k < PROJECTION_THREADS; k++) {
    free(parts[k].corr_min);
    free(parts[k].corr_max);
    free(parts[k].mark_start);
    free(parts[k].mark_corr);
  }
  if (rc) return rc;
  hm->nranged = 0;
  for (size_t i = 0; i < n; i++) {
    if (hm->corr_min[i] == OVL_NONE) continue;
    /* Usable only when correlation ids grow with launch time across steps. */
    if (hm->nranged > 0 && hm->corr_min[i] <= hm->ranged_max[hm->nranged - 1]) {
      hm->nranged = 0;
      return OVL_OK;
    }
    hm->ranged_min[hm->nranged] = hm->corr_min[i];
    hm->ranged_max[hm->nranged] = hm->corr_max[i];
    hm->ranged_step[hm->nranged] = (long)i;
    hm->nranged++;
  }
  hm->by_correlation = hm->nranged > 0;
  return OVL_OK;
}

long ovl_launch_step(const ovl_host_markers *hm, int64_t correlation) {
  size_t hint = SIZE_MAX;
  return ovl_launch_step_near(hm, correlation, &hint);
}

long ovl_launch_step_near(const ovl_host_markers *hm, int64_t correlation, size_t *hint) {
  if (!hm->by_correlation || correlation == OVL_NONE) return -1;
  size_t lo = 0, hi = hm->nranged;  /* first ranged step with min > correlation */
  /* The hint's step first: ranged_min grows strictly, so when correlation lies between its
  ** min and the next step's, the search would end there too. */
  size_t h = *hint;
  if (h < hi && hm->ranged_min[h] <= correlation) {
    lo = h + 1;
    if (lo == hi || hm->ranged_min[lo] > correlation) hi = lo;
  } else if (h < hi) {
    hi = h;
  }
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (hm->ranged_min[mid] <= correlation) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  *hint = lo - 1;
  if (correlation <= hm->ranged_max[lo - 1]) return hm->ranged_step[lo - 1];
  return lo == hm->nranged ? (long)hm->steps.len : -1;
}

void ovl_host_markers_free(ovl_host_markers *hm) {
  ovl_i64map_free(&hm->mark_of_launch);
  OVL_VEC_FREE(&hm->steps);
  OVL_VEC_FREE(&hm->buckets);
  OVL_VEC_FREE(&hm->dims);
  OVL_VEC_FREE(&hm->marks);
  free(hm->corr_min);
  free(hm->corr_max);
  free(hm->ranged_min);
  free(hm->ranged_max);
  free(hm->ranged_step);
  hm->corr_min = hm->corr_max = hm->ranged_min = hm->ranged_max = NULL;
  hm->ranged_step = NULL;
  hm->nranged = 0;
}
