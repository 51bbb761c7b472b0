/* A SQLite VFS that reads forward scans in windows: see scan_vfs.h. */
#include "scan_vfs.h"

#include <assert.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A miss this far past the previous read still counts as going forward: a table's leaf pages
** lie in file order with other tables' pages between them. */
#define FORWARD_REACH (4 * (sqlite3_int64)OVL_SCAN_VFS_WINDOW)
/* A window that served fewer reads than this was mostly other tables' pages (a sparse table,
** such as collectives among kernels): the next SPARSE_DIRECT_READS misses go straight to the
** file, then a window is tried again. Copying 64 pages costs more than a few system calls. */
#define SPARSE_HITS 4
#define SPARSE_DIRECT_READS 16

typedef struct scan_file {
  sqlite3_file base;
  sqlite3_file *real;       /* the wrapped VFS's file, allocated right after this struct */
  unsigned char *window;    /* NULL: this file is not read in windows */
  sqlite3_int64 window_at;  /* the window holds [window_at, window_at + window_len) */
  int window_len;           /* 0: nothing held */
  sqlite3_int64 last_read;  /* offset of the previous read, for the forward test */
  int window_hits;          /* reads the current window served */
  int direct_left;          /* misses still to read directly after a sparse window */
} scan_file;

static sqlite3_vfs scan_vfs;
static sqlite3_vfs *real_vfs;
static const char *registered_name;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_llong served_count, window_count;

static void drop_window(scan_file *f) { f->window_len = 0; }

static int scan_close(sqlite3_file *file) {
  scan_file *f = (scan_file *)file;
  free(f->window);
  f->window = NULL;
  return f->real->pMethods->xClose(f->real);
}

static int scan_read(sqlite3_file *file, void *out, int amt, sqlite3_int64 off) {
  scan_file *f = (scan_file *)file;
  sqlite3_int64 prev = f->last_read;
  f->last_read = off;
  if (f->window && amt <= OVL_SCAN_VFS_WINDOW) {
    if (f->window_len && off >= f->window_at && off + amt <= f->window_at + f->window_len) {
      memcpy(out, f->window + (off - f->window_at), (size_t)amt);
      f->window_hits++;
      atomic_fetch_add_explicit(&served_count, 1, memory_order_relaxed);
      return SQLITE_OK;
    }
    if (f->window_len && f->window_hits < SPARSE_HITS) f->direct_left = SPARSE_DIRECT_READS;
    drop_window(f);
    if (f->direct_left > 0) {
      f->direct_left--;
    } else if (off >= prev && off - prev <= FORWARD_REACH) {
      int rc = f->real->pMethods->xRead(f->real, f->window, OVL_SCAN_VFS_WINDOW, off);
      if (rc == SQLITE_OK) {  /* a short read (the file's end) is left to the direct read below */
        f->window_at = off;
        f->window_len = OVL_SCAN_VFS_WINDOW;
        f->window_hits = 0;
        atomic_fetch_add_explicit(&window_count, 1, memory_order_relaxed);
        memcpy(out, f->window, (size_t)amt);
        return SQLITE_OK;
      }
    }
  }
  return f->real->pMethods->xRead(f->real, out, amt, off);
}

static int scan_write(sqlite3_file *file, const void *in, int amt, sqlite3_int64 off) {
  scan_file *f = (scan_file *)file;
  drop_window(f);
  return f->real->pMethods->xWrite(f->real, in, amt, off);
}

static int scan_truncate(sqlite3_file *file, sqlite3_int64 size) {
  scan_file *f = (scan_file *)file;
  drop_window(f);
  return f->real->pMethods->xTruncate(f->real, size);
}

static int scan_sync(sqlite3_file *file, int flags) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xSync(f->real, flags);
}

static int scan_file_size(sqlite3_file *file, sqlite3_int64 *size) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xFileSize(f->real, size);
}

static int scan_lock(sqlite3_file *file, int level) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xLock(f->real, level);
}

/* The end of a read transaction (rollback journal): another process may write the file now. */
static int scan_unlock(sqlite3_file *file, int level) {
  scan_file *f = (scan_file *)file;
  drop_window(f);
  return f->real->pMethods->xUnlock(f->real, level);
}

static int scan_check_reserved(sqlite3_file *file, int *out) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int scan_file_control(sqlite3_file *file, int op, void *arg) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int scan_sector_size(sqlite3_file *file) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xSectorSize(f->real);
}

static int scan_device_characteristics(sqlite3_file *file) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int scan_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xShmMap(f->real, region, size, extend, out);
}

/* The end of a read transaction (WAL): a checkpoint may now write pages this reader read from
** the file, as it may not while the reader's snapshot needs them. */
static int scan_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
  scan_file *f = (scan_file *)file;
  if (flags & SQLITE_SHM_UNLOCK) drop_window(f);
  return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void scan_shm_barrier(sqlite3_file *file) {
  scan_file *f = (scan_file *)file;
  f->real->pMethods->xShmBarrier(f->real);
}

static int scan_shm_unmap(sqlite3_file *file, int delete_flag) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}

static int scan_fetch(sqlite3_file *file, sqlite3_int64 off, int amt, void **out) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xFetch(f->real, off, amt, out);
}

static int scan_unfetch(sqlite3_file *file, sqlite3_int64 off, void *p) {
  scan_file *f = (scan_file *)file;
  return f->real->pMethods->xUnfetch(f->real, off, p);
}

/* Version 1 methods for a wrapped file of version 1; the shared-memory and fetch methods are
** offered only where the wrapped file has them (scan_open picks). */
static const sqlite3_io_methods methods_v1 = {
    1, scan_close, scan_read, scan_write, scan_truncate, scan_sync, scan_file_size, scan_lock, scan_unlock,
    scan_check_reserved, scan_file_control, scan_sector_size, scan_device_characteristics, NULL, NULL, NULL,
    NULL, NULL, NULL};
static const sqlite3_io_methods methods_v2 = {
    2, scan_close, scan_read, scan_write, scan_truncate, scan_sync, scan_file_size, scan_lock, scan_unlock,
    scan_check_reserved, scan_file_control, scan_sector_size, scan_device_characteristics, scan_shm_map,
    scan_shm_lock, scan_shm_barrier, scan_shm_unmap, NULL, NULL};
static const sqlite3_io_methods methods_v3 = {
    3, scan_close, scan_read, scan_write, scan_truncate, scan_sync, scan_file_size, scan_lock, scan_unlock,
    scan_check_reserved, scan_file_control, scan_sector_size, scan_device_characteristics, scan_shm_map,
    scan_shm_lock, scan_shm_barrier, scan_shm_unmap, scan_fetch, scan_unfetch};

sqlite3_file *ovl_scan_vfs_inner(sqlite3_file *file) {
  if (file && (file->pMethods == &methods_v1 || file->pMethods == &methods_v2 || file->pMethods == &methods_v3))
    return ((scan_file *)file)->real;
  return file;
}

static int scan_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
  (void)vfs;
  scan_file *f = (scan_file *)file;
  memset(f, 0, sizeof *f);
  f->real = (sqlite3_file *)(f + 1);
  int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
  if (!f->real->pMethods) return rc;  /* nothing to close: SQLite will not call xClose */
  int version = f->real->pMethods->iVersion;
  f->base.pMethods = version >= 3 ? &methods_v3 : version == 2 ? &methods_v2 : &methods_v1;
  /* Windows only where no one can write through this connection; without memory for one, the
  ** file is simply read page by page. */
  if (rc == SQLITE_OK && (flags & SQLITE_OPEN_MAIN_DB) && (flags & SQLITE_OPEN_READONLY)) {
    f->window = malloc(OVL_SCAN_VFS_WINDOW);
    f->last_read = -1;
  }
  return rc;
}

static int scan_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
  (void)vfs;
  return real_vfs->xDelete(real_vfs, name, sync_dir);
}
static int scan_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
  (void)vfs;
  return real_vfs->xAccess(real_vfs, name, flags, out);
}
static int scan_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
  (void)vfs;
  return real_vfs->xFullPathname(real_vfs, name, n, out);
}
static void *scan_dl_open(sqlite3_vfs *vfs, const char *name) {
  (void)vfs;
  return real_vfs->xDlOpen(real_vfs, name);
}
static void scan_dl_error(sqlite3_vfs *vfs, int n, char *out) {
  (void)vfs;
  real_vfs->xDlError(real_vfs, n, out);
}
static void (*scan_dl_sym(sqlite3_vfs *vfs, void *handle, const char *sym))(void) {
  (void)vfs;
  return real_vfs->xDlSym(real_vfs, handle, sym);
}
static void scan_dl_close(sqlite3_vfs *vfs, void *handle) {
  (void)vfs;
  real_vfs->xDlClose(real_vfs, handle);
}
static int scan_randomness(sqlite3_vfs *vfs, int n, char *out) {
  (void)vfs;
  return real_vfs->xRandomness(real_vfs, n, out);
}
static int scan_sleep(sqlite3_vfs *vfs, int us) {
  (void)vfs;
  return real_vfs->xSleep(real_vfs, us);
}
static int scan_current_time(sqlite3_vfs *vfs, double *out) {
  (void)vfs;
  return real_vfs->xCurrentTime(real_vfs, out);
}
static int scan_get_last_error(sqlite3_vfs *vfs, int n, char *out) {
  (void)vfs;
  return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, out) : 0;
}
static int scan_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
  (void)vfs;
  return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

static void register_once(void) {
  if (sqlite3_initialize() != SQLITE_OK || !(real_vfs = sqlite3_vfs_find(NULL))) return;
  scan_vfs = (sqlite3_vfs){
      .iVersion = 2,
      .szOsFile = (int)sizeof(scan_file) + real_vfs->szOsFile,
      .mxPathname = real_vfs->mxPathname,
      .zName = "ovl-scan",
      .xOpen = scan_open,
      .xDelete = scan_delete,
      .xAccess = scan_access,
      .xFullPathname = scan_full_pathname,
      .xDlOpen = scan_dl_open,
      .xDlError = scan_dl_error,
      .xDlSym = scan_dl_sym,
      .xDlClose = scan_dl_close,
      .xRandomness = scan_randomness,
      .xSleep = scan_sleep,
      .xCurrentTime = scan_current_time,
      .xGetLastError = scan_get_last_error,
      .xCurrentTimeInt64 = scan_current_time_int64,
  };
  /* Version 2 needs the wrapped VFS's 64-bit clock; every VFS SQLite ships has one. */
  if (real_vfs->iVersion < 2 || !real_vfs->xCurrentTimeInt64) {
    scan_vfs.iVersion = 1;
    scan_vfs.xCurrentTimeInt64 = NULL;
  }
  if (sqlite3_vfs_register(&scan_vfs, 0) == SQLITE_OK) registered_name = scan_vfs.zName;
}

const char *ovl_scan_vfs_name(void) {
  pthread_once(&once, register_once);
  return registered_name;
}

void ovl_scan_vfs_counts(long long *served, long long *windows) {
  *served = atomic_load(&served_count);
  *windows = atomic_load(&window_count);
}
