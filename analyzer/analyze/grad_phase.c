/* The gradient phase of a step: see grad_phase.h. */
#include "grad_phase.h"
#include "base/sane_values.h"

#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

static int on_compute_stream(const ovl_rank_result *r, const ovl_coll_result *c) {
  if (ovl_coll_stream(c) == OVL_NONE) return 0;
  for (size_t i = 0; i < r->nstreams; i++)
    if (r->streams[i].stream == ovl_coll_stream(c)) return r->streams[i].compute_ns > r->streams[i].comm_ns;
  return 0;
}

static int integer_dtype(const char *dtype) {
  return strncmp(dtype, "Int", 3) == 0 || strncmp(dtype, "int", 3) == 0 || strncmp(dtype, "Uint", 4) == 0 ||
         strncmp(dtype, "uint", 4) == 0;
}

static ovl_coll_role role_of(const ovl_rank_result *r, const ovl_coll_result *c, int step_has_buckets) {
  if (on_compute_stream(r, c)) return OVL_ROLE_BLOCKING;
  if (c->op == OVL_OP_ALLREDUCE && c->bucket < 0 && integer_dtype(ovl_coll_dtype(c))) return OVL_ROLE_UNUSED_MAP;
  if (step_has_buckets) return c->bucket >= 0 ? OVL_ROLE_GRADIENT : OVL_ROLE_OTHER;
  if (c->op != OVL_OP_ALLREDUCE && c->op != OVL_OP_REDUCESCATTER) return OVL_ROLE_OTHER;
  return (c->bytes == OVL_NONE || c->bytes > OVL_SCALAR_BYTES) ? OVL_ROLE_GRADIENT : OVL_ROLE_OTHER;
}

typedef struct ready_key {
  int64_t ready;
  int order;
  ovl_coll_result *c;
} ready_key;

static int cmp_ready(const void *pa, const void *pb) {
  const ready_key *a = pa, *b = pb;
  if (a->ready != b->ready) return a->ready < b->ready ? -1 : 1;
  return (a->order > b->order) - (a->order < b->order);
}

/* A profiler window that opens mid-run (a PyTorch profiler schedule, a capture started late)
** holds, at its start, GPU work launched before it: the previous iteration's last collectives,
** with no launching call in the trace. In the first step, a collective without a host launch
** that starts before the first collective whose launch the trace holds is such work. */
static int64_t first_launched_start(const ovl_step_result *st) {
  int64_t first = OVL_NONE;
  for (size_t i = 0; i < st->ncolls; i++)
    if (ovl_coll_host_launch(&st->colls[i]) != OVL_NONE && (first == OVL_NONE || st->colls[i].gpu_start < first))
      first = st->colls[i].gpu_start;
  return first;
}

void ovl_grad_phase(const ovl_rank_result *r, ovl_step_result *st) {
  int has_buckets = 0;
  for (size_t i = 0; i < st->ncolls; i++) has_buckets |= st->colls[i].bucket >= 0;
  int64_t window_start = st->index == 0 ? first_launched_start(st) : OVL_NONE;
  st->backward_end = st->grad_end = st->grad_bytes = OVL_NONE;
  st->ngrad = 0;
  st->misordered = 0;
  size_t nready = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    ovl_coll_result *c = &st->colls[i];
    c->diag.role = role_of(r, c, has_buckets);
    if (window_start != OVL_NONE && ovl_coll_host_launch(c) == OVL_NONE && c->gpu_start < window_start)
      c->diag.role = OVL_ROLE_BEFORE_WINDOW;
    c->diag.ready_order = -1;
    if (c->diag.role != OVL_ROLE_GRADIENT) continue;
    st->ngrad++;
    int64_t before = ovl_coll_compute_before(c), end = ovl_coll_gpu_end(c);
    if (before != OVL_NONE && (st->backward_end == OVL_NONE || before > st->backward_end)) st->backward_end = before;
    if (st->grad_end == OVL_NONE || end > st->grad_end) st->grad_end = end;
    if (c->bytes != OVL_NONE)
      st->grad_bytes = ovl_sat_add(st->grad_bytes == OVL_NONE ? 0 : st->grad_bytes, c->bytes);
    nready += ovl_coll_ready(c) != OVL_NONE;
  }
  if (nready == 0) return;
  ready_key *keys = malloc(nready * sizeof *keys);
  if (!keys) return;  /* the order is an annotation: without memory it stays unknown */
  size_t k = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    ovl_coll_result *c = &st->colls[i];
    int64_t ready = ovl_coll_ready(c);
    if (c->diag.role == OVL_ROLE_GRADIENT && ready != OVL_NONE) keys[k++] = (ready_key){ready, c->order, c};
  }
  ovl_qsort(keys, k, sizeof *keys, cmp_ready);
  /* keys are in readiness order; the collectives sit in firing order */
  int pos = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    ovl_coll_result *c = &st->colls[i];
    if (c->diag.role != OVL_ROLE_GRADIENT || ovl_coll_ready(c) == OVL_NONE) continue;
    if (keys[pos].c != c) st->misordered = 1;
    pos++;
  }
  assert(k <= (size_t)OVL_READY_ORDER_MAX + 1);  /* a step's collectives are far fewer */
  for (size_t i = 0; i < k; i++) keys[i].c->diag.ready_order = (int)i;
  free(keys);
}

void ovl_grad_phases(ovl_rank_result *r) {
  for (size_t s = 0; s < r->nsteps; s++) ovl_grad_phase(r, &r->steps[s]);
  r->colls_before_window = 0;
  for (size_t i = 0; r->nsteps && i < r->steps[0].ncolls; i++)
    r->colls_before_window += r->steps[0].colls[i].diag.role == OVL_ROLE_BEFORE_WINDOW;
}

int ovl_step_marks_build(const ovl_rank_result *r, ovl_step_marks *out) {
  out->offset = calloc(r->nsteps + 1, sizeof *out->offset);
  out->marks = malloc((r->nmarks ? r->nmarks : 1) * sizeof *out->marks);
  if (!out->offset || !out->marks) {
    ovl_step_marks_free(out);
    return -1;
  }
  for (size_t i = 0; i < r->nmarks; i++) {
    long s = r->marks[i].step;
    if (s >= 0 && (size_t)s < r->nsteps) out->offset[s + 1]++;
  }
  for (size_t s = 0; s < r->nsteps; s++) out->offset[s + 1] += out->offset[s];
  size_t *fill = calloc(r->nsteps ? r->nsteps : 1, sizeof *fill);
  if (!fill) {
    ovl_step_marks_free(out);
    return -1;
  }
  for (size_t i = 0; i < r->nmarks; i++) {  /* stable: time order is kept within a step */
    long s = r->marks[i].step;
    if (s >= 0 && (size_t)s < r->nsteps) out->marks[out->offset[s] + fill[s]++] = r->marks[i];
  }
  free(fill);
  return 0;
}

void ovl_step_marks_free(ovl_step_marks *m) {
  free(m->offset);
  free(m->marks);
  m->offset = NULL;
  m->marks = NULL;
}

/* The approximate backward window: the last two thirds of [step start, backward end]. */
static double window_begin(const ovl_step_result *st) {
  double end = (double)st->backward_end;
  return end - 2.0 / 3.0 * (end - (double)st->start);
}

/* Bytes of the gradient collective of bucket k in the step, or -1. */
static int64_t bucket_bytes(const ovl_step_result *st, long k) {
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT && st->colls[i].bucket == k && st->colls[i].bytes != OVL_NONE)
      return st->colls[i].bytes;
  return -1;
}

/* The marks as gradients; marks without bytes share their bucket's bytes equally. */
/* 1 when a step's marks can be read on the GPU's timeline (ovl_grad_mark.gpu_t): every mark has
** its time there, and the marks follow different launches. Marks that all follow one launch
** came after the whole step was enqueued (a host that enqueues first and marks the GPU's
** progress, as ovl simulate does): there the host times are the readiness. */
static int marks_on_gpu(const ovl_grad_mark *m, size_t nm) {
  int known = 1, distinct = nm <= 1;
  for (size_t i = 0; i < nm; i++) {
    known &= m[i].gpu_t != OVL_NONE;
    distinct |= i > 0 && m[i].launch_corr != m[0].launch_corr;
  }
  return known && distinct;
}

static int from_marks(const ovl_step_result *st, const ovl_grad_mark *m, size_t nm, ovl_bm_grad *g) {
  int missing_bytes = 0, on_gpu = marks_on_gpu(m, nm);
  for (size_t i = 0; i < nm; i++) {
    g[i] = (ovl_bm_grad){(double)(on_gpu ? m[i].gpu_t : m[i].t), (double)m[i].bytes};
    missing_bytes |= m[i].bytes < 0;
  }
  if (!missing_bytes) return 0;
  for (size_t i = 0; i < nm; i++) {
    long count = 0;
    for (size_t j = 0; j < nm; j++) count += m[j].bucket == m[i].bucket;
    int64_t bytes = bucket_bytes(st, m[i].bucket);
    if (bytes < 0) return -1;
    g[i].bytes = (double)bytes / (double)count;
  }
  return 0;
}

int ovl_step_readiness(const ovl_step_result *st, const ovl_grad_mark *m, size_t nm, ovl_bm_grad **g, size_t *n,
                       int *approximated) {
  *g = NULL;
  *n = 0;
  *approximated = 0;
  if (st->ngrad == 0 || st->backward_end == OVL_NONE) return -1;
  if (nm > 0) {
    *g = malloc(nm * sizeof **g);
    if (!*g) return -1;
    if (from_marks(st, m, nm, *g) == 0) {
      *n = nm;
      return 0;
    }
    free(*g);
    *g = NULL;
  }
  if (st->grad_bytes == OVL_NONE || st->grad_bytes <= 0) return -1;
  size_t slices = 8 * (size_t)st->ngrad;
  slices = slices < OVL_APPROX_SLICES ? OVL_APPROX_SLICES : slices > OVL_APPROX_SLICES_MAX ? OVL_APPROX_SLICES_MAX : slices;
  *g = malloc(slices * sizeof **g);
  if (!*g) return -1;
  double end = (double)st->backward_end, begin = window_begin(st);
  for (size_t i = 0; i < slices; i++)
    (*g)[i] = (ovl_bm_grad){begin + (end - begin) * (double)(i + 1) / (double)slices,
                            (double)st->grad_bytes / (double)slices};
  *n = slices;
  *approximated = 1;
  return 0;
}

int ovl_bucket_ready_times(const ovl_step_result *st, const ovl_grad_mark *m, size_t nm, double *ready,
                           int *approximated) {
  *approximated = 0;
  if (nm == 0 && st->grad_bytes == OVL_NONE && st->backward_end != OVL_NONE) {
    /* No marks, no sizes: the collectives share the backward window equally. */
    double begin = window_begin(st), end = (double)st->backward_end;
    for (int k = 0; k < st->ngrad; k++) ready[k] = begin + (end - begin) * (double)(k + 1) / (double)st->ngrad;
    for (size_t i = 0, k = 0; i < st->ncolls; i++) {
      int64_t r = ovl_coll_ready(&st->colls[i]);
      if (st->colls[i].diag.role == OVL_ROLE_GRADIENT && r != OVL_NONE) ready[k++] = (double)r;
    }
    *approximated = 1;
    return 0;
  }
  ovl_bm_grad *g = NULL;
  size_t ng = 0, k = 0, gi = 0;
  int curve_approx = 0, have_curve = -1, on_gpu = marks_on_gpu(m, nm);
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT) on_gpu &= ovl_coll_ready_gpu(&st->colls[i]) != OVL_NONE;
  double cum = 0, done = 0;  /* bytes of the buckets so far; bytes of the curve passed */
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->diag.role != OVL_ROLE_GRADIENT) continue;
    if (c->bytes != OVL_NONE) cum += (double)c->bytes;
    if (ovl_coll_ready(c) != OVL_NONE) {
      ready[k++] = (double)(on_gpu ? ovl_coll_ready_gpu(c) : ovl_coll_ready(c));
      continue;
    }
    if (have_curve < 0) have_curve = ovl_step_readiness(st, m, nm, &g, &ng, &curve_approx) == 0;
    if (!have_curve || c->bytes == OVL_NONE || ng == 0) {
      free(g);
      return -1;
    }
    /* The first point of the curve where its cumulative bytes reach this bucket's. */
    while (gi + 1 < ng && done + g[gi].bytes < cum * (1 - 1e-12)) done += g[gi++].bytes;
    ready[k++] = g[gi].ready_ns;
    *approximated = 1;
  }
  free(g);
  return 0;
}
