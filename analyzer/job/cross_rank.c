/* Cross-rank matching, clock alignment, skew and stragglers: see cross_rank.h. */
#include "cross_rank.h"

#include "base/i64map.h"
#include "base/sort_inplace.h"
#include "base/vec.h"
#include "store/trace_rows.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_ITERATIONS 6
#define MIN_DECISIVE_MARGIN_NS 1000

/* One call in the matching: 16 bytes, one per collective call of the job (the stage's largest
** array). Its (communicator, sequence number) is squeezed into (key, seq): seq is the low 32
** bits of its distance from its communicator's lowest sequence number, key numbers the
** (communicator, rest of that distance) pairs in sorted order (one per communicator unless its
** numbers span 2^32: number_keys), so (key, seq) sorts and compares as (comm, seq) do.
** rank: input index; call: index in that rank's calls. */
typedef struct participant {
  uint32_t key, seq;
  uint32_t rank, call;
} participant;

static int cmp_participant(const void *pa, const void *pb) {
  const participant *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
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

/* A communicator of the matching (sorted by comm) and the (communicator, window) keys. */
typedef struct comm_span {
  int64_t comm, lo, hi;    /* its lowest and highest sequence numbers */
  size_t users;            /* ranks making its non point-to-point calls */
  size_t first_key;        /* its keys: [first_key, the next communicator's) */
} comm_span;

typedef struct comm_key {
  size_t comm;             /* index in the communicators */
  uint64_t window;         /* (seq - lo) >> 32 */
} comm_key;

typedef struct work {
  const ovl_xr_rank_input *in;
  size_t n;
  participant *parts;
  size_t nparts;
  OVL_VEC(instance) matched;
  int64_t *shift;
  OVL_VEC(comm_span) comms;
  OVL_VEC(comm_key) keys;
  ovl_i64map comm_at;      /* comm -> its index in comms */
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

/* A call the matching takes part in: not point to point, communicator and number known. */
static int is_matchable(const ovl_xr_call *c) {
  return !is_point_to_point(c->op) && c->comm != OVL_NONE && c->seq != OVL_NONE;
}

static int cmp_comm_span(const void *pa, const void *pb) {
  const comm_span *a = pa, *b = pb;
  return (a->comm > b->comm) - (a->comm < b->comm);
}

static int cmp_comm_key(const void *pa, const void *pb) {
  const comm_key *a = pa, *b = pb;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  return (a->window > b->window) - (a->window < b->window);
}

static uint64_t distance(const comm_span *cs, int64_t seq) { return (uint64_t)seq - (uint64_t)cs->lo; }

/* The communicators (sorted, with their range of numbers) and their keys. -1: no memory. */
static int number_keys(work *w) {
  for (size_t i = 0; i < w->n; i++)
    for (size_t j = 0; j < w->in[i].ncalls; j++) {
      ovl_xr_call c = call_at(w, i, j);
      if (!is_matchable(&c)) continue;
      int64_t at;
      if (!ovl_i64map_get(&w->comm_at, c.comm, &at)) {
        if (OVL_VEC_PUSH(&w->comms, ((comm_span){c.comm, c.seq, c.seq, 0, 0})) ||
            ovl_i64map_put(&w->comm_at, c.comm, (int64_t)w->comms.len - 1))
          return -1;
        continue;
      }
      comm_span *cs = &w->comms.items[at];
      if (c.seq < cs->lo) cs->lo = c.seq;
      if (c.seq > cs->hi) cs->hi = c.seq;
    }
  ovl_qsort(w->comms.items, w->comms.len, sizeof *w->comms.items, cmp_comm_span);
  int wide = 0;
  for (size_t k = 0; k < w->comms.len; k++) {
    if (ovl_i64map_put(&w->comm_at, w->comms.items[k].comm, (int64_t)k)) return -1;
    wide |= distance(&w->comms.items[k], w->comms.items[k].hi) > UINT32_MAX;
    if (OVL_VEC_PUSH(&w->keys, ((comm_key){k, 0}))) return -1;
  }
  /* numbers spanning 2^32 on a communicator (never seen in a real trace): one key per window */
  for (size_t i = 0; wide && i < w->n; i++)
    for (size_t j = 0; j < w->in[i].ncalls; j++) {
      ovl_xr_call c = call_at(w, i, j);
      int64_t at;
      if (!is_matchable(&c) || !ovl_i64map_get(&w->comm_at, c.comm, &at)) continue;
      comm_key key = {(size_t)at, distance(&w->comms.items[at], c.seq) >> 32};
      const comm_key *prev = &w->keys.items[w->keys.len - 1];  /* a rank's calls repeat a window */
      if (key.window && cmp_comm_key(prev, &key) != 0 && OVL_VEC_PUSH(&w->keys, key)) return -1;
    }
  ovl_qsort(w->keys.items, w->keys.len, sizeof *w->keys.items, cmp_comm_key);
  size_t kept = 0;
  for (size_t k = 0; k < w->keys.len; k++)
    if (kept == 0 || cmp_comm_key(&w->keys.items[kept - 1], &w->keys.items[k]) != 0) w->keys.items[kept++] = w->keys.items[k];
  w->keys.len = kept;
  for (size_t k = w->keys.len; k-- > 0;) w->comms.items[w->keys.items[k].comm].first_key = k;
  return 0;
}

/* Call c's key (a matchable call of a communicator number_keys saw). */
static uint32_t key_of(const work *w, const ovl_xr_call *c) {
  int64_t at = 0;
  int found = ovl_i64map_get(&w->comm_at, c->comm, &at);
  assert(found);
  (void)found;
  const comm_span *cs = &w->comms.items[at];
  size_t lo = cs->first_key, hi = (size_t)at + 1 < w->comms.len ? cs[1].first_key : w->keys.len;
  uint64_t window = distance(cs, c->seq) >> 32;
  while (hi - lo > 1) {  /* one key unless the communicator is wide */
    size_t mid = lo + (hi - lo) / 2;
    if (w->keys.items[mid].window <= window) lo = mid;
    else hi = mid;
  }
  assert(w->keys.items[lo].window == window && lo <= UINT32_MAX);
  return (uint32_t)lo;
}

/* The communicator of participant p. */
static comm_span *comm_of(const work *w, const participant *p) { return &w->comms.items[w->keys.items[p->key].comm]; }

/* Groups calls into instances; fills matched, unmatched, mismatch. */
static int match(work *w, ovl_xr_result *out) {
  size_t total = 0;
  for (size_t i = 0; i < w->n; i++) total += w->in[i].ncalls;
  /* keys and call indices are 32-bit: 2^32 calls would take 64 GiB of participants alone */
  if (total >= UINT32_MAX || number_keys(w)) return -1;
  w->parts = malloc((total ? total : 1) * sizeof *w->parts);
  if (!w->parts) return -1;
  for (size_t i = 0; i < w->n; i++) {
    for (size_t j = 0; j < w->in[i].ncalls; j++) {
      ovl_xr_call c = call_at(w, i, j);
      if (is_point_to_point(c.op)) {
        out->point_to_point++;
        continue;
      }
      if (!is_matchable(&c)) continue;
      uint32_t key = key_of(w, &c);
      uint32_t seq = (uint32_t)distance(&w->comms.items[w->keys.items[key].comm], c.seq);  /* its low 32 bits */
      w->parts[w->nparts++] = (participant){key, seq, (uint32_t)i, (uint32_t)j};
    }
  }
  ovl_sort_inplace(w->parts, w->nparts, sizeof *w->parts, cmp_participant);

  /* Users per communicator: distinct ranks among its participants (sorted by communicator:
  ** its keys are consecutive), with a rank bitmap reset at each communicator. */
  unsigned char *seen = calloc(w->n ? w->n : 1, 1);
  if (!seen) return -1;
  for (size_t k = 0; k < w->nparts; k++) {
    comm_span *cs = comm_of(w, &w->parts[k]);
    if (k > 0 && comm_of(w, &w->parts[k - 1]) != cs) memset(seen, 0, w->n);
    if (!seen[w->parts[k].rank]) {
      seen[w->parts[k].rank] = 1;
      cs->users++;
    }
  }
  free(seen);

  for (size_t k = 0; k < w->nparts;) {
    size_t end = k;
    while (end < w->nparts && w->parts[end].key == w->parts[k].key && w->parts[end].seq == w->parts[k].seq) end++;
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
    if (consistent && end - k == comm_of(w, &w->parts[k])->users && end - k > 1) {
      if (OVL_VEC_PUSH(&w->matched, ((instance){k, end - k}))) return -1;
      out->matched++;
    } else {
      out->unmatched++;
    }
    k = end;
  }
  return 0;
}

/* The disagreements of symmetric instance in's end times (gpu_end, by participant; shifted)
** with their median, into d[0..in->count). ends: scratch of in->count. */
static void end_residuals(const work *w, const int64_t *gpu_end, const instance *in, int64_t *ends, int64_t *d) {
  /* kept in d while the median sorts ends */
  for (size_t k = 0; k < in->count; k++) {
    const participant *p = &w->parts[in->first + k];
    d[k] = ends[k] = gpu_end[in->first + k] + w->shift[p->rank];
  }
  int64_t med = median(ends, in->count);
  for (size_t k = 0; k < in->count; k++) d[k] -= med;
}

/* The residuals' percentiles after alignment: one more round over the instances, whose
** |residuals| alone are kept (after the rounds' per-rank residuals are freed: never both). */
static int residual_percentiles(work *w, const int64_t *gpu_end, size_t samples, int64_t *ends, int64_t *d,
                                ovl_xr_result *out) {
  int64_t *all = malloc((samples ? samples : 1) * sizeof *all);
  if (!all) return -1;
  size_t n = 0;
  for (size_t m = 0; m < w->matched.len; m++) {
    const instance *in = &w->matched.items[m];
    if (!is_symmetric(call_of(w, &w->parts[in->first]).op)) continue;
    end_residuals(w, gpu_end, in, ends, d);
    for (size_t k = 0; k < in->count; k++) all[n++] = d[k] < 0 ? -d[k] : d[k];
  }
  assert(n == samples);
  out->residual_p50 = percentile(all, n, 0.50);
  out->residual_p99 = percentile(all, n, 0.99);
  free(all);
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
  int64_t *ends = malloc((w->n ? w->n : 1) * sizeof *ends), *d = malloc((w->n ? w->n : 1) * sizeof *d);
  /* The end of each participant of a symmetric instance, read once for the rounds below: a
  ** read is a cache miss (an instance's calls lie in every rank's results), and each round
  ** would read every one again. 8 bytes a participant while the clocks are aligned. */
  int64_t *gpu_end = malloc((w->nparts ? w->nparts : 1) * sizeof *gpu_end);
  int rc = (!count || !residuals || !ends || !d || !gpu_end) ? -1 : 0;
  for (size_t m = 0; !rc && m < w->matched.len; m++) {
    const instance *in = &w->matched.items[m];
    if (!is_symmetric(call_of(w, &w->parts[in->first]).op)) continue;
    out->alignment_samples++;
    for (size_t k = in->first; k < in->first + in->count; k++) {
      count[w->parts[k].rank]++;
      gpu_end[k] = call_of(w, &w->parts[k]).gpu_end;
    }
  }
  size_t samples = 0;
  for (size_t i = 0; !rc && i < w->n; i++) {
    if (count[i] && !(residuals[i] = malloc(count[i] * sizeof **residuals))) rc = -1;
    samples += count[i];
  }
  for (int it = 0; !rc && it < ALIGN_ITERATIONS; it++) {
    memset(count, 0, w->n * sizeof *count);
    for (size_t m = 0; m < w->matched.len; m++) {
      const instance *in = &w->matched.items[m];
      if (!is_symmetric(call_of(w, &w->parts[in->first]).op)) continue;
      end_residuals(w, gpu_end, in, ends, d);
      for (size_t k = 0; k < in->count; k++) {
        size_t rank = w->parts[in->first + k].rank;
        residuals[rank][count[rank]++] = d[k];
      }
    }
    for (size_t i = 0; i < w->n; i++) w->shift[i] -= median(residuals[i], count[i]);
    int64_t base = w->shift[ref];
    for (size_t i = 0; i < w->n; i++) w->shift[i] -= base;
  }
  for (size_t i = 0; residuals && i < w->n; i++) free(residuals[i]);
  free(residuals);
  free(count);
  if (!rc) rc = residual_percentiles(w, gpu_end, samples, ends, d, out);
  free(gpu_end);
  free(ends);
  free(d);
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
      out->calls[p->rank][p->call].wait_ns = wait;
      if (k == last_k) out->last[p->rank][p->call / 8] |= (unsigned char)(1u << (p->call % 8));
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
  out->last = calloc(n ? n : 1, sizeof *out->last);
  work w;
  memset(&w, 0, sizeof w);
  w.in = ranks;
  w.n = n;
  w.shift = calloc(n ? n : 1, sizeof(int64_t));
  int rc = (!out->ranks || !out->calls || !out->last || !w.shift) ? -1 : 0;
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
    out->last[i] = calloc(ranks[i].ncalls / 8 + 1, 1);
    if (!out->calls[i] || !out->last[i]) rc = -1;
    for (size_t j = 0; !rc && j < ranks[i].ncalls; j++) out->calls[i][j].wait_ns = OVL_NONE;
  }
  if (!rc) rc = arrivals(&w, out);
  free(w.parts);
  OVL_VEC_FREE(&w.matched);
  OVL_VEC_FREE(&w.comms);
  OVL_VEC_FREE(&w.keys);
  ovl_i64map_free(&w.comm_at);
  free(w.shift);
  if (rc) ovl_xr_result_free(out);
  return rc;
}

void ovl_xr_result_free(ovl_xr_result *r) {
  for (size_t i = 0; r->calls && i < r->nranks; i++) free(r->calls[i]);
  for (size_t i = 0; r->last && i < r->nranks; i++) free(r->last[i]);
  free(r->calls);
  free(r->last);
  free(r->ranks);
  memset(r, 0, sizeof *r);
}
