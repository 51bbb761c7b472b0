/* Gathering, merging and freeing the statistics tables (stats.h). */
#include "stats.h"

#include "base/sane_values.h"
#include "base/strmap.h"
#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_rank(ovl_rank_stats *r) {
  for (size_t i = 0; i < r->nkernels; i++) {
    free(r->kernels[i].name);
    free(r->kernels[i].step_ns);
  }
  free(r->kernels);
  free(r->memops);
  free(r->nccl);
  for (size_t i = 0; i < r->nnvtx; i++) {
    free(r->nvtx[i].domain);
    free(r->nvtx[i].name);
  }
  free(r->nvtx);
  memset(r, 0, sizeof *r);
}

void ovl_stats_free(ovl_stats *s) {
  for (size_t i = 0; i < s->nranks; i++) free_rank(&s->ranks[i]);
  free(s->ranks);
  s->ranks = NULL;
  s->nranks = 0;
}

int ovl_stats_collect(const ovl_analysis_ctx *ctx, const ovl_job *job, unsigned what, ovl_stats *out, ovl_err *err) {
  memset(out, 0, sizeof *out);
  out->ranks = calloc(job->nranks ? job->nranks : 1, sizeof *out->ranks);
  if (!out->ranks) return ovl_oom(err, "statistics");
  out->nranks = job->nranks;
  for (size_t i = 0; i < job->nranks; i++) out->ranks[i].rank_index = i;
  int rc = OVL_OK;
  if (what & (OVL_STATS_KERNELS | OVL_STATS_MEMOPS)) rc = ovl_stats_gpu(ctx, job, what, out, err);
  if (!rc && (what & OVL_STATS_NCCL)) rc = ovl_stats_nccl(job, out, err);
  if (!rc && (what & OVL_STATS_NVTX)) rc = ovl_stats_nvtx(job, out, err);
  if (rc) ovl_stats_free(out);
  return rc;
}

/* ---- merging ranks: rows with the same key fold into one ---- */

static int cmp_kernel(const void *pa, const void *pb) {
  const ovl_kernel_stat *a = pa, *b = pb;
  if (a->t.total != b->t.total) return a->t.total > b->t.total ? -1 : 1;
  if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
  return strcmp(a->name, b->name);
}

static int cmp_memop(const void *pa, const void *pb) {
  const ovl_memop_stat *a = pa, *b = pb;
  if (a->t.total != b->t.total) return a->t.total > b->t.total ? -1 : 1;
  if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
  return strcmp(a->kind, b->kind);
}

static int cmp_nccl(const void *pa, const void *pb) {
  const ovl_nccl_stat *a = pa, *b = pb;
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  return (a->size_bucket > b->size_bucket) - (a->size_bucket < b->size_bucket);
}

static int cmp_nvtx(const void *pa, const void *pb) {
  const ovl_nvtx_stat *a = pa, *b = pb;
  if (a->is_mark != b->is_mark) return a->is_mark - b->is_mark;
  if (a->t.total != b->t.total) return a->t.total > b->t.total ? -1 : 1;
  if (a->t.count != b->t.count) return a->t.count > b->t.count ? -1 : 1;
  int c = strcmp(a->domain, b->domain);
  return c ? c : strcmp(a->name, b->name);
}

void ovl_stats_sort(ovl_rank_stats *r) {
  ovl_qsort(r->kernels, r->nkernels, sizeof *r->kernels, cmp_kernel);
  ovl_qsort(r->memops, r->nmemops, sizeof *r->memops, cmp_memop);
  ovl_qsort(r->nccl, r->nnccl, sizeof *r->nccl, cmp_nccl);
  ovl_qsort(r->nvtx, r->nnvtx, sizeof *r->nvtx, cmp_nvtx);
}

static int merge_kernels(const ovl_stats *in, ovl_rank_stats *o) {
  ovl_strmap index = {0};
  OVL_VEC(ovl_kernel_stat) rows = {0};
  int rc = OVL_OK;
  char key[8];
  for (size_t r = 0; !rc && r < in->nranks; r++) {
    o->kernel_ns = ovl_sat_add(o->kernel_ns, in->ranks[r].kernel_ns);
    for (size_t i = 0; !rc && i < in->ranks[r].nkernels; i++) {
      const ovl_kernel_stat *k = &in->ranks[r].kernels[i];
      size_t len = strlen(k->name) + sizeof key;
      char *full = malloc(len);
      if (!full) {
        rc = -1;
        break;
      }
      snprintf(full, len, "%d\x1f%s", (int)k->cls, k->name);
      int64_t idx;
      if (!ovl_strmap_get(&index, full, &idx)) {
        ovl_kernel_stat fresh = {strdup(k->name), k->cls, {0, 0, 0, 0}, NULL};
        if (!fresh.name || OVL_VEC_PUSH(&rows, fresh) || ovl_strmap_put(&index, full, (int64_t)rows.len - 1)) {
          free(fresh.name);
          free(full);
          rc = -1;
          break;
        }
        idx = (int64_t)rows.len - 1;
      }
      free(full);
      ovl_stat_span_merge(&rows.items[idx].t, &k->t);
    }
  }
  ovl_strmap_free(&index);
  o->kernels = rows.items;  /* freed with o on failure too */
  o->nkernels = rows.len;
  return rc;
}

static int merge_memops(const ovl_stats *in, ovl_rank_stats *o) {
  OVL_VEC(ovl_memop_stat) rows = {0};
  for (size_t r = 0; r < in->nranks; r++)
    for (size_t i = 0; i < in->ranks[r].nmemops; i++) {
      const ovl_memop_stat *m = &in->ranks[r].memops[i];
      size_t k = 0;
      while (k < rows.len && !(rows.items[k].cls == m->cls && strcmp(rows.items[k].kind, m->kind) == 0)) k++;
      if (k == rows.len) {
        ovl_memop_stat fresh = *m;
        memset(&fresh.t, 0, sizeof fresh.t);
        fresh.bytes = 0;
        if (OVL_VEC_PUSH(&rows, fresh)) {
          o->memops = rows.items;
          o->nmemops = rows.len;
          return -1;
        }
      }
      ovl_stat_span_merge(&rows.items[k].t, &m->t);
      rows.items[k].bytes = ovl_sat_add(rows.items[k].bytes, m->bytes);
    }
  o->memops = rows.items;
  o->nmemops = rows.len;
  return 0;
}

static int merge_nccl(const ovl_stats *in, ovl_rank_stats *o) {
  OVL_VEC(ovl_nccl_stat) rows = {0};
  for (size_t r = 0; r < in->nranks; r++)
    for (size_t i = 0; i < in->ranks[r].nnccl; i++) {
      const ovl_nccl_stat *c = &in->ranks[r].nccl[i];
      size_t k = 0;
      while (k < rows.len && !(rows.items[k].op == c->op && rows.items[k].size_bucket == c->size_bucket)) k++;
      if (k == rows.len) {
        ovl_nccl_stat fresh;
        memset(&fresh, 0, sizeof fresh);
        fresh.op = c->op;
        fresh.size_bucket = c->size_bucket;
        if (OVL_VEC_PUSH(&rows, fresh)) {
          o->nccl = rows.items;
          o->nnccl = rows.len;
          return -1;
        }
      }
      ovl_nccl_stat *m = &rows.items[k];
      ovl_stat_span_merge(&m->t, &c->t);
      m->bytes = ovl_sat_add(m->bytes, c->bytes);
      m->bus_bytes += c->bus_bytes;
      m->bus_time = ovl_sat_add(m->bus_time, c->bus_time);
    }
  o->nccl = rows.items;
  o->nnccl = rows.len;
  return 0;
}

static int merge_nvtx(const ovl_stats *in, ovl_rank_stats *o) {
  OVL_VEC(ovl_nvtx_stat) rows = {0};
  int rc = 0;
  for (size_t r = 0; !rc && r < in->nranks; r++)
    for (size_t i = 0; !rc && i < in->ranks[r].nnvtx; i++) {
      const ovl_nvtx_stat *v = &in->ranks[r].nvtx[i];
      size_t k = 0;
      while (k < rows.len && !(rows.items[k].is_mark == v->is_mark && strcmp(rows.items[k].domain, v->domain) == 0 &&
                               strcmp(rows.items[k].name, v->name) == 0))
        k++;
      if (k == rows.len) {
        ovl_nvtx_stat fresh = {strdup(v->domain), strdup(v->name), v->is_mark, {0, 0, 0, 0}};
        if (!fresh.domain || !fresh.name || OVL_VEC_PUSH(&rows, fresh)) {
          free(fresh.domain);
          free(fresh.name);
          rc = -1;
          break;
        }
      }
      ovl_stat_span_merge(&rows.items[k].t, &v->t);
    }
  o->nvtx = rows.items;
  o->nnvtx = rows.len;
  return rc;
}

int ovl_stats_merge(const ovl_stats *in, ovl_stats *out, ovl_err *err) {
  memset(out, 0, sizeof *out);
  out->ranks = calloc(1, sizeof *out->ranks);
  if (!out->ranks) return ovl_oom(err, "statistics");
  out->nranks = 1;
  ovl_rank_stats *o = &out->ranks[0];
  o->rank_index = in->nranks ? in->ranks[0].rank_index : 0;
  if (merge_kernels(in, o) || merge_memops(in, o) || merge_nccl(in, o) || merge_nvtx(in, o)) {
    ovl_stats_free(out);
    return ovl_oom(err, "statistics");
  }
  ovl_stats_sort(o);
  return OVL_OK;
}
