/*
** libFuzzer target: the Nsight Systems importer (load/nsys_import.c) over the bytes of a
** SQLite file, written into an in-memory ovl trace: the process list, then every listed
** process's rows (at most 4), as `ovl import` does. A failure must come with a message.
*/
#include "fuzz_file.h"
#include "base/none.h"
#include "load/nsys_import.h"
#include "store/trace_writer.h"

#include <stdlib.h>

static void import_one(const char *path, int64_t pid) {
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  if (ovl_tw_open(&w, ":memory:", &err)) abort();
  ovl_import_stats stats = {0};
  if (ovl_nsys_import(path, pid, w, &stats, &err)) OVL_FUZZ_CHECK(err.msg[0] != '\0');
  else OVL_FUZZ_CHECK(stats.kernels >= 0 && stats.memops >= 0 && stats.api >= 0 && stats.nvtx >= 0);
  ovl_tw_close(w, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = ovl_fuzz_write(data, size, ".sqlite");
  if (!path) return 0;
  ovl_err err = {0};
  int64_t *pids = NULL;
  size_t n = 0;
  if (ovl_nsys_processes(path, &pids, &n, &err)) {
    OVL_FUZZ_CHECK(err.msg[0] != '\0');
    return 0;
  }
  if (n == 0) import_one(path, OVL_NONE);
  for (size_t i = 0; i < n && i < 4; i++) import_one(path, pids[i]);
  free(pids);
  return 0;
}
