/* The classified work stream: see work_stream.h. */
#include "work_stream.h"

#include "base/progress.h"

#include "load/comm_names.h"

#include "base/sort_inplace.h"
#include "base/vec.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct link_pair {
  int64_t correlation;
  int32_t coll;
} link_pair;

static int cmp_link(const void *pa, const void *pb) {
  const link_pair *a = pa, *b = pb;
  if (a->correlation != b->correlation) return a->correlation < b->correlation ? -1 : 1;
  return (a->coll > b->coll) - (a->coll < b->coll);
}

/* Ids at a stride, in ascending order: the collectives rows themselves (the reader's ORDER BY
** id gives them so) or, where a trace's ids are not plain integers (SQLite orders text after
** numbers, which read as other integers), a sorted copy of (id, row) pairs. */
typedef struct id_view {
  const char *base;
  size_t stride, n;
} id_view;

typedef struct id_row {
  int64_t id, row;  /* id first: the view reads it at offset 0, as in ovl_coll_rec */
} id_row;

static int64_t id_at(const id_view *v, size_t i) {
  int64_t id;
  memcpy(&id, v->base + i * v->stride, sizeof id);
  return id;
}

static int cmp_id_row(const void *pa, const void *pb) {
  const id_row *a = pa, *b = pb;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

/* The last position with id, or -1. hint: the position the previous lookup found; links
** mostly come in id order, so the search gallops from it. */
static int64_t row_of_id(const id_view *v, int64_t id, size_t *hint) {
  size_t n = v->n;
  if (n == 0 || id_at(v, 0) > id) return -1;
  size_t lo = 0, hi = n;  /* id_at(lo) <= id; hi == n or id_at(hi) > id */
  if (*hint < n && id_at(v, *hint) <= id) {
    lo = *hint;
    for (size_t step = 1; (hi = lo + step) < n && id_at(v, hi) <= id; step *= 2) lo = hi;
    if (hi > n) hi = n;
  }
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (id_at(v, mid) <= id) lo = mid;
    else hi = mid;
  }
  if (id_at(v, lo) != id) return -1;
  *hint = lo;
  return (int64_t)lo;
}

/* The links (dangling ones and unknown correlations dropped), each to its collectives row
** found by id (a search, no map of every id), sorted by correlation. A repeated id links to
** its last row. */
static int load_links(ovl_work_stream *s, ovl_err *err) {
  id_view v = {(const char *)s->recs, sizeof *s->recs, s->nrecs};
  id_row *sorted = NULL;  /* only for ids out of order */
  int in_order = 1;
  for (size_t i = 1; i < s->nrecs && in_order; i++) in_order = s->recs[i - 1].id <= s->recs[i].id;
  if (!in_order) {
    if (!(sorted = malloc(s->nrecs * sizeof *sorted))) return ovl_oom(err, "collective links");
    for (size_t i = 0; i < s->nrecs; i++) sorted[i] = (id_row){s->recs[i].id, (int64_t)i};
    ovl_qsort(sorted, s->nrecs, sizeof *sorted, cmp_id_row);
    v = (id_view){(const char *)sorted, sizeof *sorted, s->nrecs};
  }
  ovl_launch_rec *links = NULL;
  size_t nlinks = 0;
  int rc = ovl_trace_read_launches(s->t, &links, &nlinks, err);
  /* The pairs are made in place of the links (pair n from link i >= n), sorted in place, and
  ** their correlations close up in place too: beside the collectives rows, the links' block
  ** is all the links take (with glibc's qsort and copies, three times as much). */
  _Static_assert(sizeof(link_pair) == sizeof(ovl_launch_rec) && sizeof(int64_t) <= sizeof(link_pair),
                 "the links become their pairs, and the pairs their correlations, in place");
  char *block = (char *)links;
  size_t n = 0, hint = 0;
  for (size_t i = 0; !rc && i < nlinks; i++) {
    ovl_launch_rec l;
    memcpy(&l, block + i * sizeof l, sizeof l);
    int64_t at = l.correlation != OVL_NONE ? row_of_id(&v, l.collective, &hint) : -1;
    if (at < 0) continue;
    link_pair p = {l.correlation, (int32_t)(sorted ? sorted[at].row : at)};
    memcpy(block + n++ * sizeof p, &p, sizeof p);
  }
  free(sorted);
  if (!rc) {
    /* cmp_link orders (correlation, coll): pairs that compare equal are equal */
    ovl_sort_inplace(block, n, sizeof(link_pair), cmp_link);
    s->link_coll = malloc((n ? n : 1) * sizeof *s->link_coll);
    if (!s->link_coll) rc = ovl_oom(err, "collective links");
  }
  if (!rc) {
    for (size_t i = 0; i < n; i++) {
      link_pair p;
      memcpy(&p, block + i * sizeof p, sizeof p);
      s->link_coll[i] = p.coll;
      memcpy(block + i * sizeof p.correlation, &p.correlation, sizeof p.correlation);  /* within pair i / 2 */
    }
    char *shrunk = realloc(block, (n ? n : 1) * sizeof *s->link_corr);  /* a shrink, or room for none */
    if (shrunk) block = shrunk;
    else if (!block) rc = ovl_oom(err, "collective links");
    s->link_corr = (int64_t *)(void *)block;
    block = NULL;
    if (!rc) s->nlinks = n;
  }
  free(block);
  return rc;
}

static int cmp_work_start(const void *pa, const void *pb) {
  const ovl_work *a = pa, *b = pb;
  return (a->start > b->start) - (a->start < b->start);
}

/* The channel spans of the collectives (both sorted by id: a merge), and one piece of work for
** each collective that has channels but no linked work. */
static int load_channels(ovl_work_stream *s, ovl_err *err) {
  int rc = ovl_trace_read_channels(s->t, &s->spans, &s->nspans, err);
  if (rc || s->nspans == 0) return rc;
  size_t n = s->nrecs ? s->nrecs : 1;
  s->span_of = malloc(n * sizeof *s->span_of);
  s->linked = calloc(n, 1);
  s->chan_work = malloc(n * sizeof *s->chan_work);
  s->chan_coll = malloc(n * sizeof *s->chan_coll);
  if (!s->span_of || !s->linked || !s->chan_work || !s->chan_coll) return ovl_oom(err, "collective channels");
  for (size_t i = 0; i < s->nlinks; i++) s->linked[s->link_coll[i]] = 1;
  size_t k = 0;
  for (size_t i = 0; i < s->nrecs; i++) {
    while (k < s->nspans && s->spans[k].collective < s->recs[i].id) k++;
    s->span_of[i] = k < s->nspans && s->spans[k].collective == s->recs[i].id ? (int32_t)k : -1;
    if (s->span_of[i] < 0 || s->linked[i]) continue;
    const ovl_channel_span *c = &s->spans[k];
    const ovl_coll_rec *rec = &s->recs[i];
    ovl_work *w = &s->chan_work[s->nchan_work];
    memset(w, 0, sizeof *w);
    w->start = c->start;
    w->end = c->end;
    w->device = c->device != OVL_NONE ? c->device : rec->device != OVL_NONE ? rec->device : 0;
    w->stream = rec->stream != OVL_NONE ? rec->stream : OVL_CHANNEL_STREAM_UNKNOWN;
    w->correlation = w->name = w->bytes = OVL_NONE;
    w->grid[0] = w->grid[1] = w->grid[2] = OVL_NONE;
    s->chan_coll[s->nchan_work++] = (int32_t)i;
  }
  /* In start order, with their collectives alongside: sort indices through the work. */
  for (size_t i = 0; i < s->nchan_work; i++) s->chan_work[i].correlation = i;
  ovl_qsort(s->chan_work, s->nchan_work, sizeof *s->chan_work, cmp_work_start);
  int32_t *order = malloc((s->nchan_work ? s->nchan_work : 1) * sizeof *order);
  if (!order) return ovl_oom(err, "collective channels");
  for (size_t i = 0; i < s->nchan_work; i++) {
    order[i] = s->chan_coll[s->chan_work[i].correlation];
    s->chan_work[i].correlation = OVL_NONE;
  }
  free(s->chan_coll);
  s->chan_coll = order;
  return OVL_OK;
}

const ovl_channel_span *ovl_work_stream_channels(const ovl_work_stream *s, size_t i, int *timed_by_channels) {
  *timed_by_channels = 0;
  if (!s->span_of || i >= s->nrecs_total || s->span_of[i] < 0) return NULL;
  *timed_by_channels = !s->linked[i];
  return &s->spans[s->span_of[i]];
}

int ovl_work_stream_init(ovl_work_stream *s, ovl_trace *t, const ovl_classifier *classifier, ovl_err *err) {
  memset(s, 0, sizeof *s);
  s->t = t;
  s->classifier = classifier;
  int rc = ovl_trace_read_collectives(t, &s->recs, &s->nrecs, err);
  s->nrecs_total = s->nrecs;
  if (!rc) rc = load_links(s, err);
  if (!rc) rc = load_channels(s, err);
  if (!rc) {
    int64_t limit = ovl_trace_string_limit(t);
    s->name_class_len = limit < OVL_STRING_CACHE_LIMIT ? (limit > 0 ? limit : 0) : OVL_STRING_CACHE_LIMIT;
    size_t len = s->name_class_len ? (size_t)s->name_class_len : 1;
    s->name_class = malloc(len);
    s->name_traits = malloc(len);
    if (!s->name_class || !s->name_traits) {
      rc = ovl_oom(err, "kernel names");
    } else {
      memset(s->name_class, -1, len);
      memset(s->name_traits, -1, len);
    }
  }
  if (rc) ovl_work_stream_free(s);
  return rc;
}

ovl_coll_rec *ovl_work_stream_take_recs(ovl_work_stream *s, size_t *n) {
  ovl_coll_rec *recs = s->recs;
  *n = s->nrecs;
  s->recs = NULL;
  s->nrecs = 0;
  return recs;
}

void ovl_work_stream_free(ovl_work_stream *s) {
  ovl_work_stream_close(s);
  free(s->recs);
  free(s->link_corr);
  free(s->link_coll);
  free(s->name_class);
  free(s->name_traits);
  free(s->spans);
  free(s->span_of);
  free(s->linked);
  free(s->chan_work);
  free(s->chan_coll);
  memset(s, 0, sizeof *s);
}

void ovl_work_stream_drop_links(ovl_work_stream *s) {
  assert(!s->cur);
  free(s->link_corr);
  free(s->link_coll);
  s->link_corr = NULL;
  s->link_coll = NULL;
  s->nlinks = s->link_hint = 0;
}

/* First index in [lo, hi) whose correlation is >= c (hi when none). */
static size_t lower_bound(const int64_t *v, size_t lo, size_t hi, int64_t c) {
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

uint32_t ovl_work_stream_links(ovl_work_stream *s, int64_t correlation, const int32_t **colls) {
  *colls = NULL;
  size_t n = s->nlinks;
  if (correlation == OVL_NONE || n == 0) return 0;
  /* Gallop from the previous answer to bracket the position, then binary search. */
  size_t h = s->link_hint < n ? s->link_hint : n - 1, lo, hi;
  if (s->link_corr[h] < correlation) {
    size_t step = 1;
    lo = h + 1;
    hi = lo;
    while (hi < n && s->link_corr[hi] < correlation) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    if (hi > n) hi = n;
  } else {
    size_t step = 1;
    hi = h + 1;
    lo = h;
    while (lo > 0 && s->link_corr[lo - 1] >= correlation) {
      hi = lo;
      lo = lo > step ? lo - step : 0;
      step *= 2;
    }
  }
  size_t first = lower_bound(s->link_corr, lo, hi, correlation);
  s->link_hint = first;
  if (first >= n || s->link_corr[first] != correlation) return 0;
  size_t end = first;
  while (end < n && s->link_corr[end] == correlation) end++;
  *colls = &s->link_coll[first];
  return (uint32_t)(end - first);
}

ovl_work_class ovl_work_stream_kernel_class(ovl_work_stream *s, int64_t name) {
  if (name < 0 || name >= s->name_class_len)
    return ovl_classify_kernel_name(s->classifier, ovl_trace_string(s->t, name));
  if (s->name_class[name] < 0)
    s->name_class[name] = (signed char)ovl_classify_kernel_name(s->classifier, ovl_trace_string(s->t, name));
  return (ovl_work_class)s->name_class[name];
}

static int name_traits(const char *name) {
  return (ovl_comm_lookalike_name(name) ? OVL_NAME_LOOKALIKE : 0) | (ovl_moe_kernel_name(name) ? OVL_NAME_MOE : 0);
}

int ovl_work_stream_kernel_traits(ovl_work_stream *s, int64_t name) {
  if (name < 0 || name >= s->name_class_len) return name_traits(ovl_trace_string(s->t, name));
  if (s->name_traits[name] < 0) s->name_traits[name] = (signed char)name_traits(ovl_trace_string(s->t, name));
  return s->name_traits[name];
}

ovl_work_class ovl_work_stream_class(ovl_work_stream *s, const ovl_work *w, uint32_t ncolls) {
  if (ncolls) return OVL_CLASS_COMM;
  return w->is_memop ? OVL_CLASS_MEMORY : ovl_work_stream_kernel_class(s, w->name);
}

int ovl_work_stream_open(ovl_work_stream *s, size_t window, int launch_dims, ovl_err *err) {
  assert(!s->cur);  /* one pass at a time */
  s->chan_next = 0;
  s->has_pending = s->cursor_done = 0;
  ovl_work_options wopt = {s->sorted ? 0 : window, launch_dims};
  s->pass_rows = 0;
  if (s->progress && !s->rows_estimate)
    s->rows_estimate = ovl_trace_rows_estimate(s->t, "kernels") + ovl_trace_rows_estimate(s->t, "memops");
  return ovl_work_open(s->t, &wopt, &s->cur, err);
}

/* The cursor's next piece, classified, into s->pending (unless it is there already or done). */
static int fill_pending(ovl_work_stream *s, ovl_err *err) {
  if (s->has_pending || s->cursor_done) return OVL_OK;
  ovl_classified_work *out = &s->pending;
  int has = 0;
  int rc = ovl_work_next(s->cur, &out->w, &has, err);
  if (rc == OVL_EUNSORTED) s->sorted = 1;
  if (rc) return rc;
  if (!has) {
    s->cursor_done = 1;
    return OVL_OK;
  }
  if (s->progress && (++s->pass_rows & 0xFFFF) == 0 && s->rows_estimate > 0)
    ovl_progress(s->progress, (double)s->pass_rows / (double)s->rows_estimate);
  out->ncolls = ovl_work_stream_links(s, out->w.correlation, &out->colls);
  out->cls = ovl_work_stream_class(s, &out->w, out->ncolls);
  out->from_channels = 0;
  s->has_pending = 1;
  return OVL_OK;
}

int ovl_work_stream_next_ref(ovl_work_stream *s, const ovl_classified_work **out, int *has, ovl_err *err) {
  *has = 0;
  *out = NULL;
  int rc = fill_pending(s, err);
  if (rc) return rc;
  int chan = s->chan_next < s->nchan_work;
  if (chan && s->has_pending && s->pending.w.start <= s->chan_work[s->chan_next].start) chan = 0;
  if (chan) {  /* a collective timed by its channels */
    ovl_classified_work *c = &s->chan_out;
    c->w = s->chan_work[s->chan_next];
    c->colls = &s->chan_coll[s->chan_next++];
    c->ncolls = 1;
    c->cls = OVL_CLASS_COMM;
    c->from_channels = 1;
    *out = c;
  } else if (s->has_pending) {
    *out = &s->pending;  /* filled again only by the next call */
    s->has_pending = 0;
  } else {
    return OVL_OK;
  }
  *has = 1;
  return OVL_OK;
}

int ovl_work_stream_next(ovl_work_stream *s, ovl_classified_work *out, int *has, ovl_err *err) {
  const ovl_classified_work *ref = NULL;
  int rc = ovl_work_stream_next_ref(s, &ref, has, err);
  if (!rc && *has) *out = *ref;
  return rc;
}

void ovl_work_stream_close(ovl_work_stream *s) {
  if (s->cur) ovl_work_close(s->cur);
  s->cur = NULL;
}
