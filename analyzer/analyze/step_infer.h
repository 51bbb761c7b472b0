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

/* Fills step_of[i] for each item and returns the number of steps, or 0 when the sequence
** shows no repetition (fewer than two periods). *period receives p. */
size_t ovl_infer_periodic_steps(const ovl_seq_item *items, size_t n, long *step_of, size_t *period);

#endif
