/* The table of `ovl` verbs. Adding a verb: a cmd_<verb>.c with its run function, and a line here. */
#include "cli.h"

int ovl_cmd_report(int argc, char **argv);
int ovl_cmd_simulate(int argc, char **argv);
int ovl_cmd_export(int argc, char **argv);
int ovl_cmd_fit(int argc, char **argv);
int ovl_cmd_whatif(int argc, char **argv);
int ovl_cmd_run(int argc, char **argv);
int ovl_cmd_import(int argc, char **argv);
int ovl_cmd_stats(int argc, char **argv);
int ovl_cmd_diff(int argc, char **argv);

const ovl_verb ovl_verbs[] = {
  {"report", ovl_cmd_report, "overlap per rank, step and collective, and what is wrong with it (findings)"},
  {"export", ovl_cmd_export, "timeline for Perfetto (--perfetto) or Chrome's trace viewer (--chrome)"},
  {"simulate", ovl_cmd_simulate, "the alpha-beta gradient-bucketing model; emits a synthetic trace"},
  {"fit", ovl_cmd_fit, "alpha-beta cost of the collectives, per communicator and operation"},
  {"whatif", ovl_cmd_whatif, "replay the backward with other gradient bucket sizes"},
  {"run", ovl_cmd_run, "run a command under libovl.so: one trace per process that uses CUDA or NCCL"},
  {"import", ovl_cmd_import, "convert PyTorch profiler (Kineto) and Nsight Systems traces into ovl traces"},
  {"diff", ovl_cmd_diff, "what changed between two runs (BEFORE AFTER), noise-aware; --fail-if for CI"},
  {"stats", ovl_cmd_stats, "summaries as 'nsys stats': kernels, NCCL, NVTX, memcpy (text, --csv, --json)"},
};

const size_t ovl_nverbs = sizeof ovl_verbs / sizeof ovl_verbs[0];
