/*
** Export of one trace file: opens its classified work stream (work_stream.h: collectives,
** their launch links, the classes of work), matches collectives to their analysis results,
** takes what the analysis saw of the GPU work (gpu_facts.h: which correlation ids have GPU
** work, each stream's role; a pre-pass reads them when it saw nothing), then runs the
** passes: the host pass (flow starts) and the GPU pass (flow ends). Flows are only drawn
** when both ends exist.
*/
#include "export_internal.h"

#include "base/progress.h"
#include "base/vec.h"
#include "api_capture.h"

#include <assert.h>
#include <pthread.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The record of collective id among recs[0..n) (the last of equal ids), or -1. The reader
** returns the records in id order (ovl_trace_read_collectives; rows whose id is not an integer
** are skipped), so they are searched where they lie. *hint: after the last record found, as
** the results come in id order too. */
static ptrdiff_t find_rec(const ovl_coll_rec *recs, size_t n, int64_t id, size_t *hint) {
  size_t lo = 0, hi = n;  /* the first position whose id is above id */
  size_t h = *hint;
  if (h < n && recs[h].id == id) {
    lo = h;
    if (h + 1 == n || recs[h + 1].id > id) hi = lo = h + 1;  /* the next record: no search */
  }
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (recs[mid].id <= id) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || recs[lo - 1].id != id) return -1;
  *hint = lo;
  return (ptrdiff_t)(lo - 1);
}

/* Matches each collectives row to its analysis result (rows outside every step have none). */
static int match_results(xfile *f, ovl_err *err) {
  for (size_t i = 1; i < f->nrecs; i++) assert(f->recs[i - 1].id <= f->recs[i].id);
  size_t nrecs = f->nrecs ? f->nrecs : 1;
  f->coll_result = calloc(nrecs, sizeof *f->coll_result);
  f->coll_has_gpu = calloc(nrecs, 1);
  f->coll_started = calloc(nrecs, 1);
  f->coll_ended = calloc(nrecs, 1);
  f->coll_state.exposed = calloc(nrecs, sizeof *f->coll_state.exposed);
  f->coll_state.running = calloc(nrecs, sizeof *f->coll_state.running);
  f->coll_state.len = f->nrecs;
  int rc = OVL_OK;
  if (!f->coll_result || !f->coll_has_gpu || !f->coll_started || !f->coll_ended || !f->coll_state.exposed ||
      !f->coll_state.running)
    rc = ovl_oom(err, "collectives");
  size_t hint = 0;  /* a search, where a hash map of the ids took ~90 B a record at the export's peak */
  for (size_t p = 0; !rc && p < f->nprocs; p++) {
    const ovl_rank_result *r = f->ex->procs[f->procs[p]].r;
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].ncolls; i++) {
        const ovl_coll_result *c = &r->steps[s].colls[i];
        ptrdiff_t at = ovl_coll_id(c) != OVL_NONE ? find_rec(f->recs, f->nrecs, ovl_coll_id(c), &hint) : -1;
        if (at >= 0) f->coll_result[at] = c;
      }
  }
  return rc;
}

uint32_t xfile_string_iid_slow(xfile *f, int64_t name) {
  int cached = name >= 0 && name < f->ws.name_class_len;
  const char *text = ovl_trace_string(f->t, name);
  uint32_t iid = xname(f->ex, text ? text : "kernel");
  if (cached) f->iid_of_string[name] = iid;
  return iid;
}

static void xfile_free(xfile *f) {
  free(f->procs);
  free(f->devices);
  free(f->coll_result);
  free(f->coll_has_gpu);
  free(f->coll_started);
  free(f->coll_ended);
  free(f->coll_state.exposed);
  free(f->coll_state.running);
  free(f->iid_of_string);
  ovl_work_stream_free(&f->ws);
  ovl_gpu_facts_free(&f->own_facts);
  ovl_idset_free(&f->launch_started);
  ovl_idset_free(&f->launch_ended);
  ovl_trace_close(f->t);
}

/* An error about the ovl trace names the user's file instead of a temporary conversion. */
static void name_user_file(const char *ovl_path, const char *user_path, ovl_err *err) {
  const char *at = strstr(err->msg, ovl_path);
  if (!at || strcmp(ovl_path, user_path) == 0) return;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - err->msg), err->msg, user_path, at + strlen(ovl_path));
  memcpy(err->msg, msg, sizeof msg);
}

/* ---- the host pass and the counters beside the GPU pass ----
** With the API rows and the GPU work both held in memory (api_capture.h, gpu_facts.h), the
** host pass needs nothing from the GPU pass and the GPU pass needs from the host pass only
** which launches start a flow: those of the API rows (their correlations, collected as they
** were read) that have GPU work. The counters (the analysis's sweep over the work, drawn
** apart: counters_apart) need only the capture of the work, which the GPU pass replays
** too. So the host pass and the counters each draw on a thread of their own into a child
** sink (export_sink.h: ovl_perfetto_sink_fork) while the GPU pass draws on this one. What a
** side writes is its own while they run: each has an exporter copy with its own names (iids
** are per sequence in Perfetto: the sides never share a track), tracks, statistics, and a
** copy of the file with its own flow bookkeeping and string cache; the counters' state
** (xproc.counters, f->coll_state) is the counters' side's alone. What all read (the
** analysis's results, the collectives, the processes' offsets, gpu_corr, coll_started, the
** trace's strings, the capture) is fixed before the threads start; the trace's connection
** is the host pass's alone (the GPU pass and the counters replay the capture). */
typedef struct beside {
  xfile f;
  ovl_exporter ex;
  int counters;            /* the counters' side, else the host pass */
  int rc;
  ovl_err err;
} beside;

static void *beside_main(void *arg) {
  beside *b = arg;
  ovl_progress_file(b->f.path);  /* the host pass reports its progress too (the counters do not) */
  b->rc = b->counters ? xcounters_export(&b->f, &b->err) : xhost_export(&b->f, &b->err);
  ovl_perfetto_sink_child_done(&b->ex.sink, b->rc == OVL_OK);
  return NULL;
}

static void add_stats(ovl_export_stats *to, const ovl_export_stats *from) {
  to->events += from->events;
  to->kernel_slices += from->kernel_slices;
  to->memop_slices += from->memop_slices;
  to->host_slices += from->host_slices;
  to->flows += from->flows;
  to->counter_values += from->counter_values;
  to->lanes += from->lanes;
}

static int beside_init(beside *b, xfile *f, int counters, ovl_err *err) {
  b->ex = *f->ex;
  memset(&b->ex.stats, 0, sizeof b->ex.stats);
  memset(&b->ex.name_iids, 0, sizeof b->ex.name_iids);
  b->ex.names = NULL;
  b->ex.nnames = b->ex.names_cap = 0;
  b->ex.ntracks = 0;
  b->f = *f;
  b->f.ex = &b->ex;
  memset(&b->f.launch_started, 0, sizeof b->f.launch_started);
  memset(&b->f.launch_ended, 0, sizeof b->f.launch_ended);
  b->f.ws.progress = NULL;
  b->counters = counters;
  ovl_err_clear(&b->err);
  b->f.iid_of_string = calloc(f->ws.name_class_len ? (size_t)f->ws.name_class_len : 1, sizeof *b->f.iid_of_string);
  return b->f.iid_of_string ? OVL_OK : ovl_oom(err, "export");
}

static void beside_free(beside *b) {
  ovl_strmap_free(&b->ex.name_iids);
  for (size_t i = 0; i < b->ex.nnames; i++) free(b->ex.names[i]);
  free(b->ex.names);
  free(b->f.iid_of_string);
  ovl_idset_free(&b->f.launch_started);
  ovl_idset_free(&b->f.launch_ended);
}

static int passes_beside(xfile *f, xstreams *streams, const ovl_api_capture *held, ovl_err *err) {
  ovl_exporter *ex = f->ex;
  beside *b = calloc(2, sizeof *b);  /* 0: the host pass, 1: the counters */
  if (!b) return ovl_oom(err, "export");
  int rc = beside_init(&b[0], f, 0, err);
  if (!rc) rc = beside_init(&b[1], f, 1, err);
  ovl_export_sink children[2];
  if (!rc) rc = ovl_perfetto_sink_fork(&ex->sink, children, 2, err);
  if (!rc) {
    pthread_t thread[2];
    int started[2] = {0, 0};
    b[0].ex.sink = children[0];
    b[1].ex.sink = children[1];
    for (int k = 0; k < 2; k++) {
      started[k] = pthread_create(&thread[k], NULL, beside_main, &b[k]) == 0;
      if (!started[k]) ovl_perfetto_sink_child_done(&b[k].ex.sink, 1);  /* an empty child: its part here */
    }
    /* what a thread did not start for is drawn here, as on one thread */
    f->launch_from = started[0] ? &held->corrs : &f->launch_started;
    f->counters_apart = started[1];
    ex->stats.passes_beside += (uint64_t)(started[0] + started[1]);
    if (!started[0]) rc = xhost_export(f, err);
    f->ws.progress = "exporting (GPU work)";
    if (!rc) rc = xgpu_export(f, streams, err);
    children[0] = b[0].ex.sink;
    children[1] = b[1].ex.sink;
    int child_failed = ovl_perfetto_sink_join(&ex->sink, children, 2, rc != OVL_OK);
    for (int k = 0; k < 2; k++) {
      if (started[k]) pthread_join(thread[k], NULL);
      if (!rc && b[k].rc) {
        *err = b[k].err;
        rc = b[k].rc;
      }
      add_stats(&ex->stats, &b[k].ex.stats);
    }
    if (!rc && child_failed) rc = ovl_oom(err, "Perfetto export");
  }
  beside_free(&b[0]);
  beside_free(&b[1]);
  free(b);
  return rc;
}

int xfile_export(ovl_exporter *ex, const char *ovl_path, const char *user_path, const uint32_t *procs, size_t nprocs,
                 ovl_err *err) {
  xfile f;
  memset(&f, 0, sizeof f);
  f.ex = ex;
  f.path = user_path;
  f.reorder_window = ex->opt->reorder_window ? ex->opt->reorder_window : OVL_DEFAULT_REORDER_WINDOW;
  int rc = ovl_trace_open(ovl_path, &f.t, err);
  if (!rc) rc = ovl_work_stream_init(&f.ws, f.t, &ex->ctx->classifier, err);
  if (!rc) {
    f.recs = f.ws.recs;
    f.nrecs = f.ws.nrecs;
    f.procs = malloc(nprocs * sizeof *f.procs);
    f.devices = malloc(nprocs * sizeof *f.devices);
    f.iid_of_string = calloc(f.ws.name_class_len ? (size_t)f.ws.name_class_len : 1, sizeof *f.iid_of_string);
    if (!f.procs || !f.devices || !f.iid_of_string) rc = ovl_oom(err, "export");
  }
  if (!rc) {
    f.nprocs = nprocs;
    f.host_proc = procs[0];
    for (size_t i = 0; i < nprocs; i++) {
      f.procs[i] = procs[i];
      f.devices[i] = ex->procs[procs[i]].r->device;
    }
    rc = match_results(&f, err);
  }
  xstreams *streams = NULL;
  ovl_progress_file(user_path);
  f.ws.progress = "exporting (pre-pass: GPU work)";
  if (!rc) rc = xgpu_streams(&f, ovl_export_facts_find(ex->opt->facts, ovl_path), &streams, err);
  /* A call's flow starts only when some GPU work executes it; the host pass draws every call
  ** with a host interval, so which flows start is known before either pass. */
  for (size_t i = 0; !rc && i < f.ws.nlinks; i++)
    if (ovl_idset_has(f.gpu_corr, f.ws.link_corr[i])) f.coll_has_gpu[f.ws.link_coll[i]] = 1;
  for (size_t c = 0; !rc && c < f.nrecs; c++) {
    const ovl_coll_rec *r = &f.recs[c];
    f.coll_started[c] = f.coll_has_gpu[c] && xflow_ok(ex, (int64_t)c) && r->host_start != OVL_NONE &&
                        r->host_end != OVL_NONE && r->host_end >= r->host_start;
  }
  const ovl_api_capture *held =
      !rc && ex->opt->facts ? ovl_api_reader_find(&ex->opt->facts->api, ovl_trace_path(f.t)) : NULL;
  if (!rc && held && f.capture && ex->opt->format == OVL_EXPORT_PERFETTO) {
    rc = passes_beside(&f, streams, held, err);
  } else if (!rc) {
    f.launch_from = &f.launch_started;
    rc = xhost_export(&f, err);
    f.ws.progress = "exporting (GPU work)";
    if (!rc) rc = xgpu_export(&f, streams, err);
  }
  ovl_progress_file(NULL);
  xgpu_streams_free(streams);
  xfile_free(&f);
  if (rc) name_user_file(ovl_path, user_path, err);
  return rc;
}
