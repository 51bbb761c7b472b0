/* Trace sources: see trace_source.h. */
#include "trace_source.h"

#include "trace_import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Creates an empty, uniquely named file in $TMPDIR (or /tmp) for a conversion. */
static int make_temp_path(char **out, ovl_err *err) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  size_t n = strlen(dir) + 32;
  char *path = malloc(n);
  if (!path) return ovl_oom(err, "temporary file name");
  snprintf(path, n, "%s/ovl-import-XXXXXX", dir);
  int fd = mkstemp(path);
  if (fd < 0) {
    int rc = ovl_fail(err, OVL_EUSER, "%s: cannot create a temporary trace: %s", dir, strerror(errno));
    free(path);
    return rc;
  }
  close(fd);
  *out = path;
  return OVL_OK;
}

int ovl_trace_source_open(const char *path, ovl_trace_source *src, ovl_err *err) {
  return ovl_trace_source_open_with(path, NULL, src, err);
}

int ovl_trace_source_open_with(const char *path, const ovl_import_options *opt, ovl_trace_source *src,
                               ovl_err *err) {
  memset(src, 0, sizeof *src);
  int rc = ovl_detect_format(path, &src->format, err);
  if (rc) return rc;
  if (!(src->path = strdup(path))) return ovl_oom(err, "trace source");
  if (src->format == OVL_FORMAT_OVL_SQLITE) {
    if (!(src->ovl_path = strdup(path))) rc = ovl_oom(err, "trace source");
  } else if (!(rc = make_temp_path(&src->ovl_path, err))) {
    src->is_temporary = 1;
    rc = ovl_import_trace(path, src->format, src->ovl_path, opt, NULL, err);
  }
  if (rc) ovl_trace_source_close(src);
  return rc;
}

void ovl_trace_source_explain(const ovl_trace_source *src, ovl_err *err) {
  if (!src->is_temporary || !src->ovl_path || !src->path) return;
  const char *at = strstr(err->msg, src->ovl_path);
  if (!at) return;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - err->msg), err->msg, src->path, at + strlen(src->ovl_path));
  memcpy(err->msg, msg, sizeof msg);
}

void ovl_trace_source_close(ovl_trace_source *src) {
  if (src->is_temporary && src->ovl_path) ovl_remove_trace_file(src->ovl_path);
  free(src->path);
  free(src->ovl_path);
  memset(src, 0, sizeof *src);
}
