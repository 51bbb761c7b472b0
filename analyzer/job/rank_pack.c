/*
** Measured files in bytes and back: see rank_pack.h. Fields are written in declaration order;
** a struct that grows must grow here too (the size checks below fail the build until it does).
*/
#include "rank_pack.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#if UINTPTR_MAX == UINT64_MAX
/* Every field of these is carried: a new field must be added to the codec (and then here). */
/* (ovl_coll_result's narrow values travel as their int64 values; `wide` follows from them.) */
_Static_assert(sizeof(ovl_coll_result) == 120, "ovl_coll_result changed: carry the new field in rank_pack.c");
_Static_assert(sizeof(ovl_step_result) == 168, "ovl_step_result changed: carry the new field in rank_pack.c");
/* ovl_rank_result's coll_block is not carried: unpacked steps own their colls one by one; its
** step_dims are, step by step (put_step), and rebuilt by ovl_step_dims_put. */
_Static_assert(sizeof(ovl_rank_result) == 848, "ovl_rank_result changed: carry the new field in rank_pack.c");
_Static_assert(sizeof(ovl_grad_mark) == 56, "ovl_grad_mark changed: carry the new field in rank_pack.c");
_Static_assert(sizeof(ovl_host_only) == 704, "ovl_host_only changed: carry the new field in rank_pack.c");
#endif

/* ---------------------------------------------------------------------------------- */
/* Writing                                                                             */
/* ---------------------------------------------------------------------------------- */

static void put_int(ovl_bytes *b, int64_t v) { ovl_put_opt_near(b, v, 0); }

static void put_totals(ovl_bytes *b, const ovl_totals *t) {
  put_int(b, t->compute);
  put_int(b, t->comm);
  put_int(b, t->exposed);
  put_int(b, t->memory);
  put_int(b, t->busy);
  put_int(b, t->busy_start);
  ovl_put_opt_near(b, t->busy_end, t->busy_start);
}

static void put_dims(ovl_bytes *b, const ovl_dim_totals d[OVL_DIM_COUNT]) {
  for (int k = 0; k < OVL_DIM_COUNT; k++) {
    put_int(b, d[k].comm);
    put_int(b, d[k].exposed);
    put_int(b, d[k].colls);
  }
}

static void put_findings(ovl_bytes *b, const ovl_finding *f, size_t n) {
  ovl_put_u64(b, n);
  for (size_t i = 0; i < n; i++) {
    assert(!f[i].evidence && !f[i].text);  /* a packed rank is one before its diagnosis */
    ovl_put_str(b, f[i].code);
    ovl_put_str(b, f[i].message);
    put_int(b, f[i].recoverable_ns);
    put_int(b, f[i].step);
    put_int(b, f[i].at_ns);
    put_int(b, f[i].steps_affected);
    put_int(b, f[i].confidence);
  }
}

/* The previous collective written or read: what the next one's values are predicted from. */
typedef struct coll_pred {
  ovl_coll_result prev;
  char dtype[16], redop[16], algorithm[16], protocol[16];
} coll_pred;

static void put_pieces(ovl_bytes *b, const ovl_rank_result *r, const ovl_coll_result *c) {
  const int64_t *p = ovl_coll_pieces(r, c);
  if (!p) {
    ovl_put_u64(b, 0);
    return;
  }
  ovl_put_u64(b, 1 + (uint64_t)c->npieces);
  ovl_put_u64(b, c->pieces_exact);
  int64_t near = c->gpu_start;
  for (unsigned k = 0; k < c->npieces && k < OVL_EXPOSED_PIECES; k++) {
    ovl_put_opt_near(b, p[2 * k], near);
    ovl_put_opt_near(b, p[2 * k + 1], p[2 * k]);
    near = p[2 * k + 1];
  }
}

/* A text field of size bytes (at most 16), written only when it differs from the previous one's. */
static void put_text(ovl_bytes *b, const char *s, size_t size, char prev[16]) {
  assert(size <= 16);
  if (strncmp(s, prev, size) == 0) {
    ovl_put_u64(b, 0);
    return;
  }
  ovl_put_u64(b, 1);
  char t[17];
  memcpy(t, s, size);
  t[size] = 0;
  ovl_put_str(b, t);
  memcpy(prev, s, size);
}

/* NCCL's timing of the collective's channels (analyze/nccl_channels.h). */
static void put_channels(ovl_bytes *b, const ovl_coll_channels *ch, int64_t gpu_start) {
  put_int(b, ch->n);
  ovl_put_opt_near(b, ch->start, gpu_start);
  ovl_put_opt_near(b, ch->end, ch->start);
  put_int(b, ch->spread);
  put_int(b, ch->outside);
  put_int(b, ch->timed);
  put_int(b, ch->agree);
}

static void put_coll(ovl_bytes *b, const ovl_rank_result *r, const ovl_coll_result *c, coll_pred *p) {
  const ovl_coll_result *q = &p->prev;
  ovl_put_opt_near(b, ovl_coll_id(c), ovl_coll_id(q) + 1);
  ovl_put_i64(b, c->order);
  ovl_put_i64(b, c->op);
  ovl_put_opt_near(b, c->comm, q->comm);
  ovl_put_opt_near(b, ovl_coll_seq(c), ovl_coll_seq(q) + 1);
  ovl_put_opt_near(b, ovl_coll_nranks(c), ovl_coll_nranks(q));
  ovl_put_opt_near(b, ovl_coll_rank(c), ovl_coll_rank(q));
  ovl_put_opt_near(b, c->bytes, q->bytes);
  put_text(b, ovl_coll_dtype(c), OVL_COLL_TYPE_LEN, p->dtype);
  put_text(b, ovl_coll_redop(c), OVL_COLL_TYPE_LEN, p->redop);
  ovl_put_opt_near(b, ovl_coll_stream(c), ovl_coll_stream(q));
  put_int(b, c->bucket);
  ovl_put_i64(b, c->bytes_from_marks);
  ovl_put_opt_near(b, c->gpu_start, q->gpu_start);
  int64_t gpu_end = ovl_coll_gpu_end(c);
  ovl_put_opt_near(b, gpu_end, c->gpu_start);
  ovl_put_opt_near(b, ovl_coll_host_launch(c), c->gpu_start);
  put_int(b, ovl_coll_exposed(c));
  ovl_put_opt_near(b, ovl_coll_ready(c), c->gpu_start);
  ovl_put_opt_near(b, ovl_coll_ready_gpu(c), c->gpu_start);
  ovl_put_opt_near(b, ovl_coll_compute_before(c), c->gpu_start);
  ovl_put_opt_near(b, ovl_coll_compute_after(c), gpu_end);
  const ovl_coll_extra *x = ovl_coll_extra_of(c);
  ovl_put_opt_near(b, x->d2h_start, gpu_end);
  ovl_put_opt_near(b, x->d2h_end, x->d2h_start);
  put_int(b, x->d2h_bytes);
  put_int(b, c->step);
  put_pieces(b, r, c);
  ovl_put_i64(b, c->diag.role);
  ovl_put_i64(b, c->diag.ready_order);
  assert(!c->cross || (c->cross >= r->coll_cross && c->cross < r->coll_cross + r->ncoll_cross));
  ovl_put_u64(b, c->cross ? (uint64_t)(c->cross - r->coll_cross) + 1 : 0);
  ovl_put_raw(b, &c->pdim, sizeof c->pdim);
  put_text(b, x->algorithm, sizeof x->algorithm, p->algorithm);
  put_text(b, x->protocol, sizeof x->protocol, p->protocol);
  put_channels(b, &x->channels, c->gpu_start);
  p->prev = *c;
}

static void put_colls(ovl_bytes *b, const ovl_rank_result *r, const ovl_coll_result *c, size_t n, coll_pred *p) {
  ovl_put_u64(b, n);
  for (size_t i = 0; i < n; i++) put_coll(b, r, &c[i], p);
}

static void put_step(ovl_bytes *b, const ovl_rank_result *r, const ovl_step_result *st, coll_pred *p) {
  put_int(b, st->index);
  put_int(b, st->number);
  ovl_put_opt_near(b, st->start, p->prev.gpu_start);
  ovl_put_opt_near(b, st->end, st->start);
  put_totals(b, &st->totals);
  ovl_put_opt_near(b, st->backward_end, st->start);
  ovl_put_opt_near(b, st->grad_end, st->start);
  put_int(b, st->grad_bytes);
  ovl_put_i64(b, st->ngrad);
  ovl_put_i64(b, st->misordered);
  put_colls(b, r, st->colls, st->ncolls, p);
  put_findings(b, st->findings, st->nfindings);
  ovl_dim_totals dims[OVL_DIM_COUNT];
  for (int d = 0; d < OVL_DIM_COUNT; d++) dims[d] = ovl_step_dim(st, d);
  put_dims(b, dims);
}

/* A kernel signature: name, grid and block. */
static void put_signature(ovl_bytes *b, const char *name, const int64_t grid[3], const int64_t block[3], long runs) {
  ovl_put_str(b, name);
  for (int d = 0; d < 3; d++) put_int(b, grid[d]);
  for (int d = 0; d < 3; d++) put_int(b, block[d]);
  put_int(b, runs);
}

static void put_kernel_fits(ovl_bytes *b, const ovl_kernel_slowdown *k, size_t n) {
  ovl_put_u64(b, n);
  for (size_t i = 0; i < n; i++) {
    put_signature(b, k[i].name, k[i].grid, k[i].block, k[i].runs);
    put_int(b, k[i].runs_alone);
    put_int(b, k[i].runs_overlapped);
    const double v[] = {k[i].alone_ns, k[i].factor, k[i].cost_ns, k[i].slope, k[i].t_stat,
                        k[i].alone_mean_ns, k[i].alone_sd_ns, k[i].over_mean_ns, k[i].over_sd_ns};
    for (size_t d = 0; d < sizeof v / sizeof v[0]; d++) ovl_put_f64(b, v[d]);
  }
}

static void put_kernel_totals(ovl_bytes *b, const ovl_kernel_total *k, size_t n) {
  ovl_put_u64(b, n);
  for (size_t i = 0; i < n; i++) {
    put_signature(b, k[i].name, k[i].grid, k[i].block, k[i].runs);
    ovl_put_f64(b, k[i].total_ns);
  }
}

/* Collectives with exposed pieces, and their pieces: what the reader allocates for them. */
static void pieces_held(const ovl_rank_result *r, size_t *records, size_t *pieces) {
  *records = *pieces = 0;
  for (size_t s = 0; s <= r->nsteps; s++) {
    const ovl_coll_result *c = s < r->nsteps ? r->steps[s].colls : r->unstepped;
    size_t n = s < r->nsteps ? r->steps[s].ncolls : r->nunstepped;
    for (size_t i = 0; i < n; i++)
      if (ovl_coll_pieces(r, &c[i])) {
        ++*records;
        *pieces += c[i].npieces;
      }
  }
}

void ovl_rank_pack(const ovl_rank_result *r, ovl_bytes *b) {
  ovl_put_str(b, r->trace_path);
  ovl_put_str(b, r->ovl_path);
  ovl_put_str(b, r->hostname);
  put_int(b, r->rank);
  put_int(b, r->world_size);
  put_int(b, r->pid);
  put_int(b, r->device);
  put_int(b, r->job);
  put_totals(b, &r->totals);
  ovl_put_i64(b, r->step_detection);
  ovl_put_i64(b, r->step_projection);
  ovl_put_u64(b, r->period);
  size_t records, pieces;
  pieces_held(r, &records, &pieces);
  ovl_put_u64(b, records);
  ovl_put_u64(b, pieces);
  ovl_put_u64(b, r->ncoll_cross);
  for (size_t i = 0; i < r->ncoll_cross; i++) {
    const ovl_coll_cross *x = &r->coll_cross[i];
    put_int(b, x->wait_ns);
    put_int(b, x->exposed_transfer_ns);
    ovl_put_i64(b, x->arrived_last);
  }
  coll_pred p;
  memset(&p, 0, sizeof p);
  ovl_put_u64(b, r->nsteps);
  for (size_t s = 0; s < r->nsteps; s++) put_step(b, r, &r->steps[s], &p);
  ovl_put_u64(b, r->nmarks);
  int64_t near = r->totals.busy_start;
  for (size_t i = 0; i < r->nmarks; i++) {
    const ovl_grad_mark *m = &r->marks[i];
    ovl_put_opt_near(b, m->t, near);
    near = m->t;
    put_int(b, m->bucket);
    put_int(b, m->bytes);
    put_int(b, m->tid);
    put_int(b, m->step);
    ovl_put_opt_near(b, m->launch_corr, 0);
    ovl_put_opt_near(b, m->gpu_t, m->t);
  }
  const long counts[] = {r->n_kernels, r->n_comm_kernels, r->n_memops, r->n_comm_memops, r->n_moe_kernels,
                         r->colls_outside_steps, r->colls_without_gpu_work, r->colls_numbered,
                         r->bad.kernels, r->bad.memops, r->bad.collectives, r->bad.launches, r->bad.nvtx,
                         r->bad.api, r->bad.strings, r->first_step_differs, r->colls_before_window,
                         r->bad.channels};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) put_int(b, counts[i]);
  put_int(b, r->cupti_late);
  ovl_put_u64(b, r->nstreams);
  for (size_t i = 0; i < r->nstreams; i++) {
    const ovl_stream_stat *st = &r->streams[i];
    put_int(b, st->stream);
    put_int(b, st->compute_ns);
    put_int(b, st->comm_ns);
    put_int(b, st->memory_ns);
    put_int(b, st->kernels);
    put_int(b, st->memops);
  }
  put_kernel_fits(b, r->kernel_fits, r->nkernel_fits);
  put_kernel_fits(b, r->slowdowns, r->nslowdowns);
  put_colls(b, r, r->unstepped, r->nunstepped, &p);
  put_kernel_totals(b, r->kernel_totals, r->nkernel_totals);
  put_kernel_totals(b, r->lookalikes, r->nlookalikes);
  put_int(b, r->realtime_offset);
  ovl_put_u64(b, r->ncomm_names);
  for (size_t i = 0; i < r->ncomm_names; i++) {
    put_int(b, r->comm_names[i].comm);
    ovl_put_str(b, r->comm_names[i].name);
  }
  put_int(b, r->clock_offset);
  const ovl_rank_cross *x = &r->cross;
  put_int(b, x->in_job);
  put_int(b, x->matched);
  put_int(b, x->wait_ns);
  put_int(b, x->transfer_ns);
  put_int(b, x->exposed_transfer_ns);
  put_int(b, x->times_last);
  put_int(b, x->decisive);
  ovl_put_f64(b, x->expected_last);
  ovl_put_f64(b, x->p_value);
  put_int(b, x->straggler);
  put_int(b, x->wait_caused_ns);
  put_int(b, x->late_gpu_ns);
  put_int(b, x->late_host_ns);
  put_int(b, x->delay_ns);
  put_findings(b, r->findings, r->nfindings);
  put_dims(b, r->dims);
  const ovl_pipeline_stats *pl = &r->pipeline;
  put_int(b, pl->stage);
  put_int(b, pl->stages);
  ovl_put_f64(b, pl->microbatches);
  ovl_put_f64(b, pl->bubble);
  ovl_put_f64(b, pl->model_bubble);
  put_int(b, pl->compute_ns);
  put_int(b, pl->span_ns);
  const ovl_channel_facts *cf = &r->channel_facts;
  const int64_t facts[] = {cf->collectives, cf->timed, cf->checked, cf->agree, cf->max_outside, cf->max_spread,
                           cf->max_spread_id};
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) put_int(b, facts[i]);
}

/* ---------------------------------------------------------------------------------- */
/* Reading                                                                             */
/* ---------------------------------------------------------------------------------- */

/* Reading state of one rank: the input, the rank's arrays that pointers lead into, and
** whether memory ran out. */
typedef struct rank_in {
  ovl_bytes_reader *in;
  ovl_rank_result *r;
  size_t nrecords, records_used;  /* collectives with exposed pieces */
  size_t npieces, pieces_used;
  int oom;
} rank_in;

static int64_t get_int(ovl_bytes_reader *in) { return ovl_get_opt_near(in, 0); }

/* Allocates n items of size (at least one, zeroed), or sets oom. */
static void *alloc_items(rank_in *ri, size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) ri->oom = 1;
  return p;
}

static void get_totals(ovl_bytes_reader *in, ovl_totals *t) {
  t->compute = get_int(in);
  t->comm = get_int(in);
  t->exposed = get_int(in);
  t->memory = get_int(in);
  t->busy = get_int(in);
  t->busy_start = get_int(in);
  t->busy_end = ovl_get_opt_near(in, t->busy_start);
}

static void get_dims(ovl_bytes_reader *in, ovl_dim_totals d[OVL_DIM_COUNT]) {
  for (int k = 0; k < OVL_DIM_COUNT; k++) {
    d[k].comm = get_int(in);
    d[k].exposed = get_int(in);
    d[k].colls = (long)get_int(in);
  }
}

static void get_findings(rank_in *ri, ovl_finding **out, size_t *n) {
  ovl_bytes_reader *in = ri->in;
  size_t count = ovl_get_count(in, 7);
  if (count == 0) return;
  ovl_finding *f = alloc_items(ri, count, sizeof *f);
  if (!f) return;
  *out = f;
  for (size_t i = 0; i < count && !in->bad; i++, (*n)++) {
    ovl_get_str_into(in, f[i].code, sizeof f[i].code);
    f[i].message = ovl_get_str(in, &ri->oom);
    f[i].recoverable_ns = get_int(in);
    f[i].step = (long)get_int(in);
    f[i].at_ns = get_int(in);
    f[i].steps_affected = (long)get_int(in);
    f[i].confidence = (ovl_confidence)get_int(in);
    if (!f[i].message) in->bad = 1;  /* messages are never NULL */
  }
}

static void get_text(ovl_bytes_reader *in, char *out, size_t size, char prev[16]) {
  assert(size <= 16);
  if (ovl_get_u64(in) == 0) {
    memcpy(out, prev, size);
    return;
  }
  char t[17];
  ovl_get_str_into(in, t, size + 1);
  memset(out, 0, size);
  memcpy(out, t, strlen(t));
  memcpy(prev, out, size);
}

static void get_channels(ovl_bytes_reader *in, ovl_coll_channels *ch, int64_t gpu_start) {
  ch->n = get_int(in);
  ch->start = ovl_get_opt_near(in, gpu_start);
  ch->end = ovl_get_opt_near(in, ch->start);
  ch->spread = get_int(in);
  ch->outside = get_int(in);
  ch->timed = (int)get_int(in);
  ch->agree = (int)get_int(in);
}

static void get_pieces(rank_in *ri, ovl_coll_result *c) {
  ovl_bytes_reader *in = ri->in;
  uint64_t tag = ovl_get_u64(in);
  c->has_pieces = c->npieces = c->pieces_exact = 0;
  c->pieces_at = 0;
  if (tag == 0) return;
  if (tag - 1 > OVL_EXPOSED_PIECES || ri->records_used >= ri->nrecords || tag - 1 > ri->npieces - ri->pieces_used ||
      !ri->r->coll_piece_bounds) {
    in->bad = 1;
    return;
  }
  ri->records_used++;
  c->npieces = (uint8_t)(tag - 1);
  c->pieces_exact = ovl_get_u64(in) != 0;
  c->pieces_at = (uint32_t)ri->pieces_used;
  c->has_pieces = 1;
  int64_t *p = ri->r->coll_piece_bounds + 2 * ri->pieces_used;
  ri->pieces_used += c->npieces;
  int64_t near = c->gpu_start;
  for (unsigned k = 0; k < c->npieces; k++) {
    p[2 * k] = ovl_get_opt_near(in, near);
    p[2 * k + 1] = ovl_get_opt_near(in, p[2 * k]);
    near = p[2 * k + 1];
  }
}

static void get_coll(rank_in *ri, ovl_coll_result *c, coll_pred *p) {
  ovl_bytes_reader *in = ri->in;
  const ovl_coll_result *q = &p->prev;
  /* gpu_start comes later in the bytes: the narrow values wait for it (ovl_coll_set_*) */
  int64_t id = ovl_get_opt_near(in, ovl_coll_id(q) + 1);
  c->order = (int)ovl_get_i64(in);
  int64_t op = ovl_get_i64(in);
  if (op < 0 || op >= OVL_OP_COUNT) in->bad = 1;
  c->op = (uint8_t)op;
  c->comm = ovl_get_opt_near(in, q->comm);
  int64_t seq = ovl_get_opt_near(in, ovl_coll_seq(q) + 1);
  int64_t nranks = ovl_get_opt_near(in, ovl_coll_nranks(q));
  int64_t rank = ovl_get_opt_near(in, ovl_coll_rank(q));
  if (ovl_coll_rank_ok(nranks) && ovl_coll_rank_ok(rank)) ovl_coll_set_ranks(c, nranks, rank);
  else in->bad = 1;
  c->bytes = ovl_get_opt_near(in, q->bytes);
  char dtype[OVL_COLL_TYPE_LEN], redop[OVL_COLL_TYPE_LEN];
  get_text(in, dtype, sizeof dtype, p->dtype);
  get_text(in, redop, sizeof redop, p->redop);
  if (ovl_coll_types_intern(dtype, redop, &c->types)) ri->oom = 1;
  int64_t stream = ovl_get_opt_near(in, ovl_coll_stream(q));
  int64_t bucket = get_int(in);
  if (bucket < -1 || bucket > INT32_MAX) in->bad = 1;
  c->bucket = (int32_t)bucket;
  c->bytes_from_marks = ovl_get_i64(in) != 0;
  ovl_coll_begin(c, ovl_get_opt_near(in, q->gpu_start));
  ovl_coll_wide v = {.seq = seq, .stream = stream};
  v.gpu_end = ovl_get_opt_near(in, c->gpu_start);
  v.host_launch = ovl_get_opt_near(in, c->gpu_start);
  v.exposed = get_int(in);
  v.ready = ovl_get_opt_near(in, c->gpu_start);
  v.ready_gpu = ovl_get_opt_near(in, c->gpu_start);
  v.compute_before = ovl_get_opt_near(in, c->gpu_start);
  v.compute_after = ovl_get_opt_near(in, v.gpu_end);
  if (ovl_coll_set_id(c, id) || ovl_coll_set_values(c, &v)) ri->oom = 1;
  ovl_coll_extra x = ovl_coll_extra_none;
  x.d2h_start = ovl_get_opt_near(in, v.gpu_end);
  x.d2h_end = ovl_get_opt_near(in, x.d2h_start);
  x.d2h_bytes = get_int(in);
  int64_t step = get_int(in);
  if (step < -1 || step > INT32_MAX) in->bad = 1;
  c->step = (int32_t)step;
  get_pieces(ri, c);
  int64_t role = ovl_get_i64(in), ready_order = ovl_get_i64(in);
  if (role < 0 || role > OVL_ROLE_BEFORE_WINDOW || ready_order < -1 || ready_order > OVL_READY_ORDER_MAX) in->bad = 1;
  else c->diag = (ovl_coll_diag){(unsigned)role, (int)ready_order};
  uint64_t cross = ovl_get_u64(in);
  c->cross = NULL;
  if (cross > ri->r->ncoll_cross) in->bad = 1;
  else if (cross) c->cross = &ri->r->coll_cross[cross - 1];
  ovl_get_raw(in, &c->pdim, sizeof c->pdim);
  get_text(in, x.algorithm, sizeof x.algorithm, p->algorithm);
  get_text(in, x.protocol, sizeof x.protocol, p->protocol);
  get_channels(in, &x.channels, c->gpu_start);
  if (ovl_coll_extra_set(c, &x)) ri->oom = 1;
  p->prev = *c;
}

/* A list of collectives (at least 30 bytes each as written). */
static void get_colls(rank_in *ri, ovl_coll_result **out, size_t *n, coll_pred *p) {
  size_t count = ovl_get_count(ri->in, 30);
  *out = alloc_items(ri, count, sizeof **out);
  if (!*out) return;
  for (size_t i = 0; i < count && !ri->in->bad; i++, (*n)++) get_coll(ri, &(*out)[i], p);
}

static void get_step(rank_in *ri, ovl_rank_result *r, ovl_step_result *st, coll_pred *p) {
  ovl_bytes_reader *in = ri->in;
  st->index = (long)get_int(in);
  st->number = (long)get_int(in);
  st->start = ovl_get_opt_near(in, p->prev.gpu_start);
  st->end = ovl_get_opt_near(in, st->start);
  get_totals(in, &st->totals);
  st->backward_end = ovl_get_opt_near(in, st->start);
  st->grad_end = ovl_get_opt_near(in, st->start);
  st->grad_bytes = get_int(in);
  st->ngrad = (int)ovl_get_i64(in);
  st->misordered = (int)ovl_get_i64(in);
  get_colls(ri, &st->colls, &st->ncolls, p);
  get_findings(ri, &st->findings, &st->nfindings);
  ovl_dim_totals dims[OVL_DIM_COUNT];
  get_dims(in, dims);
  if (ovl_step_dims_put(r, st, dims)) ri->oom = 1;
}

/* A signature written by put_signature; its name NULL (and the input bad) when missing. */
static char *get_signature(rank_in *ri, int64_t grid[3], int64_t block[3], long *runs) {
  char *name = ovl_get_str(ri->in, &ri->oom);
  for (int d = 0; d < 3; d++) grid[d] = get_int(ri->in);
  for (int d = 0; d < 3; d++) block[d] = get_int(ri->in);
  *runs = (long)get_int(ri->in);
  if (!name) ri->in->bad = 1;
  return name;
}

static void get_kernel_fits(rank_in *ri, ovl_kernel_slowdown **out, size_t *n) {
  ovl_bytes_reader *in = ri->in;
  size_t count = ovl_get_count(in, 80);
  if (count == 0) return;
  ovl_kernel_slowdown *k = alloc_items(ri, count, sizeof *k);
  if (!k) return;
  *out = k;
  for (size_t i = 0; i < count && !in->bad; i++, (*n)++) {
    k[i].name = get_signature(ri, k[i].grid, k[i].block, &k[i].runs);
    k[i].runs_alone = (long)get_int(in);
    k[i].runs_overlapped = (long)get_int(in);
    double *v[] = {&k[i].alone_ns, &k[i].factor, &k[i].cost_ns, &k[i].slope, &k[i].t_stat,
                   &k[i].alone_mean_ns, &k[i].alone_sd_ns, &k[i].over_mean_ns, &k[i].over_sd_ns};
    for (size_t d = 0; d < sizeof v / sizeof v[0]; d++) *v[d] = ovl_get_f64(in);
  }
}

static void get_kernel_totals(rank_in *ri, ovl_kernel_total **out, size_t *n) {
  ovl_bytes_reader *in = ri->in;
  size_t count = ovl_get_count(in, 16);
  if (count == 0) return;
  ovl_kernel_total *k = alloc_items(ri, count, sizeof *k);
  if (!k) return;
  *out = k;
  for (size_t i = 0; i < count && !in->bad; i++, (*n)++) {
    k[i].name = get_signature(ri, k[i].grid, k[i].block, &k[i].runs);
    k[i].total_ns = ovl_get_f64(in);
  }
}

static void get_rank(rank_in *ri) {
  ovl_bytes_reader *in = ri->in;
  ovl_rank_result *r = ri->r;
  r->trace_path = ovl_get_str(in, &ri->oom);
  r->ovl_path = ovl_get_str(in, &ri->oom);
  r->hostname = ovl_get_str(in, &ri->oom);
  r->rank = get_int(in);
  r->world_size = get_int(in);
  r->pid = get_int(in);
  r->device = get_int(in);
  r->job = (int)get_int(in);
  get_totals(in, &r->totals);
  r->step_detection = (ovl_step_method)ovl_get_i64(in);
  r->step_projection = (ovl_step_projection)ovl_get_i64(in);
  r->period = (size_t)ovl_get_u64(in);
  ri->nrecords = ovl_get_count(in, 30);
  ri->npieces = ovl_get_count(in, 2);
  if (ri->npieces > ri->nrecords * OVL_EXPOSED_PIECES) in->bad = 1;
  else if (ri->nrecords) r->coll_piece_bounds = alloc_items(ri, ri->npieces ? ri->npieces : 1, 2 * sizeof(int64_t));
  size_t ncross = ovl_get_count(in, 3);
  if (ncross && (r->coll_cross = alloc_items(ri, ncross, sizeof *r->coll_cross)) != NULL) {
    for (size_t i = 0; i < ncross && !in->bad; i++, r->ncoll_cross++) {
      ovl_coll_cross *x = &r->coll_cross[i];
      x->wait_ns = get_int(in);
      x->exposed_transfer_ns = get_int(in);
      x->arrived_last = (int)ovl_get_i64(in);
    }
  }
  if (ri->oom || in->bad) return;
  coll_pred p;
  memset(&p, 0, sizeof p);
  size_t nsteps = ovl_get_count(in, 20);
  if (!(r->steps = alloc_items(ri, nsteps, sizeof *r->steps))) return;
  for (size_t s = 0; s < nsteps && !in->bad && !ri->oom; s++, r->nsteps++) get_step(ri, r, &r->steps[s], &p);
  ovl_step_dims_seal(r);
  size_t nmarks = ovl_get_count(in, 5);
  if (nmarks && (r->marks = alloc_items(ri, nmarks, sizeof *r->marks)) != NULL) {
    int64_t near = r->totals.busy_start;
    for (size_t i = 0; i < nmarks && !in->bad; i++, r->nmarks++) {
      ovl_grad_mark *m = &r->marks[i];
      m->t = ovl_get_opt_near(in, near);
      near = m->t;
      m->bucket = (long)get_int(in);
      m->bytes = get_int(in);
      m->tid = get_int(in);
      m->step = (long)get_int(in);
      m->launch_corr = ovl_get_opt_near(in, 0);
      m->gpu_t = ovl_get_opt_near(in, m->t);
    }
  }
  long *counts[] = {&r->n_kernels, &r->n_comm_kernels, &r->n_memops, &r->n_comm_memops, &r->n_moe_kernels,
                    &r->colls_outside_steps, &r->colls_without_gpu_work, &r->colls_numbered,
                    &r->bad.kernels, &r->bad.memops, &r->bad.collectives, &r->bad.launches, &r->bad.nvtx,
                    &r->bad.api, &r->bad.strings, NULL, &r->colls_before_window, &r->bad.channels};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    int64_t v = get_int(in);
    if (counts[i]) *counts[i] = (long)v;
    else r->first_step_differs = (int)v;
  }
  r->cupti_late = (int)get_int(in);
  size_t nstreams = ovl_get_count(in, 6);
  if (nstreams && (r->streams = alloc_items(ri, nstreams, sizeof *r->streams)) != NULL) {
    for (size_t i = 0; i < nstreams && !in->bad; i++, r->nstreams++) {
      ovl_stream_stat *st = &r->streams[i];
      st->stream = get_int(in);
      st->compute_ns = get_int(in);
      st->comm_ns = get_int(in);
      st->memory_ns = get_int(in);
      st->kernels = (long)get_int(in);
      st->memops = (long)get_int(in);
    }
  }
  get_kernel_fits(ri, &r->kernel_fits, &r->nkernel_fits);
  get_kernel_fits(ri, &r->slowdowns, &r->nslowdowns);
  if (ri->oom || in->bad) return;
  get_colls(ri, &r->unstepped, &r->nunstepped, &p);
  get_kernel_totals(ri, &r->kernel_totals, &r->nkernel_totals);
  get_kernel_totals(ri, &r->lookalikes, &r->nlookalikes);
  r->realtime_offset = get_int(in);
  size_t nnames = ovl_get_count(in, 2);
  if (!(r->comm_names = calloc(nnames ? nnames : 1, sizeof *r->comm_names))) ri->oom = 1;
  for (size_t i = 0; i < nnames && !in->bad && !ri->oom; i++, r->ncomm_names++) {
    r->comm_names[i].comm = get_int(in);
    r->comm_names[i].name = ovl_get_str(in, &ri->oom);
  }
  r->clock_offset = get_int(in);
  ovl_rank_cross *x = &r->cross;
  x->in_job = (int)get_int(in);
  x->matched = (long)get_int(in);
  x->wait_ns = get_int(in);
  x->transfer_ns = get_int(in);
  x->exposed_transfer_ns = get_int(in);
  x->times_last = (long)get_int(in);
  x->decisive = (long)get_int(in);
  x->expected_last = ovl_get_f64(in);
  x->p_value = ovl_get_f64(in);
  x->straggler = (int)get_int(in);
  x->wait_caused_ns = get_int(in);
  x->late_gpu_ns = get_int(in);
  x->late_host_ns = get_int(in);
  x->delay_ns = get_int(in);
  get_findings(ri, &r->findings, &r->nfindings);
  get_dims(in, r->dims);
  ovl_pipeline_stats *pl = &r->pipeline;
  pl->stage = (int)get_int(in);
  pl->stages = (int)get_int(in);
  pl->microbatches = ovl_get_f64(in);
  pl->bubble = ovl_get_f64(in);
  pl->model_bubble = ovl_get_f64(in);
  pl->compute_ns = get_int(in);
  pl->span_ns = get_int(in);
  ovl_channel_facts *cf = &r->channel_facts;
  int64_t facts[7];
  for (size_t i = 0; i < 7; i++) facts[i] = get_int(in);
  cf->collectives = (long)facts[0];
  cf->timed = (long)facts[1];
  cf->checked = (long)facts[2];
  cf->agree = (long)facts[3];
  cf->max_outside = facts[4];
  cf->max_spread = facts[5];
  cf->max_spread_id = facts[6];
  if (ri->records_used != ri->nrecords || ri->pieces_used != ri->npieces) in->bad = 1;
}

int ovl_rank_unpack(ovl_bytes_reader *in, ovl_rank_result *r, ovl_err *err) {
  memset(r, 0, sizeof *r);
  rank_in ri = {in, r, 0, 0, 0, 0, 0};
  get_rank(&ri);
  if (!ri.oom && !in->bad) return OVL_OK;
  ovl_rank_result_free(r);
  if (ri.oom) return ovl_oom(err, "results received");
  return ovl_fail(err, OVL_EINTERNAL, "results received: malformed (a fault of ovl: please report it)");
}

/* ---------------------------------------------------------------------------------- */
/* Measured files                                                                      */
/* ---------------------------------------------------------------------------------- */

static void put_host_only(ovl_bytes *b, const ovl_host_only *h) {
  ovl_put_str(b, h->trace_path);
  put_int(b, h->rank);
  put_int(b, h->world_size);
  ovl_put_str(b, h->hostname);
  ovl_put_str(b, h->reason);
  ovl_put_str(b, h->cupti);
  put_int(b, h->collectives);
  put_int(b, h->api_calls);
  put_int(b, h->collective_bytes);
  ovl_put_str(b, h->ops);
}

static void get_host_only(ovl_bytes_reader *in, ovl_host_only *h, int *oom) {
  h->trace_path = ovl_get_str(in, oom);
  h->rank = get_int(in);
  h->world_size = get_int(in);
  h->hostname = ovl_get_str(in, oom);
  ovl_get_str_into(in, h->reason, sizeof h->reason);
  h->cupti = ovl_get_str(in, oom);
  h->collectives = (long)get_int(in);
  h->api_calls = (long)get_int(in);
  h->collective_bytes = get_int(in);
  ovl_get_str_into(in, h->ops, sizeof h->ops);
  if (!h->trace_path) in->bad = 1;
}

void ovl_measured_file_pack(const ovl_measured_file *f, ovl_bytes *b) {
  put_int(b, f->opened);
  put_int(b, f->done);
  put_int(b, f->rc);
  put_int(b, f->err.code);
  ovl_put_str(b, f->err.msg);
  const ovl_trace_source *src = &f->src;
  ovl_put_str(b, f->opened ? src->path : NULL);
  ovl_put_u64(b, f->opened ? src->n_ovl_paths : 0);
  for (size_t i = 0; f->opened && i < src->n_ovl_paths; i++) ovl_put_str(b, src->ovl_paths[i]);
  put_int(b, src->skipped);
  put_int(b, src->format);
  put_int(b, src->opt.hta_compat);
  ovl_put_u64(b, f->nranks);
  for (size_t i = 0; i < f->nranks; i++) ovl_rank_pack(&f->ranks[i], b);
  ovl_put_u64(b, f->nno_gpu);
  for (size_t i = 0; i < f->nno_gpu; i++) put_host_only(b, &f->no_gpu[i]);
}

/* The source of a file measured elsewhere: its names and counts; it owns no conversion. */
static void get_source(ovl_bytes_reader *in, ovl_measured_file *f, int *oom) {
  ovl_trace_source *src = &f->src;
  src->path = ovl_get_str(in, oom);
  size_t n = ovl_get_count(in, 1);
  if (n && !(src->ovl_paths = calloc(n, sizeof *src->ovl_paths))) *oom = 1;
  for (size_t i = 0; src->ovl_paths && i < n && !in->bad; i++, src->n_ovl_paths++)
    src->ovl_paths[i] = ovl_get_str(in, oom);
  src->ovl_path = src->n_ovl_paths ? src->ovl_paths[0] : NULL;
  src->read_path = src->path;
  src->is_temporary = 0;
  src->skipped = (long)get_int(in);
  src->format = (ovl_trace_format)get_int(in);
  src->opt.hta_compat = (int)get_int(in);
  if (f->opened && !src->path) in->bad = 1;
}

int ovl_measured_file_unpack(ovl_bytes_reader *in, ovl_measured_file *f, ovl_err *err) {
  memset(f, 0, sizeof *f);
  int oom = 0, rc = OVL_OK;
  f->opened = (int)get_int(in);
  f->done = (int)get_int(in);
  f->rc = (int)get_int(in);
  f->err.code = (int)get_int(in);
  ovl_get_str_into(in, f->err.msg, sizeof f->err.msg);
  get_source(in, f, &oom);
  size_t nranks = oom || in->bad ? 0 : ovl_get_count(in, 40);
  if (nranks && !(f->ranks = calloc(nranks, sizeof *f->ranks))) oom = 1;
  for (size_t i = 0; f->ranks && i < nranks && !rc; i++) {
    rc = ovl_rank_unpack(in, &f->ranks[i], err);
    if (!rc) f->nranks++;
  }
  size_t nno = oom || rc || in->bad ? 0 : ovl_get_count(in, 8);
  if (nno && !(f->no_gpu = calloc(nno, sizeof *f->no_gpu))) oom = 1;
  for (size_t i = 0; f->no_gpu && i < nno && !in->bad; i++, f->nno_gpu++) get_host_only(in, &f->no_gpu[i], &oom);
  if (!rc && (oom || in->bad))
    rc = oom ? ovl_oom(err, "results received")
             : ovl_fail(err, OVL_EINTERNAL, "results received: malformed (a fault of ovl: please report it)");
  if (rc) ovl_measured_file_free(f);
  return rc;
}
