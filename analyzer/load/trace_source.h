/*
** Turns any TRACE file into ovl SQLite traces the analyzer can read: an ovl trace is used as
** it is; a foreign trace (Kineto JSON, Nsight Systems SQLite) is converted by its importer
** (trace_import.h) into temporary ovl traces, one per traced process (an Nsight Systems
** export may hold several), in $TMPDIR (default /tmp), deleted again by
** ovl_trace_source_close. Every command that reads traces goes through here, so each
** format is supported everywhere at once.
*/
#ifndef OVL_TRACE_SOURCE_H
#define OVL_TRACE_SOURCE_H

#include "base/status.h"
#include "import_options.h"
#include "trace_detect.h"

typedef struct ovl_trace_source {
  char *path;              /* the file the user named */
  const char *read_path;   /* what is read: path, or its copy when path reads only once (input_spool.h) */
  char *ovl_path;          /* the ovl trace to analyse: path itself, or a temporary file */
  char **ovl_paths;        /* all of them, one per process: ovl_paths[0] == ovl_path */
  size_t n_ovl_paths;
  int is_temporary;        /* the ovl_paths are ours to delete */
  long skipped;            /* events the conversion skipped (no usable times) */
  ovl_trace_format format;
  ovl_import_options opt;  /* what the conversions were made with (defaults for ovl traces) */
} ovl_trace_source;

/* Resolves `path` with the default import options; fails with "<path>: <problem>" when it
** is not a readable trace. */
int ovl_trace_source_open(const char *path, ovl_trace_source *src, ovl_err *err);
/* The same with import options (NULL: defaults). */
int ovl_trace_source_open_with(const char *path, const ovl_import_options *opt, ovl_trace_source *src,
                               ovl_err *err);
/* Makes an error about a temporary conversion name the user's file instead. */
void ovl_trace_source_explain(const ovl_trace_source *src, ovl_err *err);
/* Deletes the temporary conversions and frees the names. */
void ovl_trace_source_close(ovl_trace_source *src);

#endif
