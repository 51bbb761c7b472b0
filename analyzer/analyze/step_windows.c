/* Step windows: see step_windows.h. */
#include "step_windows.h"

#include <assert.h>
#include <stdlib.h>

int ovl_windows_init(ovl_step_windows *w, size_t n) {
  w->n = n;
  w->cursor = 0;
  w->opened = 0;
  w->located = INT64_MIN;
  w->start = malloc((n ? n : 1) * sizeof *w->start);
  w->end = malloc((n ? n : 1) * sizeof *w->end);
  if (!w->start || !w->end) {
    ovl_windows_free(w);
    return -1;
  }
  for (size_t i = 0; i < n; i++) w->start[i] = w->end[i] = INT64_MAX;
  return 0;
}

void ovl_windows_free(ovl_step_windows *w) {
  free(w->start);
  free(w->end);
  w->start = w->end = NULL;
  w->n = 0;
}

void ovl_windows_set(ovl_step_windows *w, size_t i, int64_t start, int64_t end) {
  assert(i < w->n && i >= w->opened);               /* in order, once each */
  assert(start <= end);
  assert(i == 0 || w->end[i - 1] <= start);         /* disjoint */
  w->start[i] = start;
  w->end[i] = end;
  if (i + 1 > w->opened) w->opened = i + 1;
}

void ovl_windows_open(ovl_step_windows *w, size_t i, int64_t t) {
  if (i >= w->n || i < w->opened) return;
  assert(t >= w->located);  /* changes only at or after the current time */
  ovl_windows_close_all(w, t);
  for (size_t k = w->opened; k < i; k++) w->start[k] = w->end[k] = t;
  w->start[i] = t;
  w->end[i] = INT64_MAX;
  w->opened = i + 1;
}

void ovl_windows_close_all(ovl_step_windows *w, int64_t t) {
  /* Opening a window closes its predecessor, so only the last opened one can be open. */
  if (w->opened == 0) return;
  assert(t >= w->located);
  size_t k = w->opened - 1;
  if (w->end[k] > t) w->end[k] = t > w->start[k] ? t : w->start[k];
}

int64_t ovl_windows_locate(ovl_step_windows *w, int64_t t, long *step) {
  assert(t >= w->located);  /* non-decreasing t */
  w->located = t;
  while (w->cursor < w->n && w->end[w->cursor] <= t) w->cursor++;
  if (w->cursor >= w->n || t < w->start[w->cursor]) {
    *step = -1;
    return w->cursor < w->n ? w->start[w->cursor] : INT64_MAX;
  }
  *step = (long)w->cursor;
  return w->end[w->cursor];
}
