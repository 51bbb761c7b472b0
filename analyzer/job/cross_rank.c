/* Cross-rank matching, clock alignment, skew and stragglers: see cross_rank.h. */
#include "cross_rank.h"

#include "base/sort_inplace.h"
#include "base/vec.h"
#include "store/trace_rows.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_ITERATIONS 6
#define MIN_DECISIVE_MARGIN_NS 1000

/* One call in the matching: 24 bytes, one per collective call of the job (the stage's
** largest array). rank: input index; call: index in that rank's calls. */
typedef struct participant {
  int64_t comm, seq;
  uint32_t rank, call;
} participant;

static int cmp_participant(const void *pa, const void *pb) {
  const participant *a = pa, *b = pb;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  /* the call index makes the order total (a rank may repeat a sequence number), so the
  ** in-place sort gives the order a stable sort of the rank-major input would */
  return (a->call > b->call) - (a->call < b->call);
}

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return (a > b) - (a < b);
}

/* Median of v[0..n) (sorts v); 0 for an empty array. */
static int64_t median(int64_t *v, size_t n) {
  if (n == 0) return 0;
  ovl_sort_inplace(v, n, sizeof *v, cmp_i64);
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int64_t percentile(int64_t *v, size_t n, double q) {
  if (n == 0) return 0;
  ovl_sort_inplace(v, n, sizeof *v, cmp_i64);
  size_t i = (size_t)ceil(q * (double)n);
  return v[i > 0 ? i - 1 : 0];
}

static int is_point_to_point(ovl_op op) {
  return op == OVL_OP_SEND || op == OVL_OP_RECV || op == OVL_OP_SENDRECV;
}

/* Every rank leaves these together: their end times align clocks. */
static int is_symmetric(ovl_op op) {
  return op == OVL_OP_ALLREDUCE || op == OVL_OP_ALLGATHER || op == OVL_OP_REDUCESCATTER || op == OVL_OP_ALLTOALL;
}

double ovl_binomial_tail(long n, long k, double p) {
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  if (p <= 0) return 0.0;
  if (p >= 1) return 1.0;
  double sum = 0;
  for (long x = k; x <= n; x++) {
    double lg = lgamma((double)n + 1) - lgamma((double)x + 1) - lgamma((double)(n - x) + 1) + (double)x * log(p) +
                (double)(n - x) * log1p(-p);
    sum += exp(lg);
  }
  return sum > 1.0 ? 1.0 : sum;
}

/* A matched instance: participants [first, first + count) of the sorted array. */
typedef struct instance {
  size_t first, count;
} instance;

typedef struct work {
  const ovl_xr_rank_input *in;
  size_t n;
  participant *parts;
  size_t nparts;
  OVL_VEC(instance) matched;
  int64_t *shift;
} work;

/* Call j of input rank i, from its array or its reader. */
static ovl_xr_call call_at(const work *w, size_t i, size_t j) {
  const ovl_xr_rank_input *in = &w->in[i];
  if (in->calls) return in->calls[j];
  ovl_xr_call c;
  in->read(in->ctx, j, &c);
  return c;
}

static ovl_xr_call call_of(const work *w, const participant *p) { return call_at(w, p->rank, p->call); }

/* Number of ranks that make non point-to-point calls on each communicator, looked up by
** binary search over (comm, count) pairs. */
typedef struct comm_users {
  int64_t comm;
  size_t users;
} comm_users;

static size_t users_of(const comm_users *cu, size_t n, int64_t comm) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cu[mid].comm < comm) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && cu[lo].comm == comm ? cu[lo].users : 0;
}

/* Groups calls into instances; fills matched, unmatched, mismatch. */
static int match(work *w, ovl_xr_result *out) {
  size_t total = 0;
  for (size_t i = 0; i < w->n; i++) total += w->in[i].ncalls;
  w->parts = malloc((total ? total : 1) * sizeof *w->parts);
  if (!w->parts) return -1;
  for (size_t i = 0; i < w->n; i++) {
    for (size_t j = 0; j < w->in[i].ncalls; j++) {
      ovl_xr_call c = call_at(w, i, j);
      if (is_point_to_point(c.op)) {
        out->point_to_point++;
        continue;
      }
      if (c.comm == OVL_NONE || c.seq == OVL_NONE) continue;
      w->parts[w->nparts++] = (participant){c.comm, c.seq, (uint32_t)i, (uint32_t)j};
    }
  }
  ovl_sort_inplace(w->parts, w->nparts, sizeof *w->parts, cmp_participant);

  /* Users per communicator: distinct (comm, rank) pairs. */
  OVL_VEC(comm_users) cu = {0};
  for (size_t k = 0; k < w->nparts; k++) {
    const participant *p = &w->parts[k];
    int new_comm = cu.len == 0 || cu.items[cu.len - 1].comm != p->comm;
    if (new_comm && OVL_VEC_PUSH(&cu, ((comm_users){p->comm, 0}))) return -1;
    /* parts are sorted by comm then seq then rank: count ranks seen first time in this comm */
  }
  {
    /* count distinct ranks per comm with a per-comm scan of a rank bitmap */
    unsigned char *seen = calloc(w->n ? w->n : 1, 1);
    if (!seen) {
      OVL_VEC_FREE(&cu);
      return -1;
    }
    size_t c = 0;
    for (size_t k = 0; k < w->nparts; k++) {
      if (k > 0 && w->parts[k].comm != w->parts[k - 1].comm) {
        memset(seen, 0, w->n);
        c++;
      }
      if (!seen[w->parts[k].rank]) {
        seen[w->parts[k].rank] = 1;
        cu.items[c].users++;
      }
    }
    free(seen);
  }

  for (size_t k = 0; k < w->nparts;) {
    size_t end = k;
    while (end < w->nparts && w->parts[end].comm == w->parts[k].comm && w->parts[end].seq == w->parts[k].seq) end++;
    ovl_xr_call first = call_of(w, &w->parts[k]);
    int consistent = 1;
    for (size_t m = k + 1; m < end && consistent; m++) {
      ovl_xr_call c = call_of(w, &w->parts[m]);
      if (c.op != first.op || c.bytes != first.bytes || w->parts[m].rank == w->parts[m - 1].rank) {
        consistent = 0;
        ovl_xr_mismatch mm = {first.comm, first.seq, w->parts[k].rank, w->parts[m].rank,
                              first.op, c.op, first.bytes, c.bytes};
        if (!out->has_mismatch || mm.seq < out->first_mismatch.seq ||
            (mm.seq == out->first_mismatch.seq && mm.comm < out->first_mismatch.comm)) {
          out->first_mismatch = mm;
          out->has_mismatch = 1;
        }
      }
    }
    if (consistent && end - k == users_of(cu.items, cu.len, w->parts[k].comm) && end - k > 1) {
      if (OVL_VEC_PUSH(&w->matched, ((instance){k, end - k}))) {
        OVL_VEC_FREE(&cu);
        return -1;
      }
      out->matched++;
    } else {
      out->unmatched++;
    }
    k = end;
  }
  OVL_VEC_FREE(&cu);
  return 0;
}

/* Offsets from realtime_offset, refined by the median disagreement of symmetric end times. */
static int align_clocks(work *w, size_t ref, ovl_xr_result *out) {
  for (size_t i = 0; i < w->n; i++) {
    int64_t rt = w->in[i].realtime_offset, rt_ref = w->in[ref].realtime_offset;
    w->shift[i] = (rt != OVL_NONE && rt_ref != OVL_NONE) ? rt - rt_ref : 0;
  }
  /* residuals[i]: this rank's disagreements in the current iteration */
  size_t *count = calloc(w->n, sizeof *count);
  int64_t **residuals = calloc(w->n, sizeof *residuals);
  int64_t *ends = malloc((w->n ? w->n : 1) * sizeof *ends);
  int rc = (!count || !residuals || !ends) ? -1 : 0;
  for (size_t m = 0; !rc && m < w->matched.len; m++) {
    const instance *in = &w->matched.items[m];
    if (!is_symmetric(call_of(w, &w->parts[in->first]).op)) continue;
    out->alignment_samples++;
    for (size_t k = in->first; k < in->first + in->count; k++) count[w->parts[k].rank]++;
  }
  size_t samples = 0;
  for (size_t i = 0; !rc && i < w->n; i++) {
    if (count[i] && !(residuals[i] = malloc(count[i] * sizeof **residuals))) rc = -1;
    samples += count[i];
  }
  /* sized once: growing it by doubling would hold two copies at the stage's peak */
  OVL_VEC(int64_t) all = {0};
  if (!rc && samples && OVL_VEC_RESERVE(&all, samples)) rc = -1;
  for (int it = 0; !rc && it <= ALIGN_ITERATIONS; it++) {
    memset(count, 0, w->n * sizeof *count);
    all.len = 0;
    for (size_t m = 0; m < w->matched.len; m++) {
      const instance *in = &w->matched.items[m];
      if (!is_symmetric(call_of(w, &w->parts[in->first]).op)) continue;
      for (size_t k = 0; k < in->count; k++) {
        const participant *p = &w->parts[in->first + k];
        ends[k] = call_of(w, p).gpu_end + w->shift[p->rank];
      }
      int64_t med = median(ends, in->count);
      for (size_t k = in->first; k < in->first + in->count; k++) {
        const participant *p = &w->parts[k];
        int64_t d = call_of(w, p).gpu_end + w->shift[p->rank] - med;
        residuals[p->rank][count[p->rank]++] = d;
        if (it == ALIGN_ITERATIONS && OVL_VEC_PUSH(&all, d < 0 ? -d : d)) rc = -1;
      }
    }
    if (it == ALIGN_ITERATIONS) break;  /* the last round only measures the residuals */
    for (size_t i = 0; i < w->n; i++) w->shift[i] -= median(residuals[i], count[i]);
    int64_t base = w->shift[ref];
    for (size_t i = 0; i < w->n; i++) w->shift[i] -= base;
  }
  if (!rc) {
    out->residual_p50 = percentile(all.items, all.len, 0.50);
    out->residual_p99 = percentile(all.items, all.len, 0.99);
  }
  OVL_VEC_FREE(&all);
  for (size_t i = 0; residuals && i < w->n; i++) free(residuals[i]);
  free(residuals);
  free(count);
  free(ends);
  return rc;
}

typedef OVL_VEC(int64_t) i64vec;

/* Skew, waits and lateness per instance; stragglers. */
static int arrivals(work *w, ovl_xr_result *out) {
  out->decisive_margin = 3 * out->residual_p50;
  if (out->decisive_margin < MIN_DECISIVE_MARGIN_NS) out->decisive_margin = MIN_DECISIVE_MARGIN_NS;
  OVL_VEC(int64_t) skews = {0};
  /* per rank, its lateness each time it came last (grown as needed: most ranks never are) */
  i64vec *late_gpu = calloc(w->n ? w->n : 1, sizeof *late_gpu), *late_host = calloc(w->n ? w->n : 1, sizeof *late_host);
  double *chance = calloc(w->n ? w->n : 1, sizeof *chance);  /* sum over decisive instances of 1/participants */
  int64_t *tmp = malloc((w->n ? w->n : 1) * sizeof *tmp);
  int rc = (!late_gpu || !late_host || !chance || !tmp) ? -1 : 0;
  for (size_t m = 0; !rc && m < w->matched.len; m++) {
    const instance *in = &w->matched.items[m];
    int64_t first = INT64_MAX, last = INT64_MIN, second = INT64_MIN;
    size_t last_k = in->first;
    for (size_t k = in->first; k < in->first + in->count; k++) {
      const participant *p = &w->parts[k];
      int64_t a = call_of(w, p).gpu_start + w->shift[p->rank];
      if (a < first) first = a;
      if (a > last) {
        second = last;
        last = a;
        last_k = k;
      } else if (a > second) {
        second = a;
      }
    }
    if (OVL_VEC_PUSH(&skews, last - first)) rc = -1;
    int decisive = last - first > out->decisive_margin;
    const participant *lp = &w->parts[last_k];
    int64_t caused = 0;
    for (size_t k = in->first; k < in->first + in->count; k++) {
      const participant *p = &w->parts[k];
      ovl_xr_call c = call_of(w, p);
      int64_t a = c.gpu_start + w->shift[p->rank];
      int64_t dur = c.gpu_end - c.gpu_start;
      int64_t wait = last - a;
      if (wait < 0) wait = 0;
      if (wait > dur) wait = dur;
      ovl_xr_call_result *cr = &out->calls[p->rank][p->call];
      cr->wait_ns = wait;
      cr->arrived_last = k == last_k;
      out->ranks[p->rank].wait_ns += wait;
      out->ranks[p->rank].transfer_ns += dur - wait;
      if (decisive) {
        out->ranks[p->rank].decisive++;
        chance[p->rank] += 1.0 / (double)in->count;
        if (k != last_k) caused += wait;
      }
    }
    if (!decisive) continue;
    ovl_xr_rank_result *lr = &out->ranks[lp->rank];
    lr->times_last++;
    lr->wait_caused_ns += caused;
    lr->delay_ns += last - second;
    /* how late the last rank was on the GPU and on the host, against the others' median */
    size_t n = 0;
    for (size_t k = in->first; k < in->first + in->count; k++)
      if (k != last_k) tmp[n++] = call_of(w, &w->parts[k]).gpu_start + w->shift[w->parts[k].rank];
    if (OVL_VEC_PUSH(&late_gpu[lp->rank], last - median(tmp, n))) rc = -1;
    ovl_xr_call lc = call_of(w, lp);
    int host_known = lc.host_launch != OVL_NONE;
    n = 0;
    for (size_t k = in->first; host_known && k < in->first + in->count; k++) {
      ovl_xr_call c = call_of(w, &w->parts[k]);
      if (k == last_k) continue;
      if (c.host_launch == OVL_NONE) host_known = 0;
      else tmp[n++] = c.host_launch + w->shift[w->parts[k].rank];
    }
    if (host_known && OVL_VEC_PUSH(&late_host[lp->rank], lc.host_launch + w->shift[lp->rank] - median(tmp, n)))
      rc = -1;
  }
  if (!rc) {
    out->skew_p50 = percentile(skews.items, skews.len, 0.50);
    out->skew_p99 = percentile(skews.items, skews.len, 0.99);
    for (size_t i = 0; i < w->n; i++) {
      ovl_xr_rank_result *r = &out->ranks[i];
      double p = r->decisive ? chance[i] / (double)r->decisive : 0;
      r->p_value = ovl_binomial_tail(r->decisive, r->times_last, p);
      r->expected_last = chance[i];
      r->late_gpu_ns = late_gpu[i].len ? median(late_gpu[i].items, late_gpu[i].len) : 0;
      r->late_host_ns = late_host[i].len ? median(late_host[i].items, late_host[i].len) : OVL_NONE;
    }
  }
  for (size_t i = 0; i < w->n; i++) {
    if (late_gpu) OVL_VEC_FREE(&late_gpu[i]);
    if (late_host) OVL_VEC_FREE(&late_host[i]);
  }
  free(late_gpu);
  free(late_host);
  free(chance);
  free(tmp);
  OVL_VEC_FREE(&skews);
  return rc;
}

int ovl_cross_rank(const ovl_xr_rank_input *ranks, size_t n, ovl_xr_result *out) {
  memset(out, 0, sizeof *out);
  out->nranks = n;
  out->ranks = calloc(n ? n : 1, sizeof *out->ranks);
  out->calls = calloc(n ? n : 1, sizeof *out->calls);
  work w = {ranks, n, NULL, 0, {0}, calloc(n ? n : 1, sizeof(int64_t))};
  int rc = (!out->ranks || !out->calls || !w.shift) ? -1 : 0;
  size_t ref = 0;
  for (size_t i = 0; i < n; i++) assert((ranks[i].calls || ranks[i].read) && ranks[i].ncalls <= UINT32_MAX);
  for (size_t i = 0; !rc && i < n; i++) {
    out->ranks[i].rank = ranks[i].rank;
    if (ranks[i].rank < ranks[ref].rank) ref = i;
  }
  if (!rc) rc = match(&w, out);
  if (!rc && n) rc = align_clocks(&w, ref, out);
  for (size_t i = 0; !rc && i < n; i++) out->ranks[i].clock_offset = w.shift[i];
  /* the answers only now: the clock alignment's residuals are gone, so they never coexist */
  for (size_t i = 0; !rc && i < n; i++) {
    out->calls[i] = malloc((ranks[i].ncalls ? ranks[i].ncalls : 1) * sizeof **out->calls);
    if (!out->calls[i]) rc = -1;
    for (size_t j = 0; !rc && j < ranks[i].ncalls; j++)
      out->calls[i][j] = (ovl_xr_call_result){OVL_NONE, 0};
  }
  if (!rc) rc = arrivals(&w, out);
  free(w.parts);
  OVL_VEC_FREE(&w.matched);
  free(w.shift);
  if (rc) ovl_xr_result_free(out);
  return rc;
}

void ovl_xr_result_free(ovl_xr_result *r) {
  for (size_t i = 0; r->calls && i < r->nranks; i++) free(r->calls[i]);
  free(r->calls);
  free(r->ranks);
  memset(r, 0, sizeof *r);
}
