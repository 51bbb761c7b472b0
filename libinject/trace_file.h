/*
** The trace file on disk, as the writer thread creates it (docs/capture.md):
**   * a name no other process or exec'ed image can have, <host>-<pid>-<8 hex random>.sqlite,
**     led by rank<R>- when a launcher set the rank (config.h: ovl_launcher_rank), created with
**     O_EXCL: an existing file is never replaced or removed;
**   * every descriptor libovl's SQLite opens is CLOEXEC and never 0, 1 or 2, so a program
**     that closed its stdio gets its descriptor numbers unchanged;
**   * directories of any length: SQLite's Unix VFS refuses full names over 512 bytes, so a
**     longer trace is opened by a short relative name from the writer thread's own working
**     directory (unshare(CLONE_FS): the program's working directory is not touched).
** Call these on the writer thread only, which alone uses libovl's SQLite.
*/
#ifndef OVL_INJECT_TRACE_FILE_H
#define OVL_INJECT_TRACE_FILE_H

#include <limits.h>

typedef struct ovl_trace_file {
  char name[PATH_MAX];      /* what SQLite opens: absolute, or relative to the writer's cwd */
  char shown[2 * PATH_MAX]; /* the full path, for messages */
  int fd;                   /* the file as created (CLOEXEC, above stdio), kept open to reserve
                            ** disk space: close it only after SQLite (closing any descriptor of
                            ** a file drops the process's POSIX locks on it); -1 when closed */
  int pad;                  /* no fallocate here: space is held by writing into each block */
} ovl_trace_file;

/* Sets libovl's SQLite up (single thread, descriptors above stdio, relative names kept). */
void ovl_trace_sqlite_setup(void);
/* Creates dir (and parents) and an empty, new trace file in it. Returns 0, or -1 after one
** warning (the program runs without capture). */
int ovl_trace_file_create(const char *dir, ovl_trace_file *f);
/* Removes the trace and SQLite's side files, after a failed start: only ever files that
** ovl_trace_file_create made. Closes f->fd. */
void ovl_trace_file_remove(ovl_trace_file *f);

/* Disk space for the database file up to `bytes` (its size once the next transaction is
** committed and moved from the write-ahead log into it), held without changing the file's
** size where the file system has fallocate, else by writing past the database's end.
** Returns 0, or an errno: ENOSPC (or EDQUOT, EFBIG) when the disk is full, EOPNOTSUPP when
** space cannot be held at all. */
int ovl_trace_file_reserve(ovl_trace_file *f, long long bytes);
/* After SQLite closed it: gives back the space held beyond the file's end, closes f->fd. */
void ovl_trace_file_release(ovl_trace_file *f);

#endif
