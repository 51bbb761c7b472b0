/*
** The parallelism-dimension stage of a job (docs/report.md "Parallelism dimensions"): gives
** every process group a dimension (DP/FSDP, TP, PP, EP), every collective its group's
** dimension and a role, sums each dimension's communication and exposed time per step and
** rank and measures pipeline bubbles (the dimension findings are the diagnosis':
** diagnose/diagnose_dims.c).
**
** A group's dimension, first rule that applies:
**   1. an override (--dim COMM=DIM): every call of the group gets DIM;
**   2. mostly Send/Recv: pp;  mostly AlltoAll: ep when its ranks show mixture-of-experts work
**      (kernels named for it: classify.h, ovl_moe_kernel_name, DeepEP included), else unknown:
**      an all-to-all is as much a recommender's embedding exchange (DLRM) as a MoE's token
**      dispatch, and only the evidence says which (--dim COMM=ep when the names do not);
**   3. its dense calls (all-reduce, all-gather, reduce-scatter, broadcast...) mostly run on a
**      stream that mostly runs compute (the compute waits for them, as Megatron's
**      tensor-parallel collectives do): tp;
**   4. two or more remaining groups with evenly spaced members: the one with the smallest
**      stride (ranks next to each other, as TP is laid out inside a node) is tp when another
**      has a larger stride;
**   5. otherwise dp (DDP all-reduces, ZeRO/FSDP all-gathers and reduce-scatters).
** Without an override a collective's dimension follows its op inside its group: all-to-all
** is ep (with MoE evidence, else unknown) and send/recv pp wherever they run, dense calls take
** the group's dense dimension (rules 3-5): one default process group carrying DDP's
** all-reduces and an embedding all-to-all (DLRM) gives dp and unknown collectives.
*/
#ifndef OVL_JOB_DIMS_H
#define OVL_JOB_DIMS_H

#include "job.h"
#include "remote_pieces.h"

/* The groups, roles and per-dimension totals. overrides: NULL or "COMM=DIM[,COMM=DIM...]"
** (COMM a comm id as the report prints it, DIM a name ovl_pdim_parse knows). Called by
** ovl_measure_job before the cross-rank stage (it reads the collectives' exposed pieces: through
** remote for the ranks it holds, NULL for none). */
int ovl_job_dims_classify(ovl_job *job, const char *overrides, const ovl_remote_pieces *remote, ovl_err *err);
/* Pipeline stages (on job time: after the cross-rank stage set the clock offsets). Called by
** ovl_measure_job after the cross-rank stage. */
int ovl_job_dims_finish(ovl_job *job, ovl_err *err);

/* Checks an override list; 0 when well formed, else OVL_EUSER with err set. */
int ovl_dim_overrides_check(const char *overrides, ovl_err *err);

#endif
