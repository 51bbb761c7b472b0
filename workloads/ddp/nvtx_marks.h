/*
** The NVTX annotations of contract section 3, in the domain "ovl": a `step` range per
** training step, a `grad_ready bucket=<k> bytes=<n> param=<name>` mark per gradient, and a
** `bucket <k>` range around each collective call (and, in --mode zero3, a `dim fsdp` range
** around each all-gather and reduce-scatter). Disabled (no calls at all) with --no-nvtx.
*/
#ifndef OVL_DDP_NVTX_MARKS_H
#define OVL_DDP_NVTX_MARKS_H

#include <stdint.h>

void ovl_nvtx_enable(int enabled);
void ovl_nvtx_step_begin(void);
void ovl_nvtx_step_end(void);
/* bucket < 0 (single mode): the mark carries no bucket. */
void ovl_nvtx_grad_ready(int bucket, int64_t bytes, const char *param);
void ovl_nvtx_bucket_begin(int bucket);
void ovl_nvtx_bucket_end(void);
/* `dim <name>` around collective calls of a parallelism dimension (--mode zero3: fsdp). */
void ovl_nvtx_dim_begin(const char *dim);
void ovl_nvtx_dim_end(void);

#endif
