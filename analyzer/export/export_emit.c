/* Names, tracks and lane groups of the timeline export: see export_internal.h. */
#include "export_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

uint32_t xname(ovl_exporter *ex, const char *name) {
  int64_t iid;
  if (!name) name = "";
  if (ovl_strmap_get(&ex->name_iids, name, &iid)) return (uint32_t)iid;
  if (ex->nnames == ex->names_cap) {
    size_t cap = ex->names_cap ? ex->names_cap * 2 : 256;
    char **grown = realloc(ex->names, cap * sizeof *grown);
    if (!grown) return 0;
    ex->names = grown;
    ex->names_cap = cap;
  }
  char *copy = strdup(name);
  iid = (int64_t)ex->nnames + 1;
  if (!copy || iid > UINT32_MAX || ovl_strmap_put(&ex->name_iids, name, iid)) {
    free(copy);
    return 0;
  }
  ex->names[ex->nnames++] = copy;
  return (uint32_t)iid;
}


int xtrack(ovl_exporter *ex, uint32_t proc, ovl_xtrack_kind kind, const char *name, int32_t order, int64_t chrome_tid,
           uint32_t *id, ovl_err *err) {
  ovl_xtrack t = {ex->ntracks, proc, kind, name, order, chrome_tid};
  int rc = ex->sink.track(ex->sink.self, &t, err);
  if (rc) return rc;
  *id = ex->ntracks++;
  if (kind == OVL_XTRACK_SLICES) ex->stats.lanes++;
  return OVL_OK;
}

int xgroup_init(xgroup *g, ovl_lane_mode mode, uint32_t proc, const char *name, int32_t order, int64_t chrome_tid) {
  memset(g, 0, sizeof *g);
  ovl_lanes_init(&g->lanes, mode);
  g->proc = proc;
  g->order = order;
  g->chrome_tid = chrome_tid;
  g->name = strdup(name);
  return g->name ? 0 : -1;
}

int xgroup_slice(ovl_exporter *ex, xgroup *g, const ovl_xslice *sl, int instant, ovl_err *err) {
  ovl_xslice s = *sl;
  s.start = xtime(ex, g->proc, sl->start);
  s.end = instant ? s.start : xtime(ex, g->proc, sl->end);
  size_t lane;
  int is_new;
  if (ovl_lanes_place(&g->lanes, s.start, s.end, &lane, &is_new)) return ovl_oom(err, "lanes");
  if (is_new) {
    uint32_t id;
    int rc = xtrack(ex, g->proc, OVL_XTRACK_SLICES, g->name, g->order + (int32_t)lane, lane == 0 ? g->chrome_tid : -1,
                    &id, err);
    if (rc) return rc;
    g->lanes.lane[lane].track = id;
  }
  uint32_t track = g->lanes.lane[lane].track;
  if (instant) {
    ex->stats.events++;
    return ex->sink.instant(ex->sink.self, track, &s, err);
  }
  ex->stats.events += 2;
  ex->stats.flows += s.nflows_out;
  return ex->sink.slice(ex->sink.self, track, &s, err);
}

int xgroup_close(ovl_exporter *ex, xgroup *g, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < g->lanes.n; i++) rc = ex->sink.close_track(ex->sink.self, g->lanes.lane[i].track, err);
  xgroup_free(g);
  return rc;
}

void xgroup_free(xgroup *g) {
  ovl_lanes_free(&g->lanes);
  free(g->name);
  g->name = NULL;
}

int xcounter(ovl_exporter *ex, uint32_t proc, uint32_t track, int64_t t, int64_t value, ovl_err *err) {
  ex->stats.events++;
  ex->stats.counter_values++;
  return ex->sink.counter(ex->sink.self, track, xtime(ex, proc, t), value, err);
}
