/*
** Turns the state of a finished analysis pass into ovl_rank_result, one per device:
** step windows become steps, collectives are assigned to steps, given their bucket,
** readiness, stall and bandwidths, and ordered by firing time; then each step's gradient
** phase (grad_phase.h: the collectives' roles). Measurement only: findings are the
** diagnosis' (diagnose/), run over the finished job.
*/
#include "trace_analysis_internal.h"

#include "base/huge_pages.h"
#include "base/vec.h"
#include "grad_phase.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Kept steps of a device: windows that were opened (never-opened NVTX steps launched no
** GPU work on this device and are left out). */
typedef struct step_map {
  long *new_of_old;  /* window index -> step index, or -1 */
  size_t nkept;
} step_map;

static int map_steps(const ovl_device_pass *d, step_map *m) {
  size_t n = d->windows.n;
  m->new_of_old = malloc((n ? n : 1) * sizeof *m->new_of_old);
  if (!m->new_of_old) return -1;
  m->nkept = 0;
  for (size_t i = 0; i < n; i++)
    m->new_of_old[i] = d->windows.start[i] != INT64_MAX ? (long)m->nkept++ : -1;
  return 0;
}

/* Window containing t, or -1. */
static long window_at(const ovl_step_windows *w, int64_t t) {
  size_t lo = 0, hi = w->n;  /* first window with start > t (unopened windows start at INT64_MAX) */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (w->start[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  while (lo > 0) {
    size_t i = lo - 1;
    if (t < w->end[i] || (w->start[i] == w->end[i] && t == w->start[i])) return (long)i;
    if (w->start[i] != w->end[i]) break;
    lo--;  /* skip empty windows sitting at the same instant */
  }
  return -1;
}

/* Window index of a collective on device d, or -1. */
static long coll_window(const ovl_run *r, const ovl_device_pass *d, size_t c) {
  const ovl_coll_track *t = &r->track[c];
  const ovl_coll_row *rec = &r->recs[c];
  switch (d->method) {
    case OVL_STEPS_PERIODIC: return t->step;
    case OVL_STEPS_WHOLE: return 0;
    case OVL_STEPS_NVTX:
      if (r->hm.by_correlation) {
        long ls = t->step;  /* its launch's step (end_pass) */
        if (ls >= 0 && (size_t)ls < d->windows.n && d->windows.start[ls] != INT64_MAX) return ls;
      } else if (rec->host_start != OVL_NONE) {
        return ovl_host_step_at(&r->hm, rec->host_start);
      }
      return window_at(&d->windows, t->gpu_start);
  }
  return -1;
}

/* Innermost range of `ranges` (sorted by start: `bucket <k>` or `dim <d>` ranges) around a
** host launch (same thread when both are known): its value, or -1. */
static long range_value(const ovl_host_range *ranges, size_t n, int64_t host_start, int64_t tid) {
  if (host_start == OVL_NONE) return -1;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ranges[mid].start <= host_start) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo, checked = 0; i-- > 0 && checked < 256; checked++) {
    const ovl_host_range *b = &ranges[i];
    if (host_start <= b->end && (tid == OVL_NONE || b->tid == OVL_NONE || tid == b->tid)) return b->bucket;
  }
  return -1;
}

static int cmp_copy_coll(const void *pa, const void *pb) {
  const ovl_coll_copy *a = pa, *b = pb;
  return (a->coll > b->coll) - (a->coll < b->coll);
}

/* The copy after collective c (has_d2h), in the run's copies sorted by collective. */
static const ovl_coll_copy *copy_after(const ovl_run *r, size_t c) {
  size_t lo = 0, hi = r->copies.len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((size_t)r->copies.items[mid].coll < c) lo = mid + 1;
    else hi = mid;
  }
  assert(lo < r->copies.len && (size_t)r->copies.items[lo].coll == c);
  return &r->copies.items[lo];
}

/* NCCL's algorithm and protocol of row c (has_nccl_names): nccl_names is in row order. */
static const ovl_coll_nccl_names *nccl_names_of(const ovl_run *r, size_t c) {
  size_t lo = 0, hi = r->nccl_names.len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->nccl_names.items[mid].coll < c) lo = mid + 1;
    else hi = mid;
  }
  assert(lo < r->nccl_names.len && r->nccl_names.items[lo].coll == c);
  return &r->nccl_names.items[lo];
}

/* -1: no memory (out's extra not kept). */
static int fill_coll(const ovl_run *r, size_t c, long step, ovl_coll_result *out) {
  const ovl_coll_row *rec = &r->recs[c];
  const ovl_coll_track *t = &r->track[c];
  memset(out, 0, sizeof *out);
  ovl_coll_begin(out, t->gpu_start);  /* first: the narrow times are kept relative to it */
  /* stream: the row's, else its first work's (track_work); ready and ready_gpu: assign_readiness' */
  ovl_coll_wide v = {.seq = rec->seq,
                     .stream = rec->stream,
                     .host_launch = rec->host_start,
                     .gpu_end = t->gpu_end,
                     .exposed = r->cstate.exposed[c],
                     .ready = OVL_NONE,
                     .ready_gpu = OVL_NONE,
                     .compute_before = t->compute_before,
                     .compute_after = t->compute_after};
  int failed = ovl_coll_set_id(out, rec->id);
  failed |= ovl_coll_set_values(out, &v);
  out->op = rec->op;
  out->comm = rec->comm;
  out->nranks32 = rec->nranks32;  /* the reader keeps them in range (make_row) */
  out->rank32 = rec->rank32;
  out->bytes = rec->bytes;
  out->types = rec->types;
  long bucket = range_value(r->hm.buckets.items, r->hm.buckets.len, rec->host_start, rec->tid);
  assert(bucket >= -1 && bucket <= INT32_MAX);  /* nvtx_conventions.c keeps no larger bucket */
  out->bucket = (int32_t)bucket;
  out->bytes_from_marks = 0;
  long dim = range_value(r->hm.dims.items, r->hm.dims.len, rec->host_start, rec->tid);
  out->pdim.nvtx = dim > 0 ? (unsigned char)dim : 0;
  out->diag = (ovl_coll_diag){OVL_ROLE_OTHER, -1};
  assert(step >= -1 && step <= INT32_MAX);
  out->step = (int32_t)step;
  out->pieces_at = 0;
  out->npieces = out->pieces_exact = out->has_pieces = 0;
  out->cross = NULL;
  int timed = 0;
  const ovl_channel_span *span = c < r->nrows ? ovl_work_stream_channels(&r->ws, c, &timed) : NULL;
  ovl_coll_extra extra = ovl_coll_extra_none;
  ovl_coll_channels_measure(&extra.channels, span, timed, t->gpu_start, t->gpu_end);
  if (t->has_d2h) {
    const ovl_coll_copy *copy = copy_after(r, c);
    extra.d2h_start = copy->start;
    extra.d2h_end = copy->end;
    extra.d2h_bytes = copy->bytes;
  }
  if (rec->has_nccl_names) {
    const ovl_coll_nccl_names *names = nccl_names_of(r, c);
    memcpy(extra.algorithm, names->algorithm, sizeof extra.algorithm);
    memcpy(extra.protocol, names->protocol, sizeof extra.protocol);
  }
  failed |= ovl_coll_extra_set(out, &extra);
  return failed ? -1 : 0;
}

static int cmp_firing(const void *pa, const void *pb) {
  const ovl_coll_result *a = pa, *b = pb;
  int64_t la = ovl_coll_host_launch(a), lb = ovl_coll_host_launch(b);
  int64_t ka = la != OVL_NONE ? la : a->gpu_start;
  int64_t kb = lb != OVL_NONE ? lb : b->gpu_start;
  if (ka != kb) return ka < kb ? -1 : 1;
  if (a->gpu_start != b->gpu_start) return a->gpu_start < b->gpu_start ? -1 : 1;
  int64_t ia = ovl_coll_id(a), ib = ovl_coll_id(b);
  return (ia > ib) - (ia < ib);
}

/* Sort key for matching marks to launches: bucket, then time. */
typedef struct bucket_event {
  long bucket;
  int64_t t;
  ovl_coll_result *coll;   /* NULL for a mark */
  ovl_grad_mark *mark;
} bucket_event;

static int cmp_bucket_event(const void *pa, const void *pb) {
  const bucket_event *a = pa, *b = pb;
  if (a->bucket != b->bucket) return a->bucket < b->bucket ? -1 : 1;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return (a->coll != NULL) - (b->coll != NULL);  /* a mark at the launch instant counts */
}

/* A collective the trace gives no size (known by its kernel only: an emulated all-reduce, a
** communication kernel without an NCCL call) takes its bucket's: the bytes its grad_ready
** marks announced (contract section 3). Its bandwidths follow (ovl_coll_algbw, ovl_coll_busbw:
** the bus bandwidth needs the rank count, which a kernel alone does not tell). */
static void size_from_marks(ovl_coll_result *c, int64_t bytes) {
  c->bytes = bytes;
  c->bytes_from_marks = 1;
}

/* ready = last grad_ready mark of the bucket since its previous launch; with the marks'
** bytes, the size of a collective the trace gives none. */
static int assign_readiness(ovl_rank_result *res, int nvtx_steps) {
  size_t n = res->nmarks;
  for (size_t s = 0; s < res->nsteps; s++)
    for (size_t i = 0; i < res->steps[s].ncolls; i++)
      n += res->steps[s].colls[i].bucket >= 0 && ovl_coll_host_launch(&res->steps[s].colls[i]) != OVL_NONE;
  if (res->nmarks == 0) return 0;
  bucket_event *ev = malloc((n ? n : 1) * sizeof *ev);
  if (!ev) return -1;
  size_t k = 0;
  for (size_t i = 0; i < res->nmarks; i++)
    ev[k++] = (bucket_event){res->marks[i].bucket, res->marks[i].t, NULL, &res->marks[i]};
  for (size_t s = 0; s < res->nsteps; s++)
    for (size_t i = 0; i < res->steps[s].ncolls; i++) {
      ovl_coll_result *c = &res->steps[s].colls[i];
      int64_t launch = ovl_coll_host_launch(c);
      if (c->bucket >= 0 && launch != OVL_NONE) ev[k++] = (bucket_event){c->bucket, launch, c, NULL};
    }
  ovl_qsort(ev, k, sizeof *ev, cmp_bucket_event);
  size_t first_mark = 0;  /* marks since the previous launch of the bucket start here */
  int failed = 0;
  for (size_t i = 0; i < k; i++) {
    if (i > 0 && ev[i].bucket != ev[i - 1].bucket) first_mark = i;
    if (!ev[i].coll) continue;
    int64_t ready = OVL_NONE, ready_gpu = OVL_NONE, marked = 0;
    int sized = 1;
    for (size_t m = first_mark; m < i; m++) {
      if (!ev[m].mark) continue;
      ready = ev[m].t;
      ready_gpu = ev[m].mark->gpu_t;
      if (ev[m].mark->bytes >= 0 && marked <= INT64_MAX - ev[m].mark->bytes) marked += ev[m].mark->bytes;
      else sized = 0;
      if (!nvtx_steps) ev[m].mark->step = ev[i].coll->step;
    }
    if (ready != OVL_NONE) {
      failed |= ovl_coll_set_ready(ev[i].coll, ready) | ovl_coll_set_ready_gpu(ev[i].coll, ready_gpu);
      if (sized && marked > 0 && (ev[i].coll->bytes == OVL_NONE || ev[i].coll->bytes < 0)) size_from_marks(ev[i].coll, marked);
    }
    first_mark = i + 1;
  }
  free(ev);
  return failed ? -1 : 0;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Signatures ranked by total time, largest first. */
typedef struct ranked_sig {
  double total_ns;
  size_t index;
} ranked_sig;

static int cmp_ranked_desc(const void *pa, const void *pb) {
  double a = ((const ranked_sig *)pa)->total_ns, b = ((const ranked_sig *)pb)->total_ns;
  return (a < b) - (a > b);
}

/* The compute kernels (name and grid) that took the most time: what a straggler's peers
** are compared on. */
static int kernel_totals(const ovl_run *r, const ovl_device_pass *d, ovl_rank_result *res) {
  size_t n = d->kstats.len;
  if (n == 0) return 0;
  ranked_sig *ranked = malloc(n * sizeof *ranked);
  if (!ranked) return -1;
  for (size_t i = 0; i < n; i++) ranked[i] = (ranked_sig){d->kstats.items[i].mean_d * (double)d->kstats.items[i].n, i};
  ovl_qsort(ranked, n, sizeof *ranked, cmp_ranked_desc);
  size_t keep = n < OVL_KERNEL_TOTALS_KEPT ? n : OVL_KERNEL_TOTALS_KEPT;
  res->kernel_totals = calloc(keep, sizeof *res->kernel_totals);
  int rc = res->kernel_totals ? 0 : -1;
  for (size_t i = 0; !rc && i < keep; i++) {
    const ovl_kstat *k = &d->kstats.items[ranked[i].index];
    ovl_kernel_total *kt = &res->kernel_totals[res->nkernel_totals++];
    const char *name = ovl_trace_string(r->t, k->name);
    if (!(kt->name = strdup(name ? name : "?"))) rc = -1;
    memcpy(kt->grid, k->grid, sizeof kt->grid);
    memcpy(kt->block, k->block, sizeof kt->block);
    kt->runs = k->n;
    kt->total_ns = ranked[i].total_ns;
  }
  free(ranked);
  return rc;
}

static int cmp_total_desc(const void *pa, const void *pb) {
  const ovl_kernel_total *a = pa, *b = pb;
  return (a->total_ns < b->total_ns) - (a->total_ns > b->total_ns);
}

/* The compute kernels named like communication, largest total first. */
static int lookalikes(const ovl_run *r, const ovl_device_pass *d, ovl_rank_result *res) {
  size_t n = d->lookalikes.len;
  if (n == 0) return 0;
  if (!(res->lookalikes = calloc(n, sizeof *res->lookalikes))) return -1;
  for (size_t i = 0; i < n; i++) {
    const ovl_lookalike_stat *l = &d->lookalikes.items[i];
    ovl_kernel_total *k = &res->lookalikes[res->nlookalikes++];
    const char *name = ovl_trace_string(r->t, l->name);
    if (!(k->name = strdup(name ? name : "?"))) return -1;
    for (int j = 0; j < 3; j++) k->grid[j] = k->block[j] = OVL_NONE;
    k->runs = l->runs;
    k->total_ns = (double)l->total_ns;
  }
  ovl_qsort(res->lookalikes, res->nlookalikes, sizeof *res->lookalikes, cmp_total_desc);
  return 0;
}

/* Per-stream time and the fits of the kernel signatures run both alone and overlapped. */
static int device_extras(const ovl_run *r, const ovl_device_pass *d, ovl_rank_result *res) {
  if (d->nstreams) {
    res->streams = malloc(d->nstreams * sizeof *res->streams);
    if (!res->streams) return -1;
    memcpy(res->streams, d->streams, d->nstreams * sizeof *res->streams);
    res->nstreams = d->nstreams;
  }
  for (size_t i = 0; i < d->kstats.len; i++) {
    ovl_slowdown sd;
    if (!ovl_kstat_fit(&d->kstats.items[i], &sd)) continue;
    ovl_kernel_slowdown *grown = realloc(res->kernel_fits, (res->nkernel_fits + 1) * sizeof *grown);
    if (!grown) return -1;
    res->kernel_fits = grown;
    ovl_kernel_slowdown *k = &res->kernel_fits[res->nkernel_fits];
    const char *name = ovl_trace_string(r->t, sd.name);
    k->name = strdup(name ? name : "?");
    if (!k->name) return -1;
    memcpy(k->grid, sd.grid, sizeof k->grid);
    memcpy(k->block, sd.block, sizeof k->block);
    k->runs = sd.runs;
    k->runs_alone = sd.runs_alone;
    k->runs_overlapped = sd.runs_overlapped;
    k->alone_ns = sd.alone_ns;
    k->factor = sd.factor;
    k->cost_ns = sd.cost_ns;
    k->slope = sd.slope;
    k->t_stat = sd.t_stat;
    k->alone_mean_ns = sd.alone_mean_ns;
    k->alone_sd_ns = sd.alone_sd_ns;
    k->over_mean_ns = sd.over_mean_ns;
    k->over_sd_ns = sd.over_sd_ns;
    res->nkernel_fits++;
  }
  return kernel_totals(r, d, res) || lookalikes(r, d, res) ? -1 : 0;
}

static int keep_comm_name(void *ctx, int64_t comm, const char *name) {
  ovl_rank_result *res = ctx;
  ovl_comm_name *grown = realloc(res->comm_names, (res->ncomm_names + 1) * sizeof *grown);
  if (!grown) return -1;
  res->comm_names = grown;
  if (!(grown[res->ncomm_names].name = strdup(name))) return -1;
  grown[res->ncomm_names++].comm = comm;
  return 0;
}

/* The front of a per-collective array that the fill of the results has read for the last
** time. With one device each array is read once, front to back, while the results grow
** beside them: giving back the pages behind the reader keeps the two from peaking together
** (the run frees the arrays after; nothing reads the pages given back, and a write, such as
** the exposed pieces' pairs written into the rows, gets fresh ones). */
typedef struct dead_front {
  char *base;
  size_t released;   /* bytes from base given back so far (whole pages) */
} dead_front;

/* Gives back the whole pages of [base + from, base + to) not given back yet: the kernel's
** advice, so a refusal only keeps the memory. */
static void release_dead(dead_front *f, size_t from, size_t to) {
  if (!f->base) return;
  if (from < f->released) from = f->released;
  /* Page by page (a huge page is split): a huge page at a time, the five arrays lagged up to
  ** 2 MB each behind the fill, whose end, where the results are largest, set the analysis'
  ** peak (+4 MB on 1.37 M collectives); ~1,700 calls in all. */
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || to <= from) return;
  uintptr_t mask = (uintptr_t)page - 1;
  uintptr_t lo = ((uintptr_t)(f->base + from) + mask) & ~mask, hi = (uintptr_t)(f->base + to) & ~mask;
  if (lo >= hi) return;
#ifdef MADV_DONTNEED
  (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
#endif
  f->released = (size_t)(hi - (uintptr_t)f->base);
}

static int build_device(ovl_run *r, ovl_device_pass *d, int first_device, ovl_rank_result *res, ovl_err *err) {
  memset(res, 0, sizeof *res);
  res->trace_path = strdup(ovl_trace_path(r->t));
  res->hostname = dup_or_null(ovl_trace_meta(r->t, "hostname"));
  res->rank = ovl_trace_meta_int(r->t, "rank", OVL_NONE);
  res->world_size = ovl_trace_meta_int(r->t, "world_size", OVL_NONE);
  /* Ranks and sizes from the file are checked like every other value read (unknown when
  ** not a sane rank of a sane world). */
  if (res->world_size != OVL_NONE && (res->world_size <= 0 || res->world_size > INT32_MAX)) res->world_size = OVL_NONE;
  if (res->rank != OVL_NONE && (res->rank < 0 || res->rank > INT32_MAX)) res->rank = OVL_NONE;
  res->pid = ovl_trace_meta_int(r->t, "pid", OVL_NONE);
  res->device = d->device;
  res->realtime_offset = ovl_trace_meta_int(r->t, "realtime_offset_ns", OVL_NONE);
  const char *cupti = ovl_trace_meta(r->t, "cupti");
  res->cupti_late = cupti && strncmp(cupti, "attached (late", 14) == 0;
  res->colls_numbered = (long)ovl_trace_meta_int(r->t, "import_seq_numbered", 0);
  res->clock_offset = 0;
  ovl_channel_facts_init(&res->channel_facts);
  res->totals = d->sweep.total;
  res->step_detection = d->method;
  res->step_projection = d->method != OVL_STEPS_NVTX ? OVL_PROJECT_NONE
                         : r->hm.by_correlation      ? OVL_PROJECT_CORRELATION
                                                     : OVL_PROJECT_TIME;
  for (size_t i = 0; i < r->nperiodic; i++)
    if (r->periodic[i].device == d->device) res->period = r->periodic[i].period;
  res->n_kernels = d->n_kernels;
  res->n_comm_kernels = d->n_comm_kernels;
  res->n_memops = d->n_memops;
  res->n_comm_memops = d->n_comm_memops;
  res->n_moe_kernels = d->n_moe_kernels;
  res->bad = *ovl_trace_bad_rows(r->t);
  if (!res->trace_path) return ovl_oom(err, "results");
  if (ovl_trace_comm_names(r->t, keep_comm_name, res)) return ovl_oom(err, "results");

  /* Rank and world size from the largest communicator when meta does not say. */
  int64_t best_n = -1;
  for (size_t c = 0; c < r->nrows; c++) {
    int64_t nranks = ovl_coll_row_nranks(&r->recs[c]), rank = ovl_coll_row_rank(&r->recs[c]);
    if (nranks != OVL_NONE && nranks > best_n) {
      best_n = nranks;
      if (res->rank == OVL_NONE && rank != OVL_NONE) res->rank = rank;
    }
  }
  if (res->world_size == OVL_NONE && best_n > 0) res->world_size = best_n;

  step_map map;
  if (map_steps(d, &map)) return ovl_oom(err, "results");
  res->nsteps = map.nkept;
  res->steps = calloc(map.nkept ? map.nkept : 1, sizeof *res->steps);
  size_t *fill = calloc(map.nkept ? map.nkept : 1, sizeof *fill);
  /* each collective's step, or -1: 32 bits, as fill_coll's out->step */
  int32_t *window_of = malloc((r->ncolls ? r->ncolls : 1) * sizeof *window_of);
  int rc = (!res->steps || !fill || !window_of) ? ovl_oom(err, "results") : OVL_OK;
  for (size_t i = 0; !rc && i < d->windows.n; i++) {
    long s = map.new_of_old[i];
    if (s < 0) continue;
    ovl_step_result *st = &res->steps[s];
    st->index = s;
    st->number = d->method == OVL_STEPS_NVTX && i < r->hm.steps.len ? r->hm.steps.items[i].number : -1;
    st->start = d->windows.start[i];
    st->end = d->windows.end[i];
    st->totals = d->sweep.steps[i];
    if (st->end == INT64_MAX) st->end = st->totals.busy_end > st->start ? st->totals.busy_end : st->start;
  }
  /* The sweep's per-step totals are the steps' now: given back before the collectives are
  ** filled beside what is left (a heap block: glibc keeps its pages until trimmed). */
  free(d->sweep.steps);
  d->sweep.steps = NULL;
  ovl_heap_trim();

  /* Collectives of this device, counted per step, then placed. */
  uint16_t dix = OVL_TRACK_NO_DEVICE;  /* the tracking's index of this device; none: no collective ran on it */
  for (size_t i = 0; i < r->ndevice_ids; i++)
    if (r->device_ids[i] == d->device) dix = (uint16_t)i;
  for (size_t c = 0; !rc && c < r->ncolls; c++) {
    const ovl_coll_track *t = &r->track[c];
    window_of[c] = -1;
    if (t->gpu_start == OVL_NONE) {
      int64_t dev = r->recs[c].device;
      if (dev == d->device || (dev == OVL_NONE && first_device)) res->colls_without_gpu_work++;
      continue;
    }
    if (t->device != dix) continue;
    long w = coll_window(r, d, c);
    long s = (w >= 0 && (size_t)w < d->windows.n) ? map.new_of_old[w] : -1;
    assert(s >= -1 && s <= INT32_MAX);
    window_of[c] = (int32_t)s;
    if (s < 0) res->colls_outside_steps++;
    else res->steps[s].ncolls++;
  }
  if (!rc && res->colls_outside_steps > 0) {
    res->unstepped = calloc((size_t)res->colls_outside_steps, sizeof *res->unstepped);
    if (!res->unstepped) rc = ovl_oom(err, "results");
  }
  /* Every step's collectives in one block: filled once and kept to the end, so huge pages
  ** spare the page-by-page faults of one allocation per step. */
  size_t in_steps = 0;
  for (size_t s = 0; s < res->nsteps; s++) in_steps += (size_t)res->steps[s].ncolls;
  /* not cleared: fill_coll writes every slot, and untouched pages cost nothing until then */
  if (!rc && !(res->coll_block = ovl_huge_malloc((in_steps ? in_steps : 1) * sizeof *res->coll_block)))
    rc = ovl_oom(err, "results");
  for (size_t s = 0, at = 0; !rc && s < res->nsteps; at += (size_t)res->steps[s++].ncolls)
    res->steps[s].colls = res->coll_block + at;
  /* The collectives' exposed pieces as their (start, end) pairs, 16 bytes a piece (the run
  ** keeps them in ovl_piece_slot and blocks). One device: written into the run's rows, front
  ** to back behind the fill's reading (a collective's pairs never reach past its own row),
  ** which are then handed over: no array of their own at the peak. */
  _Static_assert(2 * OVL_EXPOSED_PIECES * sizeof(int64_t) <= sizeof(ovl_coll_row),
                 "a collective's pairs fit in its row (the pieces written into the rows)");
  const ovl_piece_slot *pieces = r->cstate.pieces;
  int into_rows = r->ndevs == 1 && pieces;
  size_t npairs = 0;
  for (size_t c = 0; pieces && c < r->ncolls; c++)
    if (r->track[c].device == dix && r->track[c].gpu_start != OVL_NONE) npairs += pieces[c].n;
  if (!rc && into_rows) res->coll_piece_bounds = (int64_t *)(void *)r->recs;  /* the run's until the fill ends */
  else if (!rc && pieces && !(res->coll_piece_bounds = malloc((npairs ? npairs : 1) * 2 * sizeof(int64_t))))
    rc = ovl_oom(err, "results");
  size_t next_bound = 0;
  /* one device: the run's arrays die behind the fill (dead_front) */
  dead_front dead_recs = {0}, dead_track = {0}, dead_exposed = {0}, dead_windows = {0}, dead_pieces = {0};
  if (r->ndevs == 1) {
    dead_recs.base = (char *)r->recs;
    dead_track.base = (char *)r->track;
    dead_exposed.base = (char *)r->cstate.exposed;
    dead_windows.base = (char *)window_of;
    dead_pieces.base = (char *)r->cstate.pieces;
  }
  for (size_t c = 0; !rc && c < r->ncolls; c++) {
    if (c % 4096 == 0) {
      /* the rows: between the pairs written and the next row (no pieces: from the start) */
      release_dead(&dead_recs, into_rows ? next_bound * sizeof(int64_t) : 0, c * sizeof *r->recs);
      release_dead(&dead_track, 0, c * sizeof *r->track);
      release_dead(&dead_exposed, 0, c * sizeof *r->cstate.exposed);
      release_dead(&dead_windows, 0, c * sizeof *window_of);
      release_dead(&dead_pieces, 0, c * sizeof *pieces);
    }
    long s = window_of[c];
    if (r->track[c].device != dix || r->track[c].gpu_start == OVL_NONE) continue;
    ovl_coll_result *out = s >= 0 ? &res->steps[s].colls[fill[s]++] : &res->unstepped[res->nunstepped++];
    if (fill_coll(r, c, s >= 0 ? s : -1, out)) rc = ovl_oom(err, "results");
    ovl_channel_facts_add(&res->channel_facts, &ovl_coll_extra_of(out)->channels, ovl_coll_id(out));
    if (!pieces) continue;
    ovl_exposed_pieces p;
    ovl_coll_pieces_get(&r->cstate, c, &p);
    assert(next_bound + 2 * (size_t)p.n <= 2 * npairs);
    /* row c was read (fill_coll): its pairs may overwrite it, never row c + 1 */
    assert(!into_rows || (next_bound + 2 * (size_t)p.n) * sizeof(int64_t) <= (c + 1) * sizeof *r->recs);
    int64_t *at = res->coll_piece_bounds + next_bound;
    for (int k = 0; k < p.n; k++) {
      at[2 * k] = p.start[k];
      at[2 * k + 1] = p.end[k];
    }
    assert(next_bound / 2 <= UINT32_MAX);
    out->pieces_at = (uint32_t)(next_bound / 2);
    out->npieces = p.n;
    out->pieces_exact = p.exact;
    out->has_pieces = 1;
    next_bound += 2 * (size_t)p.n;
  }
  if (into_rows && res->coll_piece_bounds) {  /* the rows are the results' now, also after a failure */
    r->recs = NULL;
    int64_t *shrunk = realloc(res->coll_piece_bounds, (next_bound ? next_bound : 2) * sizeof(int64_t));
    if (shrunk) res->coll_piece_bounds = shrunk;
  }
  for (size_t s = 0; !rc && s < res->nsteps; s++) {
    ovl_step_result *st = &res->steps[s];
    ovl_qsort(st->colls, st->ncolls, sizeof *st->colls, cmp_firing);
    for (size_t i = 0; i < st->ncolls; i++) st->colls[i].order = (int)i;
  }

  if (!rc && r->hm.marks.len) {
    res->marks = malloc(r->hm.marks.len * sizeof *res->marks);
    if (!res->marks) rc = ovl_oom(err, "results");
    else {
      memcpy(res->marks, r->hm.marks.items, r->hm.marks.len * sizeof *res->marks);
      res->nmarks = r->hm.marks.len;
      /* NVTX steps: marks belong to the step whose host range holds them (kept steps only). */
      for (size_t i = 0; i < res->nmarks; i++) {
        long w = res->marks[i].step;
        res->marks[i].step = (d->method == OVL_STEPS_NVTX && w >= 0 && (size_t)w < d->windows.n) ? map.new_of_old[w] : -1;
      }
    }
  }
  if (!rc && assign_readiness(res, d->method == OVL_STEPS_NVTX)) rc = ovl_oom(err, "results");
  if (!rc && device_extras(r, d, res)) rc = ovl_oom(err, "results");
  if (!rc) ovl_grad_phases(res);
  free(map.new_of_old);
  free(fill);
  free(window_of);
  return rc;
}

int ovl_build_results(ovl_run *r, ovl_rank_result **ranks, size_t *nranks, ovl_err *err) {
  ovl_rank_result *res = calloc(r->ndevs, sizeof *res);
  if (!res) return ovl_oom(err, "results");
  ovl_qsort(r->copies.items, r->copies.len, sizeof *r->copies.items, cmp_copy_coll);
  int rc = OVL_OK;
  size_t built = 0;
  for (; !rc && built < r->ndevs; built++) rc = build_device(r, &r->devs[built], built == 0, &res[built], err);
  if (rc) {
    for (size_t i = 0; i < built; i++) ovl_rank_result_free(&res[i]);
    free(res);
    return rc;
  }
  *ranks = res;
  *nranks = r->ndevs;
  return OVL_OK;
}
