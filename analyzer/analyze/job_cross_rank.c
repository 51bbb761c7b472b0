/*
** The cross-rank stage of a job analysis: see job.h (ovl_job_cross_rank) and cross_rank.h.
**
** The ranks that share communicators form a job; when traces of several jobs are given
** together, the largest is analysed across ranks. Its members' collective calls go through
** ovl_cross_rank(); the answers come back into the rank results (clock offsets, the
** waiting / transfer split of every matched call, straggler statistics and findings) and
** into job->cross (matching, skew, clock residuals, the job's overlap on transfer time).
*/
#include "diagnose.h"
#include "job.h"

#include "base/i64map.h"
#include "base/units.h"
#include "base/vec.h"
#include "cross_rank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Which ranks form the job                                                            */
/* ---------------------------------------------------------------------------------- */

static size_t find_root(size_t *parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* Iterates over every collective result of a rank: its steps' first, then the unstepped. */
typedef struct coll_iter {
  ovl_rank_result *r;
  size_t step, i;
} coll_iter;

static ovl_coll_result *coll_next(coll_iter *it) {
  while (it->step < it->r->nsteps) {
    if (it->i < it->r->steps[it->step].ncolls) return &it->r->steps[it->step].colls[it->i++];
    it->step++;
    it->i = 0;
  }
  return it->i < it->r->nunstepped ? &it->r->unstepped[it->i++] : NULL;
}

static int cmp_member_rank(const void *pa, const void *pb, const ovl_job *job) {
  const ovl_rank_result *a = &job->ranks[*(const size_t *)pa], *b = &job->ranks[*(const size_t *)pb];
  return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Members: the largest group of ranks linked by a shared communicator (at least two). */
static int choose_members(ovl_job *job, ovl_err *err) {
  size_t n = job->nranks;
  size_t *parent = malloc((n ? n : 1) * sizeof *parent);
  size_t *size = calloc(n ? n : 1, sizeof *size);
  ovl_i64map first_user = {0};  /* comm -> first rank index using it */
  int rc = (!parent || !size) ? ovl_oom(err, "job grouping") : OVL_OK;
  for (size_t i = 0; !rc && i < n; i++) parent[i] = i;
  for (size_t i = 0; !rc && i < n; i++) {
    coll_iter it = {&job->ranks[i], 0, 0};
    for (ovl_coll_result *c; !rc && (c = coll_next(&it)) != NULL;) {
      if (c->comm == OVL_NONE) continue;
      int64_t other;
      if (ovl_i64map_get(&first_user, c->comm, &other)) {
        size_t a = find_root(parent, i), b = find_root(parent, (size_t)other);
        if (a != b) parent[a] = b;
      } else if (ovl_i64map_put(&first_user, c->comm, (int64_t)i)) {
        rc = ovl_oom(err, "job grouping");
      }
    }
  }
  size_t best = 0, best_size = 0;
  for (size_t i = 0; !rc && i < n; i++) size[find_root(parent, i)]++;
  for (size_t i = 0; !rc && i < n; i++) {
    if (size[i] >= 2) job->cross.njobs++;
    if (size[i] > best_size) {
      best_size = size[i];
      best = i;
    }
  }
  if (!rc && best_size >= 2) {
    job->cross.members = malloc(best_size * sizeof *job->cross.members);
    if (!job->cross.members) rc = ovl_oom(err, "job grouping");
    for (size_t i = 0; !rc && i < n; i++)
      if (find_root(parent, i) == best) job->cross.members[job->cross.nmembers++] = i;
    /* rank order (insertion sort: members are few next to their collectives) */
    for (size_t i = 1; !rc && i < job->cross.nmembers; i++)
      for (size_t k = i; k > 0 && cmp_member_rank(&job->cross.members[k - 1], &job->cross.members[k], job) > 0; k--) {
        size_t t = job->cross.members[k];
        job->cross.members[k] = job->cross.members[k - 1];
        job->cross.members[k - 1] = t;
      }
  }
  free(parent);
  free(size);
  ovl_i64map_free(&first_user);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Inputs and answers                                                                  */
/* ---------------------------------------------------------------------------------- */

typedef struct member_calls {
  ovl_coll_result **refs;  /* the results the calls came from, to write answers back */
  ovl_xr_call *calls;
  size_t n;
} member_calls;

static int gather(ovl_rank_result *r, member_calls *m) {
  size_t n = r->nunstepped;
  for (size_t s = 0; s < r->nsteps; s++) n += r->steps[s].ncolls;
  m->refs = malloc((n ? n : 1) * sizeof *m->refs);
  m->calls = malloc((n ? n : 1) * sizeof *m->calls);
  m->n = 0;
  if (!m->refs || !m->calls) return -1;
  coll_iter it = {r, 0, 0};
  for (ovl_coll_result *c; (c = coll_next(&it)) != NULL;) {
    m->refs[m->n] = c;
    m->calls[m->n++] = (ovl_xr_call){c->comm, c->seq, c->op, c->bytes, c->nranks, c->host_launch,
                                     c->gpu_start, c->gpu_end, c->step};
  }
  return 0;
}

/* The cross-rank part of a matched call, written into *out, which c then points at. */
static void write_call(ovl_coll_result *c, const ovl_xr_call_result *x, ovl_coll_cross *out) {
  out->wait_ns = x->wait_ns;
  out->transfer_ns = x->transfer_ns;
  out->arrived_last = x->arrived_last;
  out->exposed_transfer_ns = ovl_exposed_within(c->exposed_pieces, c->gpu_start + x->wait_ns, c->gpu_end);
  out->transfer_busbw_gbps = NAN;
  if (c->bytes != OVL_NONE && c->bytes >= 0 && x->transfer_ns > 0)
    out->transfer_busbw_gbps = ovl_algbw_bytes(c->op, c->bytes, c->nranks) / (double)x->transfer_ns *
                               ovl_busbw_factor(c->op, c->nranks);
  c->cross = out;
}

/* Collectives of communicator comm that a rank's trace holds. */
static long colls_of_comm(const ovl_rank_result *r, int64_t comm) {
  long n = 0;
  for (size_t s = 0; s < r->nsteps; s++)
    for (size_t i = 0; i < r->steps[s].ncolls; i++) n += r->steps[s].colls[i].comm == comm;
  for (size_t i = 0; i < r->nunstepped; i++) n += r->unstepped[i].comm == comm;
  return n;
}

/* What else than a real divergence may explain a mismatch, appended to buf: sequence numbers
** the importer gave (no Seq in the trace: positions in each trace, which missing events shift),
** and ranks whose traces hold different numbers of the communicator's calls (a sampled or
** filtered trace, a window opening at different points on each rank). */
static void mismatch_caveat(const ovl_job *job, const ovl_xr_mismatch *m, char *buf, size_t len) {
  const ovl_rank_result *a = &job->ranks[job->cross.members[m->rank_a]];
  const ovl_rank_result *b = &job->ranks[job->cross.members[m->rank_b]];
  int numbered = a->colls_numbered > 0 || b->colls_numbered > 0;
  long na = colls_of_comm(a, m->comm), nb = colls_of_comm(b, m->comm);
  if (!numbered && na == nb) return;
  size_t used = strlen(buf);
  if (numbered && used + 1 < len)
    snprintf(buf + used, len - used, ". The traces carry no NCCL sequence numbers (Seq): the calls were numbered in "
                                     "the order each trace holds them");
  used = strlen(buf);
  if (na != nb && used + 1 < len)
    snprintf(buf + used, len - used, ". Rank %lld's trace holds %ld calls of this communicator, rank %lld's %ld",
             (long long)a->rank, na, (long long)b->rank, nb);
  used = strlen(buf);
  if (used + 1 < len)
    snprintf(buf + used, len - used, ". Events missing from a trace (a sampled or filtered trace, a profiler window "
                                     "that opens at different points on each rank) may explain the mismatch rather "
                                     "than a real divergence");
}

static void describe_mismatch(const ovl_job *job, const ovl_xr_mismatch *m, char *buf, size_t len) {
  const ovl_rank_result *a = &job->ranks[job->cross.members[m->rank_a]];
  const ovl_rank_result *b = &job->ranks[job->cross.members[m->rank_b]];
  char ba[32], bb[32];
  ovl_format_bytes((double)m->bytes_a, ba, sizeof ba);
  ovl_format_bytes((double)m->bytes_b, bb, sizeof bb);
  snprintf(buf, len,
           "collective #%lld of communicator %llx: rank %lld called %s (%s) where rank %lld called %s (%s); "
           "ranks that issue collectives in different orders hang or corrupt training (with DDP: "
           "parameters whose gradients are produced in a different order on some ranks)",
           (long long)m->seq, (unsigned long long)m->comm, (long long)a->rank, ovl_op_name(m->op_a), ba,
           (long long)b->rank, ovl_op_name(m->op_b), bb);
}

/* ---------------------------------------------------------------------------------- */
/* Stragglers                                                                          */
/* ---------------------------------------------------------------------------------- */

typedef struct kernel_excess {
  const ovl_kernel_total *k;
  double per_step, others_per_step;
} kernel_excess;

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static const ovl_kernel_total *find_kernel(const ovl_rank_result *r, const ovl_kernel_total *k) {
  for (size_t i = 0; i < r->nkernel_totals; i++) {
    const ovl_kernel_total *o = &r->kernel_totals[i];
    if (strcmp(o->name, k->name) == 0 && memcmp(o->grid, k->grid, sizeof o->grid) == 0) return o;
  }
  return NULL;
}

/* Up to three kernels that took longer per step on rank s than the median of its peers. */
static size_t longer_kernels(const ovl_job *job, size_t s, kernel_excess out[3]) {
  const ovl_rank_result *r = &job->ranks[job->cross.members[s]];
  size_t nout = 0, npeers = job->cross.nmembers - 1;
  double *vals = malloc((npeers ? npeers : 1) * sizeof *vals);
  if (!vals) return 0;
  for (size_t i = 0; i < r->nkernel_totals; i++) {
    const ovl_kernel_total *k = &r->kernel_totals[i];
    size_t n = 0;
    for (size_t m = 0; m < job->cross.nmembers; m++) {
      if (m == s) continue;
      const ovl_rank_result *p = &job->ranks[job->cross.members[m]];
      const ovl_kernel_total *o = find_kernel(p, k);
      if (o) vals[n++] = o->total_ns / (double)(p->nsteps ? p->nsteps : 1);
    }
    if (n * 2 < npeers || n == 0) continue;  /* most peers must run it too */
    ovl_qsort(vals, n, sizeof *vals, cmp_double);
    double med = n % 2 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;
    double mine = k->total_ns / (double)(r->nsteps ? r->nsteps : 1);
    if (mine <= med * 1.02) continue;
    kernel_excess e = {k, mine, med};
    /* keep the three largest excesses */
    size_t pos = nout < 3 ? nout++ : 3;
    while (pos > 0 && out[pos - 1].per_step - out[pos - 1].others_per_step < mine - med) {
      if (pos < 3) out[pos] = out[pos - 1];
      pos--;
    }
    if (pos < 3) out[pos] = e;
  }
  free(vals);
  return nout;
}

/* Compute time per step of member s minus the median of its peers'. Lateness that builds up
** over a step's collectives comes from there when the rank's GPU is slower. */
static double compute_excess_per_step(const ovl_job *job, size_t s) {
  size_t n = job->cross.nmembers, k = 0;
  double *peers = malloc(n * sizeof *peers);
  if (!peers) return 0;
  double mine = 0;
  for (size_t m = 0; m < n; m++) {
    const ovl_rank_result *r = &job->ranks[job->cross.members[m]];
    double v = (double)r->totals.compute / (double)(r->nsteps ? r->nsteps : 1);
    if (m == s) mine = v;
    else peers[k++] = v;
  }
  ovl_qsort(peers, k, sizeof *peers, cmp_double);
  double med = k == 0 ? mine : (k % 2 ? peers[k / 2] : (peers[k / 2 - 1] + peers[k / 2]) / 2);
  free(peers);
  return mine - med;
}

static int straggler_finding(ovl_job *job, size_t s, const ovl_xr_rank_result *x, ovl_err *err) {
  ovl_rank_result *r = &job->ranks[job->cross.members[s]];
  size_t steps = r->nsteps ? r->nsteps : 1;
  char waited[32], waited_step[32], delay[32], delay_step[32], late_gpu[32], late_host[32];
  ovl_format_ns((double)x->wait_caused_ns, waited, sizeof waited);
  ovl_format_ns((double)x->wait_caused_ns / (double)steps, waited_step, sizeof waited_step);
  ovl_format_ns((double)x->delay_ns, delay, sizeof delay);
  ovl_format_ns((double)x->delay_ns / (double)steps, delay_step, sizeof delay_step);
  ovl_format_ns((double)x->late_gpu_ns, late_gpu, sizeof late_gpu);
  char msg[2048];
  int n = snprintf(msg, sizeof msg,
                   "rank %lld arrived last at %ld of the %ld collectives where arrivals differed (about %.0f "
                   "expected by chance; p = %.1e); its peers waited %s for it in total (%s per step) and the "
                   "job was delayed %s (%s per step). Its GPU reached the collectives %s late (median)",
                   (long long)r->rank, x->times_last, x->decisive,
                   (double)x->decisive / (double)job->cross.nmembers, x->p_value, waited, waited_step, delay,
                   delay_step, late_gpu);
  if (x->late_host_ns != OVL_NONE) {
    ovl_format_ns((double)x->late_host_ns, late_host, sizeof late_host);
    n += snprintf(msg + n, sizeof msg - (size_t)n, " and its host launched them %s late", late_host);
  }
  double excess = compute_excess_per_step(job, s);
  char excess_text[32];
  ovl_format_ns(excess, excess_text, sizeof excess_text);
  if (excess * 2 >= (double)x->late_gpu_ns) {
    kernel_excess k[3];
    size_t nk = longer_kernels(job, s, k);
    n += snprintf(msg + n, sizeof msg - (size_t)n,
                  ": its compute before the collectives ran longer, %s per step more than its peers' median", excess_text);
    for (size_t i = 0; i < nk && n < (int)sizeof msg; i++) {
      char extra[32];
      ovl_format_ns(k[i].per_step - k[i].others_per_step, extra, sizeof extra);
      n += snprintf(msg + n, sizeof msg - (size_t)n, "%s %s (+%.1f%%, +%s per step)", i ? "," : " (kernels:",
                    k[i].k->name, 100.0 * (k[i].per_step / k[i].others_per_step - 1.0), extra);
    }
    if (nk && n < (int)sizeof msg) n += snprintf(msg + n, sizeof msg - (size_t)n, ")");
    if (n < (int)sizeof msg)
      snprintf(msg + n, sizeof msg - (size_t)n,
               ". Check this GPU (clocks, thermal or power throttling, ECC, other processes sharing it) and "
               "its inputs (an uneven shard or longer sequences give it more work).");
  } else if (x->late_host_ns != OVL_NONE && x->late_host_ns * 2 >= x->late_gpu_ns) {
    snprintf(msg + n, sizeof msg - (size_t)n,
             ", while its compute took no longer than its peers' (%s per step): the host is late, not the GPU. "
             "Look at what this rank's host does before and during the backward pass (data loading and "
             "preprocessing, CPU contention or pinning, Python work, logging, a slower host) and give it the "
             "same resources as its peers.",
             excess_text);
  } else {
    snprintf(msg + n, sizeof msg - (size_t)n,
             "; neither longer compute (%s per step) nor late host launches explain it: look for "
             "synchronisations, copies or other streams that stall this GPU before its collectives.",
             excess_text);
  }
  if (ovl_add_finding(&r->findings, &r->nfindings, "straggler", -1, x->delay_ns, msg) ||
      ovl_add_finding(&job->findings, &job->nfindings, "straggler", -1, x->delay_ns, msg))
    return ovl_oom(err, "findings");
  job->findings[job->nfindings - 1].at_ns = OVL_NONE;
  r->findings[r->nfindings - 1].at_ns = OVL_NONE;
  return OVL_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Entry point                                                                         */
/* ---------------------------------------------------------------------------------- */

static int cross_rank_stage(ovl_job *job, ovl_err *err) {
  int rc = choose_members(job, err);
  size_t n = job->cross.nmembers;
  if (rc || n < 2) return rc;
  member_calls *mc = calloc(n, sizeof *mc);
  ovl_xr_rank_input *in = calloc(n, sizeof *in);
  if (!mc || !in) rc = ovl_oom(err, "cross-rank analysis");
  for (size_t i = 0; !rc && i < n; i++) {
    ovl_rank_result *r = &job->ranks[job->cross.members[i]];
    if (gather(r, &mc[i])) rc = ovl_oom(err, "cross-rank analysis");
    in[i] = (ovl_xr_rank_input){r->rank != OVL_NONE ? r->rank : (int64_t)i, r->realtime_offset, mc[i].calls,
                                mc[i].n, r->nsteps};
  }
  ovl_xr_result x;
  memset(&x, 0, sizeof x);
  if (!rc && ovl_cross_rank(in, n, &x)) rc = ovl_oom(err, "cross-rank analysis");
  ovl_job_cross *jc = &job->cross;
  if (!rc) {
    jc->present = 1;
    jc->matched = x.matched;
    jc->unmatched = x.unmatched;
    jc->point_to_point = x.point_to_point;
    jc->skew_p50 = x.skew_p50;
    jc->skew_p99 = x.skew_p99;
    jc->residual_p50 = x.residual_p50;
    jc->residual_p99 = x.residual_p99;
    jc->alignment_samples = x.alignment_samples;
    jc->decisive_margin = x.decisive_margin;
    jc->has_mismatch = x.has_mismatch;
    if (x.has_mismatch) {
      describe_mismatch(job, &x.first_mismatch, jc->mismatch, sizeof jc->mismatch);
      mismatch_caveat(job, &x.first_mismatch, jc->mismatch, sizeof jc->mismatch);
    }
  }
  for (size_t i = 0; !rc && i < n; i++) {
    ovl_rank_result *r = &job->ranks[jc->members[i]];
    const ovl_xr_rank_result *xr = &x.ranks[i];
    r->clock_offset = xr->clock_offset;
    ovl_rank_cross *c = &r->cross;
    c->in_job = 1;
    size_t nmatched = 0;
    for (size_t j = 0; j < mc[i].n; j++) nmatched += x.calls[i][j].wait_ns != OVL_NONE;
    free(r->coll_cross);
    r->ncoll_cross = 0;
    r->coll_cross = malloc((nmatched ? nmatched : 1) * sizeof *r->coll_cross);
    if (!r->coll_cross) {
      rc = ovl_oom(err, "cross-rank results");
      break;
    }
    for (size_t j = 0; j < mc[i].n; j++) {
      if (x.calls[i][j].wait_ns == OVL_NONE) continue;
      const ovl_coll_cross *cr = &r->coll_cross[r->ncoll_cross];
      write_call(mc[i].refs[j], &x.calls[i][j], &r->coll_cross[r->ncoll_cross++]);
      c->matched++;
      c->wait_ns += cr->wait_ns;
      c->transfer_ns += cr->transfer_ns;
      c->exposed_transfer_ns += cr->exposed_transfer_ns;
    }
    c->times_last = xr->times_last;
    c->decisive = xr->decisive;
    c->p_value = xr->p_value;
    c->straggler = xr->straggler;
    c->wait_caused_ns = xr->wait_caused_ns;
    c->late_gpu_ns = xr->late_gpu_ns;
    c->late_host_ns = xr->late_host_ns;
    jc->t_comm += r->totals.comm;
    jc->t_exposed += r->totals.exposed;
    jc->t_transfer += c->transfer_ns;
    jc->t_exposed_transfer += c->exposed_transfer_ns;
    jc->t_wait += c->wait_ns;
    if (xr->straggler) rc = straggler_finding(job, i, xr, err);
  }
  if (!rc) rc = ovl_diagnose_peer_waits(job, err);
  ovl_xr_result_free(&x);
  for (size_t i = 0; mc && i < n; i++) {
    free(mc[i].refs);
    free(mc[i].calls);
  }
  free(mc);
  free(in);
  return rc;
}

/* The collectives' exposed pieces are this stage's input only: dropped once it has run, so
** a job keeps less per collective. */
static void drop_pieces(ovl_job *job) {
  for (size_t i = 0; i < job->nranks; i++) {
    ovl_rank_result *r = &job->ranks[i];
    coll_iter it = {r, 0, 0};
    for (ovl_coll_result *c; (c = coll_next(&it)) != NULL;) c->exposed_pieces = NULL;
    free(r->coll_pieces);
    r->coll_pieces = NULL;
  }
}

int ovl_job_cross_rank(ovl_job *job, ovl_err *err) {
  int rc = cross_rank_stage(job, err);
  drop_pieces(job);
  return rc;
}
