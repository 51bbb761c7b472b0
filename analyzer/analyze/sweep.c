/* Streaming overlap sweep: see sweep.h. */
#include "sweep.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void ovl_totals_init(ovl_totals *t) {
  t->compute = t->comm = t->exposed = t->memory = t->busy = 0;
  t->busy_start = INT64_MAX;
  t->busy_end = INT64_MIN;
}

int ovl_sweep_init(ovl_sweep *s, ovl_step_windows *windows, ovl_coll_state *colls) {
  *s = (ovl_sweep){0};
  s->windows = windows;
  s->colls = colls;
  ovl_totals_init(&s->total);
  size_t n = windows ? windows->n : 0;
  s->steps = malloc((n ? n : 1) * sizeof *s->steps);
  if (!s->steps) return -1;
  for (size_t i = 0; i < n; i++) ovl_totals_init(&s->steps[i]);
  return 0;
}

void ovl_sweep_free(ovl_sweep *s) {
  free(s->heap);
  free(s->active_colls);
  free(s->steps);
  s->heap = NULL;
  s->active_colls = NULL;
  s->steps = NULL;
}

static void add_segment(ovl_totals *t, int64_t a, int64_t b, int comp, int comm, int mem) {
  int64_t dt = b - a;
  if (comp) t->compute += dt;
  if (comm) t->comm += dt;
  if (comm && !comp) t->exposed += dt;
  if (mem) t->memory += dt;
  t->busy += dt;  /* called only while some work runs */
  if (a < t->busy_start) t->busy_start = a;
  if (b > t->busy_end) t->busy_end = b;
}

int64_t ovl_exposed_within(const int64_t *bounds, int n, int64_t lo, int64_t hi) {
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    int64_t s = bounds[2 * i] > lo ? bounds[2 * i] : lo;
    int64_t e = bounds[2 * i + 1] < hi ? bounds[2 * i + 1] : hi;
    if (e > s) total += e - s;
  }
  return total;
}

_Static_assert(sizeof(ovl_piece_slot) == 16, "a collective's piece slot: 16 bytes (sweep.h)");
_Static_assert(OVL_EXPOSED_PIECES < 8, "ovl_piece_slot.n holds up to OVL_EXPOSED_PIECES in 3 bits");

void ovl_coll_pieces_clear(ovl_coll_state *cs, size_t c) {
  cs->pieces[c] = (ovl_piece_slot){.start = 0, .len = 0, .more = 0, .n = 0, .exact = 1};
}

/* The end of p's first piece (p->n > 0). */
static int64_t first_end(const ovl_coll_state *cs, const ovl_piece_slot *p) {
  if (p->len != OVL_PIECE_LONG) return (int64_t)((uint64_t)p->start + p->len);
  assert(p->more > 0 && p->more <= cs->nmore);
  return cs->more[p->more - 1].first_end;
}

void ovl_coll_pieces_restart(ovl_coll_state *cs) {
  cs->nmore = 0;
  cs->pieces_failed = 0;
}

void ovl_coll_pieces_get(const ovl_coll_state *cs, size_t c, ovl_exposed_pieces *out) {
  const ovl_piece_slot *p = &cs->pieces[c];
  memset(out, 0, sizeof *out);
  out->n = p->n;
  out->exact = p->exact;
  if (p->n == 0) return;
  out->start[0] = p->start;
  out->end[0] = first_end(cs, p);
  if (p->n == 1) return;
  assert(p->more > 0 && p->more <= cs->nmore);
  const ovl_piece_more *m = &cs->more[p->more - 1];
  for (int k = 1; k < p->n; k++) {
    out->start[k] = m->start[k - 1];
    out->end[k] = m->end[k - 1];
  }
}

void ovl_coll_pieces_free(ovl_coll_state *cs) {
  free(cs->more);
  cs->more = NULL;
  cs->nmore = cs->more_cap = 0;
}

/* A block for a collective's pieces after the first (or its first's end): its index + 1, or 0
** when out of memory (or of the OVL_PIECE_BLOCKS_MAX a slot can name). */
static uint32_t take_block(ovl_coll_state *cs) {
  if (cs->nmore == cs->more_cap) {
    size_t cap = cs->more_cap ? cs->more_cap * 2 : 256;
    if (cap > OVL_PIECE_BLOCKS_MAX) cap = OVL_PIECE_BLOCKS_MAX;
    ovl_piece_more *m = cap > cs->more_cap ? realloc(cs->more, cap * sizeof *m) : NULL;
    if (!m) return 0;
    cs->more = m;
    cs->more_cap = cap;
  }
  return (uint32_t)++cs->nmore;
}

/* p's block, taken now if it has none; NULL (pieces_failed set) when none can be had. */
static ovl_piece_more *block_of(ovl_coll_state *cs, ovl_piece_slot *p) {
  if (!p->more) {
    uint32_t k = take_block(cs);
    if (!k) {
      cs->pieces_failed = 1;
      return NULL;
    }
    p->more = k;
  }
  return &cs->more[p->more - 1];
}

/* Sets the end of p's first piece (>= its start): in its length, or in its block when too long. */
static void set_first_end(ovl_coll_state *cs, ovl_piece_slot *p, int64_t end) {
  uint64_t len = (uint64_t)end - (uint64_t)p->start;  /* end >= start: exact, even across 2^63 */
  if (p->len != OVL_PIECE_LONG && len < OVL_PIECE_LONG) {
    p->len = (uint32_t)len;
    return;
  }
  ovl_piece_more *m = block_of(cs, p);
  if (!m) return;
  m->first_end = end;
  p->len = OVL_PIECE_LONG;
}

/* Adds [a, b) to collective c's exposed pieces (segments arrive in time order). */
static void add_piece(ovl_coll_state *cs, size_t c, int64_t a, int64_t b) {
  ovl_piece_slot *p = &cs->pieces[c];
  if (p->n == 0) {
    p->start = a;
    p->len = 0;
    p->n = 1;
    set_first_end(cs, p, b);
    return;
  }
  int64_t last_end = p->n == 1 ? first_end(cs, p) : cs->more[p->more - 1].end[p->n - 2];
  if (last_end >= a) {  /* it continues the last piece */
    if (b <= last_end) return;
    if (p->n == 1) set_first_end(cs, p, b);
    else cs->more[p->more - 1].end[p->n - 2] = b;
  } else if (p->n < OVL_EXPOSED_PIECES) {
    ovl_piece_more *m = block_of(cs, p);
    if (!m) return;
    m->start[p->n - 1] = a;
    m->end[p->n - 1] = b;
    p->n++;
  } else {  /* no room: the last piece stretched over the rest */
    if (p->n == 1) set_first_end(cs, p, b);
    else cs->more[p->more - 1].end[p->n - 2] = b;
    p->exact = 0;
  }
}

/* Accounts [a, b), during which the running set does not change. */
static void account(ovl_sweep *s, int64_t a, int64_t b) {
  if (b <= a) return;
  if (s->on_segment) s->on_segment(s->on_segment_ctx, s, a, b);
  int comp = s->running[OVL_CLASS_COMPUTE] > 0;
  int comm = s->running[OVL_CLASS_COMM] > 0;
  int mem = s->running[OVL_CLASS_MEMORY] > 0;
  if (!comp && !comm && !mem) return;
  add_segment(&s->total, a, b, comp, comm, mem);
  if (comm && !comp) {
    for (size_t i = 0; i < s->nactive; i++) {
      s->colls->exposed[s->active_colls[i]] += b - a;
      if (s->colls->pieces) add_piece(s->colls, (size_t)s->active_colls[i], a, b);
    }
  }
  if (!s->windows || s->windows->n == 0) return;
  while (a < b) {
    long step;
    int64_t next = ovl_windows_locate(s->windows, a, &step);
    int64_t piece_end = next < b ? next : b;
    if (step >= 0) add_segment(&s->steps[step], a, piece_end, comp, comm, mem);
    a = piece_end;
  }
}

static void heap_pop(ovl_sweep *s) {
  ovl_sweep_entry last = s->heap[--s->heap_len];
  size_t i = 0, n = s->heap_len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && s->heap[c + 1].end < s->heap[c].end) c++;
    if (last.end <= s->heap[c].end) break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (n) s->heap[i] = last;
}

static int heap_push(ovl_sweep *s, ovl_sweep_entry e) {
  if (s->heap_len == s->heap_cap) {
    size_t ncap = s->heap_cap ? s->heap_cap * 2 : 64;
    ovl_sweep_entry *h = realloc(s->heap, ncap * sizeof *h);
    if (!h) return -1;
    s->heap = h;
    s->heap_cap = ncap;
  }
  size_t i = s->heap_len++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (s->heap[parent].end <= e.end) break;
    s->heap[i] = s->heap[parent];
    i = parent;
  }
  s->heap[i] = e;
  return 0;
}

static int32_t entry_coll(const ovl_sweep_entry *e, uint32_t k) {
  return e->colls ? e->colls[k] : e->coll;
}

static void retire(ovl_sweep *s, const ovl_sweep_entry *e) {
  s->running[e->cls]--;
  if (e->sig >= 0 && s->on_compute_end)
    s->on_compute_end(s->on_compute_end_ctx, e->sig, e->end - e->start, s->total.comm - e->comm_at_start);
  for (uint32_t k = 0; k < e->ncolls; k++) {
    int32_t c = entry_coll(e, k);
    if (--s->colls->running[c] > 0) continue;
    for (size_t i = 0; i < s->nactive; i++) {
      if (s->active_colls[i] == c) {
        s->active_colls[i] = s->active_colls[--s->nactive];
        break;
      }
    }
  }
  if (e->close_step >= 0 && s->windows) {
    if ((size_t)e->close_step + 1 < s->windows->n) ovl_windows_open(s->windows, (size_t)e->close_step + 1, e->end);
    else ovl_windows_close_all(s->windows, e->end);
  }
}

int ovl_sweep_advance(ovl_sweep *s, int64_t t) {
  if (!s->started) return 0;
  assert(t >= s->last_start);
  while (s->heap_len > 0 && s->heap[0].end <= t) {
    ovl_sweep_entry e = s->heap[0];
    account(s, s->now, e.end);
    if (e.end > s->now) s->now = e.end;
    heap_pop(s);
    retire(s, &e);
  }
  account(s, s->now, t);
  if (t > s->now) s->now = t;
  return 0;
}

int ovl_sweep_add(ovl_sweep *s, const ovl_sweep_item *item) {
  assert(item->end >= item->start);
  assert(!s->started || item->start >= s->last_start);  /* sorted input (sweep.h) */
  if (!s->started) {
    s->started = 1;
    s->now = item->start;
  }
  s->last_start = item->start;
  ovl_sweep_advance(s, item->start);
  ovl_sweep_entry e = {item->end,     item->start, s->total.comm,          item->colls, item->ncolls,
                       item->coll,    (int32_t)item->cls, item->cls == OVL_CLASS_COMPUTE ? item->sig : -1,
                       item->close_step};
  if (heap_push(s, e)) return -1;
  s->running[item->cls]++;
  for (uint32_t k = 0; k < e.ncolls; k++) {
    int32_t c = entry_coll(&e, k);
    if (s->colls->running[c]++ > 0) continue;
    if (s->nactive == s->active_cap) {
      size_t ncap = s->active_cap ? s->active_cap * 2 : 16;
      int32_t *a = realloc(s->active_colls, ncap * sizeof *a);
      if (!a) return -1;
      s->active_colls = a;
      s->active_cap = ncap;
    }
    s->active_colls[s->nactive++] = c;
  }
  return 0;
}

int ovl_sweep_finish(ovl_sweep *s) {
  if (s->started && s->heap_len > 0) {
    int64_t last = s->heap[0].end;
    for (size_t i = 1; i < s->heap_len; i++)
      if (s->heap[i].end > last) last = s->heap[i].end;
    ovl_sweep_advance(s, last);
  }
  /* a block the pieces lacked: said once, here, rather than checked at every step */
  return s->colls && s->colls->pieces_failed ? -1 : 0;
}
