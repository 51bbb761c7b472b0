/* JSON report writer: see report_json.h. */
#include "report_json.h"

#include "../base/json_out.h"

static void opt_int(ovl_json *j, const char *key, int64_t v) {
  if (v == OVL_NONE) ovl_json_null(j, key);
  else ovl_json_int(j, key, v);
}

static void totals(ovl_json *j, const ovl_totals *t) {
  ovl_json_int(j, "t_compute_ns", t->compute);
  ovl_json_int(j, "t_comm_ns", t->comm);
  ovl_json_int(j, "t_exposed_ns", t->exposed);
  ovl_json_double(j, "overlap_efficiency", ovl_overlap_efficiency(t));
  ovl_json_int(j, "t_memory_ns", t->memory);
}

static void findings_array(ovl_json *j, const ovl_finding *f, size_t n) {
  ovl_json_array_begin(j, "findings");
  for (size_t i = 0; i < n; i++) {
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "code", f[i].code);
    ovl_json_string(j, "message", f[i].message);
    ovl_json_int(j, "recoverable_ns", f[i].recoverable_ns);
    if (f[i].step >= 0) ovl_json_int(j, "step", f[i].step);
    opt_int(j, "at_ns", f[i].at_ns);
    if (f[i].steps_affected > 0) ovl_json_int(j, "steps_affected", f[i].steps_affected);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

static void collective(ovl_json *j, const ovl_coll_result *c) {
  ovl_json_object_begin(j, NULL);
  ovl_json_int(j, "order", c->order);
  ovl_json_string(j, "op", ovl_op_name(c->op));
  opt_int(j, "bytes", c->bytes);
  if (c->bucket >= 0) ovl_json_int(j, "bucket", c->bucket);
  else ovl_json_null(j, "bucket");
  opt_int(j, "host_launch_ns", c->host_launch);
  ovl_json_int(j, "gpu_start_ns", c->gpu_start);
  ovl_json_int(j, "gpu_end_ns", c->gpu_end);
  ovl_json_int(j, "exposed_ns", c->exposed);
  opt_int(j, "ready_ns", c->ready);
  opt_int(j, "readiness_stall_ns", c->stall);
  opt_int(j, "queueing_ns", c->queueing);
  ovl_json_string(j, "role", ovl_coll_role_name(c->role));
  if (c->ready_order >= 0) ovl_json_int(j, "ready_order", c->ready_order);
  else ovl_json_null(j, "ready_order");
  ovl_json_double(j, "algbw_gbps", c->algbw_gbps);
  ovl_json_double(j, "busbw_gbps", c->busbw_gbps);
  opt_int(j, "id", c->id);
  opt_int(j, "comm", c->comm);
  opt_int(j, "seq", c->seq);
  opt_int(j, "nranks", c->nranks);
  opt_int(j, "stream", c->stream);
  if (c->dtype[0]) ovl_json_string(j, "dtype", c->dtype);
  ovl_json_object_end(j);
}

/* Gradient collectives (by "order") sorted by readiness; null when no readiness is known. */
static void expected_order(ovl_json *j, const ovl_step_result *st) {
  int any = 0;
  for (size_t i = 0; i < st->ncolls; i++) any |= st->colls[i].ready_order >= 0;
  ovl_json_bool(j, "misordered", st->misordered);
  if (!any) {
    ovl_json_null(j, "expected_order");
    return;
  }
  ovl_json_array_begin(j, "expected_order");
  for (int pos = 0; pos < st->ngrad; pos++)
    for (size_t i = 0; i < st->ncolls; i++)
      if (st->colls[i].ready_order == pos) ovl_json_int(j, NULL, st->colls[i].order);
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

static void slowdowns_array(ovl_json *j, const ovl_rank_result *r) {
  ovl_json_array_begin(j, "slowdowns");
  for (size_t i = 0; i < r->nslowdowns; i++) {
    const ovl_kernel_slowdown *k = &r->slowdowns[i];
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "kernel", k->name);
    if (k->grid[0] != OVL_NONE) {
      ovl_json_array_begin(j, "grid");
      for (int d = 0; d < 3; d++) ovl_json_int(j, NULL, k->grid[d]);
      ovl_json_array_end(j);
    } else {
      ovl_json_null(j, "grid");
    }
    ovl_json_int(j, "runs", k->runs);
    ovl_json_int(j, "runs_alone", k->runs_alone);
    ovl_json_int(j, "runs_overlapped", k->runs_overlapped);
    ovl_json_double(j, "alone_ns", k->alone_ns);
    ovl_json_double(j, "slowdown", k->factor);
    ovl_json_double(j, "cost_ns", k->cost_ns);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

static void rank_object(ovl_json *j, const ovl_rank_result *r) {
  ovl_json_object_begin(j, NULL);
  opt_int(j, "rank", r->rank);
  ovl_json_int(j, "device", r->device);
  ovl_json_string(j, "trace", r->trace_path);
  ovl_json_string(j, "hostname", r->hostname);
  opt_int(j, "world_size", r->world_size);
  totals(j, &r->totals);
  ovl_json_string(j, "step_detection", ovl_step_method_name(r->step_detection));
  ovl_json_string(j, "step_projection", ovl_step_projection_name(r->step_projection));
  ovl_json_int(j, "kernels", r->n_kernels);
  ovl_json_int(j, "comm_kernels", r->n_comm_kernels);
  ovl_json_int(j, "memops", r->n_memops);
  ovl_json_int(j, "collectives_outside_steps", r->colls_outside_steps);
  ovl_json_int(j, "collectives_without_gpu_work", r->colls_without_gpu_work);
  ovl_json_bool(j, "first_step_differs", r->first_step_differs);
  streams_array(j, r);
  slowdowns_array(j, r);
  ovl_json_array_begin(j, "steps");
  for (size_t s = 0; s < r->nsteps; s++) {
    const ovl_step_result *st = &r->steps[s];
    ovl_json_object_begin(j, NULL);
    ovl_json_int(j, "index", st->index);
    ovl_json_int(j, "start_ns", st->start);
    ovl_json_int(j, "end_ns", st->end);
    totals(j, &st->totals);
    opt_int(j, "backward_end_ns", st->backward_end);
    opt_int(j, "gradient_bytes", st->grad_bytes);
    ovl_json_int(j, "gradient_collectives", st->ngrad);
    ovl_json_array_begin(j, "collectives");
    for (size_t i = 0; i < st->ncolls; i++) collective(j, &st->colls[i]);
    ovl_json_array_end(j);
    expected_order(j, st);
    findings_array(j, st->findings, st->nfindings);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
  findings_array(j, r->findings, r->nfindings);
  ovl_json_object_end(j);
}

void ovl_report_json(FILE *out, const ovl_rank_result *ranks, size_t nranks, const ovl_finding *findings,
                     size_t nfindings, int pretty) {
  ovl_json j;
  ovl_json_init(&j, out, pretty);
  ovl_json_object_begin(&j, NULL);
  ovl_json_int(&j, "ovl_report_version", 1);
  ovl_json_array_begin(&j, "ranks");
  for (size_t i = 0; i < nranks; i++) rank_object(&j, &ranks[i]);
  ovl_json_array_end(&j);
  findings_array(&j, findings, nfindings);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
}
