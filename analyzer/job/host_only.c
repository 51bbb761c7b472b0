/* Traces without GPU work: see host_only.h. */
#include "host_only.h"

#include "load/trace_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A meta value (empty strings as NULL), malloc'd. */
static char *meta(const ovl_trace *t, const char *key) {
  const char *v = ovl_trace_meta(t, key);
  return v && v[0] ? strdup(v) : NULL;
}

/* 1 when the trace holds a piece of GPU work the reader accepts. */
static int has_gpu_work(ovl_trace *t, ovl_err *err) {
  ovl_work_options wopt = {1, 0};  /* the first valid row decides: no order needed */
  ovl_work_cursor *cur = NULL;
  int has = 0;
  if (ovl_work_open(t, &wopt, &cur, err) == OVL_OK) {
    ovl_work w;
    (void)ovl_work_next(cur, &w, &has, err);  /* w is valid when has is set, even out of order */
  }
  ovl_work_close(cur);
  ovl_err_clear(err);
  return has;
}

static int count_api(void *ctx, const ovl_api_row *row) {
  (void)row;
  ++*(long *)ctx;
  return OVL_OK;
}

/* "12 AllReduce, 3 Broadcast": calls per operation, most first (then by name). */
static void ops_of(const ovl_coll_rec *c, size_t n, ovl_host_only *h) {
  enum { MAX_OPS = 16 };
  struct { char op[16]; long n; } ops[MAX_OPS];
  size_t nops = 0;
  for (size_t i = 0; i < n; i++) {
    size_t k = 0;
    while (k < nops && strcmp(ops[k].op, c[i].op) != 0) k++;
    if (k == nops) {
      if (nops == MAX_OPS) continue;
      snprintf(ops[nops].op, sizeof ops[nops].op, "%s", c[i].op);
      ops[nops++].n = 0;
    }
    ops[k].n++;
  }
  for (size_t i = 1; i < nops; i++)  /* insertion sort: few operations */
    for (size_t k = i; k > 0 && (ops[k].n > ops[k - 1].n || (ops[k].n == ops[k - 1].n && strcmp(ops[k].op, ops[k - 1].op) < 0)); k--) {
      __typeof__(ops[0]) t = ops[k];
      ops[k] = ops[k - 1];
      ops[k - 1] = t;
    }
  size_t used = 0;
  h->ops[0] = 0;
  for (size_t i = 0; i < nops && used + 1 < sizeof h->ops; i++) {
    snprintf(h->ops + used, sizeof h->ops - used, "%s%ld %.15s", used ? ", " : "", ops[i].n, ops[i].op);
    used = strlen(h->ops);
  }
}

static void explain(const ovl_trace *t, ovl_host_only *h) {
  char *format = meta(t, "import_format");
  const char *accelerator = ovl_trace_meta(t, "import_accelerator");
  if (h->cupti && strncmp(h->cupti, "attached", 8) != 0)
    snprintf(h->reason, sizeof h->reason, "CUPTI was %s, so no GPU activity was recorded", h->cupti);
  else if (h->cupti)
    snprintf(h->reason, sizeof h->reason, "CUPTI was %s but delivered no GPU activity (the process ran no GPU work "
                                          "while traced, or it exited before CUPTI flushed)", h->cupti);
  else if (accelerator)
    snprintf(h->reason, sizeof h->reason, "it is a trace of %s (%lld of its device events), not of a CUDA or ROCm GPU: "
                                          "ovl analyses GPU kernels, copies and NCCL-style communication, which this "
                                          "trace does not record", accelerator,
             (long long)ovl_trace_meta_int(t, "import_accelerator_events", 0));
  else if (format && strcmp(format, "kineto") == 0)
    snprintf(h->reason, sizeof h->reason, "the PyTorch profiler recorded no GPU events (kernels, memcpy, memset): "
                                          "CUDA activities were not enabled (ProfilerActivity.CUDA), or no GPU work ran "
                                          "in the window");
  else if (format && strcmp(format, "nsys") == 0)
    snprintf(h->reason, sizeof h->reason, "the Nsight Systems export holds no CUDA activity for this process");
  else
    snprintf(h->reason, sizeof h->reason, "the trace holds no kernels or memory operations");
  free(format);
}

int ovl_host_only_read(const char *ovl_path, const char *user_path, ovl_host_only *out, int *is_host_only,
                       ovl_err *err) {
  *is_host_only = 0;
  ovl_trace *t = NULL;
  int rc = ovl_trace_open(ovl_path, &t, err);
  if (rc) return rc;
  if (has_gpu_work(t, err)) {
    ovl_trace_close(t);
    return OVL_OK;
  }
  ovl_coll_rec *colls = NULL;
  size_t ncolls = 0;
  long api = 0;
  rc = ovl_trace_read_collectives(t, &colls, &ncolls, err);
  if (!rc) rc = ovl_trace_scan_api(t, 1, count_api, &api, err);
  if (rc) {
    free(colls);
    ovl_trace_close(t);
    return rc;
  }
  memset(out, 0, sizeof *out);
  out->trace_path = strdup(user_path);
  out->hostname = meta(t, "hostname");
  out->cupti = meta(t, "cupti");
  out->rank = ovl_trace_meta_int(t, "rank", OVL_NONE);
  out->world_size = ovl_trace_meta_int(t, "world_size", OVL_NONE);
  out->collectives = (long)ncolls;
  out->api_calls = api;
  for (size_t i = 0; i < ncolls; i++) {
    if (colls[i].bytes != OVL_NONE && colls[i].bytes >= 0) out->collective_bytes += colls[i].bytes;
    if (out->rank == OVL_NONE && colls[i].rank != OVL_NONE && colls[i].rank >= 0) out->rank = colls[i].rank;
  }
  ops_of(colls, ncolls, out);
  explain(t, out);
  free(colls);
  ovl_trace_close(t);
  if (!out->trace_path) {
    ovl_host_only_free(out);
    return ovl_oom(err, "results");
  }
  *is_host_only = 1;
  return OVL_OK;
}

void ovl_host_only_describe(const ovl_host_only *h, char *buf, size_t len) {
  snprintf(buf, len, "%s: trace has no GPU activity (no valid kernels or memops): %s; host side: %ld NCCL call%s%s%s%s, "
                     "%ld CUDA API call%s",
           h->trace_path, h->reason, h->collectives, h->collectives == 1 ? "" : "s", h->ops[0] ? " (" : "", h->ops,
           h->ops[0] ? ")" : "", h->api_calls, h->api_calls == 1 ? "" : "s");
}

void ovl_host_only_free(ovl_host_only *h) {
  free(h->trace_path);
  free(h->hostname);
  free(h->cupti);
  memset(h, 0, sizeof *h);
}
