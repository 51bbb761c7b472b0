/*
** Export of one trace file: loads what is small (collectives, their launch links), matches
** collectives to their analysis results, then runs the passes: a pre-pass over GPU work
** (which correlation ids have GPU work; each stream's role), the host pass (flow starts),
** and the GPU pass (flow ends). Flows are only drawn when both ends exist.
*/
#include "export_internal.h"

#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernel name caches cover string ids below this; larger ids are looked up every time. */
#define STRING_CACHE_LIMIT ((int64_t)1 << 24)

typedef struct link_pair {
  int64_t correlation;
  uint32_t coll;
} link_pair;

static int cmp_link(const void *pa, const void *pb) {
  const link_pair *a = pa, *b = pb;
  if (a->correlation != b->correlation) return a->correlation < b->correlation ? -1 : 1;
  return (a->coll > b->coll) - (a->coll < b->coll);
}

static int load_links(xfile *f, ovl_err *err) {
  int rc = ovl_trace_read_collectives(f->t, &f->recs, &f->nrecs, err);
  if (rc) return rc;
  ovl_i64map by_id = {0};
  for (size_t i = 0; !rc && i < f->nrecs; i++)
    if (ovl_i64map_put(&by_id, f->recs[i].id, (int64_t)i)) rc = ovl_oom(err, "collectives");
  ovl_launch_rec *links = NULL;
  size_t nlinks = 0;
  if (!rc) rc = ovl_trace_read_launches(f->t, &links, &nlinks, err);
  link_pair *pairs = rc ? NULL : malloc((nlinks ? nlinks : 1) * sizeof *pairs);
  if (!rc && !pairs) rc = ovl_oom(err, "collective links");
  size_t n = 0;
  for (size_t i = 0; !rc && i < nlinks; i++) {
    int64_t idx;
    if (links[i].correlation != OVL_NONE && ovl_i64map_get(&by_id, links[i].collective, &idx))
      pairs[n++] = (link_pair){links[i].correlation, (uint32_t)idx};
  }
  free(links);
  if (!rc) {
    ovl_qsort(pairs, n, sizeof *pairs, cmp_link);
    f->link_corr = malloc((n ? n : 1) * sizeof *f->link_corr);
    f->link_coll = malloc((n ? n : 1) * sizeof *f->link_coll);
    if (!f->link_corr || !f->link_coll) rc = ovl_oom(err, "collective links");
    for (size_t i = 0; !rc && i < n; i++) {
      f->link_corr[i] = pairs[i].correlation;
      f->link_coll[i] = pairs[i].coll;
    }
    f->nlinks = n;
  }
  free(pairs);

  /* Each row's analysis result (collectives outside every step have none). */
  size_t nrecs = f->nrecs ? f->nrecs : 1;
  f->coll_result = rc ? NULL : calloc(nrecs, sizeof *f->coll_result);
  f->coll_has_gpu = rc ? NULL : calloc(nrecs, 1);
  f->coll_started = rc ? NULL : calloc(nrecs, 1);
  f->coll_ended = rc ? NULL : calloc(nrecs, 1);
  f->coll_running = rc ? NULL : calloc(nrecs, sizeof *f->coll_running);
  if (!rc && (!f->coll_result || !f->coll_has_gpu || !f->coll_started || !f->coll_ended || !f->coll_running))
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

size_t xfile_links(const xfile *f, int64_t correlation, size_t *first) {
  size_t lo = 0, hi = f->nlinks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->link_corr[mid] < correlation) lo = mid + 1;
    else hi = mid;
  }
  *first = lo;
  size_t end = lo;
  while (end < f->nlinks && f->link_corr[end] == correlation) end++;
  return end - lo;
}

uint32_t xfile_proc_of(const xfile *f, int64_t device) {
  for (size_t i = 0; i < f->nprocs; i++)
    if (f->devices[i] == device) return f->procs[i];
  return UINT32_MAX;
}

uint32_t xfile_string_iid(xfile *f, int64_t name) {
  const char *text = ovl_trace_string(f->t, name);
  if (name < 0 || name >= f->string_limit) return xname(f->ex, text ? text : "kernel");
  if (!f->iid_of_string[name]) f->iid_of_string[name] = xname(f->ex, text ? text : "kernel");
  return f->iid_of_string[name];
}

ovl_work_class xfile_kernel_class(xfile *f, int64_t name) {
  if (name < 0 || name >= f->string_limit)
    return ovl_classify_kernel_name(&f->ex->ctx->classifier, ovl_trace_string(f->t, name));
  if (f->class_of_string[name] < 0)
    f->class_of_string[name] = (signed char)ovl_classify_kernel_name(&f->ex->ctx->classifier, ovl_trace_string(f->t, name));
  return (ovl_work_class)f->class_of_string[name];
}

static void xfile_free(xfile *f) {
  free(f->procs);
  free(f->devices);
  free(f->recs);
  free(f->link_corr);
  free(f->link_coll);
  free(f->coll_result);
  free(f->coll_has_gpu);
  free(f->coll_started);
  free(f->coll_ended);
  free(f->coll_running);
  free(f->iid_of_string);
  free(f->class_of_string);
  ovl_idset_free(&f->gpu_corr);
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
  if (!rc) {
    f.procs = malloc(nprocs * sizeof *f.procs);
    f.devices = malloc(nprocs * sizeof *f.devices);
    int64_t limit = ovl_trace_string_limit(f.t);
    f.string_limit = limit < STRING_CACHE_LIMIT ? limit : STRING_CACHE_LIMIT;
    size_t ns = f.string_limit > 0 ? (size_t)f.string_limit : 1;
    f.iid_of_string = calloc(ns, sizeof *f.iid_of_string);
    f.class_of_string = malloc(ns);
    if (!f.procs || !f.devices || !f.iid_of_string || !f.class_of_string) rc = ovl_oom(err, "export");
  }
  if (!rc) {
    memset(f.class_of_string, -1, f.string_limit > 0 ? (size_t)f.string_limit : 1);
    f.nprocs = nprocs;
    f.host_proc = procs[0];
    for (size_t i = 0; i < nprocs; i++) {
      f.procs[i] = procs[i];
      f.devices[i] = ex->procs[procs[i]].r->device;
    }
    rc = load_links(&f, err);
  }
  xstreams *streams = NULL;
  if (!rc) rc = xgpu_prepass(&f, &streams, err);
  /* A call's flow starts only when some GPU work executes it. */
  for (size_t i = 0; !rc && i < f.nlinks; i++)
    if (ovl_idset_has(&f.gpu_corr, f.link_corr[i])) f.coll_has_gpu[f.link_coll[i]] = 1;
  if (!rc) rc = xhost_export(&f, err);
  if (!rc) rc = xgpu_export(&f, streams, err);
  xgpu_streams_free(streams);
  xfile_free(&f);
  if (rc) name_user_file(ovl_path, user_path, err);
  return rc;
}
