/* The table of `ovl` verbs. Adding a verb: a cmd_<verb>.c with its run function, and a line here. */
#include "cli.h"

int ovl_cmd_report(int argc, char **argv);
int ovl_cmd_simulate(int argc, char **argv);
int ovl_cmd_import(int argc, char **argv);

const ovl_verb ovl_verbs[] = {
  {"report", ovl_cmd_report, "overlap of communication and compute per rank, step and collective"},
  {"simulate", ovl_cmd_simulate, "the alpha-beta gradient-bucketing model; emits a synthetic trace"},
  {"import", ovl_cmd_import, "convert PyTorch profiler (Kineto) and Nsight Systems traces into ovl traces"},
};

const size_t ovl_nverbs = sizeof ovl_verbs / sizeof ovl_verbs[0];
