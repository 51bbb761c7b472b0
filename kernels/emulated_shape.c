/* The launch shape of an emulated collective: see emulated_shape.h. */
#include "emulated_shape.h"

#include <assert.h>
#include <math.h>

double ovl_emulated_touch_bytes(int64_t bytes, ovl_emulated_shape shape) {
  double groups = ceil((double)bytes / 16.0);  /* float4 groups */
  return 2.0 * 16.0 * ceil(groups / (double)shape.stride);
}

ovl_emulated_shape ovl_emulated_shape_for(int64_t bytes, int64_t wait_ns) {
  ovl_emulated_shape s = {1, 1};
  if (bytes <= 0) return s;
  double budget_ns = OVL_EMULATED_TOUCH_SHARE * (double)(wait_ns > 0 ? wait_ns : 0);
  double need = ovl_emulated_touch_bytes(bytes, s);
  double per_block = OVL_EMULATED_BLOCK_BYTES_PER_NS * budget_ns;  /* bytes one block moves in time */
  double blocks = per_block > 0 ? ceil(need / per_block) : OVL_EMULATED_MAX_BLOCKS;
  s.blocks = blocks < 1 ? 1 : blocks > OVL_EMULATED_MAX_BLOCKS ? OVL_EMULATED_MAX_BLOCKS : (int)blocks;
  double capacity = per_block * s.blocks;
  if (need > capacity) {
    double groups = ceil((double)bytes / 16.0);
    /* the smallest stride whose touch fits: at least one group is always touched */
    double stride = capacity >= 32.0 ? ceil(groups / floor(capacity / 32.0)) : groups;
    s.stride = stride < 1 ? 1 : (int64_t)stride;
  }
  assert(s.blocks >= 1 && s.blocks <= OVL_EMULATED_MAX_BLOCKS && s.stride >= 1);
  assert(s.stride == 1 || ovl_emulated_touch_bytes(bytes, s) <= (capacity > 32.0 ? capacity : 32.0));
  return s;
}
