/*
** --hta-compat, second half: the trace window Holistic Trace Analysis analyses by default.
** HTA drops the last ProfilerStep (usually cut short by the profiler): it keeps the CPU
** events that start before the last ProfilerStep#N starts and only the GPU events whose
** correlation id matches one of the kept launches. Like HTA, the last start is taken over
** every ProfilerStep event, the GPU-side copies (`gpu_user_annotation`, which start when the
** GPU reaches the step, after the CPU range) included: HTA's parser gives them no stream, so
** its cut sees them as CPU events (the importer keeps no row for them: it leaves their latest
** start in meta OVL_HTA_GPU_STEP_META). With fewer than two step names nothing is dropped. (The first half, rounding float timestamps to whole microseconds, happens while
** the Kineto importer reads the events.)
*/
#ifndef OVL_HTA_COMPAT_H
#define OVL_HTA_COMPAT_H

#include "base/status.h"
#include "import_options.h"

#define OVL_HTA_GPU_STEP_META "import_hta_gpu_step_last_ns"

/* Applies the rule to the finished ovl trace at `path`: stats->dropped counts the rows
** removed, and when rows were removed the other counts are taken again from what the file
** holds, so that they describe what was written. */
int ovl_hta_drop_last_step(const char *path, ovl_import_stats *stats, ovl_err *err);

#endif
