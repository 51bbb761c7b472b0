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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Matches each collectives row to its analysis result (rows outside every step have none). */
static int match_results(xfile *f, ovl_err *err) {
  ovl_i64map by_id = {0};
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < f->nrecs; i++)
    if (ovl_i64map_put(&by_id, f->recs[i].id, (int64_t)i)) rc = ovl_oom(err, "collectives");
  size_t nrecs = f->nrecs ? f->nrecs : 1;
  f->coll_result = rc ? NULL : calloc(nrecs, sizeof *f->coll_result);
  f->coll_has_gpu = rc ? NULL : calloc(nrecs, 1);
  f->coll_started = rc ? NULL : calloc(nrecs, 1);
  f->coll_ended = rc ? NULL : calloc(nrecs, 1);
  f->coll_state.exposed = rc ? NULL : calloc(nrecs, sizeof *f->coll_state.exposed);
  f->coll_state.running = rc ? NULL : calloc(nrecs, sizeof *f->coll_state.running);
  f->coll_state.len = f->nrecs;
  if (!rc && (!f->coll_result || !f->coll_has_gpu || !f->coll_started || !f->coll_ended || !f->coll_state.exposed ||
              !f->coll_state.running))
    rc = ovl_oom(err, "collectives");
  for (size_t p = 0; !rc && p < f->nprocs; p++) {
    const ovl_rank_result *r = f->ex->procs[f->procs[p]].r;
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].ncolls; i++) {
        int64_t idx;
        const ovl_coll_result *c = &r->steps[s].colls[i];
        if (c->id != OVL_NONE && ovl_i64map_get(&by_id, c->id, &idx)) f->coll_result[idx] = c;
      }
  }
  ovl_i64map_free(&by_id);
  return rc;
}

uint32_t xfile_proc_of(const xfile *f, int64_t device) {
  for (size_t i = 0; i < f->nprocs; i++)
    if (f->devices[i] == device) return f->procs[i];
  return UINT32_MAX;
}

uint32_t xfile_string_iid(xfile *f, int64_t name) {
  int cached = name >= 0 && name < f->ws.name_class_len;
  if (cached && f->iid_of_string[name]) return f->iid_of_string[name];  /* per kernel and API call: no lookup */
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
  /* A call's flow starts only when some GPU work executes it. */
  for (size_t i = 0; !rc && i < f.ws.nlinks; i++)
    if (ovl_idset_has(f.gpu_corr, f.ws.link_corr[i])) f.coll_has_gpu[f.ws.link_coll[i]] = 1;
  if (!rc) rc = xhost_export(&f, err);
  f.ws.progress = "exporting (GPU work)";
  if (!rc) rc = xgpu_export(&f, streams, err);
  ovl_progress_file(NULL);
  xgpu_streams_free(streams);
  xfile_free(&f);
  if (rc) name_user_file(ovl_path, user_path, err);
  return rc;
}
