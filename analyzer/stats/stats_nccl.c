/* NCCL collectives by operation and size bucket, from the job's analysed collectives (stats.h). */
#include "stats.h"

#include "base/sane_values.h"
#include "base/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds (exclusive) of the size buckets: a 25 MB DDP bucket and a 5 MB one fall apart,
** latency-bound messages (under 64 KiB) apart from bandwidth-bound ones. */
static const int64_t bucket_limit[OVL_STATS_SIZE_BUCKETS - 2] = {
  (int64_t)1 << 10, (int64_t)64 << 10, (int64_t)1 << 20, (int64_t)16 << 20, (int64_t)128 << 20,
};
static const char *const bucket_name[OVL_STATS_SIZE_BUCKETS] = {
  "<1KiB", "1KiB-64KiB", "64KiB-1MiB", "1MiB-16MiB", "16MiB-128MiB", ">=128MiB", "unknown",
};

int ovl_stats_size_bucket(int64_t bytes) {
  if (bytes == OVL_NONE || bytes < 0) return OVL_STATS_SIZE_BUCKETS - 1;
  int b = 0;
  while (b < OVL_STATS_SIZE_BUCKETS - 2 && bytes >= bucket_limit[b]) b++;
  return b;
}

const char *ovl_stats_size_bucket_name(int bucket) {
  return bucket >= 0 && bucket < OVL_STATS_SIZE_BUCKETS ? bucket_name[bucket] : "unknown";
}

double ovl_nccl_stat_busbw(const ovl_nccl_stat *s) {
  return s->bus_time > 0 ? s->bus_bytes / (double)s->bus_time : NAN;
}

typedef OVL_VEC(ovl_nccl_stat) nccl_rows;

static int add_call(nccl_rows *rows, const ovl_coll_result *c, ovl_err *err) {
  int b = ovl_stats_size_bucket(c->bytes);
  ovl_nccl_stat *row = NULL;
  for (size_t i = 0; i < rows->len && !row; i++)
    if (rows->items[i].op == c->op && rows->items[i].size_bucket == b) row = &rows->items[i];
  if (!row) {
    ovl_nccl_stat fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.op = c->op;
    fresh.size_bucket = b;
    if (OVL_VEC_PUSH(rows, fresh)) return ovl_oom(err, "collective statistics");
    row = &rows->items[rows->len - 1];
  }
  int64_t dur = ovl_coll_gpu_end(c) - c->gpu_start;
  ovl_stat_span_add(&row->t, dur);
  if (c->bytes != OVL_NONE && c->bytes > 0) row->bytes = ovl_sat_add(row->bytes, c->bytes);
  double busbw = ovl_coll_busbw(c);
  if (!isnan(busbw) && dur > 0) {
    row->bus_bytes += busbw * (double)dur;  /* GB/s x ns = bytes */
    row->bus_time = ovl_sat_add(row->bus_time, dur);
  }
  return OVL_OK;
}

int ovl_stats_nccl(const ovl_job *job, ovl_stats *s, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    const ovl_rank_result *r = &job->ranks[i];
    nccl_rows rows = {0};
    for (size_t st = 0; !rc && st < r->nsteps; st++)
      for (size_t k = 0; !rc && k < r->steps[st].ncolls; k++) rc = add_call(&rows, &r->steps[st].colls[k], err);
    for (size_t k = 0; !rc && k < r->nunstepped; k++) rc = add_call(&rows, &r->unstepped[k], err);
    if (rc) {
      OVL_VEC_FREE(&rows);
      break;
    }
    s->ranks[i].nccl = rows.items;
    s->ranks[i].nnccl = rows.len;
    ovl_stats_sort(&s->ranks[i]);
  }
  return rc;
}
