/* Outputs written through a temporary file and renamed into place: see safe_output.h. */
#define _GNU_SOURCE  /* sync_file_range */
#include "safe_output.h"

#include "temp_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ovl_output_check(const char *path, ovl_err *err) {
  if (!path || !*path) return ovl_fail(err, OVL_EUSER, "'': empty output file name");
  size_t n = strlen(path);
  if (path[n - 1] == '/') return ovl_fail(err, OVL_EUSER, "%s: the output names a directory", path);
  struct stat sb;
  if (lstat(path, &sb) != 0) {
    if (errno == ENOENT) return OVL_OK;
    return ovl_fail(err, OVL_EUSER, "%s: cannot write: %s", path, strerror(errno));
  }
  if (S_ISREG(sb.st_mode)) return OVL_OK;
  const char *what = S_ISLNK(sb.st_mode)   ? "a symbolic link"
                     : S_ISDIR(sb.st_mode) ? "a directory"
                     : S_ISFIFO(sb.st_mode) ? "a FIFO"
                     : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                                                                  : "not a regular file";
  return ovl_fail(err, OVL_EUSER, "%s: the output exists and is %s: refusing to replace it", path, what);
}

int ovl_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The mode a newly created file gets: 0666 less the umask (mkstemp uses 0600). */
static mode_t new_file_mode(void) {
  mode_t mask = umask(022);
  umask(mask);
  return 0666 & ~mask;
}

int ovl_safe_out_begin(ovl_safe_out *o, const char *target, ovl_err *err) {
  memset(o, 0, sizeof *o);
  o->fd = -1;
  int rc = ovl_output_check(target, err);
  if (rc) return rc;
  const char *slash = strrchr(target, '/');
  size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
  size_t cap = strlen(target) + 32;
  o->target = strdup(target);
  o->temp = malloc(cap);
  if (!o->target || !o->temp) {  /* nothing created yet */
    free(o->target);
    free(o->temp);
    memset(o, 0, sizeof *o);
    o->fd = -1;
    return ovl_oom(err, "output name");
  }
  /* Hidden, and unique: mkstemp creates it with O_EXCL, so nothing existing is followed. */
  snprintf(o->temp, cap, "%.*s.%s.ovl-XXXXXX", (int)dirlen, target, target + dirlen);
  o->fd = ovl_temp_mkstemp(o->temp);
  if (o->fd < 0) {
    int e = errno;
    free(o->temp);
    o->temp = NULL;
    ovl_safe_out_abort(o);
    return ovl_fail(err, OVL_EUSER, "%s: cannot write: %s", target, strerror(e));
  }
  /* The replacement keeps the permissions of the file it replaces; a new file gets the usual
  ** ones. Not fatal when it fails: the file then stays private. */
  struct stat sb;
  mode_t mode = lstat(target, &sb) == 0 && S_ISREG(sb.st_mode) ? (sb.st_mode & 07777) : new_file_mode();
  if (fchmod(o->fd, mode) != 0) { /* see above */ }
  return OVL_OK;
}

void ovl_safe_out_writeback(const ovl_safe_out *o) {
#ifdef SYNC_FILE_RANGE_WRITE
  if (o->fd >= 0) sync_file_range(o->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)o;
#endif
}

int ovl_safe_out_commit(ovl_safe_out *o, ovl_err *err) {
  if (!o->temp) return ovl_fail(err, OVL_EINTERNAL, "output: nothing to commit");
  int rc = OVL_OK;
  if (fsync(o->fd) != 0) rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", o->target, strerror(errno));
  if (close(o->fd) != 0 && !rc) rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", o->target, strerror(errno));
  o->fd = -1;
  /* Checked again: something other than a regular file may have appeared meanwhile. */
  if (!rc) rc = ovl_output_check(o->target, err);
  if (!rc && rename(o->temp, o->target) != 0)
    rc = ovl_fail(err, OVL_EUSER, "%s: cannot write: %s", o->target, strerror(errno));
  if (rc) {
    ovl_safe_out_abort(o);
    return rc;
  }
  ovl_temp_release(o->temp, 0);
  /* The rename itself must reach the disk too. */
  const char *slash = strrchr(o->target, '/');
  char *dir = slash ? strndup(o->target, (size_t)(slash - o->target) + 1) : strdup(".");
  int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  free(dir);
  free(o->temp);
  free(o->target);
  memset(o, 0, sizeof *o);
  o->fd = -1;
  return OVL_OK;
}

void ovl_safe_out_abort(ovl_safe_out *o) {
  if (o->temp && o->fd >= 0) close(o->fd);
  if (o->temp) ovl_temp_release(o->temp, 1);
  free(o->temp);
  free(o->target);
  memset(o, 0, sizeof *o);
  o->fd = -1;
}
