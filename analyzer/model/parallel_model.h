/*
** The alpha-beta model of one training step beyond DDP (docs/simulate.md "Strategies"):
** ZeRO-1/2/3 (FSDP), tensor parallel, pipeline parallel and MoE expert parallel, alone or
** ZeRO/DDP composed with tensor parallel. Pure functions: a strategy and its parameters give
** every rank's GPU schedule for one step (compute kernels and collectives with their process
** group, stream and times), and the answers an analyzer must find in it: per rank and
** dimension the communication time (union), the exposed time (communication with no compute
** running) and the finding figures.
**
** Costs: a collective of B bytes (B the full tensor: a layer's parameters or gradients, or
** activations) costs alpha + B/beta for all-reduce, send/recv and all-to-all, and
** alpha + B/(2 beta) for all-gather and reduce-scatter (half of a ring all-reduce's traffic,
** so ZeRO-3's two gathers and a reduce-scatter per layer move 1.5x DDP's bytes). A layer's
** forward takes layer_compute, its backward twice that. Data-parallel collectives share one
** network channel in issue order; tensor-parallel and expert-parallel collectives run on the
** compute stream (compute waits for them); all-to-all and TP collectives start on each rank
** when it arrives and end cost after the last rank arrives.
** Times are ns from the start of the step.
*/
#ifndef OVL_PARALLEL_MODEL_H
#define OVL_PARALLEL_MODEL_H

#include <stddef.h>

typedef enum ovl_pm_strategy {
  OVL_PM_DDP, OVL_PM_ZERO1, OVL_PM_ZERO2, OVL_PM_ZERO3, OVL_PM_TP, OVL_PM_PP, OVL_PM_MOE, OVL_PM_STRATEGIES
} ovl_pm_strategy;

/* "ddp", "zero1", "zero2", "zero3", "tp", "pp", "moe". */
const char *ovl_pm_strategy_name(ovl_pm_strategy s);
int ovl_pm_strategy_parse(const char *name, ovl_pm_strategy *s);

typedef struct ovl_pm_params {
  ovl_pm_strategy strategy;
  int layers;
  double layer_bytes;        /* parameters (= gradients) per layer, full size */
  double layer_compute_ns;   /* forward per layer (pp: per micro-batch; backward twice that) */
  double alpha_ns, beta_bytes_per_s;
  double act_bytes;          /* activations per TP/PP/EP collective */
  int dp, tp;                /* data-parallel and tensor-parallel degrees (ranks = dp * tp) */
  int stages, microbatches;  /* pp: ranks = stages */
  int experts;               /* moe: ranks = experts (one per rank) */
  double hot_factor;         /* moe: rank 0's expert compute is this many times the others';
                             ** pp: slow_stage's compute */
  int slow_stage;            /* pp: this stage computes hot_factor times longer; -1: none */
  int pair_comms;            /* pp: one two-rank group per pair of neighbouring stages (as
                             ** PyTorch's send/recv communicators), else one group of all */
  int bucket_layers;         /* ddp/zero1/zero2: layers per gradient bucket */
  int prefetch;              /* zero3: issue the next layer's all-gather when this one starts (1) or when it is needed (0) */
} ovl_pm_params;

/* Fills defaults for a strategy: 8 layers of 25 MB and 1 ms, alpha 200 us, beta 12 GB/s,
** activations 4 MB, dp 2 (zero/ddp), tp 2 (tp), 4 stages of 8 micro-batches (pp), 4 experts
** with a 1.5x hot expert (moe), 2-layer buckets, prefetch on. */
void ovl_pm_defaults(ovl_pm_strategy s, ovl_pm_params *p);
int ovl_pm_nranks(const ovl_pm_params *p);

/* Dimensions of the model's groups (same order and names as the analyzer's: dp tp pp ep). */
enum { OVL_PM_DIM_DP = 1, OVL_PM_DIM_TP, OVL_PM_DIM_PP, OVL_PM_DIM_EP, OVL_PM_DIMS };

typedef struct ovl_pm_group {
  int dim;                   /* OVL_PM_DIM_* */
  int nmembers;
  int members[64];           /* global ranks, ascending */
} ovl_pm_group;

typedef struct ovl_pm_event {
  const char *op;            /* NCCL op name ("AllGather", ...) or NULL for compute */
  const char *kernel;        /* kernel name */
  int group;                 /* index into the job's groups; -1 for compute */
  int peer;                  /* send/recv: the peer's position in the group; else -1 */
  int stream;
  double issue_ns, start_ns, end_ns, bytes;
  /* answers */
  double exposed_ns;         /* of its interval, the part with no compute running on its rank */
} ovl_pm_event;

typedef struct ovl_pm_rank {
  ovl_pm_event *ev;          /* in issue order */
  size_t nev, cap;
  /* answers per dimension (index OVL_PM_DIM_*) */
  double comm_ns[OVL_PM_DIMS], exposed_ns[OVL_PM_DIMS];
  double compute_ns;         /* union of compute */
  double gather_exposed_ns, reduce_scatter_exposed_ns;  /* data-parallel all-gathers, reduce-scatters */
  double end_ns;             /* end of its last GPU work */
} ovl_pm_rank;

typedef struct ovl_pm_job {
  ovl_pm_params p;
  int nranks;
  ovl_pm_rank *ranks;
  int ngroups;
  ovl_pm_group *groups;
  double step_ns;            /* end of the last GPU work of any rank */
  /* pipeline answers: span of the step over all stages, and (p-1)/(m+p-1) */
  double model_bubble;
} ovl_pm_job;

/* Streams the schedule uses. */
#define OVL_PM_COMPUTE_STREAM 7
#define OVL_PM_DP_STREAM 13      /* all-reduce and reduce-scatter of gradients */
#define OVL_PM_GATHER_STREAM 14  /* all-gather of parameters */
#define OVL_PM_SEND_STREAM 16
#define OVL_PM_RECV_STREAM 17

/* Builds one step's schedule and its answers. Returns 0, or -1 on bad parameters or no memory. */
int ovl_pm_build(const ovl_pm_params *p, ovl_pm_job *job);
void ovl_pm_free(ovl_pm_job *job);

/* Cost of a collective of full-size `bytes` (see above). */
double ovl_pm_cost(const ovl_pm_params *p, const char *op, double bytes);

#endif
