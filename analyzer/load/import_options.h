/*
** Options and results of converting a foreign trace (Kineto JSON, Nsight Systems SQLite)
** into an ovl trace. docs/import.md describes both modes.
*/
#ifndef OVL_IMPORT_OPTIONS_H
#define OVL_IMPORT_OPTIONS_H

#include <stdint.h>

typedef struct ovl_import_options {
  /* Kineto: reproduce Holistic Trace Analysis's defaults (drop the last ProfilerStep, round
  ** float timestamps to whole microseconds: start up, end down). */
  int hta_compat;
} ovl_import_options;

typedef struct ovl_import_stats {
  long events;              /* events (Kineto) or activity rows (Nsight) read */
  long kernels, nccl_kernels, memops, api, nvtx, collectives;
  long skipped;             /* GPU/API events without usable times, or with end < start */
  long dropped;             /* rows removed by --hta-compat (last ProfilerStep) */
  int64_t rank, world_size; /* OVL_NONE when the trace does not say */
} ovl_import_stats;

#endif
