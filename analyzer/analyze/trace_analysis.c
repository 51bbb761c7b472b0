/*
** Analysis of one trace file: see analysis.h.
**
** Data flow:
**   1. small tables into memory: collectives, their launch links (correlation -> collectives),
**      NVTX markers (steps, buckets, gradient-ready marks);
**   2. step plan: NVTX ranges (projected through api correlation ids, or by time), else the
**      periodic structure of each device's collective sequence, else the whole trace;
**   3. one streaming pass over GPU work in start order: classify each item, link it to its
**      collectives (or infer a collective from a communication kernel's name, whose launch
**      is then the api call of the same correlation id), drive the step windows and feed the
**      device's sweep;
**   4. results: per device totals, steps and their collectives (analysis_results.c).
** If the work cursor finds rows further out of order than its window, the pass is redone
** with SQLite sorting (rare: only traces written far out of order).
*/
#include "trace_analysis_internal.h"

#include "base/hash.h"
#include "base/sane_values.h"

#include "base/huge_pages.h"
#include "base/sort_inplace.h"
#include "base/i64map.h"
#include "base/vec.h"
#include "step_infer.h"
#include "load/comm_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Collectives and links                                                               */
/* ---------------------------------------------------------------------------------- */

_Static_assert(sizeof(ovl_coll_track) == 40, "ovl_coll_track: 40 bytes a collective (trace_analysis_internal.h)");
/* Collective c's group: OVL_NONE when none (or no row names one). */
static int64_t coll_group(const ovl_run *r, size_t c) { return r->group_of ? r->group_of[c] : OVL_NONE; }

/* The correlation of collective c's first GPU work: OVL_NONE when none was seen or c's is not
** kept (c < corr_first). */
static int64_t coll_corr(const ovl_run *r, size_t c) {
  return c >= r->corr_first ? r->corr_of[c - r->corr_first] : OVL_NONE;
}

static void set_coll_corr(ovl_run *r, size_t c, int64_t correlation) {
  if (c >= r->corr_first) r->corr_of[c - r->corr_first] = correlation;
}

/* Grows the sweep's per-collective state (exposed time, running counts, pieces) from old to
** cap entries, once it exists: only the final pass needs it (pass_state_alloc), so the step
** plan's work does not peak beside it. */
static int grow_pass_state(ovl_run *r, size_t old, size_t cap) {
  if (!r->cstate.exposed) return 0;
  int64_t *exposed = ovl_huge_realloc(r->cstate.exposed, old * sizeof *exposed, cap * sizeof *exposed);
  if (exposed) r->cstate.exposed = exposed;
  int32_t *running = ovl_huge_realloc(r->cstate.running, old * sizeof *running, cap * sizeof *running);
  if (running) r->cstate.running = running;
  ovl_piece_slot *pieces = ovl_huge_realloc(r->cstate.pieces, old * sizeof *pieces, cap * sizeof *pieces);
  if (pieces) r->cstate.pieces = pieces;
  return exposed && running && pieces ? 0 : -1;
}

/* Grows the per-collective arrays to exactly cap entries. They live the whole run and are
** touched once each: huge pages when large (base/huge_pages.h). The rows taken from the work
** stream and their other parts (coll_cap still 0) have a capacity of their own: realloc keeps
** them in place. Only the pass grows them: the groups and correlations exist until it ends. */
static int grow_colls(ovl_run *r, size_t cap, ovl_err *err) {
  size_t old = r->coll_cap;
  assert(!r->pass_over && cap >= r->corr_first);
  ovl_coll_row *recs = old ? ovl_huge_realloc(r->recs, old * sizeof *recs, cap * sizeof *recs)
                           : realloc(r->recs, cap * sizeof *recs);
  if (recs) r->recs = recs;
  int64_t *group_of = r->group_of ? realloc(r->group_of, cap * sizeof *group_of) : NULL;
  if (group_of) r->group_of = group_of;
  int64_t *corr_of = realloc(r->corr_of, (cap - r->corr_first ? cap - r->corr_first : 1) * sizeof *corr_of);
  if (corr_of) r->corr_of = corr_of;
  uint64_t *op_hash = !r->op_hash ? NULL
                      : old       ? ovl_huge_realloc(r->op_hash, old * sizeof *op_hash, cap * sizeof *op_hash)
                                  : realloc(r->op_hash, cap * sizeof *op_hash);
  if (op_hash) r->op_hash = op_hash;
  ovl_coll_track *track = ovl_huge_realloc(r->track, old * sizeof *track, cap * sizeof *track);
  if (track) r->track = track;
  if (!recs || (r->group_of && !group_of) || !corr_of || (r->op_hash && !op_hash) || !track ||
      grow_pass_state(r, old, cap))
    return ovl_oom(err, "collectives");
  r->coll_cap = cap;
  return OVL_OK;
}

/* The sweep's per-collective state, for as many collectives as there is room for. */
static int pass_state_alloc(ovl_run *r, ovl_err *err) {
  assert(!r->cstate.exposed && !r->cstate.running && !r->cstate.pieces);
  size_t cap = r->coll_cap ? r->coll_cap : 1;
  r->cstate.exposed = ovl_huge_malloc(cap * sizeof *r->cstate.exposed);
  r->cstate.running = ovl_huge_malloc(cap * sizeof *r->cstate.running);
  r->cstate.pieces = ovl_huge_malloc(cap * sizeof *r->cstate.pieces);
  return r->cstate.exposed && r->cstate.running && r->cstate.pieces ? OVL_OK : ovl_oom(err, "collectives");
}

int ovl_run_reserve_colls(ovl_run *r, size_t n, ovl_err *err) {
  if (n <= r->coll_cap) return OVL_OK;
  size_t cap = r->coll_cap ? r->coll_cap : 64;
  while (cap < n) cap *= 2;
  return grow_colls(r, cap, err);
}

/* For the collectives of the file, whose number is known: no room to spare. */
static int reserve_colls_exact(ovl_run *r, size_t n, ovl_err *err) {
  return n <= r->coll_cap ? OVL_OK : grow_colls(r, n, err);
}

static void reset_track(ovl_run *r, size_t i) {
  assert(!r->pass_over);
  r->track[i].gpu_start = OVL_NONE;
  r->track[i].gpu_end = OVL_NONE;
  r->track[i].device = OVL_TRACK_NO_DEVICE;
  set_coll_corr(r, i, OVL_NONE);
  if (r->recs[i].stream_of_work) {  /* the row named no stream: the pass's is undone */
    r->recs[i].stream = OVL_NONE;
    r->recs[i].stream_of_work = 0;
  }
  r->track[i].compute_before = r->track[i].compute_after = OVL_NONE;
  r->track[i].has_d2h = 0;
  if (!r->cstate.exposed) return;  /* before the final pass */
  r->cstate.exposed[i] = 0;
  r->cstate.running[i] = 0;
  ovl_coll_pieces_clear(&r->cstate, i);
}

/* The analysis's row of a reader's record, its group and the hash of its op's name: its op
** hashed and named by enum, its types interned. On error (no memory to intern): ovl_oom's
** code, the row incomplete. */
static int make_row(const ovl_coll_rec *rec, ovl_coll_row *row, int64_t *group, uint64_t *op_hash, ovl_err *err) {
  assert(ovl_coll_rank_ok(rec->nranks) && ovl_coll_rank_ok(rec->rank));  /* the reader's range */
  row->id = rec->id;
  row->comm = rec->comm;
  row->rank32 = rec->rank == OVL_NONE ? -1 : (int32_t)rec->rank;
  row->nranks32 = rec->nranks == OVL_NONE ? -1 : (int32_t)rec->nranks;
  row->seq = rec->seq;
  row->bytes = rec->bytes;
  row->device = rec->device;
  row->stream = rec->stream;
  row->stream_of_work = 0;
  row->host_start = rec->host_start;
  row->tid = rec->tid;
  *group = rec->group_id;
  *op_hash = ovl_hash_str(OVL_HASH_SEED, rec->op);
  row->op = (uint8_t)ovl_op_from_name(rec->op);
  row->has_nccl_names = rec->algorithm[0] || rec->protocol[0];
  return ovl_coll_types_intern(rec->dtype, rec->redop, &row->types) ? ovl_oom(err, "collectives") : OVL_OK;
}

/* A row with its other parts, as compact_rows first writes them (96 bytes where the record
** takes 152). */
typedef struct wide_row {
  ovl_coll_row row;
  int64_t group;
  uint64_t op_hash;
} wide_row;

/* The rows taken from the work stream (n of them) made the analysis's, in their own array,
** front to back: row i ends where record i + 1 begins, so no second array. First each record
** becomes a wide row and the block shrinks to them; then the other parts move to arrays of
** their own (allocated only now: beside the records they would raise the loading's peak) and
** the rows close up. */
static int compact_rows(ovl_run *r, ovl_coll_rec *taken, size_t n, ovl_err *err) {
  _Static_assert(sizeof(ovl_coll_row) == 80 && sizeof(wide_row) <= sizeof(ovl_coll_rec),
                 "ovl_coll_row: 80 bytes, compacted in place (trace_analysis_internal.h)");
  char *base = (char *)taken;
  r->recs = (ovl_coll_row *)(void *)base;  /* the run frees it, whatever happens below */
  int grouped = 0;                         /* a row names a group */
  for (size_t i = 0; i < n; i++) {
    ovl_coll_rec rec;
    memcpy(&rec, base + i * sizeof rec, sizeof rec);  /* read before the row overwrites it */
    wide_row w;
    int rc = make_row(&rec, &w.row, &w.group, &w.op_hash, err);
    if (!rc && w.row.has_nccl_names) {
      ovl_coll_nccl_names names = {i, {0}, {0}};
      snprintf(names.algorithm, sizeof names.algorithm, "%s", rec.algorithm);
      snprintf(names.protocol, sizeof names.protocol, "%s", rec.protocol);
      if (OVL_VEC_PUSH(&r->nccl_names, names)) rc = ovl_oom(err, "collectives");
    }
    if (rc) return rc;
    assert((i + 1) * sizeof w <= (i + 1) * sizeof rec);
    memcpy(base + i * sizeof w, &w, sizeof w);
    grouped |= w.group != OVL_NONE;
  }
  char *shrunk = n ? realloc(base, n * sizeof(wide_row)) : NULL;  /* in place: a shrink */
  if (shrunk) r->recs = (ovl_coll_row *)(void *)(base = shrunk);
  /* no correlation kept for the rows yet (ovl_analyze_file decides, keep_row_correlations) */
  r->corr_first = n;
  r->corr_of = malloc(sizeof *r->corr_of);
  if (grouped) r->group_of = ovl_huge_malloc((n ? n : 1) * sizeof *r->group_of);
  r->op_hash = ovl_huge_malloc((n ? n : 1) * sizeof *r->op_hash);
  if ((grouped && !r->group_of) || !r->corr_of || !r->op_hash) return ovl_oom(err, "collectives");
  for (size_t i = 0; i < n; i++) {
    wide_row w;
    memcpy(&w, base + i * sizeof w, sizeof w);
    if (r->group_of) r->group_of[i] = w.group;
    r->op_hash[i] = w.op_hash;
    memcpy(base + i * sizeof w.row, &w.row, sizeof w.row);  /* row i ends before wide row i + 1 */
  }
  return OVL_OK;
}

/* The collectives rows: the work stream's own, taken over (inferred ones are appended). */
static int load_collectives(ovl_run *r, ovl_err *err) {
  int rc = ovl_work_stream_init(&r->ws, r->t, &r->ctx->classifier, err);
  if (rc) return rc;
  r->ws.progress = "analysing";
  assert(!r->recs && r->coll_cap == 0);
  size_t n = 0;
  ovl_coll_rec *taken = ovl_work_stream_take_recs(&r->ws, &n);
  rc = compact_rows(r, taken, n, err);
  if (!rc) rc = reserve_colls_exact(r, n + 1, err);  /* their number is known: no room to spare */
  if (rc) return rc;
  r->nrows = r->ncolls = n;
  for (size_t i = 0; i < r->nrows; i++) {
    reset_track(r, i);
    r->track[i].step = -1;
    r->track[i].closes_step = 0;
  }
  return OVL_OK;
}

/* A collective inferred from an NCCL kernel that no collectives row claims. */
static int synthesize(ovl_run *r, const ovl_work *w, int32_t *index, ovl_err *err) {
  if (r->next_synth < r->ncolls) {  /* made by the pre-pass, in the same order */
    *index = (int32_t)r->next_synth++;
    return OVL_OK;
  }
  int rc = ovl_run_reserve_colls(r, r->ncolls + 1, err);
  if (rc) return rc;
  size_t i = r->ncolls++;
  r->next_synth = r->ncolls;
  ovl_coll_rec c;
  memset(&c, 0, sizeof c);
  c.id = c.comm = c.rank = c.nranks = c.seq = c.count = c.bytes = c.peer = OVL_NONE;
  c.host_start = c.host_end = c.tid = c.group_id = OVL_NONE;
  c.device = w->device;
  c.stream = w->stream;
  const char *kernel = ovl_trace_string(r->t, w->name);
  char op[OVL_COLL_TEXT_BYTES], dtype[OVL_COLL_TEXT_BYTES] = "";  /* cut as the reader cuts */
  snprintf(op, sizeof op, "%s", ovl_op_name(ovl_comm_kernel_op(kernel)));
  const char *kernel_dtype = ovl_comm_kernel_dtype(kernel);
  if (kernel_dtype) snprintf(dtype, sizeof dtype, "%s", kernel_dtype);
  c.op = op;
  c.dtype = dtype;
  c.redop = c.algorithm = c.protocol = "";
  uint64_t op_hash;
  int64_t group;
  if ((rc = make_row(&c, &r->recs[i], &group, &op_hash, err))) return rc;
  if (r->group_of) r->group_of[i] = group;
  if (r->op_hash) r->op_hash[i] = op_hash;  /* the final pass's: no step plan reads it */
  reset_track(r, i);
  r->track[i].step = -1;
  r->track[i].closes_step = 0;
  *index = (int32_t)i;
  return OVL_OK;
}

/* The tracking's index of device (OVL_TRACK_NO_DEVICE: it tracks none there). */
static uint16_t device_index(const ovl_run *r, int64_t device) {
  for (size_t i = 0; i < r->ndevice_ids; i++)
    if (r->device_ids[i] == device) return (uint16_t)i;
  return OVL_TRACK_NO_DEVICE;
}

/* The tracking's index of device, which it then names. When it cannot (no memory, too many
** devices) the pass is told at its end (tracking_failed): OVL_TRACK_NO_DEVICE. */
static uint16_t device_index_add(ovl_run *r, int64_t device) {
  uint16_t index = device_index(r, device);
  if (index != OVL_TRACK_NO_DEVICE) return index;
  int room = r->ndevice_ids < OVL_TRACK_DEVICES_MAX;
  int64_t *ids = room ? realloc(r->device_ids, (r->ndevice_ids + 1) * sizeof *ids) : NULL;
  if (!ids) {
    r->tracking_failed = room ? OVL_EINTERNAL : OVL_EUSER;
    return OVL_TRACK_NO_DEVICE;
  }
  r->device_ids = ids;
  ids[r->ndevice_ids] = device;
  return (uint16_t)r->ndevice_ids++;
}

/* What tracking_failed says, as the pass's error. */
static int tracking_error(const ovl_run *r, ovl_err *err) {
  if (r->tracking_failed == OVL_EINTERNAL) return ovl_oom(err, "devices");
  return ovl_fail(err, OVL_EUSER, "%s: the trace's GPU work names more than %d devices", ovl_trace_path(r->t),
                  (int)OVL_TRACK_DEVICES_MAX);
}

static void track_work(ovl_run *r, int32_t c, const ovl_work *w) {
  ovl_coll_track *t = &r->track[c];
  if (t->gpu_start == OVL_NONE || w->start < t->gpu_start) t->gpu_start = w->start;
  if (t->gpu_end == OVL_NONE || w->end > t->gpu_end) t->gpu_end = w->end;
  if (t->device == OVL_TRACK_NO_DEVICE) t->device = device_index_add(r, w->device);
  if (coll_corr(r, (size_t)c) == OVL_NONE) set_coll_corr(r, (size_t)c, w->correlation);
  ovl_coll_row *row = &r->recs[c];
  if (row->stream == OVL_NONE) {  /* a row without a stream takes its first work's */
    row->stream = w->stream;
    row->stream_of_work = 1;
  }
}

/* Collectives inferred from kernels (an NCCL kernel without a collectives row, a kernel
** --comm-pattern names) have no launch time of their own; when the trace holds the api call
** that launched their work (same correlation id), that call is their launch, as an
** importer links an NCCL kernel to its call. */
typedef struct synth_link {
  int64_t correlation;
  size_t coll;
} synth_link;

static int cmp_synth_link(const void *pa, const void *pb) {
  const synth_link *a = pa, *b = pb;
  if (a->correlation != b->correlation) return a->correlation < b->correlation ? -1 : 1;
  return (a->coll > b->coll) - (a->coll < b->coll);
}

typedef struct synth_links {
  ovl_run *r;
  synth_link *v;
  size_t n;
} synth_links;

static int on_launch_api(void *ctx, const ovl_api_row *row) {
  synth_links *l = ctx;
  size_t lo = 0, hi = l->n;  /* first link with correlation >= the row's */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->v[mid].correlation < row->correlation) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i < l->n && l->v[i].correlation == row->correlation; i++) {
    ovl_coll_row *c = &l->r->recs[l->v[i].coll];
    if (c->host_start != OVL_NONE) continue;  /* an earlier api row with this id won */
    c->host_start = row->start;
    c->tid = row->tid;
  }
  return OVL_OK;
}

static int link_synthesized_launches(ovl_run *r, ovl_err *err) {
  size_t n = 0;
  for (size_t i = r->nrows; i < r->ncolls; i++)
    n += r->recs[i].host_start == OVL_NONE && coll_corr(r, i) != OVL_NONE;
  if (n == 0 || !ovl_trace_has_table(r->t, "api")) return OVL_OK;
  synth_links l = {r, malloc(n * sizeof(synth_link)), 0};
  if (!l.v) return ovl_oom(err, "collective launches");
  for (size_t i = r->nrows; i < r->ncolls; i++)
    if (r->recs[i].host_start == OVL_NONE && coll_corr(r, i) != OVL_NONE)
      l.v[l.n++] = (synth_link){coll_corr(r, i), i};
  ovl_qsort(l.v, l.n, sizeof *l.v, cmp_synth_link);
  int rc = ovl_trace_scan_api(r->t, 0, on_launch_api, &l, err);
  free(l.v);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Devices and step plans                                                              */
/* ---------------------------------------------------------------------------------- */

static ovl_device_pass *find_device(ovl_run *r, int64_t device) {
  for (size_t i = 0; i < r->ndevs; i++)
    if (r->devs[i].device == device) return &r->devs[i];
  return NULL;
}

/* Periodic step count planned for a device, or 0. */
static size_t periodic_steps_of(const ovl_run *r, int64_t device) {
  for (size_t i = 0; i < r->nperiodic; i++)
    if (r->periodic[i].device == device) return r->periodic[i].nsteps;
  return 0;
}

static void record_compute_end(void *ctx, int32_t sig, int64_t duration, int64_t overlapped) {
  ovl_kstats_add(ctx, sig, duration, overlapped);
}

static int add_device(ovl_run *r, int64_t device, ovl_device_pass **out, ovl_err *err) {
  ovl_device_pass *devs = realloc(r->devs, (r->ndevs + 1) * sizeof *devs);
  if (!devs) return ovl_oom(err, "devices");
  r->devs = devs;
  ovl_device_pass *d = &r->devs[r->ndevs];
  memset(d, 0, sizeof *d);
  d->device = device;
  size_t nwin = 1;
  if (r->method == OVL_STEPS_NVTX) {
    d->method = OVL_STEPS_NVTX;
    nwin = r->hm.steps.len;
  } else {
    size_t np = periodic_steps_of(r, device);
    d->method = np ? OVL_STEPS_PERIODIC : OVL_STEPS_WHOLE;
    nwin = np ? np : 1;
  }
  if (ovl_windows_init(&d->windows, nwin)) return ovl_oom(err, "step windows");
  if (d->method == OVL_STEPS_NVTX && !r->hm.by_correlation)
    for (size_t i = 0; i < nwin; i++)
      ovl_windows_set(&d->windows, i, r->hm.steps.items[i].start, r->hm.steps.items[i].end);
  d->max_compute_end = OVL_NONE;
  d->copy_candidate = -1;
  r->ndevs++;
  /* The sweep points into the device: initialise it only once the device sits in the array. */
  for (size_t i = 0; i < r->ndevs; i++) {
    r->devs[i].sweep.windows = &r->devs[i].windows;
    r->devs[i].sweep.on_compute_end_ctx = &r->devs[i].kstats;
  }
  if (ovl_sweep_init(&d->sweep, &d->windows, &r->cstate)) return ovl_oom(err, "sweep");
  d->sweep.on_compute_end = record_compute_end;
  d->sweep.on_compute_end_ctx = &d->kstats;
  *out = d;
  return OVL_OK;
}

static uint64_t coll_signature(const ovl_run *r, size_t i) {
  uint64_t h = r->op_hash[i];
  h = ovl_hash_word(h, (uint64_t)r->recs[i].bytes);
  return ovl_hash_word(h, (uint64_t)r->recs[i].comm);
}

typedef struct seq_entry {
  int64_t launch;
  size_t coll;
} seq_entry;

static int cmp_seq(const void *pa, const void *pb) {
  const seq_entry *a = pa, *b = pb;
  if (a->launch != b->launch) return a->launch < b->launch ? -1 : 1;
  return (a->coll > b->coll) - (a->coll < b->coll);
}

/* Launch time used to order a collective: host launch, else GPU start, else its position. */
static int64_t seq_launch(const ovl_run *r, size_t i) {
  if (r->recs[i].host_start != OVL_NONE) return r->recs[i].host_start;
  if (r->track[i].gpu_start != OVL_NONE) return r->track[i].gpu_start;
  return (int64_t)i;
}

static int64_t seq_device(const ovl_run *r, size_t i) {
  if (r->track[i].device != OVL_TRACK_NO_DEVICE) return r->device_ids[r->track[i].device];
  return r->recs[i].device != OVL_NONE ? r->recs[i].device : 0;
}

/* Infers periodic steps for every device from its collectives [0, ncolls): per device its
** collectives in launch order (sorted in place: no two entries are alike), made the step
** inference's items in place with their indices kept apart, 20 bytes a collective beside
** the inference's 8 (the rows and their tracking are all there is then). */
static int plan_periodic(ovl_run *r, ovl_err *err) {
  _Static_assert(sizeof(seq_entry) == sizeof(ovl_seq_item), "the items are made in place of the entries");
  size_t n = r->ncolls;
  assert(r->op_hash && n <= UINT32_MAX);  /* collectives are numbered in 32 bits (ovl_sweep_item.coll) */
  seq_entry *seq = ovl_huge_malloc((n ? n : 1) * sizeof *seq);
  uint32_t *order = ovl_huge_malloc((n ? n : 1) * sizeof *order);
  int64_t *devices = NULL;
  int rc = (!seq || !order) ? ovl_oom(err, "step inference") : OVL_OK;
  size_t ndev = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    int64_t d = seq_device(r, i);
    size_t k = 0;
    while (k < ndev && devices[k] != d) k++;
    if (k < ndev) continue;
    int64_t *grown = realloc(devices, (ndev + 1) * sizeof *grown);
    if (!grown) rc = ovl_oom(err, "step inference");
    else (devices = grown)[ndev++] = d;
  }
  for (size_t k = 0; !rc && k < ndev; k++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (seq_device(r, i) == devices[k]) seq[m++] = (seq_entry){seq_launch(r, i), i};
    ovl_sort_inplace(seq, m, sizeof *seq, cmp_seq);
    ovl_seq_item *items = (ovl_seq_item *)(void *)seq;
    for (size_t i = 0; i < m; i++) {
      seq_entry e;
      memcpy(&e, &seq[i], sizeof e);
      order[i] = (uint32_t)e.coll;
      ovl_seq_item item = {coll_signature(r, e.coll), e.launch};
      memcpy(&items[i], &item, sizeof item);
    }
    ovl_periodic_steps steps;
    if (ovl_infer_periodic_steps(items, m, &steps) < 2) continue;
    ovl_periodic_plan *p = realloc(r->periodic, (r->nperiodic + 1) * sizeof *p);
    if (!p) {
      rc = ovl_oom(err, "step inference");
      break;
    }
    r->periodic = p;
    r->periodic[r->nperiodic++] = (ovl_periodic_plan){devices[k], steps.nsteps, steps.period};
    for (size_t i = 0; i < m; i++) {
      size_t step = ovl_periodic_step_of(&steps, i);
      assert(step <= INT32_MAX);  /* steps are fewer than collectives */
      r->track[order[i]].step = (int32_t)step;
      /* The last collective of a step closes its window when its GPU work ends. */
      if (i + 1 == m || ovl_periodic_step_of(&steps, i + 1) != step) r->track[order[i]].closes_step = 1;
    }
  }
  free(seq);
  free(order);
  free(devices);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* The streaming pass                                                                  */
/* ---------------------------------------------------------------------------------- */

static void free_devices(ovl_run *r) {
  for (size_t i = 0; i < r->ndevs; i++) {
    ovl_sweep_free(&r->devs[i].sweep);
    ovl_windows_free(&r->devs[i].windows);
    ovl_kstats_free(&r->devs[i].kstats);
    OVL_VEC_FREE(&r->devs[i].awaiting);
    OVL_VEC_FREE(&r->devs[i].lookalikes);
    free(r->devs[i].streams);
  }
  free(r->devs);
  r->devs = NULL;
  r->ndevs = 0;
}

/* Before a pass (again): no devices, the collectives' state as loaded. */
static void reset_pass(ovl_run *r) {
  free_devices(r);
  r->ncolls = r->nrows + r->npresynth;
  r->next_synth = r->nrows;
  r->copies.len = 0;
  if (r->cstate.pieces) ovl_coll_pieces_restart(&r->cstate);
  for (size_t i = 0; i < r->ncolls; i++) reset_track(r, i);
}

/* From now on the correlation of every collective's first work is kept, not only the inferred
** ones': NVTX steps projected by correlation read them all as the pass ends (end_pass). */
static int keep_row_correlations(ovl_run *r, ovl_err *err) {
  if (r->corr_first == 0) return OVL_OK;
  int64_t *all = ovl_huge_malloc((r->coll_cap ? r->coll_cap : 1) * sizeof *all);
  if (!all) return ovl_oom(err, "collectives");
  for (size_t c = 0; c < r->corr_first; c++) all[c] = OVL_NONE;
  for (size_t c = r->corr_first; c < r->ncolls; c++) all[c] = r->corr_of[c - r->corr_first];
  free(r->corr_of);
  r->corr_of = all;
  r->corr_first = 0;
  return OVL_OK;
}

/* After the final pass: what only the pass reads goes before the results are built beside
** the rest (the running counts, the correlation links, the collectives' groups and first
** correlations). What the results need of the correlations, the step that launched each
** collective's work when NVTX steps are projected by correlation, is kept in its tracking. */
static void end_pass(ovl_run *r) {
  free(r->cstate.running);
  r->cstate.running = NULL;
  ovl_work_stream_drop_links(&r->ws);
  if (r->method == OVL_STEPS_NVTX && r->hm.by_correlation) {
    assert(r->corr_first == 0);  /* every correlation kept (keep_row_correlations) */
    size_t hint = SIZE_MAX;
    for (size_t c = 0; c < r->ncolls; c++) {
      long ls = ovl_launch_step_near(&r->hm, coll_corr(r, c), &hint);
      assert(ls >= -1 && ls <= INT32_MAX);  /* steps.len at most: fewer than the NVTX rows */
      r->track[c].step = (int32_t)ls;
    }
  }
  free(r->group_of);
  free(r->corr_of);
  r->group_of = r->corr_of = NULL;
  r->corr_first = 0;
  r->pass_over = 1;
  ovl_heap_trim();  /* what the pass freed in the heap (the links, the running counts, ...) */
}

/* Opens, closes or starts step windows as work of the device begins. step_hint: the
** periodic step of the collective this work executes, or -1. */
static void drive_windows(ovl_run *r, ovl_device_pass *d, const ovl_work *w, long step_hint) {
  ovl_step_windows *win = &d->windows;
  if (d->method == OVL_STEPS_NVTX && r->hm.by_correlation) {
    long ls = ovl_launch_step_near(&r->hm, w->correlation, &d->launch_hint);
    if (ls < 0) return;
    if ((size_t)ls >= win->n) {
      if (!d->after_last) {
        ovl_sweep_advance(&d->sweep, w->start);
        ovl_windows_close_all(win, w->start);
        d->after_last = 1;
      }
    } else if ((size_t)ls >= win->opened) {
      ovl_sweep_advance(&d->sweep, w->start);
      ovl_windows_open(win, (size_t)ls, w->start);
    }
  } else if (d->method != OVL_STEPS_NVTX && win->opened == 0) {
    ovl_sweep_advance(&d->sweep, w->start);
    if (d->method == OVL_STEPS_WHOLE) ovl_windows_set(win, 0, w->start, INT64_MAX);
    else ovl_windows_open(win, 0, w->start);
  }
  /* A collective of a later periodic step has started although the previous step's last
  ** collective never ended (it had no GPU work): its step has begun by now at the latest. */
  if (d->method == OVL_STEPS_PERIODIC && step_hint >= 0 && (size_t)step_hint >= win->opened) {
    ovl_sweep_advance(&d->sweep, w->start);
    ovl_windows_open(win, (size_t)step_hint, w->start);
  }
}

/* Time per stream by class (streams of a device are few: a linear search). */
static int note_stream(ovl_device_pass *d, const ovl_work *w, ovl_work_class cls, ovl_err *err) {
  size_t i = 0;
  while (i < d->nstreams && d->streams[i].stream != w->stream) i++;
  if (i == d->nstreams) {
    ovl_stream_stat *grown = realloc(d->streams, (d->nstreams + 1) * sizeof *grown);
    if (!grown) return ovl_oom(err, "streams");
    d->streams = grown;
    memset(&d->streams[i], 0, sizeof d->streams[i]);
    d->streams[i].stream = w->stream;
    d->nstreams++;
  }
  ovl_stream_stat *st = &d->streams[i];
  int64_t dur = w->end - w->start;
  if (cls == OVL_CLASS_COMPUTE) st->compute_ns = ovl_sat_add(st->compute_ns, dur);
  else if (cls == OVL_CLASS_COMM) st->comm_ns = ovl_sat_add(st->comm_ns, dur);
  else st->memory_ns = ovl_sat_add(st->memory_ns, dur);
  if (w->is_memop) st->memops++;
  else st->kernels++;
  return OVL_OK;
}

/* A collective's work arrives: remember the compute that started before its first work, and
** whether it is the kind a device-to-host copy follows (DDP's used-parameter map: a small
** integer all-reduce). */
static int note_collective_work(ovl_run *r, ovl_device_pass *d, int32_t c, ovl_err *err) {
  ovl_coll_track *t = &r->track[c];
  if (t->compute_before == OVL_NONE) {
    t->compute_before = d->max_compute_end;
    if (OVL_VEC_PUSH(&d->awaiting, c)) return ovl_oom(err, "collectives");
  }
  const ovl_coll_row *rec = &r->recs[c];
  const char *dtype = ovl_coll_types_dtype(rec->types);
  int small_int = rec->op == OVL_OP_ALLREDUCE &&
                  (strncmp(dtype, "Int", 3) == 0 || strncmp(dtype, "int", 3) == 0 ||
                   strncmp(dtype, "Uint", 4) == 0);
  d->copy_candidate = small_int ? c : -1;
  return OVL_OK;
}

/* A compute kernel starts at t: it is the next compute of every awaiting collective that has
** ended by then. Collectives still running keep waiting (the list stays short: collectives
** running at once). */
static void note_compute_start(ovl_run *r, ovl_device_pass *d, int64_t t) {
  size_t kept = 0;
  for (size_t i = 0; i < d->awaiting.len; i++) {
    ovl_coll_track *c = &r->track[d->awaiting.items[i]];
    if (c->gpu_end != OVL_NONE && c->gpu_end <= t) c->compute_after = t;
    else d->awaiting.items[kept++] = d->awaiting.items[i];
  }
  d->awaiting.len = kept;
}

/* A compute kernel whose name looks like communication (comm_names.h): its runs and time,
** per name (the first OVL_LOOKALIKES_KEPT names). */
static int note_lookalike(ovl_device_pass *d, const ovl_work *w, ovl_err *err) {
  size_t i = 0;
  while (i < d->lookalikes.len && d->lookalikes.items[i].name != w->name) i++;
  if (i == d->lookalikes.len) {
    if (i >= OVL_LOOKALIKES_KEPT) return OVL_OK;
    ovl_lookalike_stat z = {w->name, 0, 0};
    if (OVL_VEC_PUSH(&d->lookalikes, z)) return ovl_oom(err, "kernel names");
  }
  d->lookalikes.items[i].runs++;
  d->lookalikes.items[i].total_ns = ovl_sat_add(d->lookalikes.items[i].total_ns, w->end - w->start);
  return OVL_OK;
}

/* A memory copy: the device-to-host copy that follows the candidate collective. */
static int note_copy(ovl_run *r, ovl_device_pass *d, const ovl_work *w, ovl_err *err) {
  if (d->copy_candidate < 0 || strcmp(w->memkind, "DtoH") != 0) return OVL_OK;
  ovl_coll_track *t = &r->track[d->copy_candidate];
  if (t->gpu_end == OVL_NONE || w->start < t->gpu_end || t->has_d2h) return OVL_OK;
  ovl_coll_copy copy = {d->copy_candidate, w->start, w->end, w->bytes};
  if (OVL_VEC_PUSH(&r->copies, copy)) return ovl_oom(err, "collectives");
  t->has_d2h = 1;
  d->copy_candidate = -1;
  return OVL_OK;
}

/* Launch dimensions cost about 40% more decoding per kernel: read them only when the trace
** has them, judged by its first kernels. Imports do not record them for every kernel (a
** communication kernel, a kernel of another runtime may lack them), so one kernel with them
** among the first PROBE_KERNELS decides; none there: none are read. */
#define PROBE_KERNELS 4096

static int probe_launch_dims(ovl_run *r, ovl_err *err) {
  r->launch_dims = 0;
  if (!r->ctx->opt.launch_dims) return OVL_OK;
  /* A one-row window: rows come in table order, and a row out of order only ends the probe. */
  ovl_work_options wopt = {1, 1};
  ovl_work_cursor *cur = NULL;
  int rc = ovl_work_open(r->t, &wopt, &cur, err);
  int kernels = 0, rows = 0;
  while (!rc && kernels < PROBE_KERNELS && rows < 4 * PROBE_KERNELS && !r->launch_dims) {
    ovl_work w;
    int has = 0;
    rc = ovl_work_next(cur, &w, &has, err);  /* w is valid when has is set, even if rc is not 0 */
    if (!has) break;
    rows++;
    if (w.is_memop) continue;
    kernels++;
    r->launch_dims = w.grid[0] != OVL_NONE || w.block[0] != OVL_NONE;
  }
  ovl_work_close(cur);
  if (rc == OVL_EUNSORTED) {
    ovl_err_clear(err);
    rc = OVL_OK;
  }
  if (kernels == 0) r->launch_dims = 1;  /* no verdict: read them if present */
  return rc;
}

/* Whether work w, linked by its correlation id to colls[0..n), executes colls[k]. A group of
** calls (one ncclGroup) shares one kernel, hence every member; but a correlation id can also
** repeat in a trace (ids reused, files merged), and work cannot run before its call: it belongs
** to the latest call launched at or before it, with the members of that call's group (or
** launch time), and to calls without a launch time. Work earlier than every call keeps them
** all (clocks may disagree; the link is the better evidence). */
static int executes(const ovl_run *r, const int32_t *colls, uint32_t n, uint32_t k, const ovl_work *w) {
  if (n == 1) return 1;
  const ovl_coll_row *c = &r->recs[colls[k]];
  if (c->host_start == OVL_NONE) return 1;
  const ovl_coll_row *best = NULL;
  int64_t best_group = OVL_NONE;
  for (uint32_t i = 0; i < n; i++) {
    const ovl_coll_row *o = &r->recs[colls[i]];
    if (o->host_start != OVL_NONE && o->host_start <= w->start && (!best || o->host_start > best->host_start)) {
      best = o;
      best_group = coll_group(r, (size_t)colls[i]);
    }
  }
  if (!best) return 1;
  return c == best || c->host_start == best->host_start ||
         (best_group != OVL_NONE && coll_group(r, (size_t)colls[k]) == best_group);
}

/* The final pass shows its work to the options' observer (analysis.h), if any. */
static int observe_pass(ovl_run *r, const char *path, ovl_err *err) {
  const ovl_work_observer *o = r->ctx->opt.observer;
  if (!o) return OVL_OK;
  r->observed = o->open(o->self, path);
  if (!r->observed) return ovl_oom(err, "work observer");
  if (r->ws.sorted) o->restart(r->observed);  /* the pre-pass found the rows out of order */
  return OVL_OK;
}

/* One pass over the work. prepass: only infer collectives from NCCL kernels. */
static int run_pass(ovl_run *r, size_t window, int prepass, ovl_err *err) {
  int rc = ovl_work_stream_open(&r->ws, window, r->launch_dims, err);
  const ovl_classified_work *cw = NULL;
  int has = 0;
  void *observed = prepass ? NULL : r->observed;
  while (!rc && !(rc = ovl_work_stream_next_ref(&r->ws, &cw, &has, err)) && has) {
    if (observed && r->ctx->opt.observer->on_work(observed, cw)) {
      rc = ovl_oom(err, "work observer");
      break;
    }
    const ovl_work *w = &cw->w;  /* the stream's own: no copy per piece */
    const int32_t *colls = cw->colls;
    uint32_t ncolls = cw->ncolls;
    ovl_work_class cls = cw->cls;
    int32_t synth = -1;
    if (!w->is_memop && cls == OVL_CLASS_COMM && !ncolls && (rc = synthesize(r, w, &synth, err))) break;
    if (synth >= 0) track_work(r, synth, w);
    for (uint32_t k = 0; k < ncolls; k++)
      if (executes(r, colls, ncolls, k, w)) track_work(r, colls[k], w);
    if (prepass) continue;

    ovl_device_pass *d = find_device(r, w->device);
    if (!d && (rc = add_device(r, w->device, &d, err))) break;
    if (cw->from_channels) {
      /* NCCL's channel timing: neither a kernel nor a memop (ovl_channel_facts counts them) */
    } else if (w->is_memop) {
      d->n_memops++;
      d->n_comm_memops += cls == OVL_CLASS_COMM;
    } else {
      d->n_kernels++;
      d->n_comm_kernels += cls == OVL_CLASS_COMM;
    }
    if ((rc = note_stream(d, w, cls, err))) break;
    ovl_sweep_item item = {w->start, w->end, cls, colls, ncolls, synth, -1, -1};
    if (synth >= 0) item.ncolls = 1;
    if (cls == OVL_CLASS_COMPUTE && w->name != OVL_NONE && (item.sig = ovl_kstats_index(&d->kstats, w->name, w->grid, w->block)) < 0) {
      rc = ovl_oom(err, "kernel statistics");
      break;
    }
    long step_hint = -1;
    for (uint32_t k = 0; k < item.ncolls; k++) {
      int32_t c = colls ? colls[k] : synth;
      const ovl_coll_track *t = &r->track[c];
      if (t->closes_step && t->step > item.close_step) item.close_step = t->step;
      if (t->step > step_hint) step_hint = t->step;
      if ((rc = note_collective_work(r, d, c, err))) break;
    }
    if (rc) break;
    if (w->is_memop && cls == OVL_CLASS_MEMORY && (rc = note_copy(r, d, w, err))) break;
    int traits = w->is_memop || w->name == OVL_NONE ? 0 : ovl_work_stream_kernel_traits(&r->ws, w->name);
    d->n_moe_kernels += (traits & OVL_NAME_MOE) != 0;
    if (cls == OVL_CLASS_COMPUTE && (traits & OVL_NAME_LOOKALIKE) && (rc = note_lookalike(d, w, err))) break;
    if (cls == OVL_CLASS_COMPUTE) {
      note_compute_start(r, d, w->start);
      if (d->max_compute_end == OVL_NONE || w->end > d->max_compute_end) d->max_compute_end = w->end;
    }
    drive_windows(r, d, w, step_hint);
    /* a mark is on the GPU when the compute launched before it ends (a collective launched
    ** just before a mark says nothing of the gradient's readiness) */
    if (!prepass && r->hm.marks.len && cls == OVL_CLASS_COMPUTE) ovl_host_markers_work_end(&r->hm, w->correlation, w->end);
    if (ovl_sweep_add(&d->sweep, &item)) rc = ovl_oom(err, "sweep");
  }
  ovl_work_stream_close(&r->ws);
  if (rc) return rc;
  if (r->tracking_failed) return tracking_error(r, err);
  for (size_t i = 0; !prepass && i < r->ndevs; i++)
    if (ovl_sweep_finish(&r->devs[i].sweep)) return ovl_oom(err, "exposed pieces");
  return OVL_OK;
}

/* Runs a pass, redoing it with SQLite sorting when rows are too far out of order. */
static int run_pass_ordered(ovl_run *r, int prepass, ovl_err *err) {
  size_t window = r->ctx->opt.reorder_window ? r->ctx->opt.reorder_window : OVL_DEFAULT_REORDER_WINDOW;
  int rc = run_pass(r, window, prepass, err);
  if (rc == OVL_EUNSORTED) {  /* the stream is marked sorted now */
    ovl_err_clear(err);
    reset_pass(r);
    if (!prepass && r->observed) r->ctx->opt.observer->restart(r->observed);
    rc = run_pass(r, 0, prepass, err);
  }
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Entry points                                                                        */
/* ---------------------------------------------------------------------------------- */

int ovl_analysis_ctx_init(ovl_analysis_ctx *ctx, const ovl_analysis_options *opt, ovl_err *err) {
  memset(ctx, 0, sizeof *ctx);
  ctx->opt = *opt;
  int rc = ovl_classifier_init(&ctx->classifier, opt->comm_pattern, err);
  if (rc) return rc;
  if (opt->step_pattern) {
    int x = regcomp(&ctx->step_pattern, opt->step_pattern, REG_EXTENDED | REG_NOSUB);
    if (x != 0) {
      char why[256];
      regerror(x, &ctx->step_pattern, why, sizeof why);
      ovl_classifier_free(&ctx->classifier);
      return ovl_fail(err, OVL_EUSER, "--step-pattern '%s': %s", opt->step_pattern, why);
    }
    ctx->has_step_pattern = 1;
  }
  return OVL_OK;
}

void ovl_analysis_ctx_free(ovl_analysis_ctx *ctx) {
  ovl_classifier_free(&ctx->classifier);
  if (ctx->has_step_pattern) regfree(&ctx->step_pattern);
  ctx->has_step_pattern = 0;
}

static void free_run(ovl_run *r) {
  free_devices(r);
  free(r->recs);
  free(r->track);
  free(r->group_of);
  free(r->corr_of);
  free(r->op_hash);
  free(r->device_ids);
  free(r->cstate.exposed);
  free(r->cstate.running);
  free(r->cstate.pieces);
  ovl_coll_pieces_free(&r->cstate);
  OVL_VEC_FREE(&r->copies);
  OVL_VEC_FREE(&r->nccl_names);
  ovl_work_stream_free(&r->ws);
  free(r->periodic);
  ovl_host_markers_free(&r->hm);
  ovl_trace_close(r->t);
}

int ovl_analyze_file(const ovl_analysis_ctx *ctx, const char *path, ovl_rank_result **ranks, size_t *nranks,
                     ovl_err *err) {
  *ranks = NULL;
  *nranks = 0;
  ovl_run r;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  int rc = ovl_trace_open(path, &r.t, err);
  if (!rc) rc = load_collectives(&r, err);
  if (!rc) rc = probe_launch_dims(&r, err);
  if (!rc) rc = ovl_host_markers_collect(r.t, ctx, &r.hm, err);
  if (!rc && r.hm.steps.len > 0) {
    r.method = OVL_STEPS_NVTX;
    rc = ovl_host_markers_project(r.t, &r.hm, err);
  } else if (!rc) {
    r.method = OVL_STEPS_PERIODIC;
    if (r.nrows == 0) {
      /* No collectives rows: learn the sequence from NCCL kernel names first. */
      r.next_synth = 0;
      rc = run_pass_ordered(&r, 1, err);
      r.npresynth = r.ncolls - r.nrows;
      if (!rc) rc = link_synthesized_launches(&r, err);
    }
    if (!rc) rc = plan_periodic(&r, err);
  }
  free(r.op_hash);  /* the steps are planned */
  r.op_hash = NULL;
  if (!rc && r.method == OVL_STEPS_NVTX && r.hm.by_correlation) rc = keep_row_correlations(&r, err);
  if (!rc) rc = observe_pass(&r, path, err);
  if (!rc) rc = pass_state_alloc(&r, err);
  if (!rc) {
    reset_pass(&r);
    rc = run_pass_ordered(&r, 0, err);
  }
  if (!rc) rc = link_synthesized_launches(&r, err);
  if (!rc) end_pass(&r);
  if (!rc && r.ndevs == 0)
    rc = ovl_fail(err, OVL_EUSER, "%s: trace has no GPU activity (no valid kernels or memops)", path);
  if (!rc) rc = ovl_build_results(&r, ranks, nranks, err);
  free_run(&r);
  return rc;
}
