/*
** --hta-compat, second half: the trace window Holistic Trace Analysis analyses by default.
** HTA drops the last ProfilerStep (usually cut short by the profiler): it keeps the CPU
** events that start before the last ProfilerStep#N starts and only the GPU events whose
** correlation id matches one of the kept launches. With fewer than two steps nothing is
** dropped. (The first half, rounding float timestamps to whole microseconds, happens while
** the Kineto importer reads the events.)
*/
#ifndef OVL_HTA_COMPAT_H
#define OVL_HTA_COMPAT_H

#include "base/status.h"
#include "import_options.h"

/* Applies the rule to the finished ovl trace at `path`: stats->dropped counts the rows
** removed, and when rows were removed the other counts are taken again from what the file
** holds, so that they describe what was written. */
int ovl_hta_drop_last_step(const char *path, ovl_import_stats *stats, ovl_err *err);

#endif
