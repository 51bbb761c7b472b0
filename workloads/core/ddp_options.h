/*
** The command line of ovl-ddp, parsed and checked without CUDA (so `--plan` and every usage
** error work, and are tested, on machines without a GPU). docs/workloads.md documents it.
*/
#ifndef OVL_WL_DDP_OPTIONS_H
#define OVL_WL_DDP_OPTIONS_H

#include "bucket_plan.h"
#include "model.h"

#include <stdint.h>

typedef struct ovl_ddp_options {
  ovl_model model;
  ovl_plan_options plan;       /* mode, bucket caps, find_unused */
  double bucket_mb, first_bucket_mb;
  int emulated;                /* --comm emulated */
  double alpha_ns, beta_bytes_per_s;
  int emulate_ranks;
  double find_unused_delay_ns; /* host-side graph walk at the end of forward */
  int epochs;
  int64_t steps;               /* > 0: run exactly this many timed steps instead of epochs */
  int warmup;                  /* untimed steps first */
  int64_t samples;
  int global_batch;
  double lr;
  uint64_t seed;
  int verify;
  double verify_tol;
  const char *save_weights;    /* --save-weights FILE (with --verify): the GPU's final weights */
  int plan_only;               /* --plan */
  int nvtx;                    /* 0 with --no-nvtx */
  int timeout_s;               /* rendezvous and communicator set-up */
  int help;                    /* --help: print ovl_ddp_help and exit 0 */
} ovl_ddp_options;

extern const char ovl_ddp_help[];

/* Parses argv (argv[0] is the program). Fails with OVL_EUSER and a one-line message naming
** the flag. Defaults are those of the issue: small model, bucketed, 25 MiB buckets with a
** 1 MiB first bucket, lr 0.01, 32768 samples, global batch 1024. */
int ovl_ddp_parse_options(int argc, char **argv, ovl_ddp_options *o, ovl_err *err);

/* Checks the options against the job's size: single mode and emulated communication run on
** one rank only; the global batch must split evenly over the ranks (real or emulated). */
int ovl_ddp_check_world(const ovl_ddp_options *o, int world_size, ovl_err *err);

/* Ranks whose gradients the run averages: the world size, or --emulate-ranks when emulated.
** Each process trains on global_batch / this many samples per step. */
int ovl_ddp_data_ranks(const ovl_ddp_options *o, int world_size);

#endif
