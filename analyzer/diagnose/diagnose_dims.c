/*
** The findings of the parallelism dimensions (docs/findings.md "Beyond DDP"): late_prefetch,
** exposed_reduce_scatter, tp_blocking_share, pipeline_bubble (rank findings), alltoall_imbalance
** (job finding). They read what job/job_dims.c put into the results: each collective's
** dimension and role, the per-dimension totals and the pipeline stages.
*/
#include "diagnose_internal.h"
#include "job/job_dims.h"

#include "base/nccl_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ORDINALS 4096

static int64_t steps_span(const ovl_rank_result *r) {
  int64_t t = 0;
  for (size_t s = 0; s < r->nsteps; s++) t += r->steps[s].end - r->steps[s].start;
  return t;
}

static int add_rank_finding(ovl_rank_result *r, const char *code, int64_t recoverable, long steps_affected,
                            const char *msg, ovl_err *err) {
  if (ovl_add_finding(&r->findings, &r->nfindings, code, -1, recoverable, msg)) return ovl_oom(err, "findings");
  r->findings[r->nfindings - 1].steps_affected = steps_affected;
  return OVL_OK;
}

/* late_prefetch and exposed_reduce_scatter: exposed data-parallel collectives of one role.
** The worst one is named by its ordinal among the step's collectives of that role (for
** FSDP's per-layer all-gathers: the layer, in forward order, then again in backward). */
static int exposed_role(ovl_rank_result *r, ovl_prole role, const char *code, ovl_err *err) {
  int64_t by_ordinal[MAX_ORDINALS] = {0};
  int64_t exposed = 0, comm = 0, bytes = 0;
  long affected = 0, ncolls = 0, per_step = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    const ovl_step_result *st = &r->steps[s];
    int64_t step_exposed = 0;
    long k = 0;
    for (size_t i = 0; i < st->ncolls; i++) {
      const ovl_coll_result *c = &st->colls[i];
      if (c->pdim.dim != OVL_DIM_DP || c->pdim.role != role || c->gpu_start == OVL_NONE) continue;
      step_exposed += ovl_coll_exposed(c);
      comm += ovl_coll_gpu_end(c) - c->gpu_start;
      if (c->bytes != OVL_NONE) bytes += c->bytes;
      if (k < MAX_ORDINALS) by_ordinal[k] += ovl_coll_exposed(c);
      k++;
      ncolls++;
    }
    if (k > per_step) per_step = k;
    exposed += step_exposed;
    affected += step_exposed > 0;
  }
  int64_t span = steps_span(r);
  if (ncolls == 0 || exposed <= 0 || (double)exposed < OVL_DIM_MIN_EXPOSED_SHARE * (double)comm ||
      (double)exposed < OVL_DIM_MIN_STEP_SHARE * (double)span)
    return OVL_OK;
  long worst = 0;
  for (long k = 1; k < per_step && k < MAX_ORDINALS; k++)
    if (by_ordinal[k] > by_ordinal[worst]) worst = k;
  double steps = r->nsteps ? (double)r->nsteps : 1.0;
  char msg[1024];
  if (role == OVL_PROLE_PARAM_GATHER && per_step == 1) {  /* ZeRO-1/2: one gather of the updated shards */
    snprintf(msg, sizeof msg,
             "the parameter all-gather after the optimizer step (ZeRO-1/2: every rank gathers the updated shards) "
             "is exposed: %.3f ms of %.3f ms per step (%.0f%%, %.1f MB). Nothing computes while it runs: overlap it "
             "with the next forward (gather per layer as ZeRO-3/FSDP do, with prefetch), or split it into buckets "
             "(DeepSpeed allgather_bucket_size, overlap_comm=True)",
             (double)exposed / steps / 1e6, (double)comm / steps / 1e6, 100.0 * (double)exposed / (double)comm,
             (double)bytes / steps / 1e6);
  } else if (role == OVL_PROLE_PARAM_GATHER) {
    long layers = per_step;
    const char *phase = "";
    if (per_step % 2 == 0 && per_step >= 2) {  /* ZeRO-3/FSDP gather again for backward */
      layers = per_step / 2;
      phase = worst < layers ? " (forward)" : " (backward)";
    }
    long layer = worst < layers ? worst : per_step - 1 - worst;
    snprintf(msg, sizeof msg,
             "parameter all-gathers were not done before the compute that needs them: %.3f ms of %.3f ms exposed "
             "per step (%.0f%%, %ld all-gathers per step); the worst is all-gather #%ld of the step, layer %ld%s, "
             "%.3f ms exposed per step. Prefetch earlier: FSDP2 set_modules_to_forward_prefetch / "
             "set_modules_to_backward_prefetch (or FSDP1 forward_prefetch=True, "
             "backward_prefetch=BACKWARD_PRE), and raise limit_all_gathers' in-flight limit so the next layer's "
             "gather is issued while this layer computes",
             (double)exposed / steps / 1e6, (double)comm / steps / 1e6, 100.0 * (double)exposed / (double)comm,
             per_step, worst, layer, phase, (double)by_ordinal[worst] / steps / 1e6);
  } else {
    snprintf(msg, sizeof msg,
             "gradient reduce-scatters are exposed: %.3f ms of %.3f ms per step (%.0f%%, %ld per step, %.1f MB); "
             "the worst is reduce-scatter #%ld of the step (%.3f ms exposed per step). Issue them as each layer's "
             "gradients are ready (FSDP reshard_after_forward / reduce_dtype bf16 halves the bytes; ZeRO-2 "
             "overlap_comm=True with a smaller reduce_bucket_size)",
             (double)exposed / steps / 1e6, (double)comm / steps / 1e6, 100.0 * (double)exposed / (double)comm,
             per_step, (double)bytes / steps / 1e6, worst, (double)by_ordinal[worst] / steps / 1e6);
  }
  return add_rank_finding(r, code, exposed, affected, msg, err);
}

static int tp_blocking(const ovl_job *job, ovl_rank_result *r, ovl_err *err) {
  const ovl_dim_totals *t = &r->dims[OVL_DIM_TP];
  int64_t span = steps_span(r);
  if (t->comm <= 0 || span <= 0 || (double)t->comm < OVL_TP_MIN_SHARE * (double)span) return OVL_OK;
  long ag_rs = 0, groups = 0;
  int64_t comm_id = OVL_NONE, nranks = OVL_NONE;
  for (size_t g = 0; g < job->npgroups; g++) {
    const ovl_pgroup *pg = &job->pgroups[g];
    if (pg->dim != OVL_DIM_TP) continue;
    for (size_t i = 0; i < pg->nmembers; i++)
      if (pg->members[i] == r->rank) groups++, comm_id = pg->comm, nranks = pg->nranks;
    ag_rs += pg->ops[OVL_OP_ALLGATHER] + pg->ops[OVL_OP_REDUCESCATTER];
  }
  double eff = ovl_dim_efficiency(t);
  double steps = r->nsteps ? (double)r->nsteps : 1.0;
  char msg[1024];
  snprintf(msg, sizeof msg,
           "tensor-parallel communication is %.1f%% of step time (%.3f ms per step, %.3f ms of it exposed): it "
           "sits between matmuls and blocks them. Sequence parallel: %s; overlap with compute (async TP): %s "
           "(%.0f%% hidden). Keep TP inside a node (NVLink), lower the TP degree, or enable async TP / "
           "communication-computation overlap (Megatron --tp-comm-overlap, torch._inductor async TP)",
           100.0 * (double)t->comm / (double)span, (double)t->comm / steps / 1e6, (double)t->exposed / steps / 1e6, ag_rs ? "present (all-gather/reduce-scatter)" : "absent",
           isnan(eff) || eff < OVL_TP_ASYNC_MIN_HIDDEN ? "absent" : "present", isnan(eff) ? 0.0 : 100.0 * eff);
  if (groups) {  /* name the group */
    char tail[96];
    snprintf(tail, sizeof tail, " [TP group comm %lld, %lld ranks]", (long long)comm_id, (long long)nranks);
    strncat(msg, tail, sizeof msg - strlen(msg) - 1);
  }
  return add_rank_finding(r, "tp_blocking_share", t->exposed, (long)r->nsteps, msg, err);
}

static int pipeline_bubble(const ovl_job *job, ovl_rank_result *r, ovl_err *err) {
  const ovl_pipeline_stats *p = &r->pipeline;
  /* no micro-batch seen (no send/recv in its steps), or one stage: no pipeline to compare with */
  if (p->stage < 0 || p->stages < 2 || !(p->microbatches > 0) || !isfinite(p->model_bubble) || isnan(p->bubble) ||
      p->bubble < OVL_PP_MIN_BUBBLE)
    return OVL_OK;
  /* the bottleneck: the stage with the most compute per step; the others wait for it */
  const ovl_rank_result *slow = r;
  for (size_t i = 0; i < job->nranks; i++) {
    const ovl_rank_result *o = &job->ranks[i];
    if (o->pipeline.stage >= 0 && o->pipeline.compute_ns > slow->pipeline.compute_ns) slow = o;
  }
  double mean_compute = 0;
  long nstages = 0;
  for (size_t i = 0; i < job->nranks; i++)
    if (job->ranks[i].pipeline.stage >= 0) mean_compute += (double)job->ranks[i].pipeline.compute_ns, nstages++;
  mean_compute /= nstages ? (double)nstages : 1.0;
  double pp = p->stages, m = p->microbatches;
  double model2 = (pp - 1) / (2 * m + pp - 1);
  double rec = ((double)p->span_ns) * (p->bubble - model2);
  if (rec < 0) rec = 0;
  char msg[1024];
  snprintf(msg, sizeof msg,
           "pipeline stage %d of %d is idle %.1f%% of the step (%.3f ms of %.3f ms); the (p-1)/(m+p-1) model "
           "with p=%d stages and m=%.0f micro-batches gives %.1f%%%s. The bottleneck is stage %d (rank %lld, "
           "%.3f ms of compute per step, %.0f%% above the mean). Use more micro-batches (m=%.0f gives %.1f%%), "
           "an interleaved (virtual-stage) schedule, or rebalance layers away from stage %d",
           p->stage, p->stages, 100.0 * p->bubble, (double)(p->span_ns - p->compute_ns) / 1e6,
           (double)p->span_ns / 1e6, p->stages, m, 100.0 * p->model_bubble,
           p->bubble > p->model_bubble + 0.01 ? " (measured above the model: communication or imbalance adds)" : "",
           slow->pipeline.stage, (long long)slow->rank, (double)slow->pipeline.compute_ns / 1e6,
           mean_compute > 0 ? 100.0 * ((double)slow->pipeline.compute_ns / mean_compute - 1.0) : 0.0, 2 * m,
           100.0 * model2, slow->pipeline.stage);
  return add_rank_finding(r, "pipeline_bubble", (int64_t)llround(rec * (double)r->nsteps), (long)r->nsteps, msg, err);
}

/* alltoall_imbalance: across the members of each expert-parallel group, all-to-all time per
** step differs: the ranks with less expert work wait inside the all-to-all for the busiest. */
static int alltoall_imbalance(ovl_job *job, ovl_err *err) {
  for (size_t g = 0; g < job->npgroups; g++) {
    const ovl_pgroup *pg = &job->pgroups[g];
    if (pg->dim != OVL_DIM_EP) continue;
    double lo = INFINITY, hi = -INFINITY, sum = 0, exposed = 0, span = 0;
    int64_t lo_rank = OVL_NONE, hi_rank = OVL_NONE;
    long n = 0;
    for (size_t i = 0; i < job->nranks; i++) {
      const ovl_rank_result *r = &job->ranks[i];
      int member = 0;
      for (size_t k = 0; k < pg->nmembers; k++) member |= pg->members[k] == r->rank;
      if (!member || r->nsteps == 0) continue;
      double t = (double)r->dims[OVL_DIM_EP].comm / (double)r->nsteps;
      if (t < lo) lo = t, lo_rank = r->rank;
      if (t > hi) hi = t, hi_rank = r->rank;
      sum += t;
      exposed += (double)r->dims[OVL_DIM_EP].exposed / (double)r->nsteps;
      span += (double)steps_span(r) / (double)r->nsteps;
      n++;
    }
    if (n < 2) continue;
    double mean = sum / (double)n;
    if (!(mean > 0) || (hi - lo) < OVL_A2A_MIN_IMBALANCE * mean) continue;
    char msg[1024];
    snprintf(msg, sizeof msg,
             "all-to-all time differs across the %ld ranks of expert-parallel group comm %lld: %.3f ms per step on "
             "rank %lld, %.3f ms on rank %lld (mean %.3f ms, imbalance (max-min)/mean %.0f%%). Rank %lld spends the "
             "least time in all-to-all: it has the most expert work (a hot expert) and the others wait for it "
             "inside dispatch/combine. All-to-all is %.1f%% exposed time of the step. Balance tokens across "
             "experts: raise the load-balancing (aux) loss coefficient, set a capacity factor, or re-place experts",
             n, (long long)pg->comm, hi / 1e6, (long long)hi_rank, lo / 1e6, (long long)lo_rank, mean / 1e6,
             100.0 * (hi - lo) / mean, (long long)lo_rank, span > 0 ? 100.0 * exposed / span : 0.0);
    long steps = 0;
    for (size_t i = 0; i < job->nranks; i++)
      if (job->ranks[i].rank == hi_rank) steps = (long)job->ranks[i].nsteps;
    if (ovl_add_finding(&job->findings, &job->nfindings, "alltoall_imbalance", -1,
                        (int64_t)llround((hi - lo) * (double)steps), msg))
      return ovl_oom(err, "findings");
    job->findings[job->nfindings - 1].steps_affected = steps;
  }
  return OVL_OK;
}

/* The collective a step's blocking_collective finding points at when a dimension finding
** covers it: one that waits by design of its dimension (TP, PP, EP: on the critical path) or
** that late_prefetch / exposed_reduce_scatter describe (ZeRO/FSDP gathers and reduce-scatters).
** NULL otherwise. */
static const ovl_coll_result *superseded(const ovl_step_result *st, const ovl_finding *f) {
  if (strcmp(f->code, "blocking_collective") != 0) return NULL;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->gpu_start != f->at_ns) continue;
    int covered = c->pdim.dim == OVL_DIM_TP || c->pdim.dim == OVL_DIM_PP || c->pdim.dim == OVL_DIM_EP ||
                  c->pdim.role == OVL_PROLE_PARAM_GATHER || c->pdim.role == OVL_PROLE_GRAD_REDUCE_SCATTER ||
                  c->op == OVL_OP_ALLTOALL;  /* an exchange the next compute needs, ep or not */
    return covered ? c : NULL;
  }
  return NULL;
}

/* A superseded step finding becomes exposed_communication naming the collective's dimension:
** the step keeps a finding saying what is exposed (docs/findings.md), its time counted once,
** in the rank's dimension findings. */
static int recode(const ovl_step_result *st, const ovl_coll_result *c, ovl_finding *f, ovl_err *err) {
  char msg[1024], size[32];
  if (c->bytes != OVL_NONE) snprintf(size, sizeof size, "%.1f MB", (double)c->bytes / 1e6);
  else snprintf(size, sizeof size, "unknown size");
  if (c->pdim.dim == OVL_DIM_UNKNOWN)  /* an all-to-all without MoE evidence */
    snprintf(msg, sizeof msg,
             "%s of %s on stream %lld at %.3f ms into the step is exposed for %.3f ms: an all-to-all exchange whose "
             "result the next compute needs (a recommender's embeddings, or a MoE's tokens: no kernel of the job "
             "says which), on the critical path by design rather than a call that should be made asynchronous",
             ovl_op_name(c->op), size, (long long)ovl_coll_stream(c), (double)(c->gpu_start - st->start) / 1e6,
             (double)ovl_coll_exposed(c) / 1e6);
  else
    snprintf(msg, sizeof msg,
             "%s of %s on stream %lld at %.3f ms into the step is exposed for %.3f ms: it is %s communication (%s), "
             "on the critical path by design of that parallelism rather than a call that should be made "
             "asynchronous; the rank's dimension findings (late_prefetch, exposed_reduce_scatter, "
             "tp_blocking_share, pipeline_bubble, alltoall_imbalance) count its time and say what to change",
             ovl_op_name(c->op), size, (long long)ovl_coll_stream(c), (double)(c->gpu_start - st->start) / 1e6,
             (double)ovl_coll_exposed(c) / 1e6, ovl_pdim_name((ovl_pdim)c->pdim.dim),
             ovl_prole_name((ovl_prole)c->pdim.role));
  char *m = strdup(msg);
  if (!m) return ovl_oom(err, "findings");
  free(f->message);
  f->message = m;
  f->text = NULL;  /* a blocking_collective finding had none; it is the message now */
  snprintf(f->code, sizeof f->code, "exposed_communication");
  f->recoverable_ns = 0;
  ovl_finding_rests_on(f, OVL_CONF_UNSET, NULL);  /* judged as what it now is (evidence.c) */
  return OVL_OK;
}

/* Recodes superseded blocking_collective findings of the steps and takes their time out of
** the rank's summary of that code (removed when nothing is left). */
static int drop_superseded(ovl_rank_result *r, ovl_err *err) {
  int64_t dropped = 0;
  long kept_steps = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    ovl_step_result *st = &r->steps[s];
    int kept = 0;
    for (size_t i = 0; i < st->nfindings; i++) {
      const ovl_coll_result *c = superseded(st, &st->findings[i]);
      if (c) {
        dropped += st->findings[i].recoverable_ns;
        int rc = recode(st, c, &st->findings[i], err);
        if (rc) return rc;
        continue;
      }
      kept |= strcmp(st->findings[i].code, "blocking_collective") == 0;
    }
    kept_steps += kept;
  }
  if (dropped == 0) return OVL_OK;
  size_t k = 0;
  for (size_t i = 0; i < r->nfindings; i++) {
    ovl_finding *f = &r->findings[i];
    if (strcmp(f->code, "blocking_collective") == 0) {
      if (kept_steps == 0) {
        free(f->message);
        continue;
      }
      f->recoverable_ns = f->recoverable_ns > dropped ? f->recoverable_ns - dropped : 0;
      f->steps_affected = kept_steps;
    }
    r->findings[k++] = *f;
  }
  r->nfindings = k;
  return OVL_OK;
}

int ovl_diagnose_dims(ovl_job *job, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    ovl_rank_result *r = &job->ranks[i];
    rc = drop_superseded(r, err);
    if (!rc) rc = exposed_role(r, OVL_PROLE_PARAM_GATHER, "late_prefetch", err);
    if (!rc) rc = exposed_role(r, OVL_PROLE_GRAD_REDUCE_SCATTER, "exposed_reduce_scatter", err);
    if (!rc) rc = tp_blocking(job, r, err);
    if (!rc) rc = pipeline_bubble(job, r, err);
  }
  if (!rc) rc = alltoall_imbalance(job, err);
  return rc;
}
