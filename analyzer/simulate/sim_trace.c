/* Simulated schedule -> ovl trace: see sim_trace.h. */
#include "sim_trace.h"

#include "base/safe_output.h"

#include "store/trace_writer.h"

#include <math.h>
#include <stdio.h>

#define HOST_TID 1
#define DEVICE 0

static int64_t ns(double t) { return (int64_t)llround(t); }

/* strings.id of the names the trace uses */
typedef struct sim_names {
  int64_t layer_kernel, nccl_kernel, nccl_int_kernel, runtime_launch, driver_launch, memcpy_api;
} sim_names;

typedef struct step_writer {
  ovl_trace_writer *w;
  const sim_names *names;
  int64_t gpu0;              /* GPU time of the step's backward start */
  int64_t *next_correlation, *seq;
  int nranks;
  ovl_err *err;
} step_writer;

/* One collective: its row, launch link, api row, optional bucket range and its kernel. */
static int emit_coll(step_writer *sw, const ovl_sim_coll *c, const char *dtype, int64_t stream, int64_t kernel_name) {
  int64_t corr = (*sw->next_correlation)++;
  int64_t bytes = (int64_t)llround(c->bytes);
  int64_t launch = sw->gpu0 + ns(c->launch_ns);
  int64_t elem = 4;
  ovl_collective_row row = {OVL_NONE, 1, 0, sw->nranks, (*sw->seq)++, "AllReduce", bytes / elem, dtype, bytes, "Sum",
                            -1, DEVICE, stream, launch, launch + (int64_t)OVL_SIM_LAUNCH_NS / 2, HOST_TID, OVL_NONE};
  int64_t id = 0;
  ovl_api_row api = {launch, launch + 1000, HOST_TID, corr, sw->names->driver_launch};
  ovl_kernel_row k = {sw->gpu0 + ns(c->start_ns), sw->gpu0 + ns(c->end_ns), DEVICE, stream, corr, kernel_name,
                      {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
  int rc = ovl_tw_collective(sw->w, &row, &id, sw->err);
  if (!rc) rc = ovl_tw_launch(sw->w, id, corr, sw->err);
  if (!rc && c->bucket >= 0) {
    char text[64];
    snprintf(text, sizeof text, "bucket %d", c->bucket);
    ovl_nvtx_row range = {launch, launch + (int64_t)OVL_SIM_LAUNCH_NS / 2, HOST_TID, "ovl", text};
    rc = ovl_tw_nvtx(sw->w, &range, sw->err);
  }
  if (!rc) rc = ovl_tw_api(sw->w, &api, sw->err);
  if (!rc) rc = ovl_tw_kernel(sw->w, &k, sw->err);
  return rc;
}

/* Writes one step whose host range starts at host_origin. */
static int emit_step(step_writer *sw, const ovl_sim_step *s, int64_t host_origin) {
  const sim_names *names = sw->names;
  int rc = OVL_OK;
  size_t nl = s->nlayers;
  /* Host enqueues every layer's backward kernel during the lead-in, then the GPU runs them. */
  for (size_t i = 0; !rc && i < nl; i++) {
    int64_t corr = (*sw->next_correlation)++;
    int64_t launch = host_origin + (int64_t)((double)OVL_SIM_STEP_LEAD_NS / 2 * (1.0 + (double)i / (double)nl));
    ovl_api_row api = {launch, launch + 1, HOST_TID, corr, names->runtime_launch};
    ovl_kernel_row k = {sw->gpu0 + ns(s->layers[i].start_ns), sw->gpu0 + ns(s->layers[i].end_ns), DEVICE,
                        OVL_SIM_COMPUTE_STREAM, corr, names->layer_kernel, {OVL_NONE, OVL_NONE, OVL_NONE},
                        {OVL_NONE, OVL_NONE, OVL_NONE}};
    rc = ovl_tw_api(sw->w, &api, sw->err);
    if (!rc) rc = ovl_tw_kernel(sw->w, &k, sw->err);
  }
  for (size_t l = 0; !rc && l < nl; l++) {
    char text[128];
    snprintf(text, sizeof text, "grad_ready bucket=%d bytes=%.0f param=layer%zu", s->layers[l].bucket,
             s->layers[l].bytes, l);
    ovl_nvtx_row mark = {sw->gpu0 + ns(s->layers[l].end_ns), OVL_NONE, HOST_TID, "ovl", text};
    rc = ovl_tw_nvtx(sw->w, &mark, sw->err);
  }
  if (!rc && s->has_blocking) rc = emit_coll(sw, &s->blocking, "Float32", OVL_SIM_COMPUTE_STREAM, names->nccl_kernel);
  for (size_t b = 0; !rc && b < s->nbuckets; b++)
    rc = emit_coll(sw, &s->buckets[b], "Float32", OVL_SIM_COMM_STREAM, names->nccl_kernel);
  if (!rc && s->has_unused) {
    rc = emit_coll(sw, &s->unused, "Int32", OVL_SIM_COMM_STREAM, names->nccl_int_kernel);
    int64_t corr = (*sw->next_correlation)++;
    int64_t t0 = sw->gpu0 + ns(s->d2h_start_ns);
    ovl_api_row api = {sw->gpu0 + ns(s->unused.launch_ns) + 1500, sw->gpu0 + ns(s->d2h_end_ns), HOST_TID, corr,
                       names->memcpy_api};
    ovl_memop_row m = {t0, sw->gpu0 + ns(s->d2h_end_ns), DEVICE, OVL_SIM_COMPUTE_STREAM, corr, "DtoH",
                       (int64_t)llround(s->unused.bytes)};
    if (!rc) rc = ovl_tw_api(sw->w, &api, sw->err);
    if (!rc) rc = ovl_tw_memop(sw->w, &m, sw->err);
  }
  return rc;
}

static int write_meta(ovl_trace_writer *w, const ovl_sim_trace_options *opt, sim_names *names, ovl_err *err) {
  int rc = ovl_tw_meta(w, "rank", "0", err);
  if (!rc) rc = ovl_tw_meta_int(w, "world_size", opt->nranks, err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", "simulator", err);
  if (!rc) rc = ovl_tw_meta(w, "pid", "0", err);
  if (!rc) rc = ovl_tw_meta(w, "clock", "simulated", err);
  if (!rc) rc = ovl_tw_meta(w, "realtime_offset_ns", "0", err);
  if (!rc) rc = ovl_tw_meta(w, "ovl_version", OVL_VERSION_STRING, err);
  if (!rc && opt->cmdline) rc = ovl_tw_meta(w, "cmdline", opt->cmdline, err);
  if (!rc) rc = ovl_tw_meta(w, "dropped_records", "0", err);
  if (!rc) rc = ovl_tw_intern(w, "ovl_sim_layer_backward", &names->layer_kernel, err);
  if (!rc) rc = ovl_tw_intern(w, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &names->nccl_kernel, err);
  if (!rc) rc = ovl_tw_intern(w, "ncclDevKernel_AllReduce_Sum_i32_RING_LL", &names->nccl_int_kernel, err);
  if (!rc) rc = ovl_tw_intern(w, "cudaLaunchKernel", &names->runtime_launch, err);
  if (!rc) rc = ovl_tw_intern(w, "cuLaunchKernelEx", &names->driver_launch, err);
  if (!rc) rc = ovl_tw_intern(w, "cudaMemcpyAsync", &names->memcpy_api, err);
  return rc;
}

int ovl_sim_emit_trace(const char *path, const ovl_sim_params *p, int bucket_layers, const ovl_sim_trace_options *opt,
                       ovl_err *err) {
  const ovl_sim_faults *f = opt->faults;
  ovl_sim_step steady, first;
  if (ovl_sim_build_step(p, bucket_layers, f, 0, &steady))
    return ovl_fail(err, OVL_EUSER, "%s: bad model parameters for the trace", path);
  int single_first = f && f->first_step_single_bucket;
  if (single_first && ovl_sim_build_step(p, bucket_layers, f, 1, &first)) {
    ovl_sim_step_free(&steady);
    return ovl_fail(err, OVL_EUSER, "%s: bad model parameters for the trace", path);
  }
  ovl_trace_writer *w = NULL;
  ovl_safe_out out;
  int rc = ovl_safe_out_begin(&out, path, err);
  if (rc) {
    ovl_sim_step_free(&steady);
    if (single_first) ovl_sim_step_free(&first);
    return rc;
  }
  rc = ovl_tw_open_created(&w, out.temp, err);
  sim_names names;
  if (!rc) rc = write_meta(w, opt, &names, err);
  int64_t host = OVL_SIM_TRACE_ORIGIN_NS, corr = 1, seq = 0;
  step_writer sw = {w, &names, 0, &corr, &seq, opt->nranks, err};
  for (int step = 0; !rc && step < opt->steps; step++) {
    const ovl_sim_step *s = (single_first && step == 0) ? &first : &steady;
    int64_t end = host + OVL_SIM_STEP_LEAD_NS + ns(s->end_ns) + OVL_SIM_STEP_TAIL_NS;
    ovl_nvtx_row range = {host, end, HOST_TID, "ovl", "step"};
    sw.gpu0 = host + OVL_SIM_STEP_LEAD_NS;
    rc = ovl_tw_nvtx(w, &range, err);
    if (!rc) rc = emit_step(&sw, s, host);
    host = end;
  }
  ovl_sim_step_free(&steady);
  if (single_first) ovl_sim_step_free(&first);
  int crc = w ? ovl_tw_close(w, rc ? NULL : err) : OVL_OK;
  if (!rc) rc = crc;
  if (rc) ovl_safe_out_abort(&out);
  else rc = ovl_safe_out_commit(&out, err);
  return rc;
}
