/*
** Timeline export of a job: see export.h. Lays out one process per rank (in rank order),
** its step track with the findings, then the passes over each trace file (export_file.c).
*/
#include "export_internal.h"

#include "base/vec.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An entry of a step track: a step, or a finding shown as an instant at its step. */
typedef struct step_entry {
  int64_t t, end;
  const ovl_step_result *step;   /* NULL for a finding */
  const ovl_finding *finding;
  const ovl_step_result *of;     /* a finding's step, NULL for a rank's (ovl_finding_message) */
} step_entry;

static int cmp_step_entry(const void *pa, const void *pb) {
  const step_entry *a = pa, *b = pb;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  if ((a->step == NULL) != (b->step == NULL)) return a->step ? -1 : 1;  /* the step encloses its findings */
  if (a->end != b->end) return a->end > b->end ? -1 : 1;
  return 0;
}

/* st: the step whose findings hold fd, NULL for a rank's or the job's. */
static int draw_finding(ovl_exporter *ex, xgroup *g, const ovl_step_result *st, const ovl_finding *fd, int64_t t,
                        ovl_err *err) {
  char buf[OVL_FINDING_TEXT_MAX];
  const char *text = ovl_finding_message(st, fd, buf, sizeof buf);
  if (!text && fd->text) return ovl_oom(err, "findings");
  ovl_xarg a[2] = {{"message", OVL_XARG_STRING, 0, 0, text ? text : ""},
                   {"recoverable_ns", OVL_XARG_INT, fd->recoverable_ns, 0, NULL}};
  ovl_xslice sl = {t, t, xname(ex, fd->code), fd->code, "finding", a, 2, NULL, 0, NULL, 0};
  if (!sl.name_iid) return ovl_oom(err, "names");
  return xgroup_slice(ex, g, &sl, 1, err);
}

static int draw_step(ovl_exporter *ex, xgroup *g, const ovl_step_result *st, ovl_err *err) {
  double eff = ovl_overlap_efficiency(&st->totals);
  char name[96];
  if (isnan(eff)) snprintf(name, sizeof name, "step %ld: no communication", st->index);
  else snprintf(name, sizeof name, "step %ld: overlap %.0f%%", st->index, eff * 100.0);
  ovl_xarg a[4] = {{"t_compute_ns", OVL_XARG_INT, st->totals.compute, 0, NULL},
                   {"t_comm_ns", OVL_XARG_INT, st->totals.comm, 0, NULL},
                   {"t_exposed_ns", OVL_XARG_INT, st->totals.exposed, 0, NULL},
                   {"overlap_efficiency", OVL_XARG_DOUBLE, 0, eff, NULL}};
  size_t nargs = isfinite(eff) ? 4 : 3;  /* no communication: no efficiency, rather than NaN */
  /* per parallelism dimension with collectives in the step (job_dims.h): its comm and exposed time */
  static const char *const comm_keys[OVL_DIM_COUNT] = {NULL, "dp_comm_ns", "tp_comm_ns", "pp_comm_ns", "ep_comm_ns"};
  static const char *const exposed_keys[OVL_DIM_COUNT] = {NULL, "dp_exposed_ns", "tp_exposed_ns", "pp_exposed_ns",
                                                          "ep_exposed_ns"};
  ovl_xarg all[4 + 2 * OVL_DIM_COUNT];
  memcpy(all, a, nargs * sizeof *a);
  for (int d = 1; d < OVL_DIM_COUNT; d++) {
    ovl_dim_totals t = ovl_step_dim(st, d);
    if (t.colls == 0) continue;
    all[nargs++] = (ovl_xarg){comm_keys[d], OVL_XARG_INT, t.comm, 0, NULL};
    all[nargs++] = (ovl_xarg){exposed_keys[d], OVL_XARG_INT, t.exposed, 0, NULL};
  }
  ovl_xslice sl = {st->start, st->end, xname(ex, name), name, "step", all, nargs, NULL, 0, NULL, 0};
  if (!sl.name_iid) return ovl_oom(err, "names");
  return xgroup_slice(ex, g, &sl, 0, err);
}

/* The time a rank-level finding is shown at: its step's start, else the rank's first. */
static int64_t finding_time(const ovl_rank_result *r, const ovl_finding *fd) {
  if (fd->step >= 0 && (size_t)fd->step < r->nsteps) return r->steps[fd->step].start;
  if (r->nsteps) return r->steps[0].start;
  return r->totals.busy_start != INT64_MAX ? r->totals.busy_start : 0;
}

static int draw_steps(ovl_exporter *ex, uint32_t proc, ovl_err *err) {
  const ovl_rank_result *r = ex->procs[proc].r;
  size_t n = r->nsteps + r->nfindings;
  for (size_t s = 0; s < r->nsteps; s++) n += r->steps[s].nfindings;
  if (n == 0) return OVL_OK;
  step_entry *e = malloc(n * sizeof *e);
  if (!e) return ovl_oom(err, "steps");
  size_t k = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    const ovl_step_result *st = &r->steps[s];
    e[k++] = (step_entry){st->start, st->end, st, NULL, NULL};
    for (size_t i = 0; i < st->nfindings; i++)
      e[k++] = (step_entry){st->start, st->start, NULL, &st->findings[i], st};
  }
  for (size_t i = 0; i < r->nfindings; i++) {
    int64_t t = finding_time(r, &r->findings[i]);
    e[k++] = (step_entry){t, t, NULL, &r->findings[i], NULL};
  }
  ovl_qsort(e, k, sizeof *e, cmp_step_entry);
  xgroup g;
  int rc = xgroup_init(&g, OVL_LANES_NESTED, proc, "steps", 0, -1) ? ovl_oom(err, "steps") : OVL_OK;
  for (size_t i = 0; !rc && i < k; i++)
    rc = e[i].step ? draw_step(ex, &g, e[i].step, err) : draw_finding(ex, &g, e[i].of, e[i].finding, e[i].t, err);
  if (!rc) rc = xgroup_close(ex, &g, err);
  else xgroup_free(&g);
  free(e);
  return rc;
}

/* Job-level findings on a trace-wide track, at the start of the earliest rank. */
static int draw_job_findings(ovl_exporter *ex, const ovl_job *job, ovl_err *err) {
  if (!job->nfindings) return OVL_OK;
  int64_t t = INT64_MAX;
  for (uint32_t p = 0; p < ex->nprocs; p++) {
    const ovl_rank_result *r = ex->procs[p].r;
    if (r->totals.busy_start != INT64_MAX && xtime(ex, p, r->totals.busy_start) < t)
      t = xtime(ex, p, r->totals.busy_start);
  }
  if (t == INT64_MAX) t = 0;
  xgroup g;
  if (xgroup_init(&g, OVL_LANES_NESTED, OVL_NO_PROCESS, "job findings", 0, -1)) return ovl_oom(err, "findings");
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < job->nfindings; i++) rc = draw_finding(ex, &g, NULL, &job->findings[i], t, err);
  if (!rc) rc = xgroup_close(ex, &g, err);
  else xgroup_free(&g);
  return rc;
}

/* Chrome JSON's time origin: the job's earliest known time (GPU work, steps), after clock
** offsets, rounded down to a millisecond. Host work before it gets small negative times. */
static int64_t time_origin(const ovl_exporter *ex) {
  int64_t t = INT64_MAX;
  for (uint32_t p = 0; p < ex->nprocs; p++) {
    const ovl_rank_result *r = ex->procs[p].r;
    if (r->totals.busy_start != INT64_MAX && xtime(ex, p, r->totals.busy_start) < t)
      t = xtime(ex, p, r->totals.busy_start);
    if (r->nsteps && xtime(ex, p, r->steps[0].start) < t) t = xtime(ex, p, r->steps[0].start);
  }
  if (t == INT64_MAX) return 0;
  int64_t ms = 1000000;
  return t >= 0 ? t / ms * ms : -((-t + ms - 1) / ms) * ms;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int declare_processes(ovl_exporter *ex, ovl_err *err) {
  /* Chrome pids are the ranks when every rank is known and unique. */
  int ranks_usable = 1;
  for (size_t i = 0; i < ex->nprocs && ranks_usable; i++) {
    if (ex->procs[i].r->rank == OVL_NONE) ranks_usable = 0;
    for (size_t j = 0; j < i && ranks_usable; j++)
      if (ex->procs[j].r->rank == ex->procs[i].r->rank) ranks_usable = 0;
  }
  int rc = OVL_OK;
  for (uint32_t i = 0; !rc && i < ex->nprocs; i++) {
    const ovl_rank_result *r = ex->procs[i].r;
    char name[512], device[32] = "?";
    if (r->device != OVL_NONE) snprintf(device, sizeof device, "%lld", (long long)r->device);
    const char *host = r->hostname && *r->hostname ? r->hostname : "unknown host";
    if (r->rank != OVL_NONE)
      snprintf(name, sizeof name, "rank %lld (%s, GPU %s)", (long long)r->rank, host, device);
    else snprintf(name, sizeof name, "rank ? (%s, GPU %s, %s)", host, device, base_name(r->trace_path));
    ovl_xprocess p = {i, r->rank, ranks_usable ? r->rank : (int64_t)i, name};
    rc = ex->sink.process(ex->sink.self, &p, err);
  }
  return rc;
}

/* The ovl trace a rank was analysed from (the job's conversion for a foreign file). */
static const char *rank_source(const ovl_rank_result *r) { return r->ovl_path ? r->ovl_path : r->trace_path; }

/* Ranks grouped by the ovl trace they were analysed from (a process that drives several GPUs
** gives several ranks; each process of an Nsight Systems export has a trace of its own). */
static int export_files(ovl_exporter *ex, ovl_err *err) {
  unsigned char *done = calloc(ex->nprocs ? ex->nprocs : 1, 1);
  uint32_t *group = malloc((ex->nprocs ? ex->nprocs : 1) * sizeof *group);
  int rc = (!done || !group) ? ovl_oom(err, "export") : OVL_OK;
  for (size_t i = 0; !rc && i < ex->nprocs; i++) {
    if (done[i]) continue;
    const char *source = rank_source(ex->procs[i].r);
    size_t n = 0;
    for (size_t j = i; j < ex->nprocs; j++)
      if (!done[j] && strcmp(rank_source(ex->procs[j].r), source) == 0) {
        done[j] = 1;
        group[n++] = (uint32_t)j;
      }
    rc = xfile_export(ex, source, ex->procs[i].r->trace_path, group, n, err);
  }
  free(done);
  free(group);
  return rc;
}

int ovl_export_job(const ovl_job *job, const ovl_analysis_ctx *ctx, const ovl_export_options *opt,
                   ovl_export_stats *stats, ovl_err *err) {
  ovl_exporter ex;
  memset(&ex, 0, sizeof ex);
  ex.ctx = ctx;
  ex.opt = opt;
  if (job->nranks == 0) return ovl_fail(err, OVL_EUSER, "%s: nothing to export (no ranks)", opt->path);
  /* export.h: ctx is the job's; the slices come from the conversions the job made with it */
  for (size_t i = 0; i < job->nsources; i++) assert(job->sources[i].opt.hta_compat == ctx->opt.import.hta_compat);
  ex.procs = calloc(job->nranks, sizeof *ex.procs);
  if (!ex.procs) return ovl_oom(err, "export");
  ex.nprocs = job->nranks;
  for (uint32_t i = 0; i < ex.nprocs; i++) {
    ex.procs[i].r = &job->ranks[i];
    ex.procs[i].index = i;
    ex.procs[i].offset = opt->rank_offsets ? opt->rank_offsets[i] : job->ranks[i].clock_offset;
  }
  while (((size_t)1 << ex.flow_proc_bits) < ex.nprocs) ex.flow_proc_bits++;
  int rc = opt->format == OVL_EXPORT_PERFETTO ? ovl_perfetto_sink_open(opt->path, &ex.sink, err)
                                              : ovl_chrome_sink_open(opt->path, time_origin(&ex), &ex.sink, err);
  int sink_open = !rc;
  if (!rc) rc = declare_processes(&ex, err);
  for (uint32_t p = 0; !rc && p < ex.nprocs; p++) rc = draw_steps(&ex, p, err);
  if (!rc) rc = draw_job_findings(&ex, job, err);
  if (!rc) rc = export_files(&ex, err);
  if (!rc) {
    rc = ex.sink.finish(ex.sink.self, err);
  } else if (sink_open) {
    ex.sink.destroy(ex.sink.self);
  }
  if (!rc && stats) {
    *stats = ex.stats;
    FILE *f = fopen(opt->path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0) stats->bytes = (uint64_t)ftell(f);
    if (f) fclose(f);
  }
  for (uint32_t p = 0; p < ex.nprocs; p++)
    if (ex.procs[p].counters.has_sweep) ovl_sweep_free(&ex.procs[p].counters.sweep);
  free(ex.procs);
  ovl_strmap_free(&ex.name_iids);
  for (size_t i = 0; i < ex.nnames; i++) free(ex.names[i]);
  free(ex.names);
  return rc;
}
