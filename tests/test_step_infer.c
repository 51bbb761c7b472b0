/*
** Periodic step inference on hand-made sequences: the steps it finds, and each item's step as
** ovl_periodic_step_of gives it against the rule written out (a step begins at every item
** i > 0 of the repeating region whose distance from the first boundary is a multiple of the
** period), with and without a differing first iteration.
*/
#include "analyze/step_infer.h"
#include "check.h"

#include <stdlib.h>

/* The rule, item by item. */
static size_t step_by_rule(const ovl_periodic_steps *s, size_t i) {
  size_t step = 0;
  for (size_t k = 1; k <= i; k++)
    if (k >= s->first && (k - s->first) % s->period == 0) step++;
  return step;
}

/* prefix items of their own, then reps periods of p items; the gap before each period's first
** item is long (1000) and the others short (10). */
static void sequence(size_t prefix, size_t p, size_t reps, size_t want_steps) {
  size_t n = prefix + p * reps;
  ovl_seq_item *items = malloc(n * sizeof *items);
  CHECK(items != NULL);
  if (!items) return;
  int64_t t = 0;
  for (size_t i = 0; i < n; i++) {
    int starts_period = i >= prefix && (i - prefix) % p == 0;
    t += starts_period ? 1000 : 10;
    items[i].signature = i < prefix ? 1000 + i : 1 + (i - prefix) % p;
    items[i].launch = t;
  }
  ovl_periodic_steps s;
  size_t nsteps = ovl_infer_periodic_steps(items, n, &s);
  CHECK_I64(nsteps, want_steps);
  CHECK_I64(s.nsteps, want_steps);
  if (nsteps > 0) {
    CHECK_I64(s.period, p);
    for (size_t i = 0; i < n; i++) CHECK_I64(ovl_periodic_step_of(&s, i), step_by_rule(&s, i));
    CHECK_I64(ovl_periodic_step_of(&s, n - 1), want_steps - 1);
    CHECK_I64(ovl_periodic_step_of(&s, 0), 0);
  }
  free(items);
}

int main(void) {
  sequence(0, 3, 4, 4);   /* no first iteration of its own: the first boundary is item 0 */
  sequence(5, 3, 4, 5);   /* a first iteration with other buckets: a step of its own */
  sequence(1, 1, 6, 7);   /* one collective a step, all gaps alike: the first item is a step of its own */
  sequence(2, 4, 2, 3);   /* two periods: the least that repeats */
  sequence(0, 4, 1, 0);   /* one period: no repetition */
  ovl_seq_item one = {1, 0};
  ovl_periodic_steps s;
  CHECK_I64(ovl_infer_periodic_steps(&one, 1, &s), 0);
  CHECK_I64(ovl_infer_periodic_steps(NULL, 0, &s), 0);
  return check_summary();
}
