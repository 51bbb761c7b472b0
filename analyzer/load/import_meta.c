/* Meta rows of imported traces: see import_meta.h. */
#include "import_meta.h"


/* An integer key, "" when unknown (the schema's convention for rank and world_size). */
static int meta_int_or_empty(ovl_trace_writer *w, const char *key, int64_t v, ovl_err *err) {
  if (v == OVL_NONE) return ovl_tw_meta(w, key, "", err);
  return ovl_tw_meta_int(w, key, v, err);
}

static int meta_if_known(ovl_trace_writer *w, const char *key, const char *v, ovl_err *err) {
  return v && v[0] ? ovl_tw_meta(w, key, v, err) : OVL_OK;
}

int ovl_import_write_meta(ovl_trace_writer *w, const ovl_import_meta *m, ovl_err *err) {
  int rc = meta_int_or_empty(w, "rank", m->rank, err);
  if (!rc) rc = meta_int_or_empty(w, "world_size", m->world_size, err);
  if (!rc) rc = meta_int_or_empty(w, "pid", m->pid, err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", m->hostname ? m->hostname : "", err);
  if (!rc) rc = ovl_tw_meta(w, "clock", m->clock, err);
  if (!rc && m->realtime_offset_ns != OVL_NONE) rc = ovl_tw_meta_int(w, "realtime_offset_ns", m->realtime_offset_ns, err);
  if (!rc) rc = meta_if_known(w, "nccl_version", m->nccl_version, err);
  if (!rc) rc = meta_if_known(w, "cuda_version", m->cuda_version, err);
  if (!rc) rc = ovl_tw_meta(w, "import_format", m->format, err);
  if (!rc) rc = ovl_tw_meta(w, "import_source", m->source, err);
  if (!rc) rc = meta_if_known(w, "import_mode", m->mode, err);
  if (!rc) rc = ovl_tw_meta_int(w, "import_skipped_events", m->skipped_events, err);
  return rc;
}
