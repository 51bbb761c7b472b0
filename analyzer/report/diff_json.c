/* `ovl diff --json`: see diff_text.h and docs/diff.md for the keys. */
#include "diff_text.h"

#include "base/json_out.h"

#include <math.h>

/* {"before", "after", "change", "relative", "before_spread", "after_spread", "before_n", "after_n",
** "noise", "significant"} */
static void change(ovl_json *j, const char *key, const ovl_change *c) {
  ovl_json_object_begin(j, key);
  ovl_json_double(j, "before", c->from);
  ovl_json_double(j, "after", c->to);
  ovl_json_double(j, "change", c->delta);
  ovl_json_double(j, "relative", isinf(c->relative) ? NAN : c->relative);
  ovl_json_double(j, "before_spread", c->before.n ? c->before.spread : NAN);
  ovl_json_double(j, "after_spread", c->after.n ? c->after.spread : NAN);
  ovl_json_int(j, "before_n", (int64_t)c->before.n);
  ovl_json_int(j, "after_n", (int64_t)c->after.n);
  ovl_json_double(j, "noise", c->noise);
  ovl_json_bool(j, "significant", c->significant);
  ovl_json_object_end(j);
}

static void metrics(ovl_json *j, const char *key, const ovl_metrics_diff *m) {
  ovl_json_object_begin(j, key);
  for (int k = 0; k < OVL_M_COUNT; k++) change(j, ovl_metric_name((ovl_metric)k), &m->c[k]);
  ovl_json_int(j, "exposed_total_before_ns", m->before.exposed_total);
  ovl_json_int(j, "exposed_total_after_ns", m->after.exposed_total);
  const ovl_change *e = &m->c[OVL_M_EXPOSED];
  ovl_json_double(j, "exposed_recovered_per_step_ns", e->significant && e->delta < 0 ? -e->delta : 0.0);
  ovl_json_object_end(j);
}

static void side(ovl_json *j, const char *key, const ovl_profile *p) {
  size_t steps = 0;
  for (size_t i = 0; i < p->nranks; i++) steps = p->ranks[i].nsteps > steps ? p->ranks[i].nsteps : steps;
  ovl_json_object_begin(j, key);
  ovl_json_string(j, "input", p->label);
  ovl_json_string(j, "source", p->from_report ? "report" : "traces");
  ovl_json_int(j, "ranks", (int64_t)p->nranks);
  ovl_json_int(j, "steps", (int64_t)steps);
  ovl_json_object_end(j);
}

static void int_list(ovl_json *j, const char *key, const long *v, size_t n) {
  ovl_json_array_begin(j, key);
  for (size_t i = 0; i < n; i++) ovl_json_int(j, NULL, v[i]);
  ovl_json_array_end(j);
}

static void bucket_side(ovl_json *j, const char *key, const ovl_bucket_side *s) {
  ovl_json_object_begin(j, key);
  ovl_json_int(j, "steps", s->steps);
  ovl_json_int(j, "steps_with_gradients", s->grad_steps);
  ovl_json_int(j, "misordered_steps", s->misordered_steps);
  ovl_json_double(j, "buckets_per_step", s->buckets_per_step);
  ovl_json_double(j, "bytes_per_bucket", s->bytes_per_bucket);
  if (s->step >= 0) {
    if (s->rank == OVL_NONE) ovl_json_null(j, "rank");
    else ovl_json_int(j, "rank", s->rank);
    ovl_json_int(j, "step", s->step);
    int_list(j, "fired", s->fired, s->nfired);
    if (s->nready) int_list(j, "ready", s->ready, s->nready);
    else ovl_json_null(j, "ready");
  } else {
    ovl_json_null(j, "rank");
    ovl_json_null(j, "step");
    ovl_json_null(j, "fired");
    ovl_json_null(j, "ready");
  }
  ovl_json_object_end(j);
}

static const char *finding_status(ovl_diff_status s) {
  return s == OVL_DS_NEW ? "appeared" : s == OVL_DS_VANISHED ? "disappeared" : s == OVL_DS_CHANGED ? "changed" : "persists";
}

static void finding_side(ovl_json *j, const char *key, const ovl_finding_side *s) {
  if (!s->message) {
    ovl_json_null(j, key);
    return;
  }
  ovl_json_object_begin(j, key);
  ovl_json_int(j, "ranks", s->ranks);
  ovl_json_int(j, "steps", s->steps);
  ovl_json_int(j, "recoverable_ns", s->recoverable);
  if (s->confidence[0]) ovl_json_string(j, "confidence", s->confidence);
  else ovl_json_null(j, "confidence");
  if (s->evidence[0]) ovl_json_string(j, "evidence", s->evidence);
  else ovl_json_null(j, "evidence");
  ovl_json_string(j, "message", s->message);
  ovl_json_object_end(j);
}

static void comm_id(ovl_json *j, const char *key, int has, int64_t id) {
  if (has && id != OVL_NONE) ovl_json_int(j, key, id);
  else ovl_json_null(j, key);
}

static void collectives(ovl_json *j, const ovl_diff *d) {
  ovl_json_array_begin(j, "collectives");
  for (size_t i = 0; i < d->ncolls; i++) {
    const ovl_coll_diff *c = &d->colls[i];
    const ovl_comm_pair *cp = &d->comms[c->comm];
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "kind", c->index < 0 ? "per_step" : "call");
    comm_id(j, "comm_before", cp->has_before, cp->before);
    comm_id(j, "comm_after", cp->has_after, cp->after);
    ovl_json_string(j, "comms_paired_by", cp->by_id ? "id" : cp->has_before && cp->has_after ? "first_use" : "none");
    ovl_json_string(j, "op", ovl_op_name(c->op));
    if (c->index < 0) ovl_json_null(j, "index");
    else ovl_json_int(j, "index", c->index);
    ovl_json_string(j, "status", ovl_diff_status_name(c->status));
    if (c->bucket_before >= 0) ovl_json_int(j, "bucket_before", c->bucket_before);
    else ovl_json_null(j, "bucket_before");
    if (c->bucket_after >= 0) ovl_json_int(j, "bucket_after", c->bucket_after);
    else ovl_json_null(j, "bucket_after");
    change(j, "calls_per_step", &c->calls);
    change(j, c->index < 0 ? "time_per_step_ns" : "duration_ns", &c->duration);
    change(j, c->index < 0 ? "exposed_per_step_ns" : "exposed_ns", &c->exposed);
    change(j, c->index < 0 ? "bytes_per_step" : "bytes", &c->bytes);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

static void kernels(ovl_json *j, const ovl_diff *d) {
  ovl_json_bool(j, "kernels_compared", d->kernels_compared);
  if (!d->kernels_compared) {
    ovl_json_null(j, "kernels");
    return;
  }
  ovl_json_array_begin(j, "kernels");
  for (size_t i = 0; i < d->nkernels; i++) {
    const ovl_kernel_diff *k = &d->kernels[i];
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "name", k->name);
    ovl_json_string(j, "class", k->comm ? "communication" : "compute");
    ovl_json_string(j, "status", ovl_diff_status_name(k->status));
    change(j, "time_per_step_ns", &k->time);
    ovl_json_double(j, "count_per_step_before", k->count_before);
    ovl_json_double(j, "count_per_step_after", k->count_after);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

static void rank_id(ovl_json *j, const char *key, const ovl_profile *p, long i) {
  if (i < 0 || p->ranks[i].rank == OVL_NONE) ovl_json_null(j, key);
  else ovl_json_int(j, key, p->ranks[i].rank);
}

static void ranks(ovl_json *j, const ovl_diff *d) {
  ovl_json_string(j, "ranks_paired_by", d->ranks_by_number ? "rank" : "position");
  ovl_json_array_begin(j, "ranks");
  for (size_t i = 0; i < d->nranks; i++) {
    const ovl_rank_pair *p = &d->ranks[i];
    ovl_json_object_begin(j, NULL);
    rank_id(j, "rank_before", d->before, p->before);
    rank_id(j, "rank_after", d->after, p->after);
    if (p->before >= 0) ovl_json_string(j, "trace_before", d->before->ranks[p->before].trace);
    else ovl_json_null(j, "trace_before");
    if (p->after >= 0) ovl_json_string(j, "trace_after", d->after->ranks[p->after].trace);
    else ovl_json_null(j, "trace_after");
    metrics(j, "metrics", &p->m);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

static void gates(ovl_json *j, const ovl_diff_gate_line *g, size_t n) {
  ovl_json_array_begin(j, "gate");
  for (size_t i = 0; i < n; i++) {
    ovl_json_object_begin(j, NULL);
    ovl_json_string(j, "condition", g[i].cond->text);
    ovl_json_bool(j, "holds", g[i].result.holds);
    ovl_json_bool(j, "failed", g[i].result.failed);
    ovl_json_double(j, "observed", g[i].result.observed);
    ovl_json_string(j, "message", g[i].result.why);
    ovl_json_object_end(j);
  }
  ovl_json_array_end(j);
}

void ovl_diff_json(FILE *out, const ovl_diff *d, const ovl_diff_gate_line *g, size_t ngates, int pretty) {
  ovl_json j;
  ovl_json_init(&j, out, pretty);
  ovl_json_object_begin(&j, NULL);
  ovl_json_int(&j, "ovl_diff_version", 1);
  side(&j, "before", d->before);
  side(&j, "after", d->after);
  metrics(&j, "job", &d->job);
  ovl_json_object_begin(&j, "bucket_order");
  ovl_json_bool(&j, "changed", d->buckets.order_changed);
  ovl_json_bool(&j, "layout_changed", d->buckets.layout_changed);
  bucket_side(&j, "before", &d->buckets.before);
  bucket_side(&j, "after", &d->buckets.after);
  ovl_json_object_end(&j);
  ovl_json_array_begin(&j, "findings");
  for (size_t i = 0; i < d->nfindings; i++) {
    const ovl_finding_diff *f = &d->findings[i];
    ovl_json_object_begin(&j, NULL);
    ovl_json_string(&j, "code", f->code);
    ovl_json_string(&j, "status", finding_status(f->status));
    finding_side(&j, "before", &f->before);
    finding_side(&j, "after", &f->after);
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);
  collectives(&j, d);
  kernels(&j, d);
  ranks(&j, d);
  gates(&j, g, ngates);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
}
