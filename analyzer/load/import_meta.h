/*
** The meta rows an importer writes (schema/ovl.sql, docs/import.md): the keys every ovl
** trace needs, with empty values where the foreign trace does not say, plus provenance.
*/
#ifndef OVL_IMPORT_META_H
#define OVL_IMPORT_META_H

#include "base/status.h"
#include "store/trace_writer.h"

typedef struct ovl_import_meta {
  int64_t rank, world_size, pid;   /* OVL_NONE: written as "" */
  int64_t realtime_offset_ns;      /* OVL_NONE: not written */
  const char *hostname;            /* NULL: "" */
  const char *clock;
  const char *format, *source;     /* import_format, import_source */
  const char *mode;                /* import_mode; NULL: not written */
  const char *nccl_version, *cuda_version;  /* NULL or "": not written */
  long skipped_events;
} ovl_import_meta;

int ovl_import_write_meta(ovl_trace_writer *w, const ovl_import_meta *m, ovl_err *err);

#endif
