/* Kernels by name and memory operations by kind, from one pass per trace file over its
** classified work stream (stats.h). */
#include "stats.h"

#include "analyze/work_stream.h"
#include "base/i64map.h"
#include "base/sane_values.h"
#include "base/strmap.h"
#include "base/text_clean.h"
#include "base/vec.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-step totals are kept only while names x steps stays below this many cells (8 bytes each,
** 32 MiB in all): a trace of many distinct names over thousands of steps gets its totals
** without them (docs/diff.md, "Kernels"). */
#define STEP_CELLS_LIMIT ((size_t)1 << 22)

/* The rows of one rank while its file is read: kernel name ids -> rows per class (ids seen
** once), and the cleaned text -> row per class (two ids of one text share a row). */
typedef struct rank_acc {
  ovl_rank_stats *out;
  const ovl_rank_result *r;
  OVL_VEC(ovl_kernel_stat) kernels;
  OVL_VEC(ovl_memop_stat) memops;
  ovl_i64map by_id[2];     /* compute, communication */
  ovl_strmap by_text[2];
  int32_t unnamed[2];      /* row of kernels without a name, -1 none */
  int per_step;
} rank_acc;

static void acc_free(rank_acc *a) {
  for (size_t i = 0; i < a->kernels.len; i++) {
    free(a->kernels.items[i].name);
    free(a->kernels.items[i].step_ns);
  }
  OVL_VEC_FREE(&a->kernels);
  OVL_VEC_FREE(&a->memops);
  for (int c = 0; c < 2; c++) {
    ovl_i64map_free(&a->by_id[c]);
    ovl_strmap_free(&a->by_text[c]);
  }
}

static void acc_init(rank_acc *a, ovl_rank_stats *out, const ovl_rank_result *r, int per_step) {
  memset(a, 0, sizeof *a);
  a->out = out;
  a->r = r;
  a->unnamed[0] = a->unnamed[1] = -1;
  a->per_step = per_step;
}

void ovl_stat_span_add(ovl_stat_span *s, int64_t duration) {
  if (s->count == 0 || duration < s->min) s->min = duration;
  if (s->count == 0 || duration > s->max) s->max = duration;
  s->count++;
  s->total = ovl_sat_add(s->total, duration);
}

void ovl_stat_span_merge(ovl_stat_span *a, const ovl_stat_span *b) {
  if (b->count == 0) return;
  if (a->count == 0 || b->min < a->min) a->min = b->min;
  if (a->count == 0 || b->max > a->max) a->max = b->max;
  a->count += b->count;
  a->total = ovl_sat_add(a->total, b->total);
}

/* A new kernel row for `text` (copied). Returns its index, or -1 when memory runs out. */
static int32_t new_kernel_row(rank_acc *a, const char *text, ovl_work_class cls) {
  ovl_kernel_stat k;
  memset(&k, 0, sizeof k);
  k.cls = cls;
  k.name = ovl_text_clean_dup(text);
  if (!k.name) return -1;
  size_t cells = a->r->nsteps;
  if (a->per_step && cells && (a->kernels.len + 1) * cells < STEP_CELLS_LIMIT &&
      !(k.step_ns = calloc(cells, sizeof *k.step_ns))) {
    free(k.name);
    return -1;
  }
  if (OVL_VEC_PUSH(&a->kernels, k)) {
    free(k.name);
    free(k.step_ns);
    return -1;
  }
  return (int32_t)(a->kernels.len - 1);
}

/* The row of a kernel named by string id `name`; -1 when memory runs out. */
static int32_t kernel_row(rank_acc *a, ovl_trace *t, int64_t name, ovl_work_class cls) {
  int c = cls == OVL_CLASS_COMM;
  int64_t row;
  if (name == OVL_NONE) {
    if (a->unnamed[c] < 0) a->unnamed[c] = new_kernel_row(a, "(unnamed)", cls);
    return a->unnamed[c];
  }
  if (ovl_i64map_get(&a->by_id[c], name, &row)) return (int32_t)row;
  const char *text = ovl_trace_string(t, name);
  char *clean = ovl_text_clean_dup(text ? text : "(unnamed)");
  if (!clean) return -1;
  if (!ovl_strmap_get(&a->by_text[c], clean, &row)) {
    row = new_kernel_row(a, clean, cls);
    if (row < 0 || ovl_strmap_put(&a->by_text[c], clean, row)) row = -1;
  }
  free(clean);
  if (row >= 0 && ovl_i64map_put(&a->by_id[c], name, row)) row = -1;
  return (int32_t)row;
}

/* The step of the rank whose window holds t, or -1 (steps are in start order). */
static long step_of(const ovl_rank_result *r, int64_t t) {
  size_t lo = 0, hi = r->nsteps;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->steps[mid].start <= t) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const ovl_step_result *st = &r->steps[lo - 1];
  return t < st->end ? (long)(lo - 1) : -1;
}

static int add_kernel(rank_acc *a, ovl_trace *t, const ovl_classified_work *cw, ovl_err *err) {
  int64_t dur = cw->w.end - cw->w.start;
  ovl_work_class cls = cw->cls == OVL_CLASS_COMM ? OVL_CLASS_COMM : OVL_CLASS_COMPUTE;
  int32_t row = kernel_row(a, t, cw->w.name, cls);
  if (row < 0) return ovl_oom(err, "kernel statistics");
  ovl_kernel_stat *k = &a->kernels.items[row];
  ovl_stat_span_add(&k->t, dur);
  a->out->kernel_ns = ovl_sat_add(a->out->kernel_ns, dur);
  if (k->step_ns) {
    long s = step_of(a->r, cw->w.start);
    if (s >= 0) k->step_ns[s] = ovl_sat_add(k->step_ns[s], dur);
  }
  return OVL_OK;
}

static int add_memop(rank_acc *a, const ovl_classified_work *cw, ovl_err *err) {
  const char *kind = cw->w.memkind[0] ? cw->w.memkind : "?";
  ovl_memop_stat *m = NULL;
  for (size_t i = 0; i < a->memops.len && !m; i++)
    if (a->memops.items[i].cls == cw->cls && strcmp(a->memops.items[i].kind, kind) == 0) m = &a->memops.items[i];
  if (!m) {
    ovl_memop_stat fresh;
    memset(&fresh, 0, sizeof fresh);
    snprintf(fresh.kind, sizeof fresh.kind, "%s", kind);
    fresh.cls = cw->cls;
    if (OVL_VEC_PUSH(&a->memops, fresh)) return ovl_oom(err, "memop statistics");
    m = &a->memops.items[a->memops.len - 1];
  }
  ovl_stat_span_add(&m->t, cw->w.end - cw->w.start);
  if (cw->w.bytes != OVL_NONE) m->bytes = ovl_sat_add(m->bytes, cw->w.bytes);
  return OVL_OK;
}

/* Hands the rows to the rank's stats, sorted. */
static void acc_finish(rank_acc *a) {
  a->out->kernels = a->kernels.items;
  a->out->nkernels = a->kernels.len;
  a->out->memops = a->memops.items;
  a->out->nmemops = a->memops.len;
  a->out->nsteps = a->per_step ? a->r->nsteps : 0;
  a->kernels.items = NULL;
  a->memops.items = NULL;
  a->kernels.len = a->memops.len = 0;
  ovl_stats_sort(a->out);
}

/* The accumulator of the rank analysed from this file on `device`, or NULL. */
static rank_acc *acc_of(rank_acc *accs, size_t n, int64_t device) {
  for (size_t i = 0; i < n; i++)
    if (accs[i].r->device == device) return &accs[i];
  return NULL;
}

/* One pass over the work of trace t into accs[0..n) (the ranks of that file). */
static int read_pass(ovl_work_stream *ws, ovl_trace *t, rank_acc *accs, size_t n, unsigned what, size_t window,
                     ovl_err *err) {
  int rc = ovl_work_stream_open(ws, window, 0, err);
  ovl_classified_work cw;
  int has = 0;
  while (!rc && !(rc = ovl_work_stream_next(ws, &cw, &has, err)) && has) {
    rank_acc *a = acc_of(accs, n, cw.w.device);
    if (!a) continue;  /* the analysis has no rank for it: nothing to add up to */
    if (cw.w.is_memop) {
      if (what & OVL_STATS_MEMOPS) rc = add_memop(a, &cw, err);
    } else if (what & OVL_STATS_KERNELS) {
      rc = add_kernel(a, t, &cw, err);
    }
  }
  ovl_work_stream_close(ws);
  return rc;
}

/* The ranks analysed from ranks[first]'s file: ranks[first..*end) share its ovl_path. */
static int read_file(const ovl_analysis_ctx *ctx, const ovl_job *job, size_t first, size_t end, unsigned what,
                     ovl_stats *s, ovl_err *err) {
  const char *path = job->ranks[first].ovl_path;
  size_t n = end - first;
  rank_acc *accs = calloc(n, sizeof *accs);
  if (!accs) return ovl_oom(err, "statistics");
  ovl_trace *t = NULL;
  ovl_work_stream ws;
  memset(&ws, 0, sizeof ws);
  int rc = ovl_trace_open(path, &t, err);
  if (!rc) rc = ovl_work_stream_init(&ws, t, &ctx->classifier, err);
  for (int attempt = 0; !rc && attempt < 2; attempt++) {
    for (size_t i = 0; i < n; i++) {
      if (attempt) acc_free(&accs[i]);
      acc_init(&accs[i], &s->ranks[first + i], &job->ranks[first + i], (what & OVL_STATS_PER_STEP) != 0);
      s->ranks[first + i].kernel_ns = 0;
    }
    size_t window = ctx->opt.reorder_window ? ctx->opt.reorder_window : OVL_DEFAULT_REORDER_WINDOW;
    rc = read_pass(&ws, t, accs, n, what, attempt ? 0 : window, err);
    if (rc == OVL_EUNSORTED && attempt == 0) {  /* the stream sorts with SQLite from now on */
      ovl_err_clear(err);
      rc = OVL_OK;
      continue;
    }
    break;
  }
  if (!rc)
    for (size_t i = 0; i < n; i++) acc_finish(&accs[i]);
  for (size_t i = 0; i < n; i++) acc_free(&accs[i]);
  free(accs);
  if (t) {
    ovl_work_stream_free(&ws);
    ovl_trace_close(t);
  }
  return rc;
}

int ovl_stats_gpu(const ovl_analysis_ctx *ctx, const ovl_job *job, unsigned what, ovl_stats *s, ovl_err *err) {
  assert(s->nranks == job->nranks);
  /* Ranks of one file are not always adjacent (ranks sort by rank, then device, then file):
  ** each file is read once, for every rank analysed from it. */
  char *done = calloc(job->nranks ? job->nranks : 1, 1);
  size_t *members = malloc((job->nranks ? job->nranks : 1) * sizeof *members);
  int rc = done && members ? OVL_OK : ovl_oom(err, "statistics");
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    if (done[i]) continue;
    /* gather the ranks of this file; read_file wants them adjacent in s and job: use a view */
    size_t n = 0;
    for (size_t k = i; k < job->nranks; k++)
      if (!done[k] && strcmp(job->ranks[k].ovl_path, job->ranks[i].ovl_path) == 0) members[n++] = k;
    for (size_t m = 0; m < n; m++) done[members[m]] = 1;
    if (n == 1 || members[n - 1] - members[0] == n - 1) {
      rc = read_file(ctx, job, members[0], members[0] + n, what, s, err);
      continue;
    }
    /* not adjacent: read the file once per rank (rare: several devices and interleaved files) */
    for (size_t m = 0; !rc && m < n; m++) rc = read_file(ctx, job, members[m], members[m] + 1, what, s, err);
  }
  free(done);
  free(members);
  return rc;
}
