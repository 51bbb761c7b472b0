/* Lane assignment: see lanes.h. */
#include "lanes.h"

#include <stdlib.h>
#include <string.h>

/* Nested lanes scanned for a fit before a new one is opened: bounds the cost per slice on
** pathological inputs (thousands of crossing ranges) at the price of extra lanes. */
#define NESTED_SCAN_LIMIT 256

static int reserve(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap * 2 : 8;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * size);
  if (!q) return -1;
  *p = q;
  *cap = n;
  return 0;
}

void ovl_lanes_init(ovl_lanes *l, ovl_lane_mode mode) {
  memset(l, 0, sizeof *l);
  l->mode = mode;
}

void ovl_lanes_free(ovl_lanes *l) {
  for (size_t i = 0; i < l->n; i++) free(l->lane[i].open);
  free(l->lane);
  free(l->busy);
  free(l->idle);
  memset(l, 0, sizeof *l);
}

static int new_lane(ovl_lanes *l, size_t *lane) {
  if (reserve((void **)&l->lane, &l->cap, l->n + 1, sizeof *l->lane)) return -1;
  memset(&l->lane[l->n], 0, sizeof l->lane[l->n]);
  l->lane[l->n].last_start = l->lane[l->n].last_end = INT64_MIN;
  *lane = l->n++;
  return 0;
}

/* ---- disjoint lanes: two heaps ---- */

static int busy_push(ovl_lanes *l, ovl_lane_slot s) {
  if (reserve((void **)&l->busy, &l->busy_cap, l->nbusy + 1, sizeof *l->busy)) return -1;
  size_t i = l->nbusy++;
  while (i > 0 && l->busy[(i - 1) / 2].end > s.end) {
    l->busy[i] = l->busy[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  l->busy[i] = s;
  return 0;
}

static ovl_lane_slot busy_pop(ovl_lanes *l) {
  ovl_lane_slot top = l->busy[0], last = l->busy[--l->nbusy];
  size_t i = 0, n = l->nbusy;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && l->busy[c + 1].end < l->busy[c].end) c++;
    if (last.end <= l->busy[c].end) break;
    l->busy[i] = l->busy[c];
    i = c;
  }
  if (n) l->busy[i] = last;
  return top;
}

static int idle_push(ovl_lanes *l, uint32_t lane) {
  if (reserve((void **)&l->idle, &l->idle_cap, l->nidle + 1, sizeof *l->idle)) return -1;
  size_t i = l->nidle++;
  while (i > 0 && l->idle[(i - 1) / 2] > lane) {
    l->idle[i] = l->idle[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  l->idle[i] = lane;
  return 0;
}

static uint32_t idle_pop(ovl_lanes *l) {
  uint32_t top = l->idle[0], last = l->idle[--l->nidle];
  size_t i = 0, n = l->nidle;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && l->idle[c + 1] < l->idle[c]) c++;
    if (last <= l->idle[c]) break;
    l->idle[i] = l->idle[c];
    i = c;
  }
  if (n) l->idle[i] = last;
  return top;
}

static int place_disjoint(ovl_lanes *l, int64_t start, int64_t end, size_t *lane, int *is_new) {
  /* Lanes whose last slice has ended become free. A late slice (starting before an
  ** earlier one) may still overlap a free lane's last slice: it then opens a new lane. */
  *is_new = 0;
  if (l->nbusy == 1 && !l->nidle && l->busy[0].end <= start) {
    /* One lane, free again (a stream running one piece at a time, the common case): the
    ** heaps would move it to idle and back, as the only free lane; its slot is reused. */
    *lane = l->busy[0].lane;
    l->busy[0].end = end;
    l->lane[*lane].last_start = start;
    l->lane[*lane].last_end = end;
    return 0;
  }
  while (l->nbusy && l->busy[0].end <= start)
    if (idle_push(l, busy_pop(l).lane)) return -1;
  if (l->nidle && l->lane[l->idle[0]].last_end <= start) {
    *lane = idle_pop(l);
  } else {
    if (new_lane(l, lane)) return -1;
    *is_new = 1;
  }
  l->lane[*lane].last_start = start;
  l->lane[*lane].last_end = end;
  return busy_push(l, (ovl_lane_slot){end, (uint32_t)*lane});
}

/* ---- nested lanes ---- */

/* Open slices of the lane still running at `start` (those ending later). */
static size_t open_at(const ovl_lane *ln, int64_t start) {
  size_t d = ln->depth;
  while (d > 0 && ln->open[d - 1] <= start) d--;
  return d;
}

static int fits(const ovl_lane *ln, int64_t start, int64_t end) {
  if (start < ln->last_start) return 0;
  size_t d = open_at(ln, start);
  /* Every open slice ending after start contains [start, end] iff the innermost does. */
  return d == 0 || end <= ln->open[d - 1];
}

static int place_nested(ovl_lanes *l, int64_t start, int64_t end, size_t *lane, int *is_new) {
  size_t scan = l->n < NESTED_SCAN_LIMIT ? l->n : NESTED_SCAN_LIMIT, i = 0;
  while (i < scan && !fits(&l->lane[i], start, end)) i++;
  *is_new = 0;
  if (i == scan) {
    if (l->n > scan && fits(&l->lane[l->n - 1], start, end)) {
      i = l->n - 1;
    } else {
      if (new_lane(l, &i)) return -1;
      *is_new = 1;
    }
  }
  ovl_lane *ln = &l->lane[i];
  ln->depth = open_at(ln, start);
  if (reserve((void **)&ln->open, &ln->cap, ln->depth + 1, sizeof *ln->open)) return -1;
  ln->open[ln->depth++] = end;
  ln->last_start = start;
  *lane = i;
  return 0;
}

int ovl_lanes_place(ovl_lanes *l, int64_t start, int64_t end, size_t *lane, int *is_new) {
  return l->mode == OVL_LANES_DISJOINT ? place_disjoint(l, start, end, lane, is_new)
                                       : place_nested(l, start, end, lane, is_new);
}
