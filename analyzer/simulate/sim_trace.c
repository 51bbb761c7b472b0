/* Simulated schedule -> ovl trace: see sim_trace.h. */
#include "sim_trace.h"

#include "../store/trace_writer.h"

#include <math.h>
#include <stdio.h>

#define HOST_TID 1
#define DEVICE 0

static int64_t ns(double t) { return (int64_t)llround(t); }

/* strings.id of the names the trace uses */
typedef struct sim_names {
  int64_t layer_kernel, nccl_kernel, runtime_launch, driver_launch;
} sim_names;

/* Writes one step whose host range starts at host_origin. */
static int emit_step(ovl_trace_writer *w, const ovl_sim_params *p, const ovl_sim_result *s, int64_t host_origin,
                     int64_t *next_correlation, int64_t *seq, int nranks, const sim_names *names, ovl_err *err) {
  const int64_t gpu0 = host_origin + OVL_SIM_STEP_LEAD_NS;
  int rc = OVL_OK;
  /* Host enqueues every layer's backward kernel during the lead-in, then the GPU runs them. */
  for (int i = 0; !rc && i < p->layers; i++) {
    int64_t corr = (*next_correlation)++;
    int64_t launch = host_origin + (int64_t)((double)OVL_SIM_STEP_LEAD_NS / 2 * (1.0 + (double)i / p->layers));
    ovl_api_row api = {launch, launch + 1, HOST_TID, corr, names->runtime_launch};
    ovl_kernel_row k = {gpu0 + ns(i * p->layer_compute_ns), gpu0 + ns((i + 1) * p->layer_compute_ns), DEVICE,
                        OVL_SIM_COMPUTE_STREAM, corr, names->layer_kernel, {OVL_NONE, OVL_NONE, OVL_NONE},
                        {OVL_NONE, OVL_NONE, OVL_NONE}};
    rc = ovl_tw_api(w, &api, err);
    if (!rc) rc = ovl_tw_kernel(w, &k, err);
  }
  for (int b = 0; !rc && b < s->nbuckets; b++) {
    const ovl_sim_bucket *bk = &s->buckets[b];
    char text[128];
    for (int l = bk->first_layer; !rc && l < bk->first_layer + bk->nlayers; l++) {
      snprintf(text, sizeof text, "grad_ready bucket=%d bytes=%.0f param=layer%d", b, p->layer_bytes, l);
      ovl_nvtx_row mark = {gpu0 + ns((l + 1) * p->layer_compute_ns), OVL_NONE, HOST_TID, "ovl", text};
      rc = ovl_tw_nvtx(w, &mark, err);
    }
    int64_t ready = gpu0 + ns(bk->ready_ns);
    int64_t corr = (*next_correlation)++;
    int64_t bytes = (int64_t)llround(bk->bytes);
    ovl_collective_row c = {OVL_NONE, 1, 0, nranks, (*seq)++, "AllReduce", bytes / 4, "Float32", bytes, "Sum", -1,
                            DEVICE, OVL_SIM_COMM_STREAM, ready, ready + 2000, HOST_TID, OVL_NONE};
    int64_t id = 0;
    snprintf(text, sizeof text, "bucket %d", b);
    ovl_nvtx_row range = {ready, ready + 2000, HOST_TID, "ovl", text};
    ovl_api_row api = {ready, ready + 1000, HOST_TID, corr, names->driver_launch};
    ovl_kernel_row k = {gpu0 + ns(bk->start_ns), gpu0 + ns(bk->end_ns), DEVICE, OVL_SIM_COMM_STREAM, corr, names->nccl_kernel,
                        {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
    if (!rc) rc = ovl_tw_collective(w, &c, &id, err);
    if (!rc) rc = ovl_tw_launch(w, id, corr, err);
    if (!rc) rc = ovl_tw_nvtx(w, &range, err);
    if (!rc) rc = ovl_tw_api(w, &api, err);
    if (!rc) rc = ovl_tw_kernel(w, &k, err);
  }
  return rc;
}

int ovl_sim_emit_trace(const char *path, const ovl_sim_params *p, const ovl_sim_result *s,
                       const ovl_sim_trace_options *opt, ovl_err *err) {
  ovl_trace_writer *w = NULL;
  int rc = ovl_tw_open(&w, path, err);
  if (rc) return rc;
  sim_names names;
  rc = ovl_tw_meta(w, "rank", "0", err);
  if (!rc) rc = ovl_tw_meta_int(w, "world_size", opt->nranks, err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", "simulator", err);
  if (!rc) rc = ovl_tw_meta(w, "pid", "0", err);
  if (!rc) rc = ovl_tw_meta(w, "clock", "simulated", err);
  if (!rc) rc = ovl_tw_meta(w, "realtime_offset_ns", "0", err);
  if (!rc) rc = ovl_tw_meta(w, "ovl_version", OVL_VERSION_STRING, err);
  if (!rc && opt->cmdline) rc = ovl_tw_meta(w, "cmdline", opt->cmdline, err);
  if (!rc) rc = ovl_tw_meta(w, "dropped_records", "0", err);
  if (!rc) rc = ovl_tw_intern(w, "ovl_sim_layer_backward", &names.layer_kernel, err);
  if (!rc) rc = ovl_tw_intern(w, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &names.nccl_kernel, err);
  if (!rc) rc = ovl_tw_intern(w, "cudaLaunchKernel", &names.runtime_launch, err);
  if (!rc) rc = ovl_tw_intern(w, "cuLaunchKernelEx", &names.driver_launch, err);
  int64_t host = 1000000, corr = 1, seq = 0;
  for (int step = 0; !rc && step < opt->steps; step++) {
    int64_t end = host + OVL_SIM_STEP_LEAD_NS + ns(s->overlap_ns) + OVL_SIM_STEP_TAIL_NS;
    ovl_nvtx_row range = {host, end, HOST_TID, "ovl", "step"};
    rc = ovl_tw_nvtx(w, &range, err);
    if (!rc) rc = emit_step(w, p, s, host, &corr, &seq, opt->nranks, &names, err);
    host = end;
  }
  int crc = ovl_tw_close(w, rc ? NULL : err);
  return rc ? rc : crc;
}
