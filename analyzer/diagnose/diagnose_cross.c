/*
** Findings across ranks. straggler: a rank that arrived last significantly often (judged here
** from the counts and p-value the cross-rank statistics measured, job/cross_rank.h), with its
** cause. peer_wait: findings revised with what the job's other ranks tell: a collective that
** compute waits for (blocking_collective) but that spent most of its time waiting for a peer to
** arrive is not slow because the call blocks; it is slow because another rank is late. Such a
** finding becomes peer_wait, naming the rank that arrived last and the split of the time, and
** the rank's summaries are rebuilt. Thresholds in thresholds.h; docs/findings.md.
*/
#include "diagnose_internal.h"

#include "base/nccl_ops.h"
#include "base/units.h"
#include "base/vec.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (strcmp(o->name, k->name) == 0 && memcmp(o->grid, k->grid, sizeof o->grid) == 0 &&
        memcmp(o->block, k->block, sizeof o->block) == 0)
      return o;
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
    if (mine <= med * OVL_STRAGGLER_KERNEL_FACTOR) continue;
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

static int straggler_finding(ovl_job *job, size_t s, ovl_err *err) {
  ovl_rank_result *r = &job->ranks[job->cross.members[s]];
  const ovl_rank_cross *x = &r->cross;
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
  if (excess >= OVL_STRAGGLER_CAUSE_SHARE * (double)x->late_gpu_ns) {
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
  } else if (x->late_host_ns != OVL_NONE &&
             (double)x->late_host_ns >= OVL_STRAGGLER_CAUSE_SHARE * (double)x->late_gpu_ns) {
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
/* peer_wait                                                                           */
/* ---------------------------------------------------------------------------------- */

/* The rank that arrived last at the same call (comm, seq) of the job, or OVL_NONE. */
static int64_t last_arriver(const ovl_job *job, const ovl_coll_result *c) {
  for (size_t m = 0; m < job->cross.nmembers; m++) {
    const ovl_rank_result *r = &job->ranks[job->cross.members[m]];
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].ncolls; i++) {
        const ovl_coll_result *o = &r->steps[s].colls[i];
        if (o->comm == c->comm && ovl_coll_seq(o) == ovl_coll_seq(c) && o->cross && o->cross->arrived_last)
          return r->rank;
      }
  }
  return OVL_NONE;
}

/* The member of the job with rank number `rank`, or NULL. */
static const ovl_rank_result *member_of(const ovl_job *job, int64_t rank) {
  for (size_t m = 0; rank != OVL_NONE && m < job->cross.nmembers; m++)
    if (job->ranks[job->cross.members[m]].rank == rank) return &job->ranks[job->cross.members[m]];
  return NULL;
}

/* The collective a per-collective blocking finding points at (its GPU start), or NULL. */
static const ovl_coll_result *pointed_at(const ovl_step_result *st, const ovl_finding *f) {
  assert(f->message);  /* blocking_collective findings keep their message */
  if (strstr(f->message, "collectives block compute in this step")) return NULL;  /* a step summary */
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].gpu_start == f->at_ns) return &st->colls[i];
  return NULL;
}

static int rewrite(const ovl_job *job, const ovl_step_result *st, const ovl_coll_result *c, ovl_finding *f,
                   ovl_err *err) {
  char t1[32], t2[32], t3[32], t4[32], t5[32], size[32];
  const ovl_coll_cross *x = c->cross;  /* the caller checked it was matched */
  assert(x);
  int64_t last = last_arriver(job, c);
  int64_t exposed_wait = ovl_coll_exposed(c) - x->exposed_transfer_ns;
  if (c->bytes != OVL_NONE) ovl_bytes_str((double)c->bytes, size);
  else snprintf(size, sizeof size, "unknown size");
  ovl_msg m = {0};
  ovl_msg_printf(&m, "compute waits for %s %s of %s at %s into the step (stream %lld, %s exposed), but the "
                     "collective spent %s of its %s waiting for ",
                 strchr("AEIOU", ovl_op_name(c->op)[0]) ? "an" : "a", ovl_op_name(c->op), size,
                 ovl_ns_str((double)(c->gpu_start - st->start), t1), (long long)ovl_coll_stream(c),
                 ovl_ns_str((double)ovl_coll_exposed(c), t2), ovl_ns_str((double)x->wait_ns, t3),
                 ovl_ns_str((double)(ovl_coll_gpu_end(c) - c->gpu_start), t4));
  const ovl_rank_result *late = member_of(job, last);
  if (late && late->cross.straggler)
    ovl_msg_printf(&m, "rank %lld, the last to arrive and the job's straggler,", (long long)last);
  else if (late)
    ovl_msg_printf(&m, "rank %lld, the last to arrive (over the job, last at %ld of the %ld collectives where arrivals "
                       "differed: not a straggler),", (long long)last, late->cross.times_last, late->cross.decisive);
  else ovl_msg_printf(&m, "the last rank to arrive");
  ovl_msg_printf(&m, " and %s transferring (%s of it exposed). The exposed time is waiting for a peer, not the call "
                     "blocking: making it asynchronous would only move the wait. Make the late rank arrive earlier "
                     "(%s); this rank itself can recover only the exposed transfer.",
                 ovl_ns_str((double)ovl_coll_transfer_ns(c), t3), ovl_ns_str((double)x->exposed_transfer_ns, t5),
                 late && late->cross.straggler ? "its straggler finding says why"
                                               : "look at what it does before this call: no straggler finding covers it");
  if (m.oom || !m.s) {
    ovl_msg_free(&m);
    return ovl_oom(err, "findings");
  }
  free(f->message);
  f->message = m.s;
  snprintf(f->code, sizeof f->code, "peer_wait");
  f->recoverable_ns = exposed_wait > 0 ? exposed_wait : 0;
  ovl_finding_rests_on(f, OVL_CONF_UNSET, NULL);  /* judged as a peer_wait (evidence.c) */
  return OVL_OK;
}

static int peer_waits(ovl_job *job, ovl_err *err) {
  for (size_t mi = 0; mi < job->cross.nmembers; mi++) {
    ovl_rank_result *r = &job->ranks[job->cross.members[mi]];
    int changed = 0;
    for (size_t s = 0; s < r->nsteps; s++) {
      ovl_step_result *st = &r->steps[s];
      for (size_t i = 0; i < st->nfindings; i++) {
        ovl_finding *f = &st->findings[i];
        if (strcmp(f->code, "blocking_collective") != 0) continue;
        const ovl_coll_result *c = pointed_at(st, f);
        if (!c || !c->cross || c->cross->wait_ns == OVL_NONE || ovl_coll_gpu_end(c) <= c->gpu_start) continue;
        if ((double)c->cross->wait_ns < OVL_PEER_WAIT_SHARE * (double)(ovl_coll_gpu_end(c) - c->gpu_start)) continue;
        int rc = rewrite(job, st, c, f, err);
        if (rc) return rc;
        changed = 1;
      }
    }
    if (changed) {
      int rc = ovl_diagnose_resummarise(r, err);
      if (rc) return rc;
    }
  }
  return OVL_OK;
}

int ovl_is_straggler(long times_last, double expected_last, double p_value, size_t nranks) {
  return times_last >= OVL_STRAGGLER_MIN_LAST && (double)times_last >= OVL_STRAGGLER_OVER_CHANCE * expected_last &&
         p_value < OVL_STRAGGLER_P / (double)(nranks ? nranks : 1);
}

int ovl_diagnose_cross(ovl_job *job, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; i < job->cross.nmembers; i++) {  /* first: peer_wait names the job's straggler */
    ovl_rank_cross *x = &job->ranks[job->cross.members[i]].cross;
    x->straggler = ovl_is_straggler(x->times_last, x->expected_last, x->p_value, job->cross.nmembers);
  }
  for (size_t i = 0; !rc && i < job->cross.nmembers; i++)
    if (job->ranks[job->cross.members[i]].cross.straggler) rc = straggler_finding(job, i, err);
  return rc ? rc : peer_waits(job, err);
}
