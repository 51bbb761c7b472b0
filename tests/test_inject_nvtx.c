/*
** NVTX injection for real: inject_app makes NVTX calls through the NVTX3 headers, which load
** libovl through NVTX_INJECTION64_PATH (set by libovl's constructor under LD_PRELOAD). Pushes,
** pops, marks, wide and registered strings, domain ranges, a start/end range ended on
** another thread and a mark made before the first NCCL call must land in `nvtx`; a process that uses NVTX but no NCCL or CUDA writes
** no file.
*/
#include "check.h"
#include "inject_harness.h"
#include "load/trace_reader.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 32

typedef struct row {
  int64_t start, end, tid;
  char domain[32], name[64];
} row;

typedef struct rows {
  row r[MAX_ROWS];
  int n;
} rows;

static int collect(void *ctx, const ovl_nvtx_row *in) {
  rows *rs = ctx;
  if (rs->n == MAX_ROWS) return 0;
  row *r = &rs->r[rs->n++];
  r->start = in->start;
  r->end = in->end;
  r->tid = in->tid;
  snprintf(r->domain, sizeof r->domain, "%s", in->domain ? in->domain : "(default)");
  snprintf(r->name, sizeof r->name, "%s", in->name);
  return 0;
}

static const row *find(const rows *rs, const char *domain, const char *name) {
  for (int i = 0; i < rs->n; i++)
    if (!strcmp(rs->r[i].domain, domain) && !strcmp(rs->r[i].name, name)) return &rs->r[i];
  fprintf(stderr, "missing nvtx row %s / %s\n", domain, name);
  return NULL;
}

static int inside(const row *in, const row *out) {
  return in && out && in->start >= out->start && in->end <= out->end && in->end != OVL_NONE;
}

static void ranges_and_marks(void) {
  const char *dir = ih_fresh_dir("nvtx");
  cmd_result r = ih_run_app(1, dir, NULL, "nvtx");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.err, "");
  cmd_free(&r);
  const char *path = ih_trace_in(dir);
  CHECK(path != NULL);
  if (!path) return;
  ovl_trace *t = NULL;
  ovl_err err = {0};
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  rows rs = {.n = 0};
  CHECK(ovl_trace_scan_nvtx(t, collect, &rs, &err) == OVL_OK);
  ovl_trace_close(t);
  CHECK_I64(rs.n, 10);

  const row *outer = find(&rs, "(default)", "outer"), *inner = find(&rs, "(default)", "inner");
  const row *mark = find(&rs, "(default)", "ovl:grad_ready bucket=0 bytes=64");
  const row *wide = find(&rs, "(default)", "wide \xc3\xa9t\xc3\xa9");
  const row *step = find(&rs, "ovl", "step"), *bucket = find(&rs, "ovl", "bucket 3");
  const row *dflt = find(&rs, "(default)", "default inside");
  const row *reg = find(&rs, "ovl", "registered mark");
  const row *across = find(&rs, "(default)", "across threads");
  const row *before = find(&rs, "(default)", "before any NCCL call");
  CHECK(before && outer && before->end == OVL_NONE && before->start < outer->start);
  CHECK(inside(inner, outer));
  CHECK(mark && inner && mark->end == OVL_NONE && mark->start >= inner->start && mark->start <= inner->end);
  CHECK(wide && outer && wide->end >= wide->start && wide->start >= outer->end);
  CHECK(inside(bucket, step));
  /* ovl's pop ended "bucket 3" although "default inside" (another domain) was pushed later */
  CHECK(dflt && bucket && dflt->start >= bucket->start && dflt->end >= bucket->end);
  CHECK(reg && bucket && step && reg->end == OVL_NONE && reg->start >= bucket->end && reg->start <= step->end);
  CHECK(across && outer && across->end >= across->start && across->tid == outer->tid);
  CHECK(outer && outer->tid > 0);
}

static void nvtx_without_cuda_or_nccl(void) {
  const char *dir = ih_fresh_dir("nvtx-only");
  cmd_result r = ih_run_app(1, dir, NULL, "nvtx-only");
  CHECK_I64(r.status, 0);
  CHECK_STR(r.err, "");
  CHECK_I64(ih_count_traces(dir), 0);
  cmd_free(&r);
}

int main(void) {
  ranges_and_marks();
  nvtx_without_cuda_or_nccl();
  return check_summary();
}
