/* JSON report writer: see report_json.h. */
#include "report_json.h"

#include "base/json_out.h"
#include "report_dims.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void opt_int(ovl_json *j, const char *key, int64_t v) {
  if (v == OVL_NONE) ovl_json_null(j, key);
  else ovl_json_int(j, key, v);
}

/* An absolute time on the rank's clock, written as job time. */
static void time_ns(ovl_json *j, const char *key, int64_t v, int64_t offset) {
  opt_int(j, key, v == OVL_NONE ? OVL_NONE : v + offset);
}

static void totals(ovl_json *j, const ovl_totals *t) {
  ovl_json_int(j, "t_compute_ns", t->compute);
  ovl_json_int(j, "t_comm_ns", t->comm);
  ovl_json_int(j, "t_exposed_ns", t->exposed);
  ovl_json_double(j, "overlap_efficiency", ovl_overlap_efficiency(t));
  ovl_json_int(j, "t_memory_ns", t->memory);
}

/* HTA's temporal breakdown of the GPU's time (docs/report.md): the span from the first GPU
** work to the last, idle = span - busy, compute, non-compute = busy - compute. */
static void temporal_breakdown(ovl_json *j, const ovl_totals *t) {
  if (t->busy_start == INT64_MAX) {
    ovl_json_null(j, "temporal_breakdown");
    return;
  }
  int64_t span = t->busy_end - t->busy_start;
  ovl_json_object_begin(j, "temporal_breakdown");
  ovl_json_int(j, "span_ns", span);
  ovl_json_int(j, "idle_ns", span - t->busy);
  ovl_json_int(j, "compute_ns", t->compute);
  ovl_json_int(j, "non_compute_ns", t->busy - t->compute);
  ovl_json_double(j, "idle_share", span > 0 ? (double)(span - t->busy) / (double)span : NAN);
  ovl_json_double(j, "compute_share", span > 0 ? (double)t->compute / (double)span : NAN);
  ovl_json_double(j, "non_compute_share", span > 0 ? (double)(t->busy - t->compute) / (double)span : NAN);
  ovl_json_object_end(j);
}

/* st: the step whose findings these are, NULL for a rank's or the job's. */
static void findings_array(ovl_json *j, const ovl_step_result *st, const ovl_finding *f, size_t n, int64_t offset) {
  ovl_json_array_begin(j, "findings");
  for (size_t i = 0; i < n; i++) {
    char buf[OVL_FINDING_TEXT_MAX];
    const char *text = ovl_finding_message(st, &f[i], buf, sizeof buf);
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "code", f[i].code);
    if (!text && f[i].text) j->incomplete = 1;  /* no memory to write it: the report must not be kept */
    ovl_json_string(j, "message", text ? text : "");
    ovl_json_int(j, "recoverable_ns", f[i].recoverable_ns);
    if (f[i].step >= 0) ovl_json_int(j, "step", f[i].step);
    time_ns(j, "at_ns", f[i].at_ns, offset);
    if (f[i].steps_affected > 0) ovl_json_int(j, "steps_affected", f[i].steps_affected);
    if (ovl_confidence_name(f[i].confidence)) ovl_json_string(j, "confidence", ovl_confidence_name(f[i].confidence));
    else ovl_json_null(j, "confidence");
    if (f[i].evidence) ovl_json_string(j, "evidence", f[i].evidence);
    else ovl_json_null(j, "evidence");
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

/* NCCL's own account of a collective (its profiler plugin), when the trace has it. */
static void nccl_account(ovl_json *j, const ovl_coll_result *c) {
  const ovl_coll_extra *x = ovl_coll_extra_of(c);
  if (x->algorithm[0]) ovl_json_string(j, "algorithm", x->algorithm);
  if (x->protocol[0]) ovl_json_string(j, "protocol", x->protocol);
  const ovl_coll_channels *ch = &x->channels;
  if (ch->n <= 0) return;
  ovl_json_int(j, "channels", ch->n);
  ovl_json_int(j, "channel_spread_ns", ch->spread);
  ovl_json_string(j, "gpu_time_from", ch->timed ? "nccl_channels" : "gpu_work");
  opt_int(j, "channels_outside_gpu_work_ns", ch->outside);
}

/* Over the rank's collectives with NCCL's channel timing; null when none had any. */
static void channel_facts(ovl_json *j, const ovl_channel_facts *f) {
  if (f->collectives == 0) {
    ovl_json_null(j, "nccl_channels");
    return;
  }
  ovl_json_object_begin(j, "nccl_channels");
  ovl_json_int(j, "collectives", f->collectives);
  ovl_json_int(j, "gpu_time_from_channels", f->timed);
  ovl_json_int(j, "checked_against_gpu_work", f->checked);
  ovl_json_int(j, "agree", f->agree);
  opt_int(j, "max_outside_ns", f->max_outside);
  opt_int(j, "max_spread_ns", f->max_spread);
  opt_int(j, "max_spread_collective", f->max_spread_id);
  ovl_json_object_end(j);
}

static void collective(ovl_json *j, const ovl_coll_result *c, int64_t offset) {
  ovl_json_object_begin(j, NULL);
  ovl_json_int(j, "order", c->order);
  ovl_json_string(j, "op", ovl_op_name(c->op));
  opt_int(j, "bytes", c->bytes);
  if (c->bucket >= 0) ovl_json_int(j, "bucket", c->bucket);
  else ovl_json_null(j, "bucket");
  time_ns(j, "host_launch_ns", ovl_coll_host_launch(c), offset);
  time_ns(j, "gpu_start_ns", c->gpu_start, offset);
  time_ns(j, "gpu_end_ns", ovl_coll_gpu_end(c), offset);
  ovl_json_int(j, "exposed_ns", ovl_coll_exposed(c));
  time_ns(j, "ready_ns", ovl_coll_ready(c), offset);
  opt_int(j, "readiness_stall_ns", ovl_coll_stall(c));
  opt_int(j, "queueing_ns", ovl_coll_queueing(c));
  ovl_json_string(j, "role", ovl_coll_role_name(c->diag.role));
  if (c->diag.ready_order >= 0) ovl_json_int(j, "ready_order", c->diag.ready_order);
  else ovl_json_null(j, "ready_order");
  ovl_json_double(j, "algbw_gbps", ovl_coll_algbw(c));
  ovl_json_double(j, "busbw_gbps", ovl_coll_busbw(c));
  opt_int(j, "id", ovl_coll_id(c));
  opt_int(j, "comm", c->comm);
  opt_int(j, "seq", ovl_coll_seq(c));
  opt_int(j, "nranks", ovl_coll_nranks(c));
  opt_int(j, "stream", ovl_coll_stream(c));
  if (ovl_coll_dtype(c)[0]) ovl_json_string(j, "dtype", ovl_coll_dtype(c));
  nccl_account(j, c);
  if (c->cross) {
    ovl_json_int(j, "wait_ns", c->cross->wait_ns);
    ovl_json_int(j, "transfer_ns", ovl_coll_transfer_ns(c));
    ovl_json_int(j, "exposed_transfer_ns", c->cross->exposed_transfer_ns);
    ovl_json_bool(j, "arrived_last", c->cross->arrived_last);
    ovl_json_double(j, "transfer_busbw_gbps", ovl_coll_transfer_busbw(c));
  }
  ovl_report_dims_coll_json(j, c);
  ovl_json_object_end(j);
}

/* Gradient collectives (by "order") sorted by readiness; null when no readiness is known. */
static void expected_order(ovl_json *j, const ovl_step_result *st) {
  int any = 0;
  for (size_t i = 0; i < st->ncolls; i++) any |= st->colls[i].diag.ready_order >= 0;
  ovl_json_bool(j, "misordered", st->misordered);
  if (!any) {
    ovl_json_null(j, "expected_order");
    return;
  }
  ovl_json_array_begin(j, "expected_order");
  for (int pos = 0; pos < st->ngrad; pos++)
    for (size_t i = 0; i < st->ncolls; i++)
      if (st->colls[i].diag.ready_order == pos) ovl_json_int(j, NULL, st->colls[i].order);
  ovl_json_array_end(j);
}

static void streams_array(ovl_json *j, const ovl_rank_result *r) {
  ovl_json_array_begin(j, "streams");
  for (size_t i = 0; i < r->nstreams; i++) {
    const ovl_stream_stat *s = &r->streams[i];
    ovl_json_object_begin(j, NULL);
    ovl_json_int(j, "stream", s->stream);
    ovl_json_string(j, "role", ovl_stream_role_name(s));
    ovl_json_int(j, "compute_ns", s->compute_ns);
    ovl_json_int(j, "comm_ns", s->comm_ns);
    ovl_json_int(j, "memory_ns", s->memory_ns);
    ovl_json_int(j, "kernels", s->kernels);
    ovl_json_int(j, "memops", s->memops);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

/* [x, y, z] or null when unknown. */
static void dims_or_null(ovl_json *j, const char *key, const int64_t v[3]) {
  if (v[0] == OVL_NONE) {
    ovl_json_null(j, key);
    return;
  }
  ovl_json_array_begin(j, key);
  for (int d = 0; d < 3; d++) ovl_json_int(j, NULL, v[d]);
  ovl_json_array_end(j);
}

static void slowdowns_array(ovl_json *j, const ovl_rank_result *r) {
  ovl_json_array_begin(j, "slowdowns");
  for (size_t i = 0; i < r->nslowdowns; i++) {
    const ovl_kernel_slowdown *k = &r->slowdowns[i];
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "kernel", k->name);
    dims_or_null(j, "grid", k->grid);
    dims_or_null(j, "block", k->block);
    ovl_json_int(j, "runs", k->runs);
    ovl_json_int(j, "runs_alone", k->runs_alone);
    ovl_json_int(j, "runs_overlapped", k->runs_overlapped);
    ovl_json_double(j, "alone_ns", k->alone_ns);
    ovl_json_double(j, "alone_runs_mean_ns", k->alone_mean_ns);
    ovl_json_double(j, "alone_runs_sd_ns", k->alone_sd_ns);
    ovl_json_double(j, "slowdown", k->factor);
    ovl_json_double(j, "cost_ns", k->cost_ns);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

static void rank_cross(ovl_json *j, const ovl_rank_result *r) {
  const ovl_rank_cross *c = &r->cross;
  if (!c->in_job) {
    ovl_json_null(j, "cross_rank");
    return;
  }
  ovl_json_object_begin(j, "cross_rank");
  ovl_json_int(j, "collectives_matched", c->matched);
  ovl_json_int(j, "wait_ns", c->wait_ns);
  ovl_json_int(j, "transfer_ns", c->transfer_ns);
  ovl_json_int(j, "exposed_transfer_ns", c->exposed_transfer_ns);
  ovl_json_double(j, "overlap_efficiency_transfer",
                  c->transfer_ns > 0 ? 1.0 - (double)c->exposed_transfer_ns / (double)c->transfer_ns : NAN);
  ovl_json_int(j, "times_last", c->times_last);
  ovl_json_int(j, "decisive_arrivals", c->decisive);
  ovl_json_double(j, "p_value", c->p_value);
  ovl_json_bool(j, "straggler", c->straggler);
  ovl_json_int(j, "wait_caused_ns", c->wait_caused_ns);
  ovl_json_int(j, "late_gpu_ns", c->late_gpu_ns);
  opt_int(j, "late_host_ns", c->late_host_ns);
  ovl_json_object_end(j);
}

static void rank_object(ovl_json *j, const ovl_rank_result *r) {
  const int64_t off = r->clock_offset;
  ovl_json_object_begin(j, NULL);
  opt_int(j, "rank", r->rank);
  ovl_json_int(j, "device", r->device);
  ovl_json_int(j, "job", r->job);
  ovl_json_string(j, "trace", r->trace_path);
  if (r->hostname && r->hostname[0]) ovl_json_string(j, "hostname", r->hostname);
  else ovl_json_null(j, "hostname");
  opt_int(j, "world_size", r->world_size);
  totals(j, &r->totals);
  temporal_breakdown(j, &r->totals);
  ovl_json_string(j, "step_detection", ovl_step_method_name(r->step_detection));
  ovl_json_string(j, "step_projection", ovl_step_projection_name(r->step_projection));
  ovl_json_int(j, "kernels", r->n_kernels);
  ovl_json_int(j, "comm_kernels", r->n_comm_kernels);
  ovl_json_int(j, "memops", r->n_memops);
  ovl_json_int(j, "collectives_outside_steps", r->colls_outside_steps);
  ovl_json_int(j, "collectives_without_gpu_work", r->colls_without_gpu_work);
  ovl_json_int(j, "collectives_numbered_by_import", r->colls_numbered);
  ovl_json_bool(j, "first_step_differs", r->first_step_differs);
  ovl_json_int(j, "collectives_before_window", r->colls_before_window);
  ovl_json_int(j, "clock_offset_ns", r->clock_offset);
  channel_facts(j, &r->channel_facts);
  rank_cross(j, r);
  streams_array(j, r);
  slowdowns_array(j, r);
  ovl_json_array_begin(j, "steps");
  for (size_t s = 0; s < r->nsteps; s++) {
    const ovl_step_result *st = &r->steps[s];
    ovl_json_object_begin(j, NULL);
    ovl_json_int(j, "index", st->index);
    if (st->number >= 0) ovl_json_int(j, "profiler_step", st->number);
    else ovl_json_null(j, "profiler_step");
    time_ns(j, "start_ns", st->start, off);
    time_ns(j, "end_ns", st->end, off);
    totals(j, &st->totals);
    time_ns(j, "backward_end_ns", st->backward_end, off);
    opt_int(j, "gradient_bytes", st->grad_bytes);
    ovl_json_int(j, "gradient_collectives", st->ngrad);
    ovl_json_array_begin(j, "collectives");
    for (size_t i = 0; i < st->ncolls; i++) collective(j, &st->colls[i], off);
    ovl_json_array_end(j);
    expected_order(j, st);
    ovl_dim_totals dims[OVL_DIM_COUNT];
    for (int d = 0; d < OVL_DIM_COUNT; d++) dims[d] = ovl_step_dim(st, d);
    ovl_report_dims_totals_json(j, dims, 0);
    findings_array(j, st, st->findings, st->nfindings, off);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
  ovl_report_dims_totals_json(j, r->dims, (long)r->nsteps);
  ovl_report_dims_pipeline_json(j, r);
  findings_array(j, NULL, r->findings, r->nfindings, off);
  ovl_json_object_end(j);
}

/* The contract's top-level cross_rank object (null when no two ranks share a communicator). */
static void job_cross(ovl_json *j, const ovl_job *job) {
  const ovl_job_cross *c = &job->cross;
  if (!c->present) {
    ovl_json_null(j, "cross_rank");
    return;
  }
  ovl_json_object_begin(j, "cross_rank");
  ovl_json_array_begin(j, "ranks");
  for (size_t i = 0; i < c->nmembers; i++) opt_int(j, NULL, job->ranks[c->members[i]].rank);
  ovl_json_array_end(j);
  ovl_json_array_begin(j, "clock_offsets_ns");
  for (size_t i = 0; i < c->nmembers; i++) ovl_json_int(j, NULL, job->ranks[c->members[i]].clock_offset);
  ovl_json_array_end(j);
  ovl_json_int(j, "clock_residual_p50_ns", c->residual_p50);
  ovl_json_int(j, "clock_residual_p99_ns", c->residual_p99);
  ovl_json_int(j, "clock_alignment_samples", (int64_t)c->alignment_samples);
  ovl_json_int(j, "collectives_matched", (int64_t)c->matched);
  ovl_json_int(j, "unmatched", (int64_t)c->unmatched);
  ovl_json_int(j, "point_to_point", (int64_t)c->point_to_point);
  if (c->has_mismatch) ovl_json_string(j, "first_mismatch", c->mismatch);
  else ovl_json_null(j, "first_mismatch");
  ovl_json_int(j, "skew_p50_ns", c->skew_p50);
  ovl_json_int(j, "skew_p99_ns", c->skew_p99);
  ovl_json_int(j, "lateness_margin_ns", c->decisive_margin);
  ovl_json_array_begin(j, "stragglers");
  for (size_t i = 0; i < c->nmembers; i++) {
    const ovl_rank_result *r = &job->ranks[c->members[i]];
    if (!r->cross.straggler) continue;
    ovl_json_object_begin(j, NULL);
    opt_int(j, "rank", r->rank);
    ovl_json_int(j, "times_last", r->cross.times_last);
    ovl_json_int(j, "wait_caused_ns", r->cross.wait_caused_ns);
    ovl_json_double(j, "p_value", r->cross.p_value);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
  ovl_json_int(j, "t_comm_ns", c->t_comm);
  ovl_json_int(j, "t_exposed_ns", c->t_exposed);
  ovl_json_double(j, "overlap_efficiency", c->t_comm > 0 ? 1.0 - (double)c->t_exposed / (double)c->t_comm : NAN);
  ovl_json_int(j, "t_wait_ns", c->t_wait);
  ovl_json_int(j, "t_transfer_ns", c->t_transfer);
  ovl_json_int(j, "t_exposed_transfer_ns", c->t_exposed_transfer);
  ovl_json_double(j, "overlap_efficiency_transfer",
                  c->t_transfer > 0 ? 1.0 - (double)c->t_exposed_transfer / (double)c->t_transfer : NAN);
  ovl_json_int(j, "jobs", (int64_t)c->njobs);
  if (c->most_waited_for != SIZE_MAX) ovl_json_int(j, "most_waited_for_rank", job->ranks[c->most_waited_for].rank);
  else ovl_json_null(j, "most_waited_for_rank");
  ovl_json_object_end(j);
}

/* The jobs the traces come from (one unless they cannot all be one job): ranks[].job indexes it. */
static void jobs_array(ovl_json *j, const ovl_job *job) {
  ovl_json_array_begin(j, "jobs");
  for (size_t k = 0; k < job->nparts; k++) {
    const ovl_job_part *p = &job->parts[k];
    ovl_json_object_begin(j, NULL);
    opt_int(j, "world_size", p->world_size);
    ovl_json_array_begin(j, "ranks");
    for (size_t i = 0; i < p->nranks; i++) opt_int(j, NULL, job->ranks[p->ranks[i]].rank);
    ovl_json_array_end(j);
    ovl_json_array_begin(j, "traces");
    for (size_t i = 0; i < p->nranks; i++)
      if (i == 0 || strcmp(job->ranks[p->ranks[i]].trace_path, job->ranks[p->ranks[i - 1]].trace_path) != 0)
        ovl_json_string(j, NULL, job->ranks[p->ranks[i]].trace_path);
    ovl_json_array_end(j);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
  if (job->nparts > 1) ovl_json_string(j, "jobs_why", job->why_parts);
  else ovl_json_null(j, "jobs_why");
}

/* Traces without GPU work (host_only.h): who, why, and their host side. */
static void without_gpu(ovl_json *j, const ovl_job *job) {
  ovl_json_array_begin(j, "ranks_without_gpu");
  for (size_t i = 0; i < job->nno_gpu; i++) {
    const ovl_host_only *h = &job->no_gpu[i];
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "trace", h->trace_path);
    opt_int(j, "rank", h->rank);
    opt_int(j, "world_size", h->world_size);
    if (h->hostname) ovl_json_string(j, "hostname", h->hostname);
    else ovl_json_null(j, "hostname");
    ovl_json_string(j, "reason", h->reason);
    if (h->cupti) ovl_json_string(j, "cupti", h->cupti);
    else ovl_json_null(j, "cupti");
    ovl_json_int(j, "collectives", h->collectives);
    ovl_json_string(j, "collective_ops", h->ops);
    ovl_json_int(j, "collective_bytes", h->collective_bytes);
    ovl_json_int(j, "api_calls", h->api_calls);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

int ovl_report_json(FILE *out, const ovl_job *job, int pretty) {
  ovl_json j;
  ovl_json_init(&j, out, pretty);
  ovl_json_object_begin(&j, NULL);
  ovl_json_int(&j, "ovl_report_version", 1);
  ovl_json_array_begin(&j, "ranks");
  for (size_t i = 0; i < job->nranks; i++) rank_object(&j, &job->ranks[i]);
  ovl_json_array_end(&j);
  without_gpu(&j, job);
  jobs_array(&j, job);
  findings_array(&j, NULL, job->findings, job->nfindings, 0);
  job_cross(&j, job);
  ovl_report_dims_groups_json(&j, job);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
  return j.incomplete ? -1 : 0;
}
