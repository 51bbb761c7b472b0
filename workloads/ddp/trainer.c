/* The training loop: see trainer.h. */
#include "trainer.h"

#include "gpu_status.h"
#include "kernels.h"
#include "nvtx_marks.h"
#include "zero3_step.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* DDP's find_unused_parameters=True walks the autograd graph on the host after forward. */
static void host_graph_walk(double ns) {
  double end = now_s() + ns * 1e-9;
  while (now_s() < end) {
  }
}

int ovl_trainer_init(ovl_trainer *t, const ovl_ddp_options *o, const ovl_plan *plan, ovl_gpu_mlp *mlp, ovl_comm *comm,
                     cudaStream_t compute, cudaStream_t comm_stream, ovl_err *err) {
  memset(t, 0, sizeof *t);
  t->o = o;
  t->plan = plan;
  t->mlp = mlp;
  t->comm = comm;
  t->compute = compute;
  t->comm_stream = comm_stream;
  int nb = plan->nbuckets > 0 ? plan->nbuckets : 1;
  t->member_of = calloc((size_t)plan->nparams, sizeof *t->member_of);
  t->max_segment = calloc((size_t)nb, sizeof *t->max_segment);
  t->ev_ready = calloc((size_t)nb, sizeof *t->ev_ready);
  ovl_sharding sh = {o->samples, o->global_batch, 1};
  t->nevents = ovl_steps_per_epoch(&sh);
  t->ev_bwd_end = calloc((size_t)t->nevents, sizeof *t->ev_bwd_end);
  t->ev_comm_end = calloc((size_t)t->nevents, sizeof *t->ev_comm_end);
  if (!t->member_of || !t->max_segment || !t->ev_ready || !t->ev_bwd_end || !t->ev_comm_end)
    return ovl_oom(err, "trainer");
  for (int k = 0; k < plan->nbuckets; k++) {
    const ovl_bucket *b = &plan->buckets[k];
    for (int i = b->first_member; i < b->first_member + b->nmembers; i++) {
      t->member_of[plan->members[i]] = i;
      if (plan->segments[i].count > t->max_segment[k]) t->max_segment[k] = plan->segments[i].count;
    }
    CUDA_TRY(cudaEventCreateWithFlags(&t->ev_ready[k], cudaEventDisableTiming));
  }
  CUDA_TRY(cudaEventCreateWithFlags(&t->ev_comm_done, cudaEventDisableTiming));
  for (int64_t i = 0; i < t->nevents; i++) {
    CUDA_TRY(cudaEventCreate(&t->ev_bwd_end[i]));
    CUDA_TRY(cudaEventCreate(&t->ev_comm_end[i]));
  }
  if (plan->packed) {
    CUDA_TRY(cudaMalloc((void **)&t->d_buckets, (size_t)plan->bucket_floats * sizeof(float)));
    CUDA_TRY(cudaMalloc((void **)&t->d_segments, (size_t)plan->nparams * sizeof(ovl_segment)));
    CUDA_TRY(cudaMemcpy(t->d_segments, plan->segments, (size_t)plan->nparams * sizeof(ovl_segment),
                        cudaMemcpyHostToDevice));
  }
  if (plan->opt.find_unused) {
    /* Every parameter is used: the map is all ones, reduced out of place so it never grows. */
    size_t bytes = (size_t)plan->nparams * sizeof(int32_t);
    int32_t *ones = malloc(bytes);
    if (!ones) return ovl_oom(err, "used-parameter map");
    for (int p = 0; p < plan->nparams; p++) ones[p] = 1;
    cudaError_t e = cudaMalloc((void **)&t->d_used_ones, bytes);
    if (e == cudaSuccess) e = cudaMemcpy(t->d_used_ones, ones, bytes, cudaMemcpyHostToDevice);
    free(ones);
    CUDA_TRY(e);
    CUDA_TRY(cudaMalloc((void **)&t->d_used_map, bytes));
    CUDA_TRY(cudaMallocHost((void **)&t->h_used_map, bytes));
  }
  if (plan->opt.mode == OVL_MODE_ZERO3) {
    if (!comm) return ovl_fail(err, OVL_EINTERNAL, "zero3 without a communicator");
    return ovl_z3_init(t, err);
  }
  return OVL_OK;
}

int ovl_trainer_gather_params(ovl_trainer *t, ovl_err *err) { return t->z3 ? ovl_z3_gather_all(t, err) : OVL_OK; }

void ovl_trainer_free(ovl_trainer *t) {
  if (!t->plan) return;  /* never initialised */
  ovl_z3_free(t);
  for (int k = 0; t->ev_ready && k < t->plan->nbuckets; k++)
    if (t->ev_ready[k]) cudaEventDestroy(t->ev_ready[k]);
  for (int64_t i = 0; i < t->nevents; i++) {
    if (t->ev_bwd_end && t->ev_bwd_end[i]) cudaEventDestroy(t->ev_bwd_end[i]);
    if (t->ev_comm_end && t->ev_comm_end[i]) cudaEventDestroy(t->ev_comm_end[i]);
  }
  if (t->ev_comm_done) cudaEventDestroy(t->ev_comm_done);
  cudaFree(t->d_buckets);
  cudaFree(t->d_segments);
  cudaFree(t->d_used_ones);
  cudaFree(t->d_used_map);
  if (t->h_used_map) cudaFreeHost(t->h_used_map);
  free(t->member_of);
  free(t->max_segment);
  free(t->ev_ready);
  free(t->ev_bwd_end);
  free(t->ev_comm_end);
  memset(t, 0, sizeof *t);
}

static float inverse_ranks(const ovl_trainer *t) { return 1.0f / (float)t->comm->nranks; }

/* Launches bucket k's all-reduce on the communication stream once the compute stream has
** produced its gradients. */
static int launch_bucket(ovl_trainer *t, int k, ovl_err *err) {
  const ovl_plan *plan = t->plan;
  const ovl_bucket *b = &plan->buckets[k];
  CUDA_TRY(cudaEventRecord(t->ev_ready[k], t->compute));
  CUDA_TRY(cudaStreamWaitEvent(t->comm_stream, t->ev_ready[k], 0));
  float *buf = plan->packed ? t->d_buckets + b->base
                            : t->mlp->d_grads + plan->params[plan->members[b->first_member]].offset;
  ovl_nvtx_bucket_begin(k);
  int rc = ovl_comm_allreduce_f32(t->comm, buf, b->floats, err);
  ovl_nvtx_bucket_end();
  if (rc) return rc;
  if (plan->packed) {
    if (t->comm->nranks > 1) CUDA_TRY(ovl_k_scale(buf, b->floats, inverse_ranks(t), t->comm_stream));
    CUDA_TRY(ovl_k_unpack(buf, t->mlp->d_grads, t->d_segments + b->first_member, b->nmembers, t->max_segment[k],
                          t->comm_stream));
  }
  return OVL_OK;
}

int ovl_trainer_grad_arrived(ovl_trainer *t, int p, int *pos, ovl_err *err) {
  const ovl_plan *plan = t->plan;
  *pos = t->pos++;
  if (ovl_plan_ready_pos(plan, p) != *pos)
    return ovl_fail(err, OVL_EINTERNAL, "gradient %s ready at position %d, the plan expects %d", plan->params[p].name,
                    *pos, ovl_plan_ready_pos(plan, p));
  return OVL_OK;
}

/* Called by backward right after gradient p is enqueued (DDP's autograd hook moment). */
static int on_grad_ready(void *ctx, int p, ovl_err *err) {
  ovl_trainer *t = ctx;
  const ovl_plan *plan = t->plan;
  int pos, rc = ovl_trainer_grad_arrived(t, p, &pos, err);
  if (rc) return rc;
  int k = plan->bucket_of[p];
  if (plan->packed) {
    int m = t->member_of[p];
    CUDA_TRY(ovl_k_pack(t->mlp->d_grads, t->d_buckets + plan->buckets[k].base, t->d_segments + m, 1,
                        plan->segments[m].count, t->compute));
  }
  ovl_nvtx_grad_ready(k, plan->params[p].count * (int64_t)sizeof(float), plan->params[p].name);
  while (t->next_bucket < plan->nbuckets && plan->buckets[t->next_bucket].launch_pos == pos) {
    rc = launch_bucket(t, t->next_bucket++, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

/* Everything after backward: the tail of communication, then SGD. */
static int finish_step(ovl_trainer *t, ovl_err *err) {
  const ovl_plan *plan = t->plan;
  if (t->timing_slot >= 0) CUDA_TRY(cudaEventRecord(t->ev_bwd_end[t->timing_slot], t->compute));
  if (t->comm) {
    if (t->next_bucket != plan->nbuckets)
      return ovl_fail(err, OVL_EINTERNAL, "only %d of %d buckets were launched", t->next_bucket, plan->nbuckets);
    if (plan->opt.find_unused) {
      int rc = ovl_comm_allreduce_i32(t->comm, t->d_used_ones, t->d_used_map, plan->nparams, err);
      if (rc) return rc;
      CUDA_TRY(cudaMemcpyAsync(t->h_used_map, t->d_used_map, (size_t)plan->nparams * sizeof(int32_t),
                               cudaMemcpyDeviceToHost, t->comm_stream));
      CUDA_TRY(cudaStreamSynchronize(t->comm_stream));
    }
    if (!plan->packed && t->comm->nranks > 1)
      CUDA_TRY(ovl_k_scale(t->mlp->d_grads, t->mlp->nfloats, inverse_ranks(t), t->comm_stream));
    if (t->timing_slot >= 0) CUDA_TRY(cudaEventRecord(t->ev_comm_end[t->timing_slot], t->comm_stream));
    CUDA_TRY(cudaEventRecord(t->ev_comm_done, t->comm_stream));
    CUDA_TRY(cudaStreamWaitEvent(t->compute, t->ev_comm_done, 0));
  }
  return ovl_gpu_mlp_sgd(t->mlp, (float)t->o->lr, err);
}

static int run_step(ovl_trainer *t, int64_t step, ovl_err *err) {
  if (t->z3) return ovl_z3_step(t, step, err);
  t->pos = 0;
  t->next_bucket = 0;
  ovl_nvtx_step_begin();
  int rc = ovl_gpu_mlp_forward(t->mlp, step, err);
  if (!rc && t->plan->opt.find_unused) host_graph_walk(t->o->find_unused_delay_ns);
  if (!rc) rc = ovl_gpu_mlp_loss(t->mlp, step, err);
  if (!rc) rc = ovl_gpu_mlp_backward(t->mlp, on_grad_ready, t, err);
  if (!rc) rc = finish_step(t, err);
  ovl_nvtx_step_end();
  return rc;
}

int ovl_trainer_run(ovl_trainer *t, int64_t first_step, int64_t nsteps, int timed, ovl_run_stats *stats, ovl_err *err) {
  int64_t done = 0;
  while (done < nsteps) {
    int64_t chunk = nsteps - done < t->nevents ? nsteps - done : t->nevents;
    CUDA_TRY(cudaDeviceSynchronize());
    double t0 = now_s();
    for (int64_t i = 0; i < chunk; i++) {
      t->timing_slot = timed ? i : -1;
      int rc = run_step(t, first_step + done + i, err);
      if (rc) return rc;
    }
    CUDA_TRY(cudaDeviceSynchronize());
    double t1 = now_s();
    if (timed) {
      stats->wall_s += t1 - t0;
      stats->steps += chunk;
      for (int64_t i = 0; t->comm && i < chunk; i++) {
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, t->ev_bwd_end[i], t->ev_comm_end[i]));
        if (ms > 0) stats->comm_s += ms * 1e-3;
      }
    }
    done += chunk;
  }
  return OVL_OK;
}
