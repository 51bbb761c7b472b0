/* Trace sources: see trace_source.h. */
#include "trace_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ovl_trace_source_open(const char *path, ovl_trace_source *src, ovl_err *err) {
  memset(src, 0, sizeof *src);
  int rc = ovl_detect_format(path, &src->format, err);
  if (rc) return rc;
  switch (src->format) {
    case OVL_FORMAT_OVL_SQLITE:
      src->path = strdup(path);
      src->ovl_path = strdup(path);
      if (!src->path || !src->ovl_path) {
        ovl_trace_source_close(src);
        return ovl_oom(err, "trace source");
      }
      return OVL_OK;
    case OVL_FORMAT_KINETO_JSON:
      return ovl_fail(err, OVL_EUSER, "%s: Kineto JSON traces cannot be read by this version of ovl", path);
    case OVL_FORMAT_NSYS_SQLITE:
      return ovl_fail(err, OVL_EUSER, "%s: Nsight Systems exports cannot be read by this version of ovl", path);
  }
  return ovl_fail(err, OVL_EUSER, "%s: unknown trace format", path);
}

void ovl_trace_source_close(ovl_trace_source *src) {
  if (src->is_temporary && src->ovl_path) remove(src->ovl_path);
  free(src->path);
  free(src->ovl_path);
  memset(src, 0, sizeof *src);
}
