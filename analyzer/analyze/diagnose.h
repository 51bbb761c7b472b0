/*
** The diagnosis of an analysed rank: findings with evidence, the time a fix would recover and
** a concrete suggestion (contract section 2; every finding, its evidence, thresholds and
** suggestion are documented in docs/findings.md).
**
** Per step (steady state: when step 0's bucket layout differs from the later steps it gets
** first_iteration_differs and nothing else): late_firing, readiness_stall, single_bucket,
** exposed_tail, latency_bound, find_unused_parameters, blocking_collective. Per rank:
** compute_slowdown, and one summary per code that fired in some step (its recoverable time
** is the sum over those steps). The thresholds below keep healthy traces free of findings.
*/
#ifndef OVL_DIAGNOSE_H
#define OVL_DIAGNOSE_H

#include "analysis.h"

/* A step finding needs this share of the step's duration (and OVL_DIAG_MIN_NS) recoverable.
** Facts that name their culprit (a collective on a compute stream, the find_unused map) need
** only OVL_DIAG_MIN_NS; a collective that compute is only seen to wait for needs
** OVL_DIAG_MIN_SHARE_WAIT. */
#define OVL_DIAG_MIN_SHARE 0.01
#define OVL_DIAG_MIN_SHARE_WAIT 0.001
#define OVL_DIAG_MIN_NS 1000
/* late_firing: share of the gradient bytes whose collectives start after backward ended. */
#define OVL_LATE_BYTES_SHARE 0.9
/* readiness_stall: a bucket is stalled when it waited this long (and OVL_DIAG_MIN_SHARE of the
** step) behind a bucket fired earlier that became ready later. */
#define OVL_STALL_MIN_NS 100000
/* exposed_tail: tail after backward >= this share of the step and of its exposed time, and
** smaller buckets recover at least OVL_TAIL_GAIN_SHARE of the step. */
#define OVL_TAIL_MIN_SHARE 0.15
#define OVL_TAIL_EXPOSED_SHARE 0.5
#define OVL_TAIL_GAIN_SHARE 0.10
/* latency_bound: at least this many gradient collectives per step, median transfer share
** bytes/beta / (alpha + bytes/beta) below OVL_LATENCY_MAX_EFFICIENCY, and larger buckets
** recover at least OVL_LATENCY_GAIN_SHARE of the step. */
#define OVL_LATENCY_MIN_COLLS 8
#define OVL_LATENCY_MAX_EFFICIENCY 0.5
#define OVL_LATENCY_GAIN_SHARE 0.05
/* find_unused_parameters: largest used-parameter map considered. */
#define OVL_UNUSED_MAP_MAX_BYTES (1 << 20)
/* blocking_collective (compute waits for it): exposed share of its duration, and the largest
** gap before compute resumes (the larger of the two). */
#define OVL_BLOCKING_EXPOSED_SHARE 0.9
#define OVL_BLOCKING_RESUME_NS 20000
#define OVL_BLOCKING_RESUME_SHARE 0.05
/* exposed_communication: a step without other findings whose exposed communication is at least
** this share of its duration, with an overlap efficiency below OVL_EXPOSED_MAX_EFFICIENCY. */
#define OVL_EXPOSED_LARGE_SHARE 0.1
#define OVL_EXPOSED_MAX_EFFICIENCY 0.5
/* peer_wait: a blocking collective that spent at least this share of its duration waiting for
** the last rank to arrive (job analysis). */
#define OVL_PEER_WAIT_SHARE 0.5
/* compute_slowdown: total cost at least this share of the rank's compute time. */
#define OVL_SLOWDOWN_MIN_SHARE 0.01
/* Bucket caps (MiB) the bucket-size findings try, with a 1 MiB first bucket as DDP. */
#define OVL_DIAG_CAPS_MIB {1, 2, 5, 10, 25, 50, 100, 250}
#define OVL_DIAG_FIRST_CAP_MIB 1

/* Diagnoses r (results of one device) in place: roles, gradient phases, findings. */
int ovl_diagnose_rank(ovl_rank_result *r, ovl_err *err);

/* Rebuilds the rank-level summaries of the step findings (after the job's cross-rank stage
** changed step findings). */
int ovl_diagnose_resummarise(ovl_rank_result *r, ovl_err *err);

/* Across ranks (diagnose_cross.c), after the job's wait/transfer split: blocking_collective
** findings whose collective mostly waited for a peer become peer_wait. */
struct ovl_job;
int ovl_diagnose_peer_waits(struct ovl_job *job, ovl_err *err);

#endif
