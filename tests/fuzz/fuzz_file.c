/* See fuzz_file.h. */
#include "fuzz_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char written[4096];

/* The file, and what SQLite may leave beside it: a stale -wal would be replayed into the
** next input's reading (a WAL-mode header in the bytes is enough for SQLite to make one). */
static void remove_written(void) {
  static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
  char side[sizeof written + 16];
  for (size_t i = 0; written[0] && i < sizeof sides / sizeof sides[0]; i++) {
    snprintf(side, sizeof side, "%s%s", written, sides[i]);
    remove(side);
  }
}

const char *ovl_fuzz_write(const uint8_t *data, size_t size, const char *suffix) {
  if (!written[0]) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    snprintf(written, sizeof written, "%s/ovl-fuzz-%ld%s", dir, (long)getpid(), suffix);
    atexit(remove_written);
  }
  remove_written();
  FILE *f = fopen(written, "wb");
  if (!f) return NULL;
  int ok = fwrite(data, 1, size, f) == size;
  if (fclose(f) != 0) ok = 0;
  return ok ? written : NULL;
}

FILE *ovl_fuzz_null_stream(void) {
  static FILE *null;
  if (!null) null = fopen("/dev/null", "w");
  return null;
}

_Noreturn void ovl_fuzz_fail(const char *what, const char *file, int line) {
  fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
  abort();
}
