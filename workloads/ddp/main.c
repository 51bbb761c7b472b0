/*
** ovl-ddp: the reference data-parallel trainer (docs/workloads.md).
**
** Order of work: options (no CUDA) -> --plan exits here -> launcher -> device -> NCCL ->
** data and weights -> warm-up and timed steps -> RESULTS_JSON (rank 0) -> --verify (rank 0).
** Exit status: 0 success; 1 usage or set-up error; 2 CUDA/NCCL failure; 3 --verify failed.
*/
#include "bucket_plan.h"
#include "comm.h"
#include "data.h"
#include "ddp_options.h"
#include "gpu_mlp.h"
#include "gpu_status.h"
#include "launch_env.h"
#include "nvtx_marks.h"
#include "plan_json.h"
#include "ref_trainer.h"
#include "results_json.h"
#include "trainer.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_VERIFY_FAILED = 3 };

static int fail(const ovl_err *err) {
  fprintf(stderr, "ovl-ddp: %s\n", err->msg[0] ? err->msg : "internal error");
  return err->code ? err->code : OVL_EINTERNAL;
}

static int select_device(const ovl_launch *l, ovl_err *err) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return ovl_fail(err, OVL_EUSER, "no CUDA device available (%s)",
                    e != cudaSuccess ? cudaGetErrorString(e) : "none found");
  if (l->local_rank >= count)
    return ovl_fail(err, OVL_EUSER, "local rank %d needs GPU %d but this node has %d", l->local_rank, l->local_rank,
                    count);
  CUDA_TRY(cudaSetDevice(l->local_rank));
  return OVL_OK;
}

/* Float64 reference of the same run, compared with the GPU's final weights. */
static int verify(const ovl_ddp_options *o, const ovl_dataset *data, const ovl_sharding *sh, const float *init,
                  const ovl_gpu_mlp *mlp, int64_t steps, ovl_ddp_result *res, ovl_err *err) {
  int64_t n = mlp->nfloats;
  float *gpu = malloc((size_t)n * sizeof(float));
  double *ref = malloc((size_t)n * sizeof(double));
  if (!gpu || !ref) {
    free(gpu);
    free(ref);
    return ovl_oom(err, "verify");
  }
  cudaError_t e = cudaMemcpy(gpu, mlp->d_params, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess && o->save_weights) {
    FILE *f = fopen(o->save_weights, "wb");
    int ok = f && fwrite(gpu, sizeof(float), (size_t)n, f) == (size_t)n;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "ovl-ddp: %s: cannot write the weights; verifying anyway\n", o->save_weights);
  }
  for (int64_t i = 0; i < n; i++) ref[i] = init[i];
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  /* Emulated runs are rank 0 of an emulated job: only its slice of each batch is trained on. */
  ovl_ref_run run = {&o->model, data, *sh, o->emulated ? 1 : sh->nranks, 0, steps, o->lr, cpus > 0 ? (int)cpus : 1, 1};
  double loss = 0;
  int64_t undecided = 0;
  double *allowance = calloc((size_t)n, sizeof(double));
  int rc = !allowance        ? ovl_oom(err, "verify")
           : e == cudaSuccess ? ovl_ref_train_bounded(&run, ref, &loss, allowance, &undecided, err)
                              : ovl_fail(err, OVL_EINTERNAL, "verify: copying the weights: %s", cudaGetErrorString(e));
  if (!rc) {
    ovl_verify_result vr;
    ovl_verify_compare(&o->model, init, gpu, ref, steps > INT32_MAX ? INT32_MAX : (int)steps, allowance, &vr);
    res->verified = 1;
    res->verify_max_rel_err = vr.max_rel_err;
    res->verify_passed = vr.max_rel_err <= o->verify_tol;
    ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
    ovl_model_params(&o->model, ps);
    fprintf(stderr,
            "ovl-ddp: verify: %s: largest error %.3g of the weight change (in %s), tolerance %.3g; "
            "%lld ReLU input(s) within float32 rounding of zero (forgiven: either sign)\n",
            res->verify_passed ? "passed" : "FAILED", vr.max_rel_err, ps[vr.worst_param].name, o->verify_tol,
            (long long)undecided);
    for (int p = 0; !res->verify_passed && p < ovl_model_nparams(&o->model); p++)
      if (vr.param_err[p] > o->verify_tol)
        fprintf(stderr, "ovl-ddp: verify:   %s: error %.3g\n", ps[p].name, vr.param_err[p]);
  }
  free(gpu);
  free(ref);
  free(allowance);
  return rc;
}

typedef struct job {
  ovl_ddp_options o;
  ovl_launch launch;
  ovl_plan plan;
  ovl_dataset data;
  ovl_sharding sh;
  float *init;
  cudaStream_t compute, comm_stream;
  ovl_comm comm;
  int comm_up;
  ovl_gpu_mlp mlp;
  ovl_trainer trainer;
  ovl_ddp_result res;
} job;

static int train(job *j, ovl_err *err) {
  ovl_ddp_options *o = &j->o;
  int rc = ovl_plan_build(&o->model, &o->plan, &j->plan, err);
  if (rc) return rc;
  if ((rc = select_device(&j->launch, err))) return rc;
  CUDA_TRY(cudaStreamCreateWithFlags(&j->compute, cudaStreamNonBlocking));
  CUDA_TRY(cudaStreamCreateWithFlags(&j->comm_stream, cudaStreamNonBlocking));
  if (o->plan.mode != OVL_MODE_SINGLE) {
    if ((rc = ovl_comm_init(&j->comm, o, &j->launch, j->comm_stream, err))) return rc;
    j->comm_up = 1;
  }

  j->sh = (ovl_sharding){o->samples, o->global_batch, ovl_ddp_data_ranks(o, j->launch.world_size)};
  int64_t nfloats = ovl_model_param_floats(&o->model);
  j->init = malloc((size_t)nfloats * sizeof(float));
  if (!j->init) return ovl_oom(err, "initial weights");
  ovl_init_params(&o->model, o->seed, j->init);
  if ((rc = ovl_dataset_init(&j->data, o->seed, o->samples, o->model.width[0], o->model.width[o->model.nlayers], err)))
    return rc;
  /* An emulated job is its rank 0; a real one trains this rank's slice. */
  int shard = o->emulated ? 0 : j->launch.rank;
  if ((rc = ovl_gpu_mlp_init(&j->mlp, &o->model, j->init, &j->data, &j->sh, shard, j->compute, err))) return rc;
  if ((rc = ovl_trainer_init(&j->trainer, o, &j->plan, &j->mlp, j->comm_up ? &j->comm : NULL, j->compute,
                             j->comm_stream, err)))
    return rc;
  if (j->launch.rank == 0)
    fprintf(stderr, "ovl-ddp: %s %s, %d rank(s) (%s), %d bucket(s), NCCL id: %s\n", o->model.name,
            ovl_mode_names[o->plan.mode], j->launch.world_size, ovl_launcher_name(j->launch.launcher),
            j->plan.nbuckets, j->comm_up ? j->comm.id_source : "no communication");

  ovl_run_stats warm = {0}, timed = {0};
  int64_t spe = ovl_steps_per_epoch(&j->sh);
  int64_t steps = o->steps > 0 ? o->steps : (int64_t)o->epochs * spe;
  if ((rc = ovl_trainer_run(&j->trainer, 0, o->warmup, 0, &warm, err))) return rc;
  if ((rc = ovl_trainer_run(&j->trainer, o->warmup, steps, 1, &timed, err))) return rc;

  ovl_ddp_result *r = &j->res;
  r->gpus = j->launch.world_size;
  r->nbuckets = j->plan.nbuckets;
  r->steps = timed.steps;
  r->epochs = (double)timed.steps / (double)spe;
  r->avg_epoch_s = timed.wall_s / r->epochs;
  r->comm_s = timed.comm_s / r->epochs;
  r->throughput = (double)timed.steps * o->global_batch / timed.wall_s;
  if ((rc = ovl_gpu_mlp_last_loss(&j->mlp, &r->final_loss, err))) return rc;
  /* zero3: the weights live in shards; every rank joins the gathers before rank 0 compares */
  if (o->verify && (rc = ovl_trainer_gather_params(&j->trainer, err))) return rc;
  if (o->verify && j->launch.rank == 0)
    return verify(o, &j->data, &j->sh, j->init, &j->mlp, o->warmup + steps, r, err);
  return OVL_OK;
}

static void job_free(job *j) {
  ovl_trainer_free(&j->trainer);
  ovl_gpu_mlp_free(&j->mlp);
  if (j->comm_up) ovl_comm_destroy(&j->comm);
  if (j->compute) cudaStreamDestroy(j->compute);
  if (j->comm_stream) cudaStreamDestroy(j->comm_stream);
  ovl_dataset_free(&j->data);
  free(j->init);
  ovl_plan_free(&j->plan);
}

int main(int argc, char **argv) {
  static job j;
  ovl_err err;
  ovl_err_clear(&err);
  if (ovl_ddp_parse_options(argc, argv, &j.o, &err)) return fail(&err);
  if (j.o.help) {
    fputs(ovl_ddp_help, stdout);
    return 0;
  }
  if (j.o.plan_only) return ovl_plan_print(&j.o.model, &j.o.plan, stdout, &err) ? fail(&err) : 0;

  if (ovl_launch_detect(&j.launch, &err) || ovl_ddp_check_world(&j.o, j.launch.world_size, &err)) return fail(&err);
  if (ovl_comm_mpi_begin(&j.launch)) {
    fprintf(stderr, "ovl-ddp: MPI_Init failed\n");
    return 1;
  }
  ovl_nvtx_enable(j.o.nvtx);
  int rc = train(&j, &err);
  job_free(&j);
  ovl_comm_mpi_end();
  if (rc) return fail(&err);
  if (j.launch.rank == 0 && (ovl_ddp_write_results(stdout, &j.o, &j.res) || fflush(stdout))) {
    fprintf(stderr, "ovl-ddp: stdout: write error\n");
    return 1;
  }
  return j.res.verified && !j.res.verify_passed ? EXIT_VERIFY_FAILED : 0;
}
