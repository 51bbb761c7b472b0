/*
** Expands the TRACE arguments of a command into a list of files: a file stands for
** itself; a directory stands for the trace files directly inside it (ovl/Nsight SQLite:
** *.sqlite, *.db; Kineto: *.json, *.json.gz) whose content is a trace (ovl_probe_trace), in
** name order. The other files of a directory are listed as skipped, for the caller to name:
** a stray config.json beside the traces is left out, not fatal. A file named on the command
** line stands for itself whatever it holds (reading it says what is wrong).
*/
#ifndef OVL_TRACE_FILES_H
#define OVL_TRACE_FILES_H

#include "base/status.h"

#include <stddef.h>

typedef struct ovl_file_list {
  char **paths;
  size_t len;
  char **skipped;          /* files of the directories given that are not traces by name */
  size_t nskipped;
  char **not_traces;       /* named like traces but holding something else: "PATH (what)" */
  size_t nnot_traces;
} ovl_file_list;

/* One line naming the skipped files of `list` (at most a few, then a count; those not traces by
** content with what they hold), with the export command when there are Nsight Systems reports
** among them, into buf; "" when none. */
void ovl_file_list_skipped_text(const ovl_file_list *list, char *buf, size_t len);

/* On failure (a missing file, a directory without traces, no memory): *err says why, out
** untouched. */
int ovl_expand_trace_args(char *const *args, size_t nargs, ovl_file_list *out, ovl_err *err);
void ovl_file_list_free(ovl_file_list *list);

#endif
