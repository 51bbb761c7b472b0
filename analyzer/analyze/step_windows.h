/*
** The GPU-time windows of a rank's training steps.
**
** Window i is [start[i], end[i]); windows are disjoint and ordered. A window may be known
** in advance (NVTX ranges used by time, the whole trace) or be opened and closed while the
** sweep runs (NVTX ranges projected through launch correlation: a step's window opens when
** the first GPU work launched inside its range starts; inferred periodic steps: a window
** closes when the last collective of its group ends). INT64_MAX marks a bound not known yet.
** Online changes only ever happen at or after the current sweep time, so lookups, which
** move forward in time, never see the past change.
*/
#ifndef OVL_STEP_WINDOWS_H
#define OVL_STEP_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_step_windows {
  size_t n;
  int64_t *start, *end;
  size_t cursor;   /* first window that may contain the current time */
  size_t opened;   /* online mode: windows [0, opened) have been opened */
  int64_t located; /* the last time looked up: no change may happen before it */
} ovl_step_windows;

/* n windows, all unknown. Returns 0 or -1 when memory runs out. */
int ovl_windows_init(ovl_step_windows *w, size_t n);
void ovl_windows_free(ovl_step_windows *w);
/* Fixes window i in advance. Windows must be set in order and must not overlap. */
void ovl_windows_set(ovl_step_windows *w, size_t i, int64_t start, int64_t end);
/* Opens window i at t: every earlier window still open closes at t, and earlier windows
** never opened become empty at t. Opening an already opened window does nothing. */
void ovl_windows_open(ovl_step_windows *w, size_t i, int64_t t);
/* Closes every open window at t (used when work after the last step begins). */
void ovl_windows_close_all(ovl_step_windows *w, int64_t t);
/* The window containing t (*step = index) or none (*step = -1); returns the time at
** which that answer next changes. Calls must come with non-decreasing t. */
int64_t ovl_windows_locate(ovl_step_windows *w, int64_t t, long *step);

#endif
