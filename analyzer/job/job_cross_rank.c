/*
** The cross-rank stage of a job analysis: see job.h (ovl_job_cross_rank) and cross_rank.h.
**
** The ranks that share communicators form a job; when traces of several jobs are given
** together, the largest is analysed across ranks. Its members' collective calls go through
** ovl_cross_rank(); the answers come back into the rank results (clock offsets, the
** waiting / transfer split of every matched call, straggler statistics) and
** into job->cross (matching, skew, clock residuals, the job's overlap on transfer time).
*/
#include "job.h"

#include "base/i64map.h"
#include "base/units.h"
#include "base/vec.h"
#include "cross_rank.h"
#include "remote_pieces.h"

#include <assert.h>
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

/* Members: the largest group of ranks of one job (job_partition.c) linked by a shared
** communicator (at least two). */
static int choose_members(ovl_job *job, ovl_err *err) {
  size_t n = job->nranks;
  size_t *parent = malloc((n ? n : 1) * sizeof *parent);
  size_t *size = calloc(n ? n : 1, sizeof *size);
  ovl_i64map first_user = {0};  /* comm -> first rank index using it */
  int rc = (!parent || !size) ? ovl_oom(err, "job grouping") : OVL_OK;
  for (size_t i = 0; !rc && i < n; i++) parent[i] = i;
  /* per part of the job (job_partition.c): ranks of different jobs are never related */
  for (size_t k = 0; !rc && k < (job->nparts ? job->nparts : 1); k++) {
    ovl_i64map_free(&first_user);
    memset(&first_user, 0, sizeof first_user);
    for (size_t i = 0; !rc && i < n; i++) {
      if (job->nparts && job->ranks[i].job != (int)k) continue;
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

/* A member's collective results in the order the stage numbers its calls (coll_iter's): the
** stage reads each call from its result (read_call), so no copy of the calls is made, nor a
** pointer a call (8 bytes a collective of the job): call j is found from where each step's
** calls start. */
typedef struct member_calls {
  ovl_rank_result *r;
  size_t *step_first;      /* nsteps + 1: step s's first call; the last, the first unstepped one */
  size_t n;
} member_calls;

static int gather(ovl_rank_result *r, member_calls *m) {
  m->r = r;
  m->step_first = malloc((r->nsteps + 1) * sizeof *m->step_first);
  if (!m->step_first) return -1;
  size_t n = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    m->step_first[s] = n;
    n += r->steps[s].ncolls;
  }
  m->step_first[r->nsteps] = n;
  m->n = n + r->nunstepped;
  return 0;
}

/* Call j (< m->n) of the member. */
static ovl_coll_result *call_at(const member_calls *m, size_t j) {
  const size_t ns = m->r->nsteps, *first = m->step_first;
  assert(j < m->n);
  if (j >= first[ns]) return &m->r->unstepped[j - first[ns]];
  size_t lo = 0, hi = ns;  /* the last step starting at or before j holds it */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (first[mid] <= j) lo = mid;
    else hi = mid;
  }
  return &m->r->steps[lo].colls[j - first[lo]];
}

static void read_call(const void *ctx, size_t j, ovl_xr_call *out) {
  const ovl_coll_result *c = call_at(ctx, j);
  *out = (ovl_xr_call){c->comm, ovl_coll_seq(c), c->op, c->bytes, ovl_coll_nranks(c), ovl_coll_host_launch(c),
                       c->gpu_start, ovl_coll_gpu_end(c), c->step};
}

/* The exposed time after its wait (its transfer part) of each matched call of r, in call order,
** into r->coll_cross[k].exposed_transfer_ns: from the rank's pieces, or asked of remote when it
** holds them (written by remote's next flush). */
static int exposed_transfers(ovl_rank_result *r, const member_calls *mc, const ovl_xr_call_result *calls,
                             const ovl_remote_pieces *remote, ovl_err *err) {
  if (!remote || !remote->holds(remote->self, r)) {
    for (size_t j = 0, k = 0; j < mc->n; j++) {
      if (calls[j].wait_ns == OVL_NONE) continue;
      const ovl_coll_result *c = call_at(mc, j);
      const int64_t *pieces = ovl_coll_pieces(r, c);
      r->coll_cross[k++].exposed_transfer_ns =
          pieces ? ovl_exposed_within(pieces, c->npieces, c->gpu_start + calls[j].wait_ns, ovl_coll_gpu_end(c)) : 0;
    }
    return OVL_OK;
  }
  size_t n = r->ncoll_cross;
  uint32_t *index = malloc((n ? n : 1) * sizeof *index);
  int64_t *cut = malloc((n ? n : 1) * sizeof *cut), *end = malloc((n ? n : 1) * sizeof *end);
  int rc = index && cut && end ? OVL_OK : ovl_oom(err, "cross-rank results");
  for (size_t j = 0, k = 0; !rc && j < mc->n; j++) {
    if (calls[j].wait_ns == OVL_NONE) continue;
    assert(j <= UINT32_MAX && k < n);
    index[k] = (uint32_t)j;
    const ovl_coll_result *c = call_at(mc, j);
    cut[k] = c->gpu_start + calls[j].wait_ns;
    end[k++] = ovl_coll_gpu_end(c);
  }
  if (!rc)
    rc = remote->ask_exposed_after(remote->self, r, index, cut, end, n, &r->coll_cross[0].exposed_transfer_ns,
                                   sizeof *r->coll_cross, err);
  free(index);
  free(cut);
  free(end);
  return rc;
}

/* The cross-rank part of a matched call, written into *out, which c then points at (its
** exposed_transfer_ns comes after: exposed_transfers). */
static void write_call(ovl_coll_result *c, const ovl_xr_call_result *x, int arrived_last, ovl_coll_cross *out) {
  out->wait_ns = x->wait_ns;
  out->arrived_last = arrived_last;
  out->exposed_transfer_ns = 0;
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

/* The collectives' exposed pieces are this stage's input only: dropped once it has used them,
** so a job keeps less per collective. */
static void drop_rank_pieces(ovl_rank_result *r) {
  coll_iter it = {r, 0, 0};
  for (ovl_coll_result *c; (c = coll_next(&it)) != NULL;) c->has_pieces = c->npieces = c->pieces_exact = 0;
  free(r->coll_piece_bounds);
  r->coll_piece_bounds = NULL;
}

/* ---------------------------------------------------------------------------------- */
/* Entry point                                                                         */
/* ---------------------------------------------------------------------------------- */

static int cross_rank_stage(ovl_job *job, const ovl_remote_pieces *remote, ovl_err *err) {
  int rc = choose_members(job, err);
  size_t n = job->cross.nmembers;
  if (rc || n < 2) return rc;
  member_calls *mc = calloc(n, sizeof *mc);
  ovl_xr_rank_input *in = calloc(n, sizeof *in);
  if (!mc || !in) rc = ovl_oom(err, "cross-rank analysis");
  for (size_t i = 0; !rc && i < n; i++) {
    ovl_rank_result *r = &job->ranks[job->cross.members[i]];
    if (gather(r, &mc[i])) rc = ovl_oom(err, "cross-rank analysis");
    in[i] = (ovl_xr_rank_input){r->rank != OVL_NONE ? r->rank : (int64_t)i, r->realtime_offset, NULL, read_call,
                                &mc[i], mc[i].n, r->nsteps};
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
      ovl_coll_result *call = call_at(&mc[i], j);
      write_call(call, &x.calls[i][j], ovl_xr_arrived_last(&x, i, j), &r->coll_cross[r->ncoll_cross++]);
      c->matched++;
      c->wait_ns += call->cross->wait_ns;
      c->transfer_ns += ovl_coll_transfer_ns(call);
    }
    /* the exposed parts asked elsewhere come in batches: the members since the last batch
    ** have theirs when it is flushed (summed below, once every batch is answered) */
    rc = exposed_transfers(r, &mc[i], x.calls[i], remote, err);
    if (!rc && remote && (i + 1 == n || remote->full(remote->self))) rc = remote->flush(remote->self, err);
    if (rc) break;
    /* this member's answers are written: its share of the stage's memory goes now, not at
    ** the end, so the answers never coexist with every member's inputs */
    free(x.calls[i]);
    x.calls[i] = NULL;
    free(x.last[i]);
    x.last[i] = NULL;
    free(mc[i].step_first);
    mc[i].step_first = NULL;
    drop_rank_pieces(r);
    c->times_last = xr->times_last;
    c->decisive = xr->decisive;
    c->expected_last = xr->expected_last;
    c->p_value = xr->p_value;
    c->wait_caused_ns = xr->wait_caused_ns;
    c->late_gpu_ns = xr->late_gpu_ns;
    c->late_host_ns = xr->late_host_ns;
    c->delay_ns = xr->delay_ns;
    jc->t_comm += r->totals.comm;
    jc->t_exposed += r->totals.exposed;
    jc->t_transfer += c->transfer_ns;
    jc->t_wait += c->wait_ns;
  }
  if (rc && remote) remote->forget(remote->self);
  for (size_t i = 0; !rc && i < n; i++) {
    ovl_rank_result *r = &job->ranks[jc->members[i]];
    for (size_t k = 0; k < r->ncoll_cross; k++) r->cross.exposed_transfer_ns += r->coll_cross[k].exposed_transfer_ns;
    jc->t_exposed_transfer += r->cross.exposed_transfer_ns;
  }
  jc->most_waited_for = SIZE_MAX;
  for (size_t i = 0; !rc && i < n; i++) {
    const ovl_rank_result *r = &job->ranks[jc->members[i]];
    if (r->cross.wait_caused_ns > 0 &&
        (jc->most_waited_for == SIZE_MAX || r->cross.wait_caused_ns > job->ranks[jc->most_waited_for].cross.wait_caused_ns))
      jc->most_waited_for = jc->members[i];
  }
  ovl_xr_result_free(&x);
  for (size_t i = 0; mc && i < n; i++) free(mc[i].step_first);
  free(mc);
  free(in);
  return rc;
}

static void drop_pieces(ovl_job *job) {
  for (size_t i = 0; i < job->nranks; i++) drop_rank_pieces(&job->ranks[i]);
}

int ovl_job_cross_rank(ovl_job *job, const ovl_remote_pieces *remote, ovl_err *err) {
  int rc = cross_rank_stage(job, remote, err);
  drop_pieces(job);
  return rc;
}
