/*
** A test double of a small disk, for where a test may not mount a tmpfs of its own (CI
** without CAP_SYS_ADMIN): LD_PRELOAD it and every file under FAKE_FULL_DISK_DIR shares
** FAKE_FULL_DISK_BYTES of space, as on a file system that size.
**
** The model: a file's space is what the real file system has allocated for it (st_blocks),
** so removing or truncating a file gives its space back as it would. A write (write,
** pwrite, pwrite64) or an allocation (fallocate) that would take the directory's files
** beyond the capacity fails with ENOSPC, as the kernel's would, before touching the file;
** fstatvfs of such a file reports the capacity and what is left of it.
** FAKE_FULL_DISK_NO_FALLOCATE=1 makes fallocate fail with EOPNOTSUPP there, as on file
** systems without it. Nothing else changes: other files, and everything when the variables
** are unset, go straight to the C library. Files directly in the directory only (that is
** where libovl writes).
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static const char *disk_dir(void) {
  const char *d = getenv("FAKE_FULL_DISK_DIR");
  return d && *d == '/' ? d : NULL;
}

static long long capacity(void) {
  const char *v = getenv("FAKE_FULL_DISK_BYTES");
  return v ? atoll(v) : 0;
}

/* Whether fd is a file directly in the fake disk's directory. */
static int on_disk(int fd) {
  const char *dir = disk_dir();
  if (!dir || fd < 0) return 0;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = 0;
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/') len--;
  return strncmp(path, dir, len) == 0 && path[len] == '/' && !strchr(path + len + 1, '/');
}

/* Bytes the directory's files hold now. */
static long long used(void) {
  DIR *d = opendir(disk_dir());
  if (!d) return 0;
  long long total = 0;
  struct stat st;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      total += (long long)st.st_blocks * 512;
  closedir(d);
  return total;
}

/* Whether making fd hold bytes up to `end` fits (its blocks so far are paid for already). */
static int fits(int fd, long long end) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 1;
  long long have = (long long)st.st_blocks * 512, extra = end - have;
  return extra <= 0 || used() + extra <= capacity();
}

#define REAL(ret, name, ...)                                                    \
  static ret (*real_##name)(__VA_ARGS__);                                      \
  if (!real_##name) real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
  REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
  if (n && on_disk(fd) && !fits(fd, (long long)off + (long long)n)) {
    errno = ENOSPC;
    return -1;
  }
  return real_pwrite64(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
  if (n && on_disk(fd) && !fits(fd, (long long)off + (long long)n)) {
    errno = ENOSPC;
    return -1;
  }
  return real_pwrite(fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(ssize_t, write, int, const void *, size_t);
  if (n && on_disk(fd)) {
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at >= 0 && !fits(fd, (long long)at + (long long)n)) {
      errno = ENOSPC;
      return -1;
    }
  }
  return real_write(fd, buf, n);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  REAL(int, fallocate, int, int, off_t, off_t);
  const char *no = getenv("FAKE_FULL_DISK_NO_FALLOCATE");
  if (no && strcmp(no, "1") == 0 && on_disk(fd)) {  /* a file system without it */
    errno = EOPNOTSUPP;
    return -1;
  }
  if (!(mode & FALLOC_FL_PUNCH_HOLE) && on_disk(fd) && !fits(fd, (long long)off + (long long)len)) {
    errno = ENOSPC;
    return -1;
  }
  return real_fallocate(fd, mode, off, len);
}

int fstatvfs(int fd, struct statvfs *v) {
  REAL(int, fstatvfs, int, struct statvfs *);
  int rc = real_fstatvfs(fd, v);
  if (rc == 0 && on_disk(fd) && v->f_frsize) {
    long long left = capacity() - used();
    v->f_blocks = (fsblkcnt_t)(capacity() / (long long)v->f_frsize);
    v->f_bfree = v->f_bavail = (fsblkcnt_t)(left > 0 ? left / (long long)v->f_frsize : 0);
  }
  return rc;
}
