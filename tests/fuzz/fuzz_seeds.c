/*
** fuzz_seeds OVL_DIR NSYS_DIR: writes the SQLite seed inputs of the trace-reader and Nsight
** targets, built with the tests' builders (trace_builder.c, nsys_builder.c), then rewritten
** with 512-byte pages so each seed is a few kilobytes: libFuzzer mutates small files far
** faster, and every table still has its own pages to corrupt.
*/
#include "base/none.h"
#include "nsys_builder.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void shrink_pages(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;", NULL, NULL, NULL) != SQLITE_OK) {
    fprintf(stderr, "fuzz_seeds: %s: %s\n", path, db ? sqlite3_errmsg(db) : "cannot open");
    exit(2);
  }
  sqlite3_close(db);
}

/* Two steps of data-parallel training on one rank: compute, two bucketed all-reduces per
** step with their NVTX ranges, gradient-ready marks, launches and a copy. */
static void ovl_trace_seed(const char *path) {
  tb b;
  tb_open(&b, path);
  for (int s = 0; s < 2; s++) {
    int64_t t0 = 1000000 + s * 100000;
    tb_nvtx(&b, "ovl", "step", t0, t0 + 90000);
    for (int k = 0; k < 2; k++) {
      int64_t t = t0 + k * 40000;
      int64_t c = tb_kernel(&b, "volta_sgemm_128x64_nn", t + 1000, t + 20000, 0, 7);
      tb_api(&b, t, t + 500, c);
      char mark[64];
      snprintf(mark, sizeof mark, "grad_ready bucket=%d bytes=%d", k, 1 << 20);
      tb_nvtx(&b, "ovl", mark, t + 20000, OVL_NONE);
      char range[32];
      snprintf(range, sizeof range, "bucket %d", k);
      tb_nvtx(&b, "ovl", range, t + 20100, t + 20600);
      int64_t nc = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 21000, t + 35000, 0, 13);
      tb_api(&b, t + 20200, t + 20500, nc);
      tb_collective(&b, "allreduce", 1 << 20, 2, t + 20200, nc);
    }
    tb_memop(&b, "DtoH", t0 + 85000, t0 + 86000, 0, 7, 4096);
  }
  tb_close(&b);
  shrink_pages(path);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fuzz_seeds OVL_DIR NSYS_DIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/seed-two-steps.sqlite", argv[1]);
  ovl_trace_seed(path);
  snprintf(path, sizeof path, "%s/seed-two-process-export.sqlite", argv[2]);
  nsys_build_two_process_export(path);
  shrink_pages(path);
  return 0;
}
