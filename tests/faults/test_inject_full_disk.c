/*
** A full disk under libovl.so (issue 32), with the stub NCCL: `inject_app threads 4 25000`
** (100,000 calls) writes its trace into a 1 MB file system, which fills long before the
** trace is complete:
**   * the program's stdout and exit status are what they are without libovl;
**   * libovl says so once on stderr and keeps what it committed: the trace opens and passes
**     SQLite's integrity check, holds rows, and names the reason in meta.capture_stopped;
**   * every call is accounted for: collectives rows + meta.dropped_records >= 100,000, and
**     meta.host_events = 100,000 = rows + meta.dropped_host_events;
**   * no -wal (nor -shm) file is left behind holding the space.
** The file system is a real 1 MB tmpfs where the test may mount one (root: a private mount
** namespace, so nothing shows outside this process), and always the test double
** faults/fake_full_disk.c (an LD_PRELOAD'ed 1 MB disk), which CI without mount rights runs,
** also as a file system without fallocate.
*/
#define _GNU_SOURCE
#include "check.h"
#include "db_query.h"
#include "inject_harness.h"
#include "trace_builder.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define DISK_BYTES (1 << 20)
#define THREADS 4
#define CALLS_EACH 25000
#define APP_ARGS "threads 4 25000"

/* Whether dir holds a file whose name ends with `suffix`. */
static int has_file_ending(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  size_t k = strlen(suffix);
  for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    found = n > k && strcmp(e->d_name + n - k, suffix) == 0;
  }
  closedir(d);
  return found;
}

/* What every full-disk run must show, next to `plain` (the same program without libovl). */
static void check_full_disk(const char *what, const char *dir, const cmd_result *plain, const cmd_result *with) {
  const int64_t calls = (int64_t)THREADS * CALLS_EACH;
  printf("%s:\n", what);
  CHECK_I64(with->status, plain->status);
  CHECK_STR(with->out, plain->out);
  CHECK_I64(count_lines(with->err), 1);
  CHECK(strncmp(with->err, "ovl: ", 5) == 0 && strstr(with->err, "No space left on device") != NULL);
  if (count_lines(with->err) != 1) fprintf(stderr, "%s: stderr: %s\n", what, with->err);
  CHECK(!has_file_ending(dir, "-wal"));
  CHECK(!has_file_ending(dir, "-shm"));
  CHECK(!has_file_ending(dir, "-journal"));
  const char *path = ih_trace_in(dir);
  CHECK(path != NULL);
  if (!path) return;
  sqlite3 *db = dbq_open(path);
  CHECK_STR(dbq_text(db, "PRAGMA integrity_check"), "ok");
  int64_t rows = dbq_int(db, "SELECT count(*) FROM collectives");
  int64_t dropped = dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_records'");
  int64_t dropped_host = dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'dropped_host_events'");
  int64_t host = dbq_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'host_events'");
  printf("  %lld calls: %lld rows, %lld dropped (meta.host_events %lld); stopped: %s\n", (long long)calls,
         (long long)rows, (long long)dropped, (long long)host,
         dbq_text(db, "SELECT value FROM meta WHERE key = 'capture_stopped'"));
  CHECK(rows > 0);
  CHECK(rows < calls);
  CHECK(rows + dropped >= calls);
  CHECK_I64(host, calls);
  CHECK_I64(rows + dropped_host, host);
  CHECK(strstr(dbq_text(db, "SELECT value FROM meta WHERE key = 'capture_stopped'"), "No space left") != NULL);
  sqlite3_close(db);
}

/* A real tmpfs of DISK_BYTES in a mount namespace of this process's own. Returns 1 when
** mounted at `dir`; 0 (saying why) where the test may not mount. */
static int mount_small_tmpfs(const char *dir) {
  if (mkdir(dir, 0755) != 0) return 0;
  char opts[64];
  snprintf(opts, sizeof opts, "size=%d", DISK_BYTES);
  const char *step = "unshare(CLONE_NEWNS)";
  int ok = unshare(CLONE_NEWNS) == 0;
  if (ok) {
    step = "making / private";
    ok = mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
  }
  if (ok) {
    step = "mount -t tmpfs";
    ok = mount("tmpfs", dir, "tmpfs", 0, opts) == 0;
  }
  if (!ok) printf("SKIP part: no tmpfs of our own here (%s: %s); the test double covers a full disk\n", step,
                  strerror(errno));
  return ok;
}

static void on_tmpfs(const cmd_result *plain) {
  const char *mnt = ih_fresh_dir("tmpfs");
  if (!mount_small_tmpfs(mnt)) return;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/traces", mnt);
  cmd_result with = ih_run_app(1, dir, NULL, APP_ARGS);
  check_full_disk("1 MB tmpfs", dir, plain, &with);
  cmd_free(&with);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  CHECK(umount2(mnt, MNT_DETACH) == 0);
}

/* no_fallocate: a file system without fallocate, where libovl holds space by writing. */
static void on_test_double(const cmd_result *plain, int no_fallocate) {
  const char *dir = ih_fresh_dir(no_fallocate ? "fake-disk-nofalloc" : "fake-disk");
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "env LD_PRELOAD='%s%s%s:%s' FAKE_FULL_DISK_DIR='%s' FAKE_FULL_DISK_BYTES=%d FAKE_FULL_DISK_NO_FALLOCATE=%d "
           "OVL_OUTPUT='%s' '%s' %s",
           OVL_TEST_PRELOAD_FIRST, OVL_TEST_PRELOAD_FIRST[0] ? ":" : "", OVL_TEST_FAKE_FULL_DISK, OVL_TEST_LIBOVL, dir,
           DISK_BYTES, no_fallocate, dir, OVL_TEST_APP, APP_ARGS);
  cmd_result with = run_cmd(cmd);
  check_full_disk(no_fallocate ? "1 MB disk without fallocate (test double: faults/fake_full_disk.c)"
                               : "1 MB disk (test double: faults/fake_full_disk.c)",
                  dir, plain, &with);
  cmd_free(&with);
}

int main(void) {
  cmd_result plain = ih_run_app(0, ih_fresh_dir("plain"), NULL, APP_ARGS);
  CHECK_I64(plain.status, 0);
  on_test_double(&plain, 0);
  on_test_double(&plain, 1);
  on_tmpfs(&plain);  /* last: it moves this process into a mount namespace of its own */
  cmd_free(&plain);
  return check_summary();
}
