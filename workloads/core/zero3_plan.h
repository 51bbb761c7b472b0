/*
** The parameter all-gathers of `ovl-ddp --mode zero3` (ZeRO-3 / FSDP with one unit per layer):
** which layer each gathers, in which phase, and what it is issued with. Pure, tested without
** a GPU; `--plan` prints it (plan_json.h).
**
** Every rank keeps 1/N of each layer's parameters (the layer's weight and bias, padded to a
** multiple of N floats). Before a layer computes, its full parameters are all-gathered on the
** communication stream; with prefetch the next layer's gather is issued when this layer's
** compute starts, so it overlaps it:
**   forward:  gather fc0 at the start of the step; gather fc(l+1) with forward of fc(l);
**   backward: gather fc(L-1) with the loss; gather fc(l-1) with backward of fc(l);
** and after backward of fc(l) its gradient slice is reduce-scattered (the zero3 buckets of
** bucket_plan.h), each rank keeping its shard for the optimizer.
*/
#ifndef OVL_WL_ZERO3_PLAN_H
#define OVL_WL_ZERO3_PLAN_H

#include "model.h"

#include <stdint.h>

typedef enum ovl_z3_trigger {
  OVL_Z3_STEP_START,       /* the step begins */
  OVL_Z3_LOSS,             /* the loss is computed (backward is about to start) */
  OVL_Z3_FORWARD_OF,       /* forward of layer `with` starts */
  OVL_Z3_BACKWARD_OF       /* backward of layer `with` starts */
} ovl_z3_trigger;

typedef struct ovl_z3_gather {
  int layer;               /* the layer whose parameters it gathers */
  int backward;            /* 0: before its forward, 1: before its backward */
  ovl_z3_trigger trigger;
  int with;                /* the layer of the trigger; -1 for step start and loss */
} ovl_z3_gather;

/* The model's gathers in issue order: 2 * nlayers of them into out (capacity 2 * nlayers). */
int ovl_z3_gathers(const ovl_model *m, ovl_z3_gather *out);
/* A layer's parameter floats (weight and bias), padded up to a multiple of nranks. */
int64_t ovl_z3_layer_floats(const ovl_model *m, int layer);
int64_t ovl_z3_padded_floats(const ovl_model *m, int layer, int nranks);
/* Where a layer's parameters live for one rank of nranks (what the trainer allocates and what
** each collective moves). The layer's `floats` are padded to `padded` (a multiple of nranks);
** rank r owns floats [begin, begin + shard_floats) of the padded layer, of which the first
** `valid` lie inside the layer (the rest is padding, kept zero). The all-gather's per-rank
** count and the reduce-scatter's output are shard_floats; a rank's shards of every layer are
** back to back in its shard buffer (local_offset), the layers' gather buffers back to back,
** each padded, in a staging buffer (padded_offset). */
typedef struct ovl_z3_shard {
  int64_t layer_offset;   /* the layer's first float in the flat (unsharded) parameter buffer */
  int64_t floats, padded, shard_floats;
  int64_t begin, valid;
  int64_t local_offset, padded_offset;
} ovl_z3_shard;

/* Fills out[m->nlayers] for rank `rank` of nranks (nranks >= 1, 0 <= rank < nranks). */
void ovl_z3_shard_layout(const ovl_model *m, int nranks, int rank, ovl_z3_shard *out);
/* Floats of one rank's shard buffer (every layer's shard), and of the padded staging buffer. */
int64_t ovl_z3_local_floats(const ovl_model *m, int nranks);
int64_t ovl_z3_staging_floats(const ovl_model *m, int nranks);
/* "step start", "loss", "forward fc3", "backward fc3" into buf. */
const char *ovl_z3_trigger_text(const ovl_z3_gather *g, char *buf, int size);

#endif
