/*
** Infers training steps from the repetition of a rank's collective sequence, for traces
** without step ranges. Each collective is a token: its signature (operation, size,
** communicator) plus whether a "long" gap precedes its launch. Gaps are long when the
** gap distribution splits in two with a ratio of at least 2 between the groups (the
** forward pass separates the gradient collectives of consecutive steps). The step period
** is the smallest p such that the token sequence repeats with period p over a suffix
** covering at least two periods; a differing prefix (a first iteration with other buckets)
** becomes a step of its own. Steps begin at the long gap of the period, or else at the
** largest average gap of the period.
*/
#ifndef OVL_STEP_INFER_H
#define OVL_STEP_INFER_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_seq_item {
  uint64_t signature;
  int64_t launch;      /* launch time (host, or GPU start when unknown), non-decreasing */
} ovl_seq_item;

/* The steps found: item i's is ovl_periodic_step_of(steps, i), from 0 to nsteps - 1. */
typedef struct ovl_periodic_steps {
  size_t nsteps;       /* 0: the sequence shows no repetition (fewer than two periods) */
  size_t period;       /* p */
  size_t first;        /* where the first step boundary inside the repeating suffix lies */
} ovl_periodic_steps;

/* Infers the steps of items[0..n) into *out and returns out->nsteps. Its scratch is one word
** an item (0 steps when that memory is not there). */
size_t ovl_infer_periodic_steps(const ovl_seq_item *items, size_t n, ovl_periodic_steps *out);

/* Item i's step: the prefix before the first boundary is step 0, then one step a period. */
static inline size_t ovl_periodic_step_of(const ovl_periodic_steps *s, size_t i) {
  return i < s->first ? 0 : (i - s->first) / s->period + (s->first > 0);
}

#endif
