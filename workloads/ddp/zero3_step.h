/*
** The training step of --mode zero3 (ZeRO-3 / FSDP, one unit per layer), run by the trainer
** (trainer.h) in place of its DDP step. Layout: core/zero3_plan.h's shards; the gathers are
** issued where its ovl_z3_gathers puts them; the reduce-scatters are the plan's zero3 buckets.
**
** Each rank owns a shard of every layer (d_pshard) and its gradient shard (d_gshard); the
** model's full parameter buffer (the MLP's d_params) is only a landing place that every
** gather rewrites, so the memory of the unsharded parameters is not saved: what this mode
** reproduces is ZeRO-3's communication and its overlap. One step, host side:
**   step range; the communication stream waits for the previous step's optimizer;
**   gather fc0; for each layer l: compute waits for fc(l)'s gather, fc(l+1)'s gather is
**   issued (prefetch), forward of fc(l);
**   loss; the communication stream waits for forward (the backward gathers rewrite the
**   parameters forward read); gather fc(L-1); for each layer l from the last: compute waits
**   for its gather, fc(l-1)'s gather is issued, backward of fc(l) with a grad_ready mark per
**   gradient; after the weight gradient: an event, the communication stream waits for it, the
**   layer's gradients are copied into its padded staging slot and reduce-scattered into this
**   rank's gradient shard (in `dim fsdp` and `bucket <k>` ranges), scaled by 1/N;
**   compute waits for communication; SGD on the shard only; the step range ends.
** A gather is: all-gather of the shards into the layer's staging slot (in a `dim fsdp`
** range), a copy of its real floats into the full parameter buffer, an event.
*/
#ifndef OVL_DDP_ZERO3_STEP_H
#define OVL_DDP_ZERO3_STEP_H

#include "trainer.h"

/* Allocates the shards (taken from the MLP's initial parameters) and the staging buffer. */
int ovl_z3_init(ovl_trainer *t, ovl_err *err);
int ovl_z3_step(ovl_trainer *t, int64_t step, ovl_err *err);
/* Gathers every layer into the full parameter buffer and waits (a collective: every rank
** calls it), so the MLP's d_params hold the trained weights. */
int ovl_z3_gather_all(ovl_trainer *t, ovl_err *err);
void ovl_z3_free(ovl_trainer *t);

#endif
