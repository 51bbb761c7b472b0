/*
** The classified work stream of one ovl trace: its GPU work in start order, each piece with
** its class (compute / communication / memory, contract section 2) and the collectives rows
** it executes. This module alone owns what that takes: the collectives rows, the
** correlation -> collectives link table (collective_launches), the per-name class cache and
** the classifier's use. The analysis pass (trace_analysis.c: the sweep, and through it the
** diagnosis) and the timeline export (export_gpu.c) both read GPU work only through it, so
** they cannot disagree on what is communication.
**
** Class of a piece of work: communication when it is linked to a collectives row; else a
** memop is memory and a kernel is judged by its name (classify.h).
**
** NCCL's own timing of its kernels (collective_channels, from libovl as NCCL's profiler plugin)
** stands in for the GPU work of a collective that has none linked (a trace without CUPTI): one
** piece of communication work per such collective, from its first channel's start to its last
** channel's end, merged into the stream in start order (no name, no correlation). A collective
** with linked work keeps it; its channels are only compared with it (ovl_work_stream_channels).
** Such work of a collective whose stream is unknown (NCCL's v4 interface names none) is put on
** OVL_CHANNEL_STREAM_UNKNOWN, which no CUDA stream id can be.
*/
#ifndef OVL_WORK_STREAM_H
#define OVL_WORK_STREAM_H

#include "base/status.h"
#include "../load/trace_reader.h"
#include "classify.h"

#include <stddef.h>
#include <stdint.h>

#define OVL_CHANNEL_STREAM_UNKNOWN (-1)

/* One piece of GPU work, classified. colls stays valid while the stream lives. */
typedef struct ovl_classified_work {
  ovl_work w;
  ovl_work_class cls;
  const int32_t *colls;        /* the collectives rows (indices into recs) it executes */
  uint32_t ncolls;
  int from_channels;           /* NCCL's channel timing of a collective, not a kernel or memop */
} ovl_classified_work;

typedef struct ovl_work_stream {
  ovl_trace *t;
  const ovl_classifier *classifier;
  ovl_coll_rec *recs;          /* the collectives rows, by id */
  size_t nrecs;
  size_t nrecs_total;          /* nrecs before the rows were taken (ovl_work_stream_take_recs) */
  /* links sorted by correlation. Work arrives in start order and correlation ids grow with
  ** launch time, so consecutive lookups land close together: link_hint remembers the last
  ** position and the search gallops from there. */
  int64_t *link_corr;
  int32_t *link_coll;          /* indices into recs */
  size_t nlinks, link_hint;
  signed char *name_class;     /* strings.id -> ovl_work_class, -1 not judged yet */
  signed char *name_traits;    /* strings.id -> OVL_NAME_* bits, -1 not judged yet */
  int64_t name_class_len;
  int sorted;                  /* rows came too far out of order: SQLite sorts from now on */
  ovl_work_cursor *cur;
  const char *progress;        /* what a pass is reported as (base/progress.h), e.g. "analysing";
                               ** NULL: not reported */
  int64_t pass_rows, rows_estimate;
  /* NCCL's channel timing: spans by collective id, span_of[recs index] (-1: none) */
  ovl_channel_span *spans;
  size_t nspans;
  int32_t *span_of;
  unsigned char *linked;       /* recs index -> 1 when GPU work is linked to it */
  ovl_work *chan_work;         /* the collectives timed by their channels only, in start order */
  int32_t *chan_coll;          /* ... and their recs indices */
  size_t nchan_work, chan_next;
  ovl_classified_work pending; /* the cursor's next piece, held while channel work goes first */
  ovl_classified_work chan_out; /* the channel work ovl_work_stream_next_ref handed out last */
  int has_pending, cursor_done;
} ovl_work_stream;

/* Loads the collectives and their links of an open trace (t stays the caller's). */
int ovl_work_stream_init(ovl_work_stream *s, ovl_trace *t, const ovl_classifier *classifier, ovl_err *err);
void ovl_work_stream_free(ovl_work_stream *s);
/* Hands the collectives rows to the caller, who frees them (the stream needs them only to
** build its links, whose indices stay valid): no second copy of what may be millions of
** calls. Afterwards s->recs is NULL and s->nrecs 0. */
ovl_coll_rec *ovl_work_stream_take_recs(ovl_work_stream *s, size_t *n);

/* Frees the correlation links once no pass will run again (no cursor open): every lookup
** finds nothing afterwards. What the analysis gives back before it builds its results. */
void ovl_work_stream_drop_links(ovl_work_stream *s);

/* The collectives rows executed by work with this correlation id (0 for OVL_NONE). */
uint32_t ovl_work_stream_links(ovl_work_stream *s, int64_t correlation, const int32_t **colls);
/* Class of a kernel by its name id, judged once per id. */
ovl_work_class ovl_work_stream_kernel_class(ovl_work_stream *s, int64_t name);
/* What a kernel's name says beside its class, judged once per id: OVL_NAME_LOOKALIKE, it looks
** like communication though it is not recognised as such (load/comm_names.h:
** ovl_comm_lookalike_name); OVL_NAME_MOE, it does mixture-of-experts work (classify.h). */
#define OVL_NAME_LOOKALIKE 1
#define OVL_NAME_MOE 2
int ovl_work_stream_kernel_traits(ovl_work_stream *s, int64_t name);
/* Class of a piece of work linked to ncolls collectives. */
ovl_work_class ovl_work_stream_class(ovl_work_stream *s, const ovl_work *w, uint32_t ncolls);

/* NCCL's channel timing of collective recs[i] (NULL when none); *timed_by_channels = 1 when it
** stands for the collective's GPU work (nothing linked to it). */
const ovl_channel_span *ovl_work_stream_channels(const ovl_work_stream *s, size_t i, int *timed_by_channels);

/* Starts a pass over the work in start order: rows are restored to order through a window
** of `window` rows (0, or once the stream has seen rows further out of order than a window
** allows: SQLite sorts). launch_dims: also read kernel grid sizes. */
int ovl_work_stream_open(ovl_work_stream *s, size_t window, int launch_dims, ovl_err *err);
/* Sets *has to 1 and fills *out, or *has to 0 at the end. Fails with OVL_EUNSORTED when a
** row came later than the window allows: the stream is then marked sorted, and the caller
** resets what it counted and runs the pass again. */
int ovl_work_stream_next(ovl_work_stream *s, ovl_classified_work *out, int *has, ovl_err *err);
/* The same without a copy of the piece: *out points into the stream and stays valid until the
** next call (the analysis pass reads millions of pieces). */
int ovl_work_stream_next_ref(ovl_work_stream *s, const ovl_classified_work **out, int *has, ovl_err *err);
void ovl_work_stream_close(ovl_work_stream *s);

#endif
