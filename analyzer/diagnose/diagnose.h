/*
** The diagnosis: findings with evidence, the time a fix would recover and a concrete
** suggestion (contract section 2; every finding, its evidence, confidence, limits and
** thresholds are documented in docs/findings.md; the thresholds live in thresholds.h).
**
** A pass over finished results: the measurement of every rank (analyze/) and of the job
** (job/: cross-rank matching, dimensions) comes first and is never changed here, except the
** findings lists this pass fills and each rank's straggler mark (rank_cross.straggler, judged
** from the counts the job measured). The job driver (driver/job_driver.h) runs it; no
** measurement code calls it.
**
** Per step (steady state: when step 0's bucket layout differs from the later steps it gets
** first_iteration_differs and nothing else): late_firing, readiness_stall, single_bucket,
** exposed_tail, latency_bound, find_unused_parameters, blocking_collective,
** exposed_communication. Per rank: compute_slowdown, and one summary per code that fired in
** some step (its recoverable time is the sum over those steps). Across ranks: straggler,
** peer_wait. Per parallelism dimension: late_prefetch, exposed_reduce_scatter,
** tp_blocking_share, pipeline_bubble, alltoall_imbalance.
*/
#ifndef OVL_DIAGNOSE_H
#define OVL_DIAGNOSE_H

#include "job/job.h"

/* Diagnoses the job: every rank alone, then across ranks, then per parallelism dimension.
** On error (no memory): *err set; findings added so far stay in the job (job_free frees them). */
int ovl_diagnose_job(ovl_job *job, ovl_err *err);

/* Diagnoses one rank alone (its step and rank findings), as ovl_diagnose_job does for each
** rank before looking across ranks. Same failure contract. */
int ovl_diagnose_rank(ovl_rank_result *r, ovl_err *err);

/* 1 when a rank that arrived last times_last times, where chance would have it expected_last
** times with the one-sided binomial p-value p_value, in a job of nranks ranks, is a straggler
** (thresholds.h: OVL_STRAGGLER_*). */
int ovl_is_straggler(long times_last, double expected_last, double p_value, size_t nranks);

#endif
