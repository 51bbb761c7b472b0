/* Foreign trace conversion: see trace_import.h. */
#include "trace_import.h"

#include "base/safe_output.h"
#include "store/trace_rows.h"
#include "store/trace_writer.h"
#include "hta_compat.h"
#include "kineto_import.h"
#include "nsys_import.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ovl_remove_trace_file(const char *path) {
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    char file[4096];
    snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
    struct stat sb;  /* only files: never a link or anything else put in their place */
    if (lstat(file, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(file);
  }
}

int ovl_import_processes(const char *in_path, ovl_trace_format format, int64_t **processes, size_t *n,
                         ovl_err *err) {
  *processes = NULL;
  *n = 0;
  if (format == OVL_FORMAT_NSYS_SQLITE) {
    int rc = ovl_nsys_processes(in_path, processes, n, err);
    if (rc || *n > 1) return rc;
    free(*processes);
  }
  if (!(*processes = malloc(sizeof **processes))) return ovl_oom(err, "processes");
  (*processes)[0] = OVL_NONE;
  *n = 1;
  return OVL_OK;
}

static atomic_ulong imports_done;
static atomic_long imports_running;  /* imports of this process under way (a job's run in parallel) */

unsigned long ovl_import_count(void) { return atomic_load(&imports_done); }

/* Writes the conversion into path, an empty file the caller created and owns. */
static int import_into(const char *in_path, ovl_trace_format format, int64_t process, const char *path,
                       const ovl_import_options *opt, ovl_import_stats *stats, ovl_err *err) {
  static const ovl_import_options defaults = {0};
  atomic_fetch_add(&imports_done, 1);
  ovl_import_stats local;
  if (!opt) opt = &defaults;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  if (format == OVL_FORMAT_OVL_SQLITE) return ovl_fail(err, OVL_EUSER, "%s: already an ovl trace", in_path);
  ovl_trace_writer *w = NULL;
  int rc = ovl_tw_open_scratch(&w, path, err);  /* both callers discard path on failure */
  /* Inserts overlap the parse on a CPU of their own; where parallel imports already take every
  ** CPU the thread would only take turns with them. */
  long running = atomic_fetch_add(&imports_running, 1) + 1, cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (!rc && 2 * running <= cpus) rc = ovl_tw_write_behind(w, err);
  if (rc) {
    atomic_fetch_sub(&imports_running, 1);
    if (w) ovl_tw_close(w, NULL);
    return rc;
  }
  if (format == OVL_FORMAT_KINETO_JSON) rc = ovl_kineto_import(in_path, w, path, opt, stats, err);
  else rc = ovl_nsys_import(in_path, process, w, stats, err);
  ovl_err close_err;
  int close_rc = ovl_tw_close(w, &close_err);
  atomic_fetch_sub(&imports_running, 1);
  if (!rc && close_rc) {
    rc = close_rc;
    *err = close_err;
  }
  if (!rc && opt->hta_compat && format == OVL_FORMAT_KINETO_JSON)
    rc = ovl_hta_drop_last_step(path, stats, err);
  return rc;
}

int ovl_import_trace(const char *in_path, ovl_trace_format format, int64_t process, const char *out_path,
                     const ovl_import_options *opt, ovl_import_stats *stats, ovl_err *err) {
  ovl_safe_out out;
  int rc = ovl_safe_out_begin(&out, out_path, err);
  if (rc) return rc;
  rc = import_into(in_path, format, process, out.temp, opt, stats, err);
  if (rc) {
    ovl_safe_out_abort(&out);
    return rc;
  }
  return ovl_safe_out_commit(&out, err);
}

int ovl_import_trace_temp(const char *in_path, ovl_trace_format format, int64_t process, const char *temp_path,
                          const ovl_import_options *opt, ovl_import_stats *stats, ovl_err *err) {
  int rc = import_into(in_path, format, process, temp_path, opt, stats, err);
  if (rc) ovl_remove_trace_file(temp_path);
  return rc;
}
