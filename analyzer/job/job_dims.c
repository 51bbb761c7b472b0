/* The parallelism-dimension stage of a job: see job_dims.h. */
#include "job_dims.h"

#include "base/i64map.h"
#include "base/vec.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(OVL_OP_COUNT <= 16, "ovl_pgroup.ops holds every ovl_op");
_Static_assert(OVL_DIM_COUNT <= 8, "ovl_pgroup.nvtx_votes holds every ovl_pdim");

/* ---------------------------------------------------------------------------------- */
/* Overrides                                                                           */
/* ---------------------------------------------------------------------------------- */

/* One COMM=DIM of --dim: COMM a comm id, or a name the traces give process groups. */
typedef struct dim_override {
  const char *text;        /* COMM as given */
  int is_id;
  int64_t comm;
  ovl_pdim dim;
} dim_override;

/* Calls fn(ctx, o, err) for each COMM=DIM of the list; OVL_EUSER on a malformed item, or what
** fn returns. */
static int each_override(const char *list, int (*fn)(void *, const dim_override *, ovl_err *), void *ctx,
                         ovl_err *err) {
  if (!list) return OVL_OK;
  char buf[1024];
  if (strlen(list) >= sizeof buf) return ovl_fail(err, OVL_EUSER, "--dim: list too long");
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '='), *end = NULL;
    dim_override o = {tok, 0, 0, OVL_DIM_UNKNOWN};
    if (!eq) return ovl_fail(err, OVL_EUSER, "--dim '%s': expected COMM=DIM", tok);
    *eq = 0;
    if (!*tok) return ovl_fail(err, OVL_EUSER, "--dim '=%s': COMM must be a comm id or a process group's name", eq + 1);
    long long comm = strtoll(tok, &end, 10);
    o.is_id = end != tok && !*end;
    o.comm = (int64_t)comm;
    if (ovl_pdim_parse(eq + 1, &o.dim))
      return ovl_fail(err, OVL_EUSER, "--dim '%s': DIM must be dp, fsdp, tp, pp or ep", eq + 1);
    int rc = fn ? fn(ctx, &o, err) : OVL_OK;
    if (rc) return rc;
  }
  return OVL_OK;
}

int ovl_dim_overrides_check(const char *overrides, ovl_err *err) {
  return each_override(overrides, NULL, NULL, err);
}

typedef struct groups {
  OVL_VEC(ovl_pgroup) v;
  ovl_i64map by_comm;
} groups;

static void override_group(ovl_pgroup *g, ovl_pdim d) {
  g->dim = g->dense_dim = d;
  g->overridden = 1;
  snprintf(g->why, sizeof g->why, "override (--dim)");
}

/* A comm id names one group (none: nothing to do); a name every group of that name, and an
** unknown name is an error that lists the names there are. */
static int apply_override(void *ctx, const dim_override *o, ovl_err *err) {
  groups *g = ctx;
  int64_t i;
  if (o->is_id) {
    if (ovl_i64map_get(&g->by_comm, o->comm, &i)) override_group(&g->v.items[i], o->dim);
    return OVL_OK;
  }
  size_t hits = 0;
  for (size_t k = 0; k < g->v.len; k++)
    if (g->v.items[k].name && strcmp(g->v.items[k].name, o->text) == 0) override_group(&g->v.items[k], o->dim), hits++;
  if (hits) return OVL_OK;
  char names[512] = "";
  size_t used = 0;
  for (size_t k = 0; k < g->v.len && used < sizeof names; k++) {
    const char *n = g->v.items[k].name;
    if (!n || strstr(names, n)) continue;
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", n);
  }
  return ovl_fail(err, OVL_EUSER, "--dim '%s': no process group of the traces is named so (%s%s)", o->text,
                  used ? "names: " : "they name none; use a comm id from the report", names);
}

/* ---------------------------------------------------------------------------------- */
/* Groups                                                                              */
/* ---------------------------------------------------------------------------------- */

static int on_compute_stream(const ovl_rank_result *r, int64_t stream) {
  for (size_t i = 0; i < r->nstreams; i++)
    if (r->streams[i].stream == stream) return strcmp(ovl_stream_role_name(&r->streams[i]), "compute") == 0;
  return 0;
}

/* NCCL's send/recv kernels (SendRecv, inferred from kernel names) also carry all-to-all:
** counted with all-to-all when the group has any (classify_by_ops). */
static int is_a2a(ovl_op op) { return op == OVL_OP_ALLTOALL; }
static int is_p2p(ovl_op op) { return op == OVL_OP_SEND || op == OVL_OP_RECV || op == OVL_OP_SENDRECV; }

static int add_member(ovl_pgroup *g, int64_t rank) {
  for (size_t i = 0; i < g->nmembers; i++)
    if (g->members[i] == rank) return 0;
  int64_t *m = realloc(g->members, (g->nmembers + 1) * sizeof *m);
  if (!m) return -1;
  g->members = m;
  size_t at = g->nmembers++;
  while (at > 0 && m[at - 1] > rank) m[at] = m[at - 1], at--;
  m[at] = rank;
  return 0;
}

/* Notes collective c of rank r in its group; seen holds the comms r was already added to (a
** rank joins each group once, and brings its MoE evidence once: membership costs nothing per
** call). */
static int note_coll(groups *gs, const ovl_rank_result *r, const ovl_coll_result *c, ovl_i64map *seen, ovl_err *err) {
  if (c->comm == OVL_NONE) return OVL_OK;
  int64_t i;
  if (!ovl_i64map_get(&gs->by_comm, c->comm, &i)) {
    ovl_pgroup g;
    memset(&g, 0, sizeof g);
    g.comm = c->comm;
    g.nranks = OVL_NONE;
    g.name = ovl_rank_comm_name(r, c->comm);
    if (OVL_VEC_PUSH(&gs->v, g) || ovl_i64map_put(&gs->by_comm, c->comm, (int64_t)gs->v.len - 1))
      return ovl_oom(err, "process groups");
    i = (int64_t)gs->v.len - 1;
  }
  ovl_pgroup *g = &gs->v.items[i];
  if (!g->name) g->name = ovl_rank_comm_name(r, c->comm);
  if (ovl_coll_nranks(c) != OVL_NONE && ovl_coll_nranks(c) > g->nranks) g->nranks = ovl_coll_nranks(c);
  g->ops[(unsigned)c->op < OVL_OP_COUNT ? c->op : OVL_OP_UNKNOWN]++;
  if (c->pdim.nvtx > 0 && c->pdim.nvtx < OVL_DIM_COUNT) g->nvtx_votes[c->pdim.nvtx]++;
  g->colls++;
  int on_compute = ovl_coll_stream(c) != OVL_NONE && on_compute_stream(r, ovl_coll_stream(c));
  g->on_compute_stream += on_compute;
  if (!is_a2a(c->op) && !is_p2p(c->op)) {
    g->dense++;
    g->dense_on_compute += on_compute;
  }
  int64_t dummy;
  if (ovl_i64map_get(seen, c->comm, &dummy)) return OVL_OK;
  g->moe_kernels += r->n_moe_kernels;  /* once per rank and group */
  if (ovl_i64map_put(seen, c->comm, 1) || (r->rank != OVL_NONE && add_member(g, r->rank)))
    return ovl_oom(err, "process groups");
  return OVL_OK;
}

static void set_stride(ovl_pgroup *g) {
  g->stride = 0;
  if (g->nmembers < 2 || (g->nranks != OVL_NONE && (int64_t)g->nmembers != g->nranks)) return;
  int64_t s = g->members[1] - g->members[0];
  for (size_t i = 2; i < g->nmembers; i++)
    if (g->members[i] - g->members[i - 1] != s) return;
  g->stride = s;
}

/* Rules 2, 3 and 5 of job_dims.h; rule 4 needs every group (classify_by_stride). */
static void classify_by_ops(ovl_pgroup *g) {
  long a2a = g->ops[OVL_OP_ALLTOALL] + (g->ops[OVL_OP_ALLTOALL] ? g->ops[OVL_OP_SENDRECV] : 0);
  long p2p = g->ops[OVL_OP_SEND] + g->ops[OVL_OP_RECV] + (g->ops[OVL_OP_ALLTOALL] ? 0 : g->ops[OVL_OP_SENDRECV]);
  char dense_why[128];
  if (g->dense == 0) {
    g->dense_dim = OVL_DIM_UNKNOWN;
    dense_why[0] = 0;
  } else if (2 * g->dense_on_compute > g->dense) {
    g->dense_dim = OVL_DIM_TP;
    snprintf(dense_why, sizeof dense_why, "%ld of %ld dense calls run on a compute stream (compute waits for them)",
             g->dense_on_compute, g->dense);
  } else {
    g->dense_dim = OVL_DIM_DP;
    snprintf(dense_why, sizeof dense_why, "dense calls on their own stream (%ld all-reduce, %ld all-gather, %ld "
             "reduce-scatter)", g->ops[OVL_OP_ALLREDUCE], g->ops[OVL_OP_ALLGATHER], g->ops[OVL_OP_REDUCESCATTER]);
  }
  if (g->nranks == 1) {
    g->dim = g->dense_dim = OVL_DIM_UNKNOWN;
    snprintf(g->why, sizeof g->why, "a one-rank communicator");
  } else if (2 * p2p >= g->colls) {
    g->dim = OVL_DIM_PP;
    snprintf(g->why, sizeof g->why, "op mix: %ld of %ld calls are send/recv%s%s", p2p, g->colls,
             dense_why[0] ? "; " : "", dense_why);
  } else if (2 * a2a >= g->colls && g->moe_kernels > 0) {
    g->dim = OVL_DIM_EP;
    snprintf(g->why, sizeof g->why, "op mix: %ld of %ld calls are all-to-all, and %ld kernels name MoE work%s%s", a2a,
             g->colls, g->moe_kernels, dense_why[0] ? "; " : "", dense_why);
  } else if (2 * a2a >= g->colls) {
    g->dim = OVL_DIM_UNKNOWN;
    snprintf(g->why, sizeof g->why, "op mix: %ld of %ld calls are all-to-all, but no kernel names MoE work (an "
             "embedding exchange as much as expert parallelism: --dim COMM=ep if it is)%s%s", a2a, g->colls,
             dense_why[0] ? "; " : "", dense_why);
  } else {
    g->dim = g->dense_dim;
    snprintf(g->why, sizeof g->why, "%s", dense_why);
  }
}

static void classify_by_stride(groups *gs) {
  int64_t max_stride = 0;
  for (size_t i = 0; i < gs->v.len; i++)
    if (gs->v.items[i].dense_dim == OVL_DIM_DP && gs->v.items[i].stride > max_stride) max_stride = gs->v.items[i].stride;
  for (size_t i = 0; i < gs->v.len; i++) {
    ovl_pgroup *g = &gs->v.items[i];
    if (g->dense_dim != OVL_DIM_DP || g->stride <= 0 || g->stride >= max_stride) continue;
    g->dense_dim = OVL_DIM_TP;
    if (g->dim == OVL_DIM_DP) g->dim = OVL_DIM_TP;
    snprintf(g->why, sizeof g->why, "members %lld apart, closer than another data-parallel-looking group's %lld",
             (long long)g->stride, (long long)max_stride);
  }
}

/* A collective's dimension in group g (job_dims.h). */
static ovl_pdim coll_dim(const ovl_pgroup *g, ovl_op op) {
  if (g->overridden || g->nranks == 1) return g->dim;
  if (is_a2a(op) || (op == OVL_OP_SENDRECV && g->ops[OVL_OP_ALLTOALL]))
    return g->moe_kernels > 0 ? OVL_DIM_EP : OVL_DIM_UNKNOWN;
  if (is_p2p(op)) return OVL_DIM_PP;
  return g->dense_dim;
}

/* `dim <d>` NVTX ranges around a group's calls name its dimension (the most named one);
** --dim, applied after, wins over them. */
static void nvtx_override(ovl_pgroup *g) {
  int best = 0;
  for (int d = 1; d < OVL_DIM_COUNT; d++)
    if (g->nvtx_votes[d] > g->nvtx_votes[best]) best = d;
  if (best == 0) return;
  g->dim = g->dense_dim = (ovl_pdim)best;
  g->overridden = 1;
  snprintf(g->why, sizeof g->why, "NVTX: 'dim %s' ranges around %ld of its %ld calls", ovl_pdim_name((ovl_pdim)best),
           g->nvtx_votes[best], g->colls);
}

static ovl_prole role_of(ovl_pdim d, ovl_op op, long *a2a_seen) {
  switch (d) {
    case OVL_DIM_DP:
      if (op == OVL_OP_ALLREDUCE) return OVL_PROLE_GRAD_REDUCE;
      if (op == OVL_OP_ALLGATHER) return OVL_PROLE_PARAM_GATHER;
      if (op == OVL_OP_REDUCESCATTER) return OVL_PROLE_GRAD_REDUCE_SCATTER;
      return OVL_PROLE_OTHER;
    case OVL_DIM_TP:
      if (op == OVL_OP_ALLREDUCE) return OVL_PROLE_TP_REDUCE;
      if (op == OVL_OP_ALLGATHER) return OVL_PROLE_TP_ALLGATHER;
      if (op == OVL_OP_REDUCESCATTER) return OVL_PROLE_TP_REDUCE_SCATTER;
      return OVL_PROLE_OTHER;
    case OVL_DIM_PP:
      if (op == OVL_OP_SEND) return OVL_PROLE_PP_SEND;
      if (op == OVL_OP_RECV) return OVL_PROLE_PP_RECV;
      return OVL_PROLE_OTHER;
    case OVL_DIM_EP:
      if (op != OVL_OP_ALLTOALL) return OVL_PROLE_OTHER;
      return (*a2a_seen)++ % 2 == 0 ? OVL_PROLE_EP_DISPATCH : OVL_PROLE_EP_COMBINE;
    default: return OVL_PROLE_NONE;
  }
}

/* ---------------------------------------------------------------------------------- */
/* Totals                                                                              */
/* ---------------------------------------------------------------------------------- */

typedef struct span {
  int64_t start, end;
} span;

static int cmp_span(const void *pa, const void *pb) {
  const span *a = pa, *b = pb;
  return (a->start > b->start) - (a->start < b->start);
}

/* Merges spans[0..k) in place (sorted first); returns the length of their union. */
static int64_t union_length(span *spans, size_t k) {
  ovl_qsort(spans, k, sizeof *spans, cmp_span);
  int64_t total = 0, cur_s = 0, cur_e = 0;
  for (size_t i = 0; i < k; i++) {
    if (i == 0 || spans[i].start > cur_e) {
      if (i > 0) total += cur_e - cur_s;
      cur_s = spans[i].start;
      cur_e = spans[i].end;
    } else if (spans[i].end > cur_e) {
      cur_e = spans[i].end;
    }
  }
  return k > 0 ? total + cur_e - cur_s : 0;
}

void ovl_dim_exposed_of(ovl_pieces_fn get, const void *ctx, const uint8_t *dims, size_t n, void *scratch,
                        ovl_dim_exposed *out) {
  span *spans = scratch;
  for (int d = 0; d < OVL_DIM_COUNT; d++) {
    size_t kp = 0;
    int exact = 1;
    for (size_t i = 0; i < n && exact; i++) {
      if (dims[i] != d) continue;
      int np = 0, ex = 0;
      const int64_t *p = get(ctx, i, &np, &ex);
      if (!p || !ex) exact = 0;
      else
        for (int j = 0; j < np; j++) spans[kp++] = (span){p[2 * j], p[2 * j + 1]};
    }
    out->exact[d] = (uint8_t)exact;
    out->unions[d] = exact ? union_length(spans, kp) : 0;
  }
}

/* A step's collectives and their rank: ovl_pieces_fn over its own pieces. */
typedef struct step_colls {
  const ovl_rank_result *r;
  const ovl_coll_result *colls;
} step_colls;

static const int64_t *own_pieces(const void *ctx, size_t i, int *n, int *exact) {
  const step_colls *sc = ctx;
  const ovl_coll_result *c = &sc->colls[i];
  *n = c->npieces;
  *exact = c->pieces_exact;
  return ovl_coll_pieces(sc->r, c);
}

/* The dimension a collective counts in (ovl_dim_exposed_of's dims). */
static uint8_t counted_dim(const ovl_coll_result *c) {
  return c->gpu_start == OVL_NONE || ovl_coll_gpu_end(c) == OVL_NONE ? OVL_DIM_SKIP : c->pdim.dim;
}

/* Sets the per-dimension totals of colls[0..n); x: their pieces' unions (ovl_dim_exposed_of).
** Exposed time is the union of the collectives' exposed pieces when every piece list is
** exact (collectives of one dimension may overlap each other: a stage's send and next
** receive), else the sum of their exposed times, capped at the dimension's union. */
static void dim_totals(const ovl_coll_result *colls, size_t n, const ovl_dim_exposed *x, span *spans,
                       ovl_dim_totals out[OVL_DIM_COUNT]) {
  memset(out, 0, OVL_DIM_COUNT * sizeof *out);
  for (int d = 0; d < OVL_DIM_COUNT; d++) {
    size_t k = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
      const ovl_coll_result *c = &colls[i];
      if (counted_dim(c) != d) continue;
      spans[k++] = (span){c->gpu_start, ovl_coll_gpu_end(c)};
      sum += ovl_coll_exposed(c);
      out[d].colls++;
    }
    out[d].comm = union_length(spans, k);
    out[d].exposed = x->exact[d] ? x->unions[d] : (sum < out[d].comm ? sum : out[d].comm);
  }
}

static void add_totals(ovl_dim_totals *acc, const ovl_dim_totals *t) {
  for (int d = 0; d < OVL_DIM_COUNT; d++) {
    acc[d].comm += t[d].comm;
    acc[d].exposed += t[d].exposed;
    acc[d].colls += t[d].colls;
  }
}

/* Every step's collectives' dimensions in turn, into dims. */
static void step_dims(const ovl_rank_result *r, uint8_t *dims) {
  size_t k = 0;
  for (size_t s = 0; s < r->nsteps; s++)
    for (size_t i = 0; i < r->steps[s].ncolls; i++) dims[k++] = counted_dim(&r->steps[s].colls[i]);
}

/* A rank's steps' collectives, most of one step (the unstepped counted) and all of them. */
static size_t step_colls_most(const ovl_rank_result *r, size_t *all) {
  size_t most = r->nunstepped;
  *all = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    if (r->steps[s].ncolls > most) most = r->steps[s].ncolls;
    *all += r->steps[s].ncolls;
  }
  return most;
}

/* Each step's per-dimension unions of r's exposed pieces into x (nsteps): from its own pieces,
** or asked of remote when it holds them (written by remote's next flush). */
static int rank_exposed(const ovl_rank_result *r, const ovl_remote_pieces *remote, ovl_dim_exposed *x, ovl_err *err) {
  size_t all, most = step_colls_most(r, &all);
  int far = remote && remote->holds(remote->self, r);
  uint8_t *dims = malloc(all ? all : 1);
  span *spans = far ? NULL : malloc((most ? most : 1) * OVL_EXPOSED_PIECES * sizeof *spans);
  int rc = dims && (far || spans) ? OVL_OK : ovl_oom(err, "dimension totals");
  if (!rc) {
    step_dims(r, dims);
    if (far) rc = remote->ask_dim_exposed(remote->self, r, dims, x, err);
    for (size_t s = 0, k = 0; !far && s < r->nsteps; k += r->steps[s++].ncolls) {
      step_colls sc = {r, r->steps[s].colls};
      ovl_dim_exposed_of(own_pieces, &sc, dims + k, r->steps[s].ncolls, spans, &x[s]);
    }
  }
  free(spans);
  free(dims);
  return rc;
}

/* r's per-step and per-rank dimension totals from its steps' unions x. */
static int rank_totals(ovl_rank_result *r, const ovl_dim_exposed *x, ovl_err *err) {
  size_t all, most = step_colls_most(r, &all);
  span *spans = malloc((most ? most : 1) * sizeof *spans);
  if (!spans) return ovl_oom(err, "dimension totals");
  memset(r->dims, 0, sizeof r->dims);
  ovl_step_dims_clear(r);
  int rc = OVL_OK;
  for (size_t s = 0; !rc && s < r->nsteps; s++) {
    ovl_dim_totals step[OVL_DIM_COUNT];
    dim_totals(r->steps[s].colls, r->steps[s].ncolls, &x[s], spans, step);
    add_totals(r->dims, step);
    if (ovl_step_dims_put(r, &r->steps[s], step)) rc = ovl_oom(err, "dimension totals");
  }
  ovl_step_dims_seal(r);
  free(spans);
  return rc;
}

/* Every rank's totals. The unions of the ranks whose pieces are elsewhere are asked in batches
** (remote_pieces.h): the ranks since the last batch wait for its answers, then take their totals. */
static int job_totals(ovl_job *job, const ovl_remote_pieces *remote, ovl_err *err) {
  ovl_dim_exposed **x = calloc(job->nranks ? job->nranks : 1, sizeof *x);
  int rc = x ? OVL_OK : ovl_oom(err, "dimension totals");
  size_t first = 0;  /* ranks [first, i] wait for their unions */
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    ovl_rank_result *r = &job->ranks[i];
    if (!(x[i] = malloc((r->nsteps ? r->nsteps : 1) * sizeof *x[i]))) rc = ovl_oom(err, "dimension totals");
    if (!rc) rc = rank_exposed(r, remote, x[i], err);
    int answered = !remote;  /* without remote every union is known at once */
    if (!rc && remote && (i + 1 == job->nranks || remote->full(remote->self))) {
      rc = remote->flush(remote->self, err);
      answered = 1;
    }
    for (; !rc && answered && first <= i; first++) {
      rc = rank_totals(&job->ranks[first], x[first], err);
      free(x[first]);
      x[first] = NULL;
    }
  }
  if (rc && remote) remote->forget(remote->self);
  for (size_t i = 0; x && i < job->nranks; i++) free(x[i]);
  free(x);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Pipeline stages                                                                     */
/* ---------------------------------------------------------------------------------- */

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* A stage's micro-batches in a step: sends and receives of activations and gradients, one
** each per micro-batch at the ends of the pipeline, two each in the middle. */
static double step_microbatches(const ovl_step_result *st, int stage, int stages) {
  long sends = 0, recvs = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    if (st->colls[i].pdim.dim != OVL_DIM_PP) continue;
    sends += st->colls[i].pdim.role == OVL_PROLE_PP_SEND;
    recvs += st->colls[i].pdim.role == OVL_PROLE_PP_RECV;
  }
  long per = sends > recvs ? sends : recvs;
  return (stage > 0 && stage < stages - 1) ? per / 2.0 : (double)per;
}

static int has_member(const ovl_pgroup *g, int64_t rank) {
  for (size_t i = 0; i < g->nmembers; i++)
    if (g->members[i] == rank) return 1;
  return 0;
}

static int is_pp_group(const ovl_pgroup *g) {
  return g->overridden ? g->dim == OVL_DIM_PP
                       : (g->ops[OVL_OP_SEND] + g->ops[OVL_OP_RECV] > 0 && g->ops[OVL_OP_ALLTOALL] == 0);
}

/* A rank's pipeline from membership: the ranks its send/recv groups connect it to, directly or
** through other stages (PyTorch gives each pair of stages its own two-rank communicator).
** Stages are in rank order. Sets *stage and *stages; 0 when membership is incomplete (a group
** with untraced members) or the rank has no such group. */
static int stage_by_membership(const ovl_job *job, int64_t rank, int *stage, int *stages) {
  int64_t *set = NULL;
  size_t n = 0;
  int ok = rank != OVL_NONE, grew = 1;
  if (ok && !(set = malloc(sizeof *set))) return 0;
  if (ok) set[n++] = rank;
  while (ok && grew) {
    grew = 0;
    for (size_t g = 0; ok && g < job->npgroups; g++) {
      const ovl_pgroup *pg = &job->pgroups[g];
      if (!is_pp_group(pg)) continue;
      int touches = 0;
      for (size_t i = 0; i < n && !touches; i++) touches = has_member(pg, set[i]);
      if (!touches) continue;
      if (pg->nranks == OVL_NONE || (int64_t)pg->nmembers != pg->nranks) ok = 0;
      for (size_t i = 0; ok && i < pg->nmembers; i++) {
        int known = 0;
        for (size_t k = 0; k < n && !known; k++) known = set[k] == pg->members[i];
        if (known) continue;
        int64_t *grown = realloc(set, (n + 1) * sizeof *set);
        if (!grown) ok = 0;
        else (set = grown)[n++] = pg->members[i], grew = 1;
      }
    }
  }
  if (ok && n >= 2) {
    int below = 0;
    for (size_t i = 0; i < n; i++) below += set[i] < rank;
    *stage = below;
    *stages = (int)n;
  }
  free(set);
  return ok && n >= 2;
}

static int pipeline_stats(ovl_job *job, ovl_err *err) {
  for (size_t i = 0; i < job->nranks; i++) {
    ovl_rank_result *r = &job->ranks[i];
    memset(&r->pipeline, 0, sizeof r->pipeline);
    r->pipeline.stage = -1;
    if (r->dims[OVL_DIM_PP].colls > 0 && stage_by_membership(job, r->rank, &r->pipeline.stage, &r->pipeline.stages))
      continue;
    for (size_t s = 0; s < r->nsteps && r->pipeline.stage < 0; s++)
      for (size_t k = 0; k < r->steps[s].ncolls; k++) {
        const ovl_coll_result *c = &r->steps[s].colls[k];
        if (c->pdim.dim != OVL_DIM_PP || ovl_coll_rank(c) == OVL_NONE || ovl_coll_nranks(c) == OVL_NONE) continue;
        r->pipeline.stage = (int)ovl_coll_rank(c);
        r->pipeline.stages = (int)ovl_coll_nranks(c);
        break;
      }
  }
  for (size_t i = 0; i < job->nranks; i++) {
    ovl_rank_result *r = &job->ranks[i];
    if (r->pipeline.stage < 0 || r->nsteps == 0) continue;
    double *m = malloc(r->nsteps * sizeof *m);
    if (!m) return ovl_oom(err, "pipeline stages");
    double bubble = 0, compute = 0, spans = 0;
    size_t nb = 0;
    for (size_t s = 0; s < r->nsteps; s++) {
      const ovl_step_result *st = &r->steps[s];
      m[s] = step_microbatches(st, r->pipeline.stage, r->pipeline.stages);
      /* the pipeline's span of this step: from the first stage's start to the last one's end,
      ** over every stage of the job with this step (job time) */
      int64_t lo = st->start + r->clock_offset, hi = st->end + r->clock_offset;
      for (size_t j = 0; j < job->nranks; j++) {
        const ovl_rank_result *o = &job->ranks[j];
        if (o->pipeline.stage < 0 || s >= o->nsteps) continue;
        if (o->steps[s].start + o->clock_offset < lo) lo = o->steps[s].start + o->clock_offset;
        if (o->steps[s].end + o->clock_offset > hi) hi = o->steps[s].end + o->clock_offset;
      }
      if (hi <= lo) continue;
      bubble += 1.0 - (double)st->totals.compute / (double)(hi - lo);
      compute += (double)st->totals.compute;
      spans += (double)(hi - lo);
      nb++;
    }
    ovl_qsort(m, r->nsteps, sizeof *m, cmp_double);
    r->pipeline.microbatches = m[r->nsteps / 2];
    free(m);
    double p = r->pipeline.stages, mb = r->pipeline.microbatches;
    r->pipeline.model_bubble = mb > 0 ? (p - 1) / (mb + p - 1) : NAN;
    r->pipeline.bubble = nb ? bubble / (double)nb : NAN;
    r->pipeline.compute_ns = nb ? (int64_t)llround(compute / (double)nb) : 0;
    r->pipeline.span_ns = nb ? (int64_t)llround(spans / (double)nb) : 0;
  }
  return OVL_OK;
}

/* ---------------------------------------------------------------------------------- */
/* The stage                                                                           */
/* ---------------------------------------------------------------------------------- */

static void assign_roles(ovl_rank_result *r, const groups *gs) {
  ovl_i64map a2a = {0};  /* all-to-alls seen per comm in the step: dispatch and combine alternate */
  for (size_t s = 0; s <= r->nsteps; s++) {
    ovl_coll_result *colls = s < r->nsteps ? r->steps[s].colls : r->unstepped;
    size_t n = s < r->nsteps ? r->steps[s].ncolls : r->nunstepped;
    ovl_i64map_free(&a2a);
    memset(&a2a, 0, sizeof a2a);
    for (size_t i = 0; i < n; i++) {
      ovl_coll_result *c = &colls[i];
      int64_t g, seen = 0;
      c->pdim.dim = c->pdim.role = 0;  /* nvtx (the NVTX hint) is kept */
      if (c->comm == OVL_NONE || !ovl_i64map_get(&gs->by_comm, c->comm, &g)) continue;
      ovl_pdim d = coll_dim(&gs->v.items[g], c->op);
      if (d == OVL_DIM_EP) ovl_i64map_get(&a2a, c->comm, &seen);
      long k = (long)seen;
      c->pdim.dim = (unsigned char)d;
      c->pdim.role = (unsigned char)role_of(d, c->op, &k);
      /* out of memory here only loses the dispatch/combine alternation */
      if (d == OVL_DIM_EP) (void)ovl_i64map_put(&a2a, c->comm, k);
    }
  }
  ovl_i64map_free(&a2a);
}

static int cmp_group(const void *pa, const void *pb) {
  const ovl_pgroup *a = pa, *b = pb;
  if (a->dim != b->dim) return a->dim < b->dim ? -1 : 1;
  return (a->comm > b->comm) - (a->comm < b->comm);
}

int ovl_job_dims_classify(ovl_job *job, const char *overrides, const ovl_remote_pieces *remote, ovl_err *err) {
  groups gs;
  memset(&gs, 0, sizeof gs);
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    const ovl_rank_result *r = &job->ranks[i];
    ovl_i64map seen;
    memset(&seen, 0, sizeof seen);
    for (size_t s = 0; !rc && s < r->nsteps; s++)
      for (size_t k = 0; !rc && k < r->steps[s].ncolls; k++)
        rc = note_coll(&gs, r, &r->steps[s].colls[k], &seen, err);
    for (size_t k = 0; !rc && k < r->nunstepped; k++) rc = note_coll(&gs, r, &r->unstepped[k], &seen, err);
    ovl_i64map_free(&seen);
  }
  for (size_t i = 0; !rc && i < gs.v.len; i++) {
    set_stride(&gs.v.items[i]);
    classify_by_ops(&gs.v.items[i]);
  }
  if (!rc) classify_by_stride(&gs);
  for (size_t i = 0; !rc && i < gs.v.len; i++) nvtx_override(&gs.v.items[i]);
  if (!rc) rc = each_override(overrides, apply_override, &gs, err);
  for (size_t i = 0; !rc && i < job->nranks; i++) assign_roles(&job->ranks[i], &gs);
  if (!rc) rc = job_totals(job, remote, err);
  if (rc) {
    for (size_t i = 0; i < gs.v.len; i++) free(gs.v.items[i].members);
    OVL_VEC_FREE(&gs.v);
    ovl_i64map_free(&gs.by_comm);
    return rc;
  }
  ovl_i64map_free(&gs.by_comm);
  ovl_qsort(gs.v.items, gs.v.len, sizeof *gs.v.items, cmp_group);
  job->pgroups = gs.v.items;
  job->npgroups = gs.v.len;
  return OVL_OK;
}

int ovl_job_dims_finish(ovl_job *job, ovl_err *err) { return pipeline_stats(job, err); }
