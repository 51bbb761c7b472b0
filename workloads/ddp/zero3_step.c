/* The --mode zero3 step: see zero3_step.h. */
#include "zero3_step.h"

#include "gpu_status.h"
#include "kernels.h"
#include "nvtx_marks.h"
#include "zero3_plan.h"

#include <stdlib.h>
#include <string.h>

struct ovl_z3_state {
  ovl_z3_shard shard[OVL_MODEL_MAX_LAYERS];
  ovl_z3_gather gathers[2 * OVL_MODEL_MAX_LAYERS];  /* the plan's all-gathers, in issue order */
  int ngathers;
  int64_t phase;                               /* counts forward and backward passes */
  int64_t gathered_in[OVL_MODEL_MAX_LAYERS];   /* the phase of each layer's latest gather */
  int nranks;
  int64_t local_floats;
  float *d_pshard, *d_gshard;  /* this rank's parameter and gradient shards, layer after layer */
  float *d_stage;              /* every layer padded: gather output, reduce-scatter input */
  cudaEvent_t ev_gathered[OVL_MODEL_MAX_LAYERS];
  cudaEvent_t ev_step_start, ev_forward_done;
};

int ovl_z3_init(ovl_trainer *t, ovl_err *err) {
  const ovl_model *m = &t->plan->model;
  struct ovl_z3_state *z = t->z3 = calloc(1, sizeof *t->z3);
  if (!z) return ovl_oom(err, "zero3 state");
  z->nranks = t->comm->nranks;
  ovl_z3_shard_layout(m, z->nranks, t->comm->rank, z->shard);
  z->local_floats = ovl_z3_local_floats(m, z->nranks);
  z->ngathers = ovl_z3_gathers(m, z->gathers);
  int64_t staged = ovl_z3_staging_floats(m, z->nranks);
  CUDA_TRY(cudaMalloc((void **)&z->d_pshard, (size_t)z->local_floats * sizeof(float)));
  CUDA_TRY(cudaMalloc((void **)&z->d_gshard, (size_t)z->local_floats * sizeof(float)));
  CUDA_TRY(cudaMalloc((void **)&z->d_stage, (size_t)staged * sizeof(float)));
  /* Padding stays zero: gathered padding is never copied out, scattered padding is zero. */
  CUDA_TRY(cudaMemset(z->d_pshard, 0, (size_t)z->local_floats * sizeof(float)));
  CUDA_TRY(cudaMemset(z->d_gshard, 0, (size_t)z->local_floats * sizeof(float)));
  CUDA_TRY(cudaMemset(z->d_stage, 0, (size_t)staged * sizeof(float)));
  for (int l = 0; l < m->nlayers; l++) {
    const ovl_z3_shard *s = &z->shard[l];
    if (s->valid > 0)
      CUDA_TRY(cudaMemcpy(z->d_pshard + s->local_offset, t->mlp->d_params + s->layer_offset + s->begin,
                          (size_t)s->valid * sizeof(float), cudaMemcpyDeviceToDevice));
    CUDA_TRY(cudaEventCreateWithFlags(&z->ev_gathered[l], cudaEventDisableTiming));
  }
  CUDA_TRY(cudaEventCreateWithFlags(&z->ev_step_start, cudaEventDisableTiming));
  CUDA_TRY(cudaEventCreateWithFlags(&z->ev_forward_done, cudaEventDisableTiming));
  return OVL_OK;
}

void ovl_z3_free(ovl_trainer *t) {
  struct ovl_z3_state *z = t->z3;
  if (!z) return;
  for (int l = 0; l < OVL_MODEL_MAX_LAYERS; l++)
    if (z->ev_gathered[l]) cudaEventDestroy(z->ev_gathered[l]);
  if (z->ev_step_start) cudaEventDestroy(z->ev_step_start);
  if (z->ev_forward_done) cudaEventDestroy(z->ev_forward_done);
  cudaFree(z->d_pshard);
  cudaFree(z->d_gshard);
  cudaFree(z->d_stage);
  free(z);
  t->z3 = NULL;
}

/* The communication stream waits for everything the compute stream has enqueued so far. */
static int comm_waits_for_compute(ovl_trainer *t, cudaEvent_t ev, ovl_err *err) {
  CUDA_TRY(cudaEventRecord(ev, t->compute));
  CUDA_TRY(cudaStreamWaitEvent(t->comm_stream, ev, 0));
  return OVL_OK;
}

/* All-gathers layer l's parameters into the full buffer, on the communication stream. */
static int gather(ovl_trainer *t, int l, ovl_err *err) {
  struct ovl_z3_state *z = t->z3;
  const ovl_z3_shard *s = &z->shard[l];
  float *stage = z->d_stage + s->padded_offset;
  ovl_nvtx_dim_begin("fsdp");
  int rc = ovl_comm_allgather_f32(t->comm, z->d_pshard + s->local_offset, stage, s->shard_floats, err);
  ovl_nvtx_dim_end();
  if (rc) return rc;
  CUDA_TRY(cudaMemcpyAsync(t->mlp->d_params + s->layer_offset, stage, (size_t)s->floats * sizeof(float),
                           cudaMemcpyDeviceToDevice, t->comm_stream));
  CUDA_TRY(cudaEventRecord(z->ev_gathered[l], t->comm_stream));
  z->gathered_in[l] = z->phase;
  return OVL_OK;
}

/* Issues the plan's gathers that go out at this moment (trigger, and the layer it names). */
static int issue_gathers(ovl_trainer *t, ovl_z3_trigger trigger, int with, ovl_err *err) {
  const struct ovl_z3_state *z = t->z3;
  for (int i = 0; i < z->ngathers; i++) {
    const ovl_z3_gather *g = &z->gathers[i];
    if (g->trigger != trigger || g->with != with) continue;
    int rc = gather(t, g->layer, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* The compute stream waits for layer l's latest gather. */
static int await_gather(ovl_trainer *t, int l, ovl_err *err) {
  if (t->z3->gathered_in[l] != t->z3->phase)  /* the schedule must gather a layer before it computes */
    return ovl_fail(err, OVL_EINTERNAL, "zero3: fc%d computes before its parameters are gathered", l);
  CUDA_TRY(cudaStreamWaitEvent(t->compute, t->z3->ev_gathered[l], 0));
  return OVL_OK;
}

/* Reduce-scatters bucket k (one layer's gradients) into this rank's gradient shard. */
static int reduce_scatter(ovl_trainer *t, int k, ovl_err *err) {
  struct ovl_z3_state *z = t->z3;
  const ovl_plan *plan = t->plan;
  int l = plan->params[plan->members[plan->buckets[k].first_member]].layer;
  const ovl_z3_shard *s = &z->shard[l];
  float *stage = z->d_stage + s->padded_offset, *out = z->d_gshard + s->local_offset;
  CUDA_TRY(cudaEventRecord(t->ev_ready[k], t->compute));
  CUDA_TRY(cudaStreamWaitEvent(t->comm_stream, t->ev_ready[k], 0));
  CUDA_TRY(cudaMemcpyAsync(stage, t->mlp->d_grads + s->layer_offset, (size_t)s->floats * sizeof(float),
                           cudaMemcpyDeviceToDevice, t->comm_stream));
  if (s->padded > s->floats)  /* the gather left parameter padding there: zero for the sum */
    CUDA_TRY(cudaMemsetAsync(stage + s->floats, 0, (size_t)(s->padded - s->floats) * sizeof(float), t->comm_stream));
  ovl_nvtx_dim_begin("fsdp");
  ovl_nvtx_bucket_begin(k);
  int rc = ovl_comm_reduce_scatter_f32(t->comm, stage, out, s->shard_floats, err);
  ovl_nvtx_bucket_end();
  ovl_nvtx_dim_end();
  if (rc) return rc;
  if (z->nranks > 1) CUDA_TRY(ovl_k_scale(out, s->shard_floats, 1.0f / (float)z->nranks, t->comm_stream));
  return OVL_OK;
}

/* Called by backward right after gradient p is enqueued. */
static int on_grad_ready(void *ctx, int p, ovl_err *err) {
  ovl_trainer *t = ctx;
  const ovl_plan *plan = t->plan;
  int pos, rc = ovl_trainer_grad_arrived(t, p, &pos, err);
  if (rc) return rc;
  ovl_nvtx_grad_ready(plan->bucket_of[p], plan->params[p].count * (int64_t)sizeof(float), plan->params[p].name);
  while (t->next_bucket < plan->nbuckets && plan->buckets[t->next_bucket].launch_pos == pos) {
    rc = reduce_scatter(t, t->next_bucket++, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* Forward and backward issue the gathers where the plan puts them (zero3_plan.h: layer l+1's
** with forward of fc(l), layer l-1's with backward of fc(l): the prefetch), and each layer's
** compute waits for its own gather. */
static int forward(ovl_trainer *t, int64_t step, ovl_err *err) {
  int L = t->plan->model.nlayers;
  t->z3->phase++;
  int rc = issue_gathers(t, OVL_Z3_STEP_START, -1, err);
  for (int l = 0; !rc && l < L; l++) {
    rc = await_gather(t, l, err);
    if (!rc) rc = issue_gathers(t, OVL_Z3_FORWARD_OF, l, err);
    if (!rc) rc = ovl_gpu_mlp_forward_layer(t->mlp, step, l, err);
  }
  return rc;
}

static int backward(ovl_trainer *t, ovl_err *err) {
  int L = t->plan->model.nlayers;
  t->z3->phase++;
  int rc = comm_waits_for_compute(t, t->z3->ev_forward_done, err);
  if (!rc) rc = issue_gathers(t, OVL_Z3_LOSS, -1, err);
  for (int l = L - 1; !rc && l >= 0; l--) {
    rc = await_gather(t, l, err);
    if (!rc) rc = issue_gathers(t, OVL_Z3_BACKWARD_OF, l, err);
    if (!rc) rc = ovl_gpu_mlp_backward_layer(t->mlp, l, on_grad_ready, t, err);
  }
  return rc;
}

/* The tail of the reduce-scatters, then SGD on this rank's shard. */
static int finish_step(ovl_trainer *t, ovl_err *err) {
  struct ovl_z3_state *z = t->z3;
  if (t->next_bucket != t->plan->nbuckets)
    return ovl_fail(err, OVL_EINTERNAL, "only %d of %d reduce-scatters were launched", t->next_bucket,
                    t->plan->nbuckets);
  if (t->timing_slot >= 0) {
    CUDA_TRY(cudaEventRecord(t->ev_bwd_end[t->timing_slot], t->compute));
    CUDA_TRY(cudaEventRecord(t->ev_comm_end[t->timing_slot], t->comm_stream));
  }
  CUDA_TRY(cudaEventRecord(t->ev_comm_done, t->comm_stream));
  CUDA_TRY(cudaStreamWaitEvent(t->compute, t->ev_comm_done, 0));
  CUDA_TRY(ovl_k_sgd(z->d_pshard, z->d_gshard, z->local_floats, (float)t->o->lr, t->compute));
  return OVL_OK;
}

int ovl_z3_step(ovl_trainer *t, int64_t step, ovl_err *err) {
  t->pos = 0;
  t->next_bucket = 0;
  ovl_nvtx_step_begin();
  /* the gathers read the shards the last SGD wrote and rewrite parameters it left in use */
  int rc = comm_waits_for_compute(t, t->z3->ev_step_start, err);
  if (!rc) rc = forward(t, step, err);
  if (!rc) rc = ovl_gpu_mlp_loss(t->mlp, step, err);
  if (!rc) rc = backward(t, err);
  if (!rc) rc = finish_step(t, err);
  ovl_nvtx_step_end();
  return rc;
}

int ovl_z3_gather_all(ovl_trainer *t, ovl_err *err) {
  int rc = comm_waits_for_compute(t, t->z3->ev_step_start, err);
  for (int l = 0; !rc && l < t->plan->model.nlayers; l++) rc = gather(t, l, err);
  if (rc) return rc;
  CUDA_TRY(cudaDeviceSynchronize());
  return OVL_OK;
}
