/*
** State shared by the parts of the timeline export (not part of the exporter's interface):
**   export_job.c     entry point: processes, steps, findings, one pass set per trace file
**   export_emit.c    names, tracks, lane groups; every timestamp is shifted here (xtime)
**   export_file.c    per trace file: its work stream, results per collective, flows bookkeeping, the passes
**   gpu_facts.c      what the analysis saw of each file's GPU work (streams' roles, correlations, the work)
**   api_capture.c    the API rows, read on a thread beside the analysis
**   varbuf.c         the varint records both keep
**   export_host.c    host threads: NCCL calls, NVTX ranges, CUDA API calls
**   export_gpu.c     GPU work on stream lanes, flow ends, collective annotations, counters
*/
#ifndef OVL_EXPORT_INTERNAL_H
#define OVL_EXPORT_INTERNAL_H

#include "base/strmap.h"
#include "base/i64map.h"
#include "export.h"
#include "../analyze/work_stream.h"
#include "export_sink.h"
#include "gpu_facts.h"
#include "idset.h"
#include "lanes.h"

#include <assert.h>

/* A logical track drawn on lanes: a CUDA stream, a thread's ranges, a thread's API calls,
** the steps. Every lane is a sink track with the group's name. */
typedef struct xgroup {
  ovl_lanes lanes;
  uint32_t proc;
  char *name;
  int32_t order;           /* lane k is ordered order + k */
  int64_t chrome_tid;      /* lane 0's Chrome thread id, or -1 */
} xgroup;

/* Counters of a rank: exposed communication and communication bytes in flight, drawn from
** the analysis's own sweep (sweep.h: on_segment) over the rank's classified work. */
typedef struct xcounters {
  uint32_t exposed_track, bytes_track;
  ovl_sweep sweep;
  int has_sweep;
  const struct xfile *file;  /* whose collectives rows the sweep's collectives index */
  uint32_t proc;
  int written_any;
  int last_exposed;
  int64_t last_bytes;
  /* per parallelism dimension the rank has collectives of: an exposed counter (job_dims.h) */
  int has_dim[OVL_DIM_COUNT];
  uint32_t dim_track[OVL_DIM_COUNT];
  int last_dim_exposed[OVL_DIM_COUNT];
  unsigned dim_mask, last_dim_mask;  /* bit d: has_dim[d], last_dim_exposed[d] (d >= 1) */
  int rc;                  /* first failure while writing from the sweep's callback */
  ovl_err err;
} xcounters;

typedef struct xproc {
  const ovl_rank_result *r;
  uint32_t index;
  int64_t offset;          /* added to every timestamp of this rank */
  xcounters counters;
} xproc;

typedef struct ovl_exporter {
  ovl_export_sink sink;
  const ovl_analysis_ctx *ctx;
  const ovl_export_options *opt;
  ovl_export_stats stats;
  xproc *procs;
  size_t nprocs;
  unsigned flow_proc_bits;  /* bits of a process index in a flow id: nprocs <= 2^flow_proc_bits */
  uint32_t ntracks;
  ovl_strmap name_iids;    /* name -> iid, for the whole export */
  char **names;            /* iid - 1 -> name */
  size_t nnames, names_cap;
} ovl_exporter;

/* ---- export_emit.c ---- */
/* The one place where a rank's clock offset applies (cross-rank alignment); inline: it is
** called for every timestamp drawn. */
static inline int64_t xtime(const ovl_exporter *ex, uint32_t proc, int64_t t) {
  return proc < ex->nprocs ? t + ex->procs[proc].offset : t;
}
/* iid of a name (interned on first use); 0 when memory runs out. */
uint32_t xname(ovl_exporter *ex, const char *name);
static inline const char *xname_text(const ovl_exporter *ex, uint32_t iid) {
  return iid >= 1 && iid <= ex->nnames ? ex->names[iid - 1] : "";
}
int xtrack(ovl_exporter *ex, uint32_t proc, ovl_xtrack_kind kind, const char *name, int32_t order, int64_t chrome_tid,
           uint32_t *id, ovl_err *err);
int xgroup_init(xgroup *g, ovl_lane_mode mode, uint32_t proc, const char *name, int32_t order, int64_t chrome_tid);
/* Places a slice (instant: a zero-length one) on the group's lanes and sends it. Times are
** the trace's; xtime shifts them. */
int xgroup_slice(ovl_exporter *ex, xgroup *g, const ovl_xslice *sl, int instant, ovl_err *err);
/* Closes every lane track and frees the group. */
int xgroup_close(ovl_exporter *ex, xgroup *g, ovl_err *err);
void xgroup_free(xgroup *g);
int xcounter(ovl_exporter *ex, uint32_t proc, uint32_t track, int64_t t, int64_t value, ovl_err *err);

/* Flow ids: unique across the export, and small (Perfetto writes them as varints): the
** value, then the kind, then the process in the low flow_proc_bits bits, plus 1 (0 is no
** id). kind 0: CUDA launch (value = correlation id); kind 1: NCCL call (value = collective
** index in its file). xflow_ok: the value fits (non-negative, below 2^(62 - proc bits)). */
#define XFLOW_LAUNCH 0
#define XFLOW_NCCL 1
/* Inline: asked for every kernel and API call drawn. */
static inline int xflow_ok(const ovl_exporter *ex, int64_t value) {
  return value >= 0 && ex->flow_proc_bits < 62 && value < ((int64_t)1 << (62 - ex->flow_proc_bits));
}
static inline uint64_t xflow_id(const ovl_exporter *ex, uint32_t file_proc, int kind, int64_t value) {
  assert(xflow_ok(ex, value) && file_proc < ex->nprocs && (kind == XFLOW_LAUNCH || kind == XFLOW_NCCL));
  return ((((uint64_t)value << 1 | (uint64_t)kind) << ex->flow_proc_bits) | file_proc) + 1;
}

/* ---- export_file.c: one trace file and the ranks (devices) it holds ---- */
typedef struct xfile {
  ovl_exporter *ex;
  ovl_trace *t;
  const char *path;        /* the file the user named (messages) */
  uint32_t *procs;         /* exporter process of each device of this file */
  int64_t *devices;
  size_t nprocs;
  uint32_t host_proc;      /* host threads are drawn under the file's first rank */
  ovl_work_stream ws;       /* GPU work classified, collectives and their links (the analysis's) */
  const ovl_coll_rec *recs; /* ws's collectives rows */
  size_t nrecs;
  const ovl_coll_result **coll_result;  /* per row: its analysis result, or NULL */
  /* flows: both ends must exist, every id starts once and ends once */
  const ovl_idset *gpu_corr;  /* correlations of GPU work (the analysis's facts or own_facts) */
  ovl_gpu_facts own_facts;    /* the pre-pass's, when the analysis gathered none */
  int sort_work;              /* read the GPU work sorted by SQLite: the facts found it out of order */
  const ovl_gpu_facts *capture;  /* the analysis's capture of the work, drawn instead of reading it, or NULL */
  ovl_idset launch_started, launch_ended;
  const ovl_idset *launch_from;  /* the GPU pass ends a launch flow for these correlations (and xflow_ok):
                                    launch_started after the host pass, or the API rows' (drawn beside) */
  int counters_apart;            /* the GPU pass leaves the counters to xcounters_export (beside it) */
  unsigned char *coll_has_gpu, *coll_started, *coll_ended;
  ovl_coll_state coll_state;  /* the counters' sweeps: per collective, work running now */
  uint32_t *iid_of_string;  /* kernel names: strings.id -> iid (0: not yet), ids below ws.name_class_len */
  size_t reorder_window;
} xfile;

/* Exports the ranks procs[0..nprocs) of the ovl trace ovl_path (never imports: the job did);
** user_path is the file the user named, for messages. */
int xfile_export(ovl_exporter *ex, const char *ovl_path, const char *user_path, const uint32_t *procs, size_t nprocs,
                 ovl_err *err);
/* Proc of a device of this file, or UINT32_MAX. Inline: asked once per piece of work. */
static inline uint32_t xfile_proc_of(const xfile *f, int64_t device) {
  for (size_t i = 0; i < f->nprocs; i++)
    if (f->devices[i] == device) return f->procs[i];
  return UINT32_MAX;
}
/* iid of a strings.id (kernel and API names); 0 when memory runs out. Inline: once per
** kernel and API call, nearly always a cached iid. */
uint32_t xfile_string_iid_slow(xfile *f, int64_t name);
static inline uint32_t xfile_string_iid(xfile *f, int64_t name) {
  if (name >= 0 && name < f->ws.name_class_len && f->iid_of_string[name]) return f->iid_of_string[name];
  return xfile_string_iid_slow(f, name);
}

/* ---- export_host.c / export_gpu.c ---- */
int xhost_export(xfile *f, ovl_err *err);
/* The file's streams (their roles) and its correlations with GPU work (f->gpu_corr), from
** the facts the analysis gathered (NULL, or not the file's alone: a pre-pass reads them). */
typedef struct xstreams xstreams;
int xgpu_streams(xfile *f, const ovl_gpu_facts *facts, xstreams **streams, ovl_err *err);
int xgpu_export(xfile *f, xstreams *streams, ovl_err *err);
/* The ranks' counters alone, from the capture of the GPU work (f->capture), for a GPU pass
** run with counters_apart. */
int xcounters_export(xfile *f, ovl_err *err);
void xgpu_streams_free(xstreams *s);

#endif
