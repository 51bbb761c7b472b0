/* A strategy's schedule -> one ovl trace per rank: see sim_strategy.h. */
#include "sim_strategy.h"

#include "base/safe_output.h"

#include "sim_trace.h"
#include "store/trace_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define HOST_TID 1
#define DEVICE 0

static int64_t ns(double t) { return (int64_t)llround(t); }

static int position_in(const ovl_pm_group *g, int rank) {
  for (int i = 0; i < g->nmembers; i++)
    if (g->members[i] == rank) return i;
  return -1;
}

static int write_rank(const char *path, const ovl_pm_job *job, int r, int steps, const char *cmdline, ovl_err *err) {
  const ovl_pm_rank *rk = &job->ranks[r];
  ovl_trace_writer *w = NULL;
  ovl_safe_out out;  /* a trace appears complete or not at all */
  int rc = ovl_safe_out_begin(&out, path, err);
  if (rc) return rc;
  rc = ovl_tw_open_created(&w, out.temp, err);
  if (!rc) rc = ovl_tw_meta_int(w, "rank", r, err);
  if (!rc) rc = ovl_tw_meta_int(w, "world_size", job->nranks, err);
  if (!rc) rc = ovl_tw_meta(w, "hostname", "simulator", err);
  if (!rc) rc = ovl_tw_meta_int(w, "pid", r, err);
  if (!rc) rc = ovl_tw_meta(w, "clock", "simulated", err);
  if (!rc) rc = ovl_tw_meta(w, "realtime_offset_ns", "0", err);
  if (!rc) rc = ovl_tw_meta(w, "ovl_version", OVL_VERSION_STRING, err);
  if (!rc && cmdline) rc = ovl_tw_meta(w, "cmdline", cmdline, err);
  if (!rc) rc = ovl_tw_meta(w, "dropped_records", "0", err);
  int64_t launch_name = 0;
  if (!rc) rc = ovl_tw_intern(w, "cudaLaunchKernel", &launch_name, err);
  int64_t seq[64] = {0}, corr = 1, host = OVL_SIM_TRACE_ORIGIN_NS;
  for (int s = 0; !rc && s < steps; s++) {
    int64_t gpu0 = host + OVL_SIM_STEP_LEAD_NS, end = gpu0 + ns(job->step_ns) + OVL_SIM_STEP_TAIL_NS;
    ovl_nvtx_row range = {host, end, HOST_TID, "ovl", "step"};
    rc = ovl_tw_nvtx(w, &range, err);
    for (size_t i = 0; !rc && i < rk->nev; i++) {
      const ovl_pm_event *e = &rk->ev[i];
      int64_t c = corr++, name = 0, launch = host + OVL_SIM_STEP_LEAD_NS / 4 + (int64_t)i;
      rc = ovl_tw_intern(w, e->kernel, &name, err);
      ovl_api_row api = {launch, launch + 1, HOST_TID, c, launch_name};
      ovl_kernel_row k = {gpu0 + ns(e->start_ns), gpu0 + ns(e->end_ns), DEVICE, e->stream, c, name,
                          {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
      if (!rc) rc = ovl_tw_api(w, &api, err);
      if (!rc) rc = ovl_tw_kernel(w, &k, err);
      if (rc || !e->op) continue;
      const ovl_pm_group *g = &job->groups[e->group];
      int64_t n = g->nmembers, bytes = ns(e->bytes);
      if (strcmp(e->op, "AllGather") == 0) bytes /= n;  /* the per-rank send size */
      int64_t issue = gpu0 + ns(e->issue_ns), id = 0;
      ovl_collective_row row = {OVL_NONE, OVL_SIM_GROUP_COMM(e->group), position_in(g, r), n, seq[e->group]++, e->op,
                                bytes / 4, "Float32", bytes, e->peer < 0 ? "Sum" : NULL, e->peer, DEVICE, e->stream,
                                issue, issue + 1000, HOST_TID, OVL_NONE};
      rc = ovl_tw_collective(w, &row, &id, err);
      if (!rc) rc = ovl_tw_launch(w, id, c, err);
    }
    host = end;
  }
  int crc = w ? ovl_tw_close(w, rc ? NULL : err) : OVL_OK;
  if (!rc) rc = crc;
  if (rc) ovl_safe_out_abort(&out);
  else rc = ovl_safe_out_commit(&out, err);
  return rc;
}

int ovl_sim_emit_strategy(const char *dir, const ovl_pm_job *job, int steps, const char *cmdline, ovl_err *err) {
  if (job->ngroups > 64) return ovl_fail(err, OVL_EUSER, "%s: too many process groups", dir);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return ovl_fail(err, OVL_EUSER, "%s: %s", dir, strerror(errno));
  int rc = OVL_OK;
  for (int r = 0; !rc && r < job->nranks; r++) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/rank%d.sqlite", dir, r) >= (int)sizeof path)
      return ovl_fail(err, OVL_EUSER, "%s: path too long", dir);
    rc = write_rank(path, job, r, steps, cmdline, err);
  }
  return rc;
}
