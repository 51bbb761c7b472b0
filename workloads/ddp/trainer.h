/*
** The training loop of ovl-ddp: executes a bucket plan (core/bucket_plan.h) step after step.
**
** One step, host side:
**   step range begins; forward on the compute stream; (--find-unused: host graph walk);
**   loss; backward. After each gradient: pack it into its bucket (packed modes), mark
**   grad_ready, and launch every bucket whose launch position is reached: an event on the
**   compute stream, the communication stream waits for it, then the all-reduce inside a
**   `bucket <k>` range, then scale by 1/N and unpack (packed modes).
**   After backward: (--find-unused: int32 all-reduce of the used-parameter map and a
**   blocking device-to-host copy); scale all gradients by 1/N (unpacked modes); the compute
**   stream waits for the communication stream; SGD; the step range ends.
** --mode zero3 runs its own step instead (zero3_step.h) with the same timing.
** Timing: each epoch (a chunk of steps_per_epoch steps) is bracketed by device
** synchronisations; communication not hidden behind backward is measured per step with
** events, from the end of backward on the compute stream to the end of communication.
*/
#ifndef OVL_DDP_TRAINER_H
#define OVL_DDP_TRAINER_H

#include "bucket_plan.h"
#include "comm.h"
#include "ddp_options.h"
#include "gpu_mlp.h"

typedef struct ovl_trainer {
  const ovl_ddp_options *o;
  const ovl_plan *plan;
  ovl_gpu_mlp *mlp;
  ovl_comm *comm;             /* NULL in single mode */
  cudaStream_t compute, comm_stream;
  float *d_buckets;           /* packed modes: every bucket, back to back */
  ovl_segment *d_segments;    /* plan->segments on the device */
  int *member_of;             /* index into plan->members of each parameter */
  int64_t *max_segment;       /* per bucket: its largest segment, in floats */
  cudaEvent_t *ev_ready;      /* per bucket: its gradients are computed */
  cudaEvent_t ev_comm_done;
  cudaEvent_t *ev_bwd_end, *ev_comm_end;  /* per step of an epoch, for timing */
  int64_t nevents;
  int32_t *d_used_ones, *d_used_map, *h_used_map;
  int pos, next_bucket;       /* progress through the current backward pass */
  int64_t timing_slot;        /* -1: this step is not timed */
  struct ovl_z3_state *z3;    /* --mode zero3: its shards and step (zero3_step.h); else NULL */
} ovl_trainer;

typedef struct ovl_run_stats {
  int64_t steps;
  double wall_s;  /* timed steps, synchronised */
  double comm_s;  /* exposed communication over those steps */
} ovl_run_stats;

int ovl_trainer_init(ovl_trainer *t, const ovl_ddp_options *o, const ovl_plan *plan, ovl_gpu_mlp *mlp, ovl_comm *comm,
                     cudaStream_t compute, cudaStream_t comm_stream, ovl_err *err);
/* Runs steps first_step .. first_step+nsteps-1; accumulates timing into *stats when timed. */
int ovl_trainer_run(ovl_trainer *t, int64_t first_step, int64_t nsteps, int timed, ovl_run_stats *stats, ovl_err *err);
/* Makes the MLP's d_params hold the trained weights: in zero3 mode, gathers every layer's
** shards (a collective: every rank calls it); in the other modes nothing to do. */
int ovl_trainer_gather_params(ovl_trainer *t, ovl_err *err);
/* Backward has just enqueued gradient p: takes the next ready position into *pos, failing when
** the plan (whose ready order the buckets follow) expects another gradient there. */
int ovl_trainer_grad_arrived(ovl_trainer *t, int p, int *pos, ovl_err *err);
void ovl_trainer_free(ovl_trainer *t);

#endif
