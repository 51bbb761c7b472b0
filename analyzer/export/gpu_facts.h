/*
** What the timeline export must know of a trace file's GPU work before it draws anything:
** each stream's work items by class (its role, in the track's name) and which correlation
** ids have GPU work (a launch's flow starts only when it will end). Gathered while the
** analysis reads the work (its ovl_work_observer, analysis.h), so that the export does not
** read the trace once more for them; the export's own pre-pass fills the same struct when
** the analysis did not (another caller of ovl_export_job, a file analysed twice).
*/
#ifndef OVL_GPU_FACTS_H
#define OVL_GPU_FACTS_H

#include "base/i64map.h"
#include "../analyze/analysis.h"
#include "../analyze/work_stream.h"
#include "api_capture.h"
#include "idset.h"
#include "varbuf.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ovl_fact_stream {
  int64_t device, stream;
  long count[3];           /* work items per ovl_work_class */
} ovl_fact_stream;

/* The GPU work itself, as the analysis's pass saw it and in its order, so that the export
** draws it without reading the trace again (OVL_EXPORT_ONE_READ=0: it reads it again). Kept
** compactly: one record of varints per item (varbuf.h; ~12 B: a flags byte, then the
** changes from the item before: start, duration, correlation, name); the collectives rows
** an item executes go to `colls`, whose entries must stay put while the export's sweep runs. */
#define OVL_CAPTURE_MEMKINDS 16

typedef struct ovl_work_capture {
  ovl_varbuf records;
  size_t nitems;
  int32_t *colls;          /* every item's collectives rows, in item order */
  size_t ncolls, colls_cap;
  char memkind[OVL_CAPTURE_MEMKINDS][8];  /* the memop kinds seen, an item stores an index */
  unsigned nmemkinds;
  int failed;              /* memory ran out, or an item did not fit the records: unusable */
  int64_t prev_start, prev_corr;  /* the encoder's item before */
  size_t prev_stream;
} ovl_work_capture;

/* Where a reading of a capture stands (ovl_capture_next). */
typedef struct ovl_capture_cursor {
  ovl_varbuf_reader in;
  size_t item, coll;
  int64_t start, corr;
  size_t stream;
} ovl_capture_cursor;

/* One trace file's facts. */
typedef struct ovl_gpu_facts {
  char *path;              /* the ovl trace analysed */
  ovl_fact_stream *streams;
  size_t nstreams, cap;
  ovl_i64map index;        /* stream key -> streams index */
  size_t last;             /* the stream seen last */
  ovl_idset gpu_corr;      /* correlation ids of GPU work */
  int sorted;              /* the work had to be sorted (the analysis's reorder window) */
  ovl_work_capture capture;  /* gathered by the analysis's observer only */
  struct ovl_gpu_facts *next;
} ovl_gpu_facts;

/* The hash key of a stream (collisions possible: compare device and stream). */
int64_t ovl_fact_stream_key(int64_t device, int64_t stream);
/* Counts one item. Returns 0, or -1 when memory runs out. */
int ovl_gpu_facts_add(ovl_gpu_facts *g, const ovl_classified_work *cw);
/* Adds one item, counted first (ovl_gpu_facts_add: its stream is the one seen last) to the
** capture; when it cannot, the capture is marked failed and freed (the export then reads the
** trace again), never an error. */
void ovl_gpu_facts_capture(ovl_gpu_facts *g, const ovl_classified_work *cw);
/* Whether the capture holds every item counted. */
int ovl_gpu_facts_captured(const ovl_gpu_facts *g);
/* Starts reading g's capture from its first item. */
void ovl_capture_cursor_init(ovl_capture_cursor *cur, const ovl_gpu_facts *g);
/* The next item into *cw (w.bytes, grid and block are unknown: OVL_NONE; cw->colls points
** into the capture). Returns 1, or 0 after the last. */
int ovl_capture_next(ovl_capture_cursor *cur, const ovl_gpu_facts *g, ovl_classified_work *cw);

/* Forgets every item (a pass that starts again). */
void ovl_gpu_facts_clear(ovl_gpu_facts *g);
void ovl_gpu_facts_free(ovl_gpu_facts *g);

/* The facts of every file an analysis read with `observer` in its options. */
typedef struct ovl_export_facts {
  ovl_work_observer observer;  /* self is this struct */
  pthread_mutex_t lock;        /* files: analyses of files run concurrently */
  ovl_gpu_facts *files;
  ovl_api_reader api;          /* the api rows, read beside the analysis (api_capture.h), or none */
} ovl_export_facts;

/* Initialises x; hand &x->observer to the analysis (ovl_analysis_options.observer). x must
** not move while in use. Returns 0, or -1 when the lock cannot be made. */
int ovl_export_facts_init(ovl_export_facts *x);
/* The facts of the ovl trace at path, or NULL when the analysis did not read it, or read it
** more than once (two entries: either may be partial). */
const ovl_gpu_facts *ovl_export_facts_find(const ovl_export_facts *x, const char *path);
void ovl_export_facts_free(ovl_export_facts *x);

#endif
