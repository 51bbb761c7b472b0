/*
** The launch shape of an emulated collective (bucket_kernels.cu), a plain-C function so that
** it is checked without a GPU: how many blocks touch the buffer, and how much of it, so that
** the kernel lasts the modelled alpha + bytes/beta for every bucket size of a plan.
**
** The kernel reads and rewrites the buffer (2 x bytes of memory traffic), then each block spins
** until `wait_ns` after its own start. The touch must fit in OVL_EMULATED_TOUCH_SHARE of the
** wait at OVL_EMULATED_BLOCK_BYTES_PER_NS per block: the blocks are as many as that needs, at
** most OVL_EMULATED_MAX_BLOCKS (a collective occupies a few SMs, as NCCL's channels do, so
** compute keeps running beside it); where even those cannot touch it all in time (a large
** bucket with a small wait), each touches every `stride`-th group of four floats.
**
** Invariants (asserted): 1 <= blocks <= OVL_EMULATED_MAX_BLOCKS, stride >= 1, and
** 2 * bytes / stride / (blocks * rate) <= share * wait_ns (rounded up to one group).
*/
#ifndef OVL_KERNELS_EMULATED_SHAPE_H
#define OVL_KERNELS_EMULATED_SHAPE_H

#include <stdint.h>

/* A conservative rate for one 1024-thread block streaming float4 loads and stores (an H100
** SM sustains ~25 B/ns when every SM streams; one alone more). */
#define OVL_EMULATED_BLOCK_BYTES_PER_NS 10.0
#define OVL_EMULATED_MAX_BLOCKS 32
#define OVL_EMULATED_TOUCH_SHARE 0.5
#define OVL_EMULATED_THREADS 1024

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovl_emulated_shape {
  int blocks;
  int64_t stride;  /* touch every stride-th group of 4 floats (1: all of it) */
} ovl_emulated_shape;

ovl_emulated_shape ovl_emulated_shape_for(int64_t bytes, int64_t wait_ns);
/* The memory traffic the kernel makes in the shape (bytes read + written). */
double ovl_emulated_touch_bytes(int64_t bytes, ovl_emulated_shape shape);

#ifdef __cplusplus
}
#endif

#endif
