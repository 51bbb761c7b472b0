/*
** Findings revised with what the job's other ranks tell: a collective that compute waits for
** (blocking_collective) but that spent most of its time waiting for a peer to arrive is not
** slow because the call blocks; it is slow because another rank is late. Such a finding
** becomes peer_wait, naming the rank that arrived last and the split of the time, and the
** rank's summaries are rebuilt. Thresholds in diagnose.h; docs/findings.md.
*/
#include "diagnose_internal.h"
#include "job.h"

#include "base/nccl_ops.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank that arrived last at the same call (comm, seq) of the job, or OVL_NONE. */
static int64_t last_arriver(const ovl_job *job, const ovl_coll_result *c) {
  for (size_t m = 0; m < job->cross.nmembers; m++) {
    const ovl_rank_result *r = &job->ranks[job->cross.members[m]];
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t i = 0; i < r->steps[s].ncolls; i++) {
        const ovl_coll_result *o = &r->steps[s].colls[i];
        if (o->comm == c->comm && o->seq == c->seq && o->cross && o->cross->arrived_last) return r->rank;
      }
  }
  return OVL_NONE;
}

/* The collective a per-collective blocking finding points at (its GPU start), or NULL. */
static const ovl_coll_result *pointed_at(const ovl_step_result *st, const ovl_finding *f) {
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
  int64_t exposed_wait = c->exposed - x->exposed_transfer_ns;
  if (c->bytes != OVL_NONE) ovl_bytes_str((double)c->bytes, size);
  else snprintf(size, sizeof size, "unknown size");
  ovl_msg m = {0};
  ovl_msg_printf(&m, "compute waits for %s %s of %s at %s into the step (stream %lld, %s exposed), but the "
                     "collective spent %s of its %s waiting for ",
                 strchr("AEIOU", ovl_op_name(c->op)[0]) ? "an" : "a", ovl_op_name(c->op), size,
                 ovl_ns_str((double)(c->gpu_start - st->start), t1), (long long)c->stream,
                 ovl_ns_str((double)c->exposed, t2), ovl_ns_str((double)x->wait_ns, t3),
                 ovl_ns_str((double)(c->gpu_end - c->gpu_start), t4));
  if (last != OVL_NONE) ovl_msg_printf(&m, "rank %lld, the last to arrive,", (long long)last);
  else ovl_msg_printf(&m, "the last rank to arrive");
  ovl_msg_printf(&m, " and %s transferring (%s of it exposed). The exposed time is waiting for a peer, not the call "
                     "blocking: making it asynchronous would only move the wait. Make the late rank arrive earlier "
                     "(the job's straggler analysis says which rank is late and why); this rank itself can recover "
                     "only the exposed transfer.",
                 ovl_ns_str((double)x->transfer_ns, t3), ovl_ns_str((double)x->exposed_transfer_ns, t5));
  if (m.oom || !m.s) {
    ovl_msg_free(&m);
    return ovl_oom(err, "findings");
  }
  free(f->message);
  f->message = m.s;
  snprintf(f->code, sizeof f->code, "peer_wait");
  f->recoverable_ns = exposed_wait > 0 ? exposed_wait : 0;
  return OVL_OK;
}

int ovl_diagnose_peer_waits(struct ovl_job *job, ovl_err *err) {
  for (size_t mi = 0; mi < job->cross.nmembers; mi++) {
    ovl_rank_result *r = &job->ranks[job->cross.members[mi]];
    int changed = 0;
    for (size_t s = 0; s < r->nsteps; s++) {
      ovl_step_result *st = &r->steps[s];
      for (size_t i = 0; i < st->nfindings; i++) {
        ovl_finding *f = &st->findings[i];
        if (strcmp(f->code, "blocking_collective") != 0) continue;
        const ovl_coll_result *c = pointed_at(st, f);
        if (!c || !c->cross || c->cross->wait_ns == OVL_NONE || c->gpu_end <= c->gpu_start) continue;
        if ((double)c->cross->wait_ns < OVL_PEER_WAIT_SHARE * (double)(c->gpu_end - c->gpu_start)) continue;
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
