/*
** libFuzzer target: the Kineto importer (load/kineto_import.c) over any bytes, written into
** an in-memory ovl trace. The last byte's low bit turns --hta-compat on or off (seeds are whole files). A failure must come
** with a message; a success must have counted what it wrote consistently.
*/
#include "fuzz_file.h"
#include "base/none.h"
#include "load/kineto_import.h"
#include "store/trace_writer.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  ovl_import_options opt = {data[size - 1] & 1};
  const char *path = ovl_fuzz_write(data, size, ".json");
  if (!path) return 0;
  ovl_err err = {0};
  ovl_trace_writer *w = NULL;
  /* The writer's schema and inserts are what a real import runs, without a file's I/O. */
  if (ovl_tw_open(&w, ":memory:", &err)) abort();
  ovl_import_stats stats = {0};
  int rc = ovl_kineto_import(path, w, ":memory:", &opt, &stats, &err);
  if (rc) {
    OVL_FUZZ_CHECK(err.msg[0] != '\0');
  } else {
    OVL_FUZZ_CHECK(stats.kernels >= 0 && stats.nccl_kernels >= 0 && stats.nccl_kernels <= stats.kernels);
    OVL_FUZZ_CHECK(stats.memops >= 0 && stats.api >= 0 && stats.nvtx >= 0 && stats.collectives >= 0);
  }
  ovl_err close_err = {0};
  ovl_tw_close(w, &close_err);
  return 0;
}
