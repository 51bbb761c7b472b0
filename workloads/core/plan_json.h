/*
** `ovl-ddp --plan`: the parameter list, the bucket assignment and the launch order as one
** JSON document (docs/workloads.md shows an example):
**   {"model", "mode", "widths", "param_floats", "first_bucket_bytes", "bucket_bytes",
**    "params": [{"name", "bytes"}] (registration order),
**    "ready_order": [names] (the order gradients become ready),
**    "buckets": [{"index", "params": [names], "bytes", "ready_after", "launch_after"}],
**    "launch_order": [bucket indices],
**    "find_unused": null | {"used_map_bytes", "after_bucket"}}
** ready_after names the gradient that completes the bucket, launch_after the gradient after
** which its all-reduce is launched (later when an earlier bucket is not launched yet).
*/
#ifndef OVL_WL_PLAN_JSON_H
#define OVL_WL_PLAN_JSON_H

#include "bucket_plan.h"

#include <stdio.h>

/* Writes the plan; pretty selects indentation. Returns 0, or -1 on a write error. */
int ovl_plan_write_json(const ovl_plan *plan, FILE *out, int pretty);

/* What `ovl-ddp --plan` does: builds the plan and writes it, indented, to out. */
int ovl_plan_print(const ovl_model *m, const ovl_plan_options *opt, FILE *out, ovl_err *err);

#endif
