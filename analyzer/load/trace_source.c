/* Trace sources: see trace_source.h. */
#include "trace_source.h"

#include "base/temp_files.h"
#include "input_spool.h"
#include "trace_import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *temp_dir(void) {
  const char *dir = getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

/* Creates an empty, uniquely named file in $TMPDIR (or /tmp) for a conversion, registered
** for removal on signals. */
static int make_temp_path(char **out, ovl_err *err) {
  const char *dir = temp_dir();
  size_t n = strlen(dir) + 32;
  char *path = malloc(n);
  if (!path) return ovl_oom(err, "temporary file name");
  snprintf(path, n, "%s/ovl-import-XXXXXX", dir);
  int fd = ovl_temp_mkstemp(path);
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

/* An error about the temporary conversion (TMPDIR full, say) names that file, which is gone
** by the time the user reads it: name the input and the directory instead. */
static void explain_conversion(const ovl_trace_source *src, const char *temp, ovl_err *err) {
  const char *at = strstr(err->msg, temp);
  if (!at) return;
  const char *rest = at + strlen(temp);
  while (*rest == ':' || *rest == ' ') rest++;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%s: cannot convert it into a temporary trace in %s (TMPDIR): %s", src->path,
           temp_dir(), rest);
  memcpy(err->msg, msg, sizeof msg);
}

/* Converts every process of the foreign trace into its own temporary ovl trace. */
static int convert(ovl_trace_source *src, const ovl_import_options *opt, ovl_err *err) {
  int64_t *processes = NULL;
  size_t n = 0;
  int rc = ovl_import_processes(src->read_path, src->format, &processes, &n, err);
  if (!rc && !(src->ovl_paths = calloc(n, sizeof *src->ovl_paths))) rc = ovl_oom(err, "trace source");
  src->is_temporary = 1;
  for (size_t i = 0; !rc && i < n; i++) {
    rc = make_temp_path(&src->ovl_paths[i], err);
    if (!rc) src->n_ovl_paths++;
    ovl_import_stats stats;
    if (!rc) rc = ovl_import_trace_temp(src->read_path, src->format, processes[i], src->ovl_paths[i], opt, &stats, err);
    if (!rc) src->skipped += stats.skipped;
    if (rc && i < src->n_ovl_paths) explain_conversion(src, src->ovl_paths[i], err);
  }
  free(processes);
  return rc;
}

int ovl_trace_source_open_with(const char *path, const ovl_import_options *opt, ovl_trace_source *src,
                               ovl_err *err) {
  memset(src, 0, sizeof *src);
  if (opt) src->opt = *opt;
  const char *readable = path;
  int rc = ovl_input_resolve(path, &readable, err);
  if (!rc) rc = ovl_detect_format(readable, &src->format, err);
  if (rc) {
    ovl_input_explain(err);
    return rc;
  }
  src->read_path = readable;
  if (!(src->path = strdup(path))) return ovl_oom(err, "trace source");
  if (src->format == OVL_FORMAT_OVL_SQLITE) {
    if (!(src->ovl_paths = calloc(1, sizeof *src->ovl_paths)) || !(src->ovl_paths[0] = strdup(readable)))
      rc = ovl_oom(err, "trace source");
    else src->n_ovl_paths = 1;
  } else {
    rc = convert(src, opt, err);
  }
  if (!rc) src->ovl_path = src->ovl_paths[0];
  if (rc) {
    ovl_input_explain(err);
    ovl_trace_source_close(src);
  }
  return rc;
}

void ovl_trace_source_explain(const ovl_trace_source *src, ovl_err *err) {
  ovl_input_explain(err);
  for (size_t i = 0; src->is_temporary && src->path && i < src->n_ovl_paths; i++) {
    const char *at = strstr(err->msg, src->ovl_paths[i]);
    if (!at) continue;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - err->msg), err->msg, src->path, at + strlen(src->ovl_paths[i]));
    memcpy(err->msg, msg, sizeof msg);
    return;
  }
}

void ovl_trace_source_close(ovl_trace_source *src) {
  for (size_t i = 0; i < src->n_ovl_paths; i++) {
    if (src->is_temporary) ovl_temp_release(src->ovl_paths[i], 1);
    free(src->ovl_paths[i]);
  }
  free(src->ovl_paths);
  free(src->path);
  memset(src, 0, sizeof *src);
}
