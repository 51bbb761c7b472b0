/* `ovl stats` tables: see stats_out.h. */
#include "stats_out.h"

#include "base/text_clean.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const table_names[OVL_ST_COUNT] = {"summary", "kernels", "nccl", "nvtx", "memcpy"};

const char *ovl_stats_table_name(ovl_stats_table t) { return t < OVL_ST_COUNT ? table_names[t] : "?"; }

int ovl_stats_table_from_name(const char *name) {
  for (int t = 0; t < OVL_ST_COUNT; t++)
    if (strcmp(name, table_names[t]) == 0) return t;
  return -1;
}

unsigned ovl_stats_table_needs(ovl_stats_table t) {
  switch (t) {
    case OVL_ST_KERNELS: return OVL_STATS_KERNELS;
    case OVL_ST_NCCL: return OVL_STATS_NCCL;
    case OVL_ST_NVTX: return OVL_STATS_NVTX;
    case OVL_ST_MEMCPY: return OVL_STATS_MEMOPS;
    default: return 0;
  }
}

/* Columns every per-rank table starts with (left out when ranks are merged). */
#define RANK_COLS {"rank", "rank", OVL_COL_INT, 5}, {"device", "dev", OVL_COL_INT, 4}
#define NRANK_COLS 2

static int64_t mean_of(const ovl_stat_span *s) {
  return s->count > 0 ? (int64_t)llround((double)s->total / (double)s->count) : OVL_NONE;
}


static void span_cells(ovl_cell *c, const ovl_stat_span *s) {
  c[0].i = s->count;
  c[1].i = s->total;
  c[2].i = mean_of(s);
  c[3].i = s->count ? s->min : OVL_NONE;
  c[4].i = s->count ? s->max : OVL_NONE;
}

static const char *class_name(ovl_work_class c) {
  return c == OVL_CLASS_COMM ? "communication" : c == OVL_CLASS_MEMORY ? "memory" : "compute";
}

/* Title of a rank's text table, into buf. */
static const char *title_of(const ovl_stats_view *v, const ovl_rank_stats *rs, const char *what, char *buf,
                            size_t len) {
  if (v->merged) {
    snprintf(buf, len, "\n%s, all %zu rank%s", what, v->job->nranks, v->job->nranks == 1 ? "" : "s");
    return buf;
  }
  const ovl_rank_result *r = &v->job->ranks[rs->rank_index];
  char rank[32];
  if (r->rank == OVL_NONE) snprintf(rank, sizeof rank, "?");
  else snprintf(rank, sizeof rank, "%lld", (long long)r->rank);
  snprintf(buf, len, "\n%s, rank %s (device %lld)", what, rank, (long long)r->device);
  return buf;
}

typedef struct writer {
  FILE *out;
  const ovl_stats_view *v;
  ovl_table_format format;
  ovl_json *json;
} writer;

/* Text gets one table per rank; CSV and JSON one table over every rank. */
static int per_rank_tables(const writer *w) { return w->format == OVL_TABLE_TEXT && !w->v->merged; }

/* Rows carry their rank in CSV and JSON; text names it in the table's title instead, and merged
** rows have none. */
static int rank_columns(const writer *w) { return !w->v->merged && w->format != OVL_TABLE_TEXT; }

/* A row's rank cells, then returns where its own cells start. */
static ovl_cell *rank_cells(const writer *w, const ovl_rank_stats *rs, ovl_cell *cells) {
  if (!rank_columns(w)) return cells;
  const ovl_rank_result *r = &w->v->job->ranks[rs->rank_index];
  cells[0].i = r->rank;
  cells[1].i = r->device;
  return cells + NRANK_COLS;
}

static const ovl_col *cols_of(const writer *w, const ovl_col *all, size_t nall, size_t *n) {
  *n = rank_columns(w) ? nall : nall - NRANK_COLS;
  return rank_columns(w) ? all : all + NRANK_COLS;
}

static size_t limit_of(const writer *w, size_t n) {
  return w->format == OVL_TABLE_TEXT && n > w->v->top ? w->v->top : n;
}

static void summary(const writer *w) {
  static const ovl_col cols[] = {
    {"rank", "rank", OVL_COL_INT, 5}, {"device", "dev", OVL_COL_INT, 4}, {"steps", "steps", OVL_COL_INT, 6},
    {"step_detection", "steps from", OVL_COL_TEXT, 10}, {"t_compute_ns", "compute", OVL_COL_NS, 11},
    {"t_comm_ns", "comm", OVL_COL_NS, 11}, {"t_exposed_ns", "exposed", OVL_COL_NS, 11},
    {"overlap_efficiency", "efficiency", OVL_COL_RATIO, 10}, {"t_memory_ns", "memory", OVL_COL_NS, 10},
    {"kernels", "kernels", OVL_COL_INT, 8}, {"comm_kernels", "comm k.", OVL_COL_INT, 7},
    {"memops", "memops", OVL_COL_INT, 7}, {"comm_memops", "comm m.", OVL_COL_INT, 7},
    {"collectives", "colls", OVL_COL_INT, 6}, {"collectives_without_gpu_work", "no GPU", OVL_COL_INT, 6},
    {"trace", "trace", OVL_COL_TEXT, 0},
  };
  ovl_table t;
  ovl_table_begin(&t, w->out, w->format, w->json, "summary", "Summary per rank (the report's totals)", cols,
                  sizeof cols / sizeof cols[0]);
  for (size_t i = 0; i < w->v->job->nranks; i++) {
    const ovl_rank_result *r = &w->v->job->ranks[i];
    long colls = (long)r->nunstepped;
    for (size_t s = 0; s < r->nsteps; s++) colls += (long)r->steps[s].ncolls;
    char path[1024];
    ovl_text_clean_into(r->trace_path ? r->trace_path : "", path, sizeof path);
    ovl_cell c[16];
    memset(c, 0, sizeof c);
    c[0].i = r->rank;
    c[1].i = r->device;
    c[2].i = (int64_t)r->nsteps;
    c[3].s = ovl_step_method_name(r->step_detection);
    c[4].i = r->totals.compute;
    c[5].i = r->totals.comm;
    c[6].i = r->totals.exposed;
    c[7].d = ovl_overlap_efficiency(&r->totals);
    c[8].i = r->totals.memory;
    c[9].i = r->n_kernels;
    c[10].i = r->n_comm_kernels;
    c[11].i = r->n_memops;
    c[12].i = r->n_comm_memops;
    c[13].i = colls;
    c[14].i = r->colls_without_gpu_work;
    c[15].s = path;
    ovl_table_row(&t, c);
  }
  ovl_table_end(&t, 0);
}

/* A per-rank table: its columns, title, and how many rows a rank has and how to fill row i
** (cells after the rank's). */
typedef struct rank_table {
  const char *key, *title;
  const ovl_col *cols;
  size_t ncols;
  size_t (*rows)(const ovl_rank_stats *r);
  void (*fill)(const ovl_rank_stats *r, size_t i, ovl_cell *c);
} rank_table;

static void write_rank_table(const writer *w, const rank_table *rt, size_t first, size_t end) {
  size_t ncols;
  const ovl_col *cols = cols_of(w, rt->cols, rt->ncols, &ncols);
  char title[160];
  ovl_table t;
  ovl_table_begin(&t, w->out, w->format, w->json, rt->key,
                  title_of(w->v, &w->v->stats->ranks[first], rt->title, title, sizeof title), cols, ncols);
  size_t omitted = 0;
  for (size_t r = first; r < end; r++) {
    const ovl_rank_stats *rs = &w->v->stats->ranks[r];
    size_t n = rt->rows(rs), shown = limit_of(w, n);
    omitted += n - shown;
    for (size_t i = 0; i < shown; i++) {
      ovl_cell cells[16];
      memset(cells, 0, sizeof cells);
      rt->fill(rs, i, rank_cells(w, rs, cells));
      ovl_table_row(&t, cells);
    }
  }
  ovl_table_end(&t, omitted);
}

static size_t kernel_rows(const ovl_rank_stats *r) { return r->nkernels; }
static void kernel_fill(const ovl_rank_stats *r, size_t i, ovl_cell *c) {
  const ovl_kernel_stat *k = &r->kernels[i];
  c[0].d = r->kernel_ns > 0 ? (double)k->t.total / (double)r->kernel_ns : NAN;
  c[1].i = k->t.total;
  c[2].i = k->t.count;
  c[3].i = mean_of(&k->t);
  c[4].i = k->t.min;
  c[5].i = k->t.max;
  c[6].s = class_name(k->cls);
  c[7].s = k->name;
}
static const ovl_col kernel_cols[] = {
  RANK_COLS,
  {"share", "share", OVL_COL_RATIO, 6}, {"total_ns", "total", OVL_COL_NS, 11}, {"count", "count", OVL_COL_INT, 8},
  {"mean_ns", "mean", OVL_COL_NS, 10}, {"min_ns", "min", OVL_COL_NS, 10}, {"max_ns", "max", OVL_COL_NS, 10},
  {"class", "class", OVL_COL_TEXT, 13}, {"name", "name", OVL_COL_TEXT, 0},
};

static size_t nccl_rows(const ovl_rank_stats *r) { return r->nnccl; }
static void nccl_fill(const ovl_rank_stats *r, size_t i, ovl_cell *c) {
  const ovl_nccl_stat *s = &r->nccl[i];
  c[0].s = ovl_op_name(s->op);
  c[1].s = ovl_stats_size_bucket_name(s->size_bucket);
  span_cells(c + 2, &s->t);
  c[7].i = s->bytes;
  c[8].d = ovl_nccl_stat_busbw(s);
}
static const ovl_col nccl_cols[] = {
  RANK_COLS,
  {"op", "op", OVL_COL_TEXT, 13}, {"size_bucket", "size", OVL_COL_TEXT, 12}, {"count", "count", OVL_COL_INT, 7},
  {"total_ns", "time", OVL_COL_NS, 11}, {"mean_ns", "mean", OVL_COL_NS, 10}, {"min_ns", "min", OVL_COL_NS, 10},
  {"max_ns", "max", OVL_COL_NS, 10}, {"bytes", "bytes", OVL_COL_BYTES, 10},
  {"busbw_gbps", "busbw GB/s", OVL_COL_REAL, 10},
};

static size_t nvtx_rows(const ovl_rank_stats *r) { return r->nnvtx; }
static void nvtx_fill(const ovl_rank_stats *r, size_t i, ovl_cell *c) {
  const ovl_nvtx_stat *s = &r->nvtx[i];
  span_cells(c, &s->t);
  ovl_cell count = c[0];  /* total first in this table, as nsys's nvtx_sum */
  c[0] = c[1];
  c[1] = count;
  if (s->is_mark) c[0].i = c[2].i = c[3].i = c[4].i = OVL_NONE;
  c[5].s = s->is_mark ? "mark" : "range";
  c[6].s = s->domain;
  c[7].s = s->name;
}
static const ovl_col nvtx_cols[] = {
  RANK_COLS,
  {"total_ns", "total", OVL_COL_NS, 11}, {"count", "count", OVL_COL_INT, 8}, {"mean_ns", "mean", OVL_COL_NS, 10},
  {"min_ns", "min", OVL_COL_NS, 10}, {"max_ns", "max", OVL_COL_NS, 10}, {"style", "style", OVL_COL_TEXT, 5},
  {"domain", "domain", OVL_COL_TEXT, 10}, {"name", "name", OVL_COL_TEXT, 0},
};

static size_t memop_rows(const ovl_rank_stats *r) { return r->nmemops; }
static void memop_fill(const ovl_rank_stats *r, size_t i, ovl_cell *c) {
  const ovl_memop_stat *m = &r->memops[i];
  c[0].s = m->kind;
  span_cells(c + 1, &m->t);
  c[6].i = m->bytes;
  c[7].d = m->t.total > 0 ? (double)m->bytes / (double)m->t.total : NAN;  /* bytes per ns = GB/s */
  c[8].s = class_name(m->cls);
}
static const ovl_col memop_cols[] = {
  RANK_COLS,
  {"kind", "kind", OVL_COL_TEXT, 6}, {"count", "count", OVL_COL_INT, 8}, {"total_ns", "total", OVL_COL_NS, 11},
  {"mean_ns", "mean", OVL_COL_NS, 10}, {"min_ns", "min", OVL_COL_NS, 10}, {"max_ns", "max", OVL_COL_NS, 10},
  {"bytes", "bytes", OVL_COL_BYTES, 10}, {"throughput_gbps", "GB/s", OVL_COL_REAL, 8},
  {"class", "class", OVL_COL_TEXT, 0},
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))
static const rank_table rank_tables[OVL_ST_COUNT] = {
  [OVL_ST_KERNELS] = {"kernels", "GPU kernels by name, most time first", kernel_cols, NCOLS(kernel_cols), kernel_rows,
                      kernel_fill},
  [OVL_ST_NCCL] = {"nccl", "NCCL collectives by operation and size", nccl_cols, NCOLS(nccl_cols), nccl_rows, nccl_fill},
  [OVL_ST_NVTX] = {"nvtx", "NVTX ranges by name, most time first (then marks)", nvtx_cols, NCOLS(nvtx_cols), nvtx_rows,
                   nvtx_fill},
  [OVL_ST_MEMCPY] = {"memcpy", "Memory operations by kind, most time first", memop_cols, NCOLS(memop_cols),
                     memop_rows, memop_fill},
};

static void table(const writer *w, ovl_stats_table which) {
  if (which == OVL_ST_SUMMARY) {
    summary(w);
    return;
  }
  size_t n = w->v->stats->nranks;
  size_t step = per_rank_tables(w) ? 1 : n;
  for (size_t first = 0; first < n; first += step) write_rank_table(w, &rank_tables[which], first, first + step);
}

void ovl_stats_write(FILE *out, const ovl_stats_view *v, const ovl_stats_table *tables, size_t ntables,
                     ovl_table_format format, int pretty) {
  ovl_json j;
  writer w = {out, v, format, &j};
  if (format == OVL_TABLE_JSON) {
    ovl_json_init(&j, out, pretty);
    ovl_json_object_begin(&j, NULL);
    ovl_json_int(&j, "ovl_stats_version", 1);
  }
  for (size_t i = 0; i < ntables; i++) {
    if (i && format == OVL_TABLE_CSV) fputc('\n', out);  /* tables apart: one empty line */
    table(&w, tables[i]);
  }
  if (format == OVL_TABLE_JSON) {
    ovl_json_object_end(&j);
    ovl_json_finish(&j);
  }
}
