/*
** Lane assignment: the slices of one logical track (a CUDA stream, a host thread) spread
** over as few lanes as possible so that each lane is a valid Perfetto track.
**
** Slices are offered in non-decreasing start order (a late slice is still placed, on a lane
** whose last start is not after it). Two disciplines:
**   OVL_LANES_DISJOINT  a lane holds slices that do not overlap (GPU work: concurrent
**                       kernels are not parents of each other); a lane is free again when
**                       its last slice has ended (end <= start). O(log lanes) per slice.
**   OVL_LANES_NESTED    a lane holds properly nested slices (host ranges and calls): a slice
**                       joins the lowest lane where it fits inside the innermost still-open
**                       slice, or where nothing is open.
** The lowest free lane is always taken, so lane 0 carries most of the work.
*/
#ifndef OVL_LANES_H
#define OVL_LANES_H

#include <stddef.h>
#include <stdint.h>

typedef enum ovl_lane_mode { OVL_LANES_DISJOINT, OVL_LANES_NESTED } ovl_lane_mode;

typedef struct ovl_lane {
  uint32_t track;         /* caller's track id for this lane */
  int64_t last_start;
  int64_t last_end;       /* disjoint mode: end of the lane's last slice */
  int64_t *open;          /* ends of the open slices, outermost first (nested mode) */
  size_t depth, cap;
} ovl_lane;

typedef struct ovl_lane_slot {
  int64_t end;
  uint32_t lane;
} ovl_lane_slot;

typedef struct ovl_lanes {
  ovl_lane_mode mode;
  ovl_lane *lane;
  size_t n, cap;
  ovl_lane_slot *busy;    /* disjoint: min-heap on end of the busy lanes */
  size_t nbusy, busy_cap;
  uint32_t *idle;         /* disjoint: min-heap of free lane numbers */
  size_t nidle, idle_cap;
} ovl_lanes;

void ovl_lanes_init(ovl_lanes *l, ovl_lane_mode mode);
/* Places [start, end]: sets *lane and *is_new (the caller then sets l->lane[*lane].track).
** Returns 0, or -1 when memory runs out. */
int ovl_lanes_place(ovl_lanes *l, int64_t start, int64_t end, size_t *lane, int *is_new);
void ovl_lanes_free(ovl_lanes *l);

#endif
