/*
** Writing an output file without ever destroying anything else (docs/cli.md, "Output files"):
** the data goes to a new temporary file beside the target (same directory, so the final
** rename is atomic), which is flushed to disk and renamed over the target only when
** everything was written. On any failure, or a signal, only the temporary file is removed:
** the previous target, if any, is left as it was. A target that exists and is not a regular
** file (a symbolic link, a device, a FIFO, a directory) is refused, never followed or removed.
*/
#ifndef OVL_SAFE_OUTPUT_H
#define OVL_SAFE_OUTPUT_H

#include "status.h"

typedef struct ovl_safe_out {
  char *target;  /* the file the user named */
  char *temp;    /* DIR/.NAME.ovl-XXXXXX: where the data goes until commit */
  int fd;        /* open on temp; -1 when none */
} ovl_safe_out;

/* Whether path may be written as an output: not empty, not ending in '/', and, when it
** exists, a regular file. Fails with "<path>: <why>". */
int ovl_output_check(const char *path, ovl_err *err);
/* 1 when a and b name the same existing file (same device and inode, links followed). */
int ovl_same_file(const char *a, const char *b);
/* Checks target and creates its temporary file (registered for removal on signals). */
int ovl_safe_out_begin(ovl_safe_out *o, const char *target, ovl_err *err);
/* Starts the disk writes of what the temporary file holds so far, without waiting for them
** (Linux: sync_file_range; elsewhere nothing), so that the commit's fsync finds little left
** to write: a writer of a large file calls it every few MiB. A hint: failures change nothing. */
void ovl_safe_out_writeback(const ovl_safe_out *o);
/* Flushes the temporary file to disk, renames it over the target and syncs the directory.
** On failure the temporary file is removed and the target left as it was. */
int ovl_safe_out_commit(ovl_safe_out *o, ovl_err *err);
/* Removes the temporary file (with any SQLite side files); the target is untouched. Safe on
** a committed or never-begun ovl_safe_out (zero it first). */
void ovl_safe_out_abort(ovl_safe_out *o);

#endif
