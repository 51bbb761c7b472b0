/*
** The one line ovl-ddp prints per run (rank 0 only), read by workloads/bench.sh:
**   RESULTS_JSON {"model","mode","comm","gpus","emulated_ranks","params","bucket_mb",
**     "first_bucket_mb","buckets","find_unused","epochs","steps","avg_epoch_s","comm_s",
**     "throughput","final_loss","verify"}
** gpus: processes (one GPU each); emulated_ranks: n of --comm emulated, else null;
** params: parameter count; epochs: timed epochs (fractional with --steps);
** avg_epoch_s: wall time per epoch; comm_s: per epoch, communication time not hidden behind
** backward: from the end of backward compute to the end of the last collective (the whole
** blocking phase in naive mode, 0 in single mode); throughput: samples per second of the
** whole job; verify: null, or {"passed","max_rel_err","tolerance"}.
*/
#ifndef OVL_WL_RESULTS_JSON_H
#define OVL_WL_RESULTS_JSON_H

#include "ddp_options.h"

#include <stdio.h>

typedef struct ovl_ddp_result {
  int gpus;
  int nbuckets;
  double epochs;
  int64_t steps;
  double avg_epoch_s, comm_s, throughput, final_loss;
  int verified;        /* --verify ran */
  int verify_passed;
  double verify_max_rel_err;
} ovl_ddp_result;

/* Writes "RESULTS_JSON {...}\n". Returns 0, or -1 on a write error. */
int ovl_ddp_write_results(FILE *out, const ovl_ddp_options *o, const ovl_ddp_result *r);

#endif
