/* Creating the trace file: see trace_file.h. */
#define _GNU_SOURCE
#include "trace_file.h"

#include "base/paths.h"
#include "clock.h"
#include "config.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define SQLITE_MAX_NAME 511  /* the Unix VFS's mxPathname (512) less the terminating NUL */
#define NAME_TRIES 16

/* ---------------------------------------------------------------------------------- */
/* libovl's SQLite                                                                    */
/* ---------------------------------------------------------------------------------- */

/* SQLite's "open": never returns 0..2 (SQLite would then park /dev/null there for good). */
static int open_above_stdio(const char *path, int flags, int mode) {
  int fd = open(path, flags | O_CLOEXEC, mode);
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

static sqlite3_vfs unix_vfs, relative_vfs;

/* Relative names stay relative (to the writer thread's own cwd); absolute ones as before. */
static int full_pathname(sqlite3_vfs *vfs, const char *path, int n_out, char *out) {
  (void)vfs;
  if (path[0] == '/') return unix_vfs.xFullPathname(&unix_vfs, path, n_out, out);
  if ((int)strlen(path) >= n_out) return SQLITE_CANTOPEN;
  memcpy(out, path, strlen(path) + 1);
  return SQLITE_OK;
}

void ovl_trace_sqlite_setup(void) {
#ifdef OVL_PRIVATE_SQLITE
  /* libovl's own SQLite (static, hidden) is used by the writer thread alone. */
  sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  sqlite3_vfs *v = sqlite3_vfs_find(NULL);
  if (!v || v == &relative_vfs) return;
  if (v->iVersion >= 3 && v->xSetSystemCall)
    v->xSetSystemCall(v, "open", (sqlite3_syscall_ptr)open_above_stdio);
  /* A copy of the Unix VFS (same methods and data) that differs in full names only. */
  unix_vfs = *v;
  relative_vfs = *v;
  relative_vfs.zName = "ovl-unix";
  relative_vfs.pNext = NULL;
  relative_vfs.xFullPathname = full_pathname;
  sqlite3_vfs_register(&relative_vfs, 1);
#endif
}

/* ---------------------------------------------------------------------------------- */
/* The file                                                                           */
/* ---------------------------------------------------------------------------------- */

static uint32_t random_suffix(void) {
  uint32_t r;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
  uint64_t t = (uint64_t)ovl_clock_ns() ^ ((uint64_t)getpid() << 32);  /* no entropy yet: time */
  return (uint32_t)(t ^ (t >> 29));
}

/* Makes dir the working directory of this thread alone. */
static int enter_privately(const char *dir) {
  if (unshare(CLONE_FS) != 0) return -1;
  return chdir(dir);
}

int ovl_trace_file_create(const char *dir, ovl_trace_file *f) {
  f->fd = -1;
  f->pad = 0;
  if (ovl_mkdirs(dir) != 0) {
    ovl_warn(NULL, "%s: cannot create the trace directory: %s; the program runs without capture", dir,
             strerror(errno));
    return -1;
  }
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  for (char *p = host; *p; p++)
    if (*p == '/') *p = '_';
  /* A launcher's rank leads the name, so that rank 3's trace is found by name (nsys: %q{RANK}). */
  long rank, world;
  ovl_launcher_rank(getenv, &rank, &world);
  char lead[32] = "";
  if (rank >= 0) snprintf(lead, sizeof lead, "rank%ld-", rank);
  int relative = 0;
  for (int i = 0; i < NAME_TRIES; i++) {
    char base[340];
    snprintf(base, sizeof base, "%s%s-%ld-%08x.sqlite", lead, host, (long)getpid(), (unsigned)random_suffix());
    if (snprintf(f->shown, sizeof f->shown, "%s/%s", dir, base) >= (int)sizeof f->shown) {
      ovl_warn(NULL, "%s: trace directory name too long; the program runs without capture", dir);
      return -1;
    }
    /* Side files add "-journal" to the name: keep them under SQLite's limit too. */
    if (!relative && strlen(f->shown) + 8 > SQLITE_MAX_NAME) {
      if (enter_privately(dir) != 0) {
        ovl_warn(NULL, "%s: the trace directory's name is over SQLite's %d characters, and the writer thread "
                 "cannot enter it (%s); the program runs without capture", dir, SQLITE_MAX_NAME + 1, strerror(errno));
        return -1;
      }
      relative = 1;
    }
    /* Cannot be cut (the length was checked above); said anyway rather than opening a wrong name. */
    if (snprintf(f->name, sizeof f->name, "%s", relative ? base : f->shown) >= (int)sizeof f->name) {
      ovl_warn(NULL, "%s: the trace file's name is too long; the program runs without capture", f->shown);
      return -1;
    }
    int fd = open_above_stdio(f->name, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      f->fd = fd;
      return 0;
    }
    if (errno != EEXIST) break;
  }
  ovl_warn(NULL, "%s: cannot create a trace file there: %s; the program runs without capture", dir, strerror(errno));
  return -1;
}

void ovl_trace_file_remove(ovl_trace_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  static const char *const sides[] = {"-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
    char side[PATH_MAX + 16];
    snprintf(side, sizeof side, "%s%s", f->name, sides[i]);
    unlink(side);
  }
  unlink(f->name);
}

/* ---------------------------------------------------------------------------------- */
/* Disk space                                                                         */
/* ---------------------------------------------------------------------------------- */

/* SQLite writes the database file without holes, so what lies below its size is allocated;
** only the part beyond needs holding. FALLOC_FL_KEEP_SIZE: SQLite sees the same size. Where
** the file system has no fallocate, a byte is written into each block instead: the file
** then grows past the database's last page, which SQLite ignores (the database header
** gives its size) and cuts off itself when a checkpoint completes. */
int ovl_trace_file_reserve(ovl_trace_file *f, long long bytes) {
  struct stat st;
  if (f->fd < 0 || fstat(f->fd, &st) != 0) return EOPNOTSUPP;
  if (bytes <= st.st_size) return 0;
  if (!f->pad && fallocate(f->fd, FALLOC_FL_KEEP_SIZE, st.st_size, bytes - st.st_size) == 0) return 0;
  if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG) return errno;
  if (!f->pad && errno != EOPNOTSUPP && errno != ENOSYS) return EOPNOTSUPP;
  f->pad = 1;
  const long long block = st.st_blksize > 0 ? st.st_blksize : 4096;
  for (long long end = (st.st_size / block + 1) * block; end - block < bytes; end += block)
    if (pwrite(f->fd, "", 1, (off_t)(end - 1)) != 1) return errno == ENOSPC || errno == EDQUOT ? errno : EOPNOTSUPP;
  return 0;
}

void ovl_trace_file_release(ovl_trace_file *f) {
  struct stat st;
  if (f->fd < 0) return;
  if (fstat(f->fd, &st) == 0) /* nothing may be held (or the file system punches no holes): fine */
    (void)fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)1 << 40);
  close(f->fd);
  f->fd = -1;
}
