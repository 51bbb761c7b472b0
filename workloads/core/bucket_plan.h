/*
** Which collectives a data-parallel mode issues, what each one reduces, and when it is
** launched: the plan `ovl-ddp --plan` prints and the trainer executes. Pure functions of the
** model and the options, so they are tested without a GPU.
**
** Gradients become ready in the reverse of registration order (the last layer's bias first).
** A "bucket" is one all-reduce:
**   single       no communication.
**   naive        one bucket per gradient, all launched after the whole backward pass.
**   interleaved  one bucket per gradient, launched as soon as that gradient is ready.
**   bucketed     PyTorch DDP after its bucket rebuild: walk the gradients in ready order, add
**                each to the current bucket and close it once its size >= its cap (the first
**                bucket's cap is first_cap_bytes, the others' cap_bytes); a gradient is never
**                split. Gradients are copied (packed) into a bucket buffer.
**   misordered   the same, but the gradients are walked in registration order, as DDP does
**                when it cannot rebuild its buckets: bucket 0 holds the first layer's weight,
**                the last gradient to be ready.
**   zero3        ZeRO-3 / FSDP: parameters sharded over the ranks, one unit per layer (its
**                weight and bias, contiguous in the flat buffer). Each "bucket" is a layer's
**                gradient reduce-scatter, launched once the layer's weight gradient is ready
**                (not packed: the layer's slice is reduced in place); the parameter
**                all-gathers are the schedule of zero3_plan.h.
** Invariant for every mode: buckets launch strictly in index order (DDP reduces in index
** order), bucket k right after the gradient at ready position launch_pos, which is the later
** of its own last gradient and bucket k-1's launch.
*/
#ifndef OVL_WL_BUCKET_PLAN_H
#define OVL_WL_BUCKET_PLAN_H

#include "model.h"
#include "segment.h"

typedef enum ovl_mode {
  OVL_MODE_SINGLE,
  OVL_MODE_NAIVE,
  OVL_MODE_INTERLEAVED,
  OVL_MODE_BUCKETED,
  OVL_MODE_MISORDERED,
  OVL_MODE_ZERO3,
  OVL_MODE_COUNT
} ovl_mode;

/* Names indexed by ovl_mode. */
extern const char *const ovl_mode_names[OVL_MODE_COUNT];
int ovl_mode_lookup(const char *text, ovl_mode *mode, ovl_err *err);

typedef struct ovl_bucket {
  int first_member, nmembers;  /* plan->members[first_member ...]: parameters in bucket order */
  int64_t floats, bytes;
  int64_t base;                /* packed modes: floats from the start of the bucket buffer */
  int ready_pos;               /* ready position of its last gradient */
  int launch_pos;              /* launched right after the gradient at this ready position */
} ovl_bucket;

typedef struct ovl_plan_options {
  ovl_mode mode;
  int64_t first_cap_bytes;  /* bucketed, misordered: cap of bucket 0 */
  int64_t cap_bytes;        /* bucketed, misordered: cap of the others */
  int find_unused;          /* bucketed, misordered: DDP's find_unused_parameters=True */
} ovl_plan_options;

typedef struct ovl_plan {
  ovl_plan_options opt;
  ovl_model model;
  int nparams;
  ovl_param *params;       /* registration order */
  int *ready_order;        /* ready_order[pos]: the parameter whose gradient is ready pos-th */
  int *bucket_of;          /* bucket of each parameter; -1 in single mode */
  int nbuckets;
  ovl_bucket *buckets;     /* in index order */
  int *launch_order;       /* bucket indices in launch order (index order, by the invariant) */
  int *members;            /* parameters of all buckets, bucket after bucket */
  ovl_segment *segments;   /* segments[m]: where members[m] lies in its bucket and in the flat buffer */
  int packed;              /* gradients are copied into bucket buffers (bucketed, misordered) */
  int64_t bucket_floats;   /* packed: size of the buffer holding every bucket */
  int64_t used_map_bytes;  /* find_unused: the int32 used-parameter map, 4 bytes per tensor */
} ovl_plan;

/* Builds the plan. Fails with OVL_EUSER on bad options (caps <= 0, find_unused outside the
** bucketed modes), OVL_EINTERNAL when out of memory. Free with ovl_plan_free. */
int ovl_plan_build(const ovl_model *m, const ovl_plan_options *opt, ovl_plan *plan, ovl_err *err);
void ovl_plan_free(ovl_plan *plan);

/* Position of parameter p in the ready order. */
int ovl_plan_ready_pos(const ovl_plan *plan, int p);

#endif
