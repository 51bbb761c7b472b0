/*
** Every threshold of the diagnosis in one table: a finding fires only past these, and each
** is named in docs/findings.md ("Thresholds at a glance") with the reason it has its value.
** They keep healthy traces free of findings; none is tuned to a particular trace.
*/
#ifndef OVL_DIAGNOSE_THRESHOLDS_H
#define OVL_DIAGNOSE_THRESHOLDS_H

/* A step finding needs this share of the step's duration (and OVL_DIAG_MIN_NS) recoverable.
** Facts that name their culprit (a collective on a compute stream, the find_unused map) need
** only OVL_DIAG_MIN_NS; a collective that compute is only seen to wait for needs
** OVL_DIAG_MIN_SHARE_WAIT. */
#define OVL_DIAG_MIN_SHARE 0.01
#define OVL_DIAG_MIN_SHARE_WAIT 0.001
#define OVL_DIAG_MIN_NS 1000
/* late_firing: share of the gradient bytes whose collectives start after backward ended. */
#define OVL_LATE_BYTES_SHARE 0.9
/* late_firing: a collective that starts within this of the previous one's end queued behind it */
#define OVL_QUEUED_GAP_NS 20000
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
/* first_iteration_differs: the steady-state layout is the one shared by at least
** OVL_STEADY_MIN_STEPS later steps and by at least OVL_STEADY_MIN_SHARE of them. */
#define OVL_STEADY_MIN_STEPS 2
#define OVL_STEADY_MIN_SHARE 0.5
/* single_bucket: the one gradient collective carries at least this share of the bytes of the
** step's grad_ready marks (fewer: other buckets exist that the trace does not show as such). */
#define OVL_SINGLE_BUCKET_MARKED_SHARE 0.9
/* find_unused_parameters: largest used-parameter map considered. */
#define OVL_UNUSED_MAP_MAX_BYTES (1 << 20)
/* blocking_collective (compute waits for it): exposed share of its duration, and the largest
** gap before compute resumes (the larger of the two). */
#define OVL_BLOCKING_EXPOSED_SHARE 0.9
#define OVL_BLOCKING_RESUME_NS 20000
#define OVL_BLOCKING_RESUME_SHARE 0.05
/* blocking_collective: a step with more than this many gets one finding for all of them (naive
** data parallelism blocks on every gradient: one finding says so, not hundreds). */
#define OVL_BLOCKING_MAX_NAMED 3
/* exposed_communication: a step without other findings whose exposed communication is at least
** this share of its duration, with an overlap efficiency below OVL_EXPOSED_MAX_EFFICIENCY. */
#define OVL_EXPOSED_LARGE_SHARE 0.1
#define OVL_EXPOSED_MAX_EFFICIENCY 0.5
/* exposed_communication, communication-bound: the bus bandwidth it quotes is the median of the
** collectives of at least this size (smaller ones pay mostly latency and say nothing of a link). */
#define OVL_BUSBW_MIN_BYTES (1 << 20)
/* peer_wait: a blocking collective that spent at least this share of its duration waiting for
** the last rank to arrive (job analysis). */
#define OVL_PEER_WAIT_SHARE 0.5
/* straggler: a rank that came last at least OVL_STRAGGLER_MIN_LAST times, at least
** OVL_STRAGGLER_OVER_CHANCE times as often as chance (1 / participants) would have it, with a
** one-sided binomial p-value below OVL_STRAGGLER_P divided by the number of ranks (Bonferroni:
** with many ranks one of them comes last often by chance). The job stage (job/cross_rank.c)
** measures the counts and the p-value; the diagnosis judges them. */
#define OVL_STRAGGLER_MIN_LAST 3
#define OVL_STRAGGLER_OVER_CHANCE 2.0
#define OVL_STRAGGLER_P 1e-3
/* straggler, its cause: its compute per step exceeds its peers' median by at least this share
** of its lateness (then it is the GPU), else its host launched the collectives at least this
** share of its lateness late (then it is the host); kernels are named whose time per step
** exceeds the peers' median by this factor (noise between GPUs of one model stays below). */
#define OVL_STRAGGLER_CAUSE_SHARE 0.5
#define OVL_STRAGGLER_KERNEL_FACTOR 1.02
/* compute_slowdown: total cost at least this share of the rank's compute time. */
#define OVL_SLOWDOWN_MIN_SHARE 0.01
/* compute_slowdown, per kernel signature (name, grid, block: the same work as far as the
** trace tells): at least OVL_SLOWDOWN_MIN_RUNS runs alone (overlapped <= 10%) and as many
** overlapped (>= 50%), a slowdown factor of at least OVL_SLOWDOWN_MIN_FACTOR, a t statistic of
** the slope of at least OVL_SLOWDOWN_MIN_T (an exact fit passes). The fitted alone duration
** must agree with the runs alone: within OVL_SLOWDOWN_ALONE_AGREE of their mean (or two of
** their standard deviations, if larger), since a line through runs of different work (a
** persistent kernel given more work, inputs of other shapes) meets the axis anywhere. And the
** effect, the extra duration when fully overlapped, must exceed the spread of the runs alone
** and of the runs overlapped (standard deviations): a slowdown smaller than the variation of
** one kind of run is no evidence. The same work runs for about the same time: runs alone (and
** runs overlapped) whose standard deviation exceeds OVL_SLOWDOWN_MAX_CV of their mean are
** different work the signature cannot tell apart, and compared they prove nothing. */
#define OVL_SLOWDOWN_MIN_RUNS 3
#define OVL_SLOWDOWN_MIN_FACTOR 1.05
#define OVL_SLOWDOWN_MIN_T 5.0
#define OVL_SLOWDOWN_ALONE_AGREE 0.10
#define OVL_SLOWDOWN_MAX_CV 0.25
/* The alpha-beta fit of the gradient collectives is evidence for the bucket-size findings only
** when it explains some of their time: r2 (of the samples the robust fit kept) at least this. */
#define OVL_FIT_MIN_R2 0.0
/* Bucket caps (MiB) the bucket-size findings try, with a 1 MiB first bucket as DDP. */
#define OVL_DIAG_CAPS_MIB {1, 2, 5, 10, 25, 50, 100, 250}
#define OVL_DIAG_FIRST_CAP_MIB 1

/* Dimension findings (diagnose_dims.c). A rank finding is raised when its exposed time is at
** least OVL_DIM_MIN_STEP_SHARE of the steps' span (smaller exposure is noise next to the step)
** and OVL_DIM_MIN_EXPOSED_SHARE of the collectives' own time. */
#define OVL_DIM_MIN_STEP_SHARE 0.01
#define OVL_DIM_MIN_EXPOSED_SHARE 0.10
/* tp_blocking_share: tensor-parallel communication above this share of the step. */
#define OVL_TP_MIN_SHARE 0.05
/* tp_blocking_share: async TP (communication overlapped with compute) is said to be present when
** more than this share of the TP time is hidden. */
#define OVL_TP_ASYNC_MIN_HIDDEN 0.10
/* pipeline_bubble: a stage idle for more than this share of the step. */
#define OVL_PP_MIN_BUBBLE 0.05
/* alltoall_imbalance: all-to-all time differing across ranks by this share of its mean. */
#define OVL_A2A_MIN_IMBALANCE 0.10

#endif
