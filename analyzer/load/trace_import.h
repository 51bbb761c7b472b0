/*
** Conversion of a foreign trace (Kineto JSON, Nsight Systems SQLite) into an ovl trace
** file: the single entry point behind `ovl import` and the temporary conversions of
** trace_source.h. docs/import.md documents the mappings.
*/
#ifndef OVL_TRACE_IMPORT_H
#define OVL_TRACE_IMPORT_H

#include "base/status.h"
#include "import_options.h"
#include "trace_detect.h"

#include <stddef.h>
#include <stdint.h>

/* The processes of a foreign trace, each of which becomes one ovl trace: a Kineto file is one
** process (*n = 1, (*processes)[0] = OVL_NONE); an Nsight Systems export holds one or more
** (their pids, or OVL_NONE alone when it has one or none). Caller frees *processes. */
int ovl_import_processes(const char *in_path, ovl_trace_format format, int64_t **processes, size_t *n,
                         ovl_err *err);

/* Writes the ovl trace `out_path` from `in_path`, whose format is `format` (not
** OVL_FORMAT_OVL_SQLITE): the rows of `process` (from ovl_import_processes; OVL_NONE for
** all). opt may be NULL (defaults), stats may be NULL. Errors name the input ("<in>:
** <problem>") unless the output cannot be written. The output rule of base/safe_output.h:
** written beside out_path and renamed over it on success; on failure out_path is as before. */
int ovl_import_trace(const char *in_path, ovl_trace_format format, int64_t process, const char *out_path,
                     const ovl_import_options *opt, ovl_import_stats *stats, ovl_err *err);

/* Imports started by ovl_import_trace / ovl_import_trace_temp in this process so far (each
** reads its foreign file once): lets a command show, and tests check, that every input is
** imported once. */
unsigned long ovl_import_count(void);

/* The same into temp_path, an empty temporary file the caller created (trace_source.c's
** conversions in $TMPDIR): written in place, removed on failure. */
int ovl_import_trace_temp(const char *in_path, ovl_trace_format format, int64_t process, const char *temp_path,
                          const ovl_import_options *opt, ovl_import_stats *stats, ovl_err *err);

/* Removes an ovl trace file this process created and the journal files SQLite may have left
** beside it (regular files only). */
void ovl_remove_trace_file(const char *path);

#endif
