/* The table of `ovl` verbs. Adding a verb: a cmd_<verb>.c with its run function, and a line here. */
#include "cli.h"

int ovl_cmd_report(int argc, char **argv);
int ovl_cmd_simulate(int argc, char **argv);
int ovl_cmd_run(int argc, char **argv);

const ovl_verb ovl_verbs[] = {
  {"report", ovl_cmd_report, "overlap of communication and compute per rank, step and collective"},
  {"simulate", ovl_cmd_simulate, "the alpha-beta gradient-bucketing model; emits a synthetic trace"},
  {"run", ovl_cmd_run, "run a command under libovl.so: one trace per process that uses CUDA or NCCL"},
};

const size_t ovl_nverbs = sizeof ovl_verbs / sizeof ovl_verbs[0];
