/*
** Writes a strategy's schedule (model/parallel_model.h) as one ovl trace per rank, so that the
** parallelism-dimension analysis can be checked end to end without a GPU: per step and rank,
** its compute kernels on the compute stream and its collectives (rows with the process group's
** comm id, the rank's position in it and its size; linked NCCL kernels on their streams), an
** api row for every launch and an NVTX `step` range. Every rank's steps share one clock.
*/
#ifndef OVL_SIM_STRATEGY_H
#define OVL_SIM_STRATEGY_H

#include "base/status.h"
#include "../model/parallel_model.h"

/* The comm id of the model's group g in the emitted traces. */
#define OVL_SIM_GROUP_COMM(g) (1000 + (g))

/* Writes dir/rank<r>.sqlite for every rank (dir is created if missing), steps steps each. */
int ovl_sim_emit_strategy(const char *dir, const ovl_pm_job *job, int steps, const char *cmdline, ovl_err *err);

#endif
