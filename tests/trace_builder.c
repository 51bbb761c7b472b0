/* Test trace builder: see trace_builder.h. */
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void ok(int rc, const ovl_err *err) {
  if (rc) {
    fprintf(stderr, "trace builder: %s\n", err->msg);
    exit(2);
  }
}

void tb_open(tb *b, const char *path) {
  ovl_err err = {0};
  b->next_correlation = 1;
  ok(ovl_tw_open(&b->w, path, &err), &err);
  ok(ovl_tw_meta(b->w, "rank", "0", &err), &err);
  ok(ovl_tw_meta(b->w, "world_size", "1", &err), &err);
  ok(ovl_tw_meta(b->w, "hostname", "testhost", &err), &err);
  ok(ovl_tw_meta(b->w, "pid", "42", &err), &err);
  ok(ovl_tw_meta(b->w, "clock", "test", &err), &err);
}

void tb_close(tb *b) {
  ovl_err err = {0};
  ok(ovl_tw_close(b->w, &err), &err);
  b->w = NULL;
}

int64_t tb_kernel(tb *b, const char *name, int64_t start, int64_t end, int64_t device, int64_t stream) {
  ovl_err err = {0};
  int64_t id;
  ok(ovl_tw_intern(b->w, name, &id, &err), &err);
  ovl_kernel_row k = {start, end, device, stream, b->next_correlation++, id,
                      {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
  ok(ovl_tw_kernel(b->w, &k, &err), &err);
  return k.correlation;
}

int64_t tb_memop(tb *b, const char *kind, int64_t start, int64_t end, int64_t device, int64_t stream, int64_t bytes) {
  ovl_err err = {0};
  ovl_memop_row m = {start, end, device, stream, b->next_correlation++, kind, bytes};
  ok(ovl_tw_memop(b->w, &m, &err), &err);
  return m.correlation;
}

int64_t tb_collective(tb *b, const char *op, int64_t bytes, int64_t nranks, int64_t host_start, int64_t correlation) {
  ovl_err err = {0};
  static int64_t seq;
  ovl_collective_row c = {OVL_NONE, 7, 0, nranks, seq++, op, bytes / 4, "Float32", bytes, "Sum", -1, 0, OVL_NONE,
                          host_start, host_start == OVL_NONE ? OVL_NONE : host_start + 10, 1, OVL_NONE};
  int64_t id;
  ok(ovl_tw_collective(b->w, &c, &id, &err), &err);
  if (correlation != OVL_NONE) ok(ovl_tw_launch(b->w, id, correlation, &err), &err);
  return id;
}

void tb_nvtx(tb *b, const char *domain, const char *name, int64_t start, int64_t end) {
  ovl_err err = {0};
  ovl_nvtx_row r = {start, end, 1, domain, name};
  ok(ovl_tw_nvtx(b->w, &r, &err), &err);
}

void tb_api(tb *b, int64_t start, int64_t end, int64_t correlation) {
  ovl_err err = {0};
  int64_t id;
  ok(ovl_tw_intern(b->w, "cudaLaunchKernel", &id, &err), &err);
  ovl_api_row r = {start, end, 1, correlation, id};
  ok(ovl_tw_api(b->w, &r, &err), &err);
}

const char *tb_temp_path(const char *tag) {
  static char buf[8][512];
  static int next;
  char *p = buf[next++ % 8];
  const char *dir = getenv("TMPDIR");
  snprintf(p, 512, "%s/ovl-test-%d-%s", dir && *dir ? dir : "/tmp", (int)getpid(), tag);
  return p;
}
