/*
** Timeline export of an analysed job: `ovl export --perfetto FILE` (Perfetto's native
** protobuf trace) and `ovl export --chrome FILE[.gz]` (Chrome Trace Event JSON).
**
** The analysis (ovl_analyze_job) provides ranks, steps, collectives and findings; the
** slices themselves come from each rank's ovl trace (rank->ovl_path: the job's own
** conversion of a foreign file, never imported again): its GPU work from what the
** analysis's observer kept (gpu_facts.h: ~9 B a piece) or else a streaming re-read, its
** API calls from what the reader thread kept (api_capture.h) or else a streaming re-read;
** packets are written as they are produced.
** docs/export.md describes the layout.
*/
#ifndef OVL_EXPORT_H
#define OVL_EXPORT_H

#include "../job/job.h"

#include <stdint.h>

typedef enum ovl_export_format { OVL_EXPORT_PERFETTO, OVL_EXPORT_CHROME } ovl_export_format;

typedef struct ovl_export_options {
  ovl_export_format format;
  const char *path;
  /* Per rank clock offsets in ns, added to every timestamp of ranks[i]; NULL: each rank's
  ** clock_offset from the job's cross-rank clock alignment. */
  const int64_t *rank_offsets;
  size_t reorder_window;   /* host rows held to restore start order; 0: default */
  /* What the job's analysis gathered of each file's GPU work (gpu_facts.h: its observer was
  ** in the analysis options), or NULL: the export reads it in a pre-pass of its own. */
  const struct ovl_export_facts *facts;
} ovl_export_options;

typedef struct ovl_export_stats {
  uint64_t events;         /* slices count twice (begin and end), plus instants and counter values */
  uint64_t kernel_slices, memop_slices, host_slices, flows, counter_values, lanes;
  uint64_t bytes;          /* size of the file written */
  /* passes drawn on threads of their own beside the GPU pass (a file's host pass and its
  ** counters, export_file.c), over all files: 0 when everything was drawn on one thread */
  uint64_t passes_beside;
} ovl_export_stats;

/* Writes the job's timeline. ctx must be the context the job was analysed with (the
** classification of work into compute / communication / memory). On failure the partial
** file is removed. stats may be NULL. */
int ovl_export_job(const ovl_job *job, const ovl_analysis_ctx *ctx, const ovl_export_options *opt,
                   ovl_export_stats *stats, ovl_err *err);

#endif
