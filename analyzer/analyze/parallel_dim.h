/*
** Parallelism dimensions (docs/report.md "Parallelism dimensions"): what a collective is for
** beyond DDP. Every process group (communicator) of a job is given one dimension by its op mix,
** the streams its calls run on and which ranks share it (job_dims.c); every collective gets
** its group's dimension and a role from its op. These are the plain types the results carry;
** job/job_dims.h has the stage that fills them; parallel_dim.c their names.
*/
#ifndef OVL_PARALLEL_DIM_H
#define OVL_PARALLEL_DIM_H

#include <stddef.h>
#include <stdint.h>

typedef enum ovl_pdim {
  OVL_DIM_UNKNOWN = 0,     /* not classified (no collective, or a one-rank communicator) */
  OVL_DIM_DP,              /* data parallel: DDP, ZeRO-1/2/3, FSDP */
  OVL_DIM_TP,              /* tensor parallel (Megatron; sequence parallel) */
  OVL_DIM_PP,              /* pipeline parallel: send/recv between stages */
  OVL_DIM_EP,              /* expert parallel (MoE): all-to-all, with MoE evidence (job_dims.h) */
  OVL_DIM_COUNT
} ovl_pdim;

typedef enum ovl_prole {
  OVL_PROLE_NONE = 0,
  OVL_PROLE_GRAD_REDUCE,      /* DP: gradient all-reduce (DDP, ZeRO-1) */
  OVL_PROLE_PARAM_GATHER,        /* DP: parameter all-gather (ZeRO-3/FSDP; ZeRO-1/2 after the step) */
  OVL_PROLE_GRAD_REDUCE_SCATTER, /* DP: gradient reduce-scatter (ZeRO-2/3, FSDP) */
  OVL_PROLE_TP_REDUCE,
  OVL_PROLE_TP_ALLGATHER,        /* sequence parallel */
  OVL_PROLE_TP_REDUCE_SCATTER,   /* sequence parallel */
  OVL_PROLE_PP_SEND,
  OVL_PROLE_PP_RECV,
  OVL_PROLE_EP_DISPATCH,         /* the first all-to-all of a pair */
  OVL_PROLE_EP_COMBINE,          /* the second */
  OVL_PROLE_OTHER,
  OVL_PROLE_COUNT
} ovl_prole;

/* A collective's dimension and role (zero: not classified). */
typedef struct ovl_coll_dim {
  unsigned char dim;       /* ovl_pdim */
  unsigned char role;      /* ovl_prole */
  unsigned char nvtx;      /* ovl_pdim named by a `dim <d>` NVTX range around its call; 0: none */
} ovl_coll_dim;

/* One dimension's communication in a step or over a rank: comm is the length of the union of
** its collectives' GPU intervals, exposed the part of that with no compute running. */
typedef struct ovl_dim_totals {
  int64_t comm, exposed;
  long colls;
} ovl_dim_totals;

/* A pipeline stage (rank with PP collectives), from job_dims.c. stage < 0: not a stage. */
typedef struct ovl_pipeline_stats {
  int stage, stages;       /* position in the PP group and its size (p) */
  double microbatches;     /* m: micro-batches per step (median over steps) */
  double bubble;           /* measured: 1 - compute / the pipeline's step span, mean over steps */
  double model_bubble;     /* (p-1)/(m+p-1) */
  int64_t compute_ns;      /* compute per step (mean) */
  int64_t span_ns;         /* the pipeline's step span (mean) */
} ovl_pipeline_stats;

/* A process group (communicator) of the job and the dimension given to it. */
typedef struct ovl_pgroup {
  int64_t comm;            /* the collectives' comm id */
  const char *name;        /* the name its traces give it ("default_pg"), or NULL; borrowed from
                           ** the job's ranks (ovl_rank_result.comm_names) */
  int64_t nranks;          /* its size */
  int64_t *members;        /* global ranks of the traced processes that use it, ascending */
  size_t nmembers;
  int64_t stride;          /* spacing of evenly spaced members; 0 when unknown or uneven */
  long ops[16];            /* calls by ovl_op (all ranks) */
  long colls, on_compute_stream;  /* calls, and those on a stream that mostly runs compute */
  long dense, dense_on_compute;   /* its all-reduces, all-gathers, reduce-scatters, ... (neither
                                  ** all-to-all nor send/recv), and those on a compute stream */
  ovl_pdim dim;            /* the dimension of most of its calls */
  ovl_pdim dense_dim;      /* the dimension of its dense calls (unknown without any) */
  long nvtx_votes[8];      /* calls inside a `dim <d>` NVTX range, by ovl_pdim */
  int overridden;          /* --dim or NVTX named it: every call gets dim */
  long moe_kernels;        /* kernels named for mixture-of-experts work on its members' ranks */
  char why[320];           /* how the dimension was decided (the longest rule text, 146 B, + the dense reason, 128) */
} ovl_pgroup;

/* "dp", "tp", "pp", "ep", "unknown". */
const char *ovl_pdim_name(ovl_pdim d);
/* Parses a dimension name (also "fsdp", "zero" for dp); 0 on success. */
int ovl_pdim_parse(const char *name, ovl_pdim *d);
/* "grad_allreduce", "param_allgather", ... "none". */
const char *ovl_prole_name(ovl_prole r);
/* 1 - exposed/comm, or NAN without communication. */
double ovl_dim_efficiency(const ovl_dim_totals *t);

#endif
