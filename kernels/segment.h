/*
** A run of gradient floats copied between the flat gradient buffer (all parameters in
** registration order) and a bucket buffer. Packing copies flat -> bucket, unpacking the
** reverse. Plain C so the planner (which produces segments) builds without CUDA.
*/
#ifndef OVL_KERNELS_SEGMENT_H
#define OVL_KERNELS_SEGMENT_H

#include <stdint.h>

typedef struct ovl_segment {
  int64_t bucket_offset;  /* floats from the start of the bucket */
  int64_t flat_offset;    /* floats from the start of the flat gradient buffer */
  int64_t count;          /* floats */
} ovl_segment;

#endif
