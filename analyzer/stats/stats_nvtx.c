/* NVTX ranges and marks by domain and name, one scan per trace file (stats.h). */
#include "stats.h"

#include "base/strmap.h"
#include "base/text_clean.h"
#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvtx_acc {
  OVL_VEC(ovl_nvtx_stat) rows;
  ovl_strmap index;        /* "<M|R>\x1f<domain>\x1f<name>" -> row */
  ovl_err *err;
} nvtx_acc;

static int add_row(void *ctx, const ovl_nvtx_row *row) {
  nvtx_acc *a = ctx;
  const char *domain = row->domain ? row->domain : "";
  const char *name = row->name ? row->name : "";
  int mark = row->end == OVL_NONE;
  size_t len = strlen(domain) + strlen(name) + 4;
  char *key = malloc(len);
  if (!key) return ovl_oom(a->err, "NVTX statistics");
  snprintf(key, len, "%c\x1f%s\x1f%s", mark ? 'M' : 'R', domain, name);
  int64_t idx;
  int rc = OVL_OK;
  if (!ovl_strmap_get(&a->index, key, &idx)) {
    ovl_nvtx_stat s;
    memset(&s, 0, sizeof s);
    s.domain = ovl_text_clean_dup(domain);
    s.name = ovl_text_clean_dup(name);
    s.is_mark = mark;
    if (!s.domain || !s.name || OVL_VEC_PUSH(&a->rows, s) ||
        ovl_strmap_put(&a->index, key, (int64_t)a->rows.len - 1)) {
      free(s.domain);
      free(s.name);
      rc = ovl_oom(a->err, "NVTX statistics");
    }
    idx = (int64_t)a->rows.len - 1;
  }
  free(key);
  if (rc) return rc;
  ovl_stat_span_add(&a->rows.items[idx].t, mark ? 0 : row->end - row->start);
  return OVL_OK;
}

static void free_rows(ovl_nvtx_stat *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(rows[i].domain);
    free(rows[i].name);
  }
  free(rows);
}

static int scan_file(const char *path, ovl_rank_stats *out, ovl_err *err) {
  ovl_trace *t = NULL;
  int rc = ovl_trace_open(path, &t, err);
  if (rc) return rc;
  nvtx_acc a;
  memset(&a, 0, sizeof a);
  a.err = err;
  if (ovl_trace_has_table(t, "nvtx")) rc = ovl_trace_scan_nvtx(t, add_row, &a, err);
  ovl_trace_close(t);
  ovl_strmap_free(&a.index);
  if (rc) {
    free_rows(a.rows.items, a.rows.len);
    return rc;
  }
  out->nvtx = a.rows.items;
  out->nnvtx = a.rows.len;
  ovl_stats_sort(out);
  return OVL_OK;
}

int ovl_stats_nvtx(const ovl_job *job, ovl_stats *s, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    int seen = 0;  /* an earlier rank of the same file has its ranges */
    for (size_t k = 0; k < i && !seen; k++) seen = strcmp(job->ranks[k].ovl_path, job->ranks[i].ovl_path) == 0;
    if (!seen) rc = scan_file(job->ranks[i].ovl_path, &s->ranks[i], err);
  }
  return rc;
}

