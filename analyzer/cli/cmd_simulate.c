/* `ovl simulate`: print the alpha-beta bucketing table; optionally emit its schedule as a trace. */
#include "cli.h"
#include "cli_job.h"

#include "output_plan.h"

#include "base/json_out.h"
#include "base/units.h"
#include "../model/bucket_model.h"
#include "../model/parallel_model.h"
#include "../simulate/sim_scenario.h"
#include "../simulate/sim_trace.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: ovl simulate [options]\n"
    "\n"
    "The alpha-beta model of gradient bucketing in data-parallel training: a backward pass of\n"
    "L layers, each taking LAYER-COMPUTE and producing LAYER-BYTES of gradients; buckets of\n"
    "consecutive layers are all-reduced on one network channel, each costing alpha + bytes/beta\n"
    "and starting when its last layer is done and the channel is free. For each bucket size it\n"
    "prints the time without overlap, with overlap, the share of communication hidden, and the\n"
    "speedup.\n"
    "\n"
    "Options (defaults in brackets; sizes in B/KB/MB/GB or KiB/MiB/GiB, times in ns/us/ms/s):\n"
    "  --layers N              layers in the backward pass [48]\n"
    "  --layer-bytes SIZE      gradient bytes per layer [25MB]\n"
    "  --layer-compute TIME    backward compute per layer [3ms]\n"
    "  --alpha TIME            all-reduce latency [200us]\n"
    "  --beta RATE             all-reduce bandwidth, e.g. 12GB/s [12GB/s]\n"
    "  --bucket-layers LIST    comma-separated bucket sizes in layers [1,2,4,8,16,48]\n"
    "  --best N                bucket size for the summary line [8]\n"
    "  --emit-trace FILE       write a schedule as an ovl trace: the one --bucket-layers value's,\n"
    "                          else --best's\n"
    "  --force                 replace FILE (with --strategy, DIR's traces) even if it is a trace\n"
    "  --json                  print the table (with --strategy: the answers) as JSON\n"
    "  --steps N               training steps in the emitted trace [3]\n"
    "  --ranks N               communicator size recorded in the emitted trace [8]\n"
    "\n"
    "Faults for the emitted trace (each is a problem `ovl report` diagnoses; see docs/findings.md):\n"
    "  --misordered            bucket numbers run against gradient readiness: DDP launches in\n"
    "                          number order, so everything goes out in a burst after backward\n"
    "  --late-launch           every bucket is launched only once backward has ended\n"
    "  --find-unused           DDP find_unused_parameters=True: an int32 all-reduce of the\n"
    "                          used-parameter map after the last bucket, then a blocking copy\n"
    "  --first-step-single-bucket  step 0 reduces all gradients in one bucket (DDP's first step)\n"
    "  --blocking-allreduce SIZE   a stray all-reduce of SIZE on the compute stream mid-backward\n"
    "  --overlap-slowdown F    compute runs F times slower while an all-reduce runs (F >= 1)\n"
    "\n"
    "Strategies beyond DDP (docs/simulate.md \"Strategies\"): print the answers ovl report must find\n"
    "(per rank and dimension: communication, exposed time, efficiency; pipeline bubbles; findings)\n"
    "and, with --emit-trace DIR, write one trace per rank (DIR/rank<r>.sqlite):\n"
    "  --strategy S            ddp, zero1, zero2, zero3, tp, pp or moe (defaults: --layers 8\n"
    "                          --layer-bytes 25MB --layer-compute 1ms, 2-layer buckets)\n"
    "  --dp N, --tp N          data- and tensor-parallel degrees; ranks = dp x tp [2, 1; tp: 1, 2]\n"
    "  --stages N              pp: pipeline stages (ranks) [4]\n"
    "  --microbatches N        pp: micro-batches per step [8]\n"
    "  --experts N             moe: expert-parallel ranks [4]\n"
    "  --hot-factor F          moe: rank 0's expert compute is F times the others' [1.5];\n"
    "                          pp: --slow-stage's compute is F times the others'\n"
    "  --slow-stage K          pp: stage K is the bottleneck (its compute x --hot-factor)\n"
    "  --pp-pair-comms         pp: a two-rank communicator per pair of neighbouring stages\n"
    "  --act-bytes SIZE        activations per TP/PP/EP collective [4MB]\n"
    "  --no-prefetch           zero3: gather each layer's parameters only when it is needed\n"
    "  -h, --help              this help\n"
    "\n"
    "Exit status: 0 ok, 1 bad usage or an output that cannot be written, 2 internal error.\n";

enum { OPT_LAYERS = 256, OPT_LAYER_BYTES, OPT_LAYER_COMPUTE, OPT_ALPHA, OPT_BETA, OPT_BUCKETS, OPT_BEST, OPT_EMIT,
       OPT_STEPS, OPT_RANKS, OPT_MISORDERED, OPT_LATE, OPT_UNUSED, OPT_FIRST_SINGLE, OPT_BLOCKING, OPT_SLOWDOWN,
       OPT_STRATEGY, OPT_DP, OPT_TP, OPT_STAGES, OPT_MICRO, OPT_EXPERTS, OPT_HOT, OPT_ACT, OPT_NO_PREFETCH, OPT_JSON, OPT_SLOW, OPT_PAIRS,
       OPT_FORCE };

#define MAX_BUCKET_SIZES 64

static int parse_list(const char *text, long *sizes, int *n) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  *n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    long v;
    if (*n == MAX_BUCKET_SIZES || ovl_cli_int("simulate", "--bucket-layers", tok, 1, 1000000, &v)) return 1;
    sizes[(*n)++] = v;
  }
  return *n == 0 ? ovl_cli_usage("simulate", "--bucket-layers '%s': empty list", text) : 0;
}

static void print_row(const ovl_sim_result *r) {
  printf("bucket=%2d layers buckets=%2d no-overlap=%6.1fms overlap=%6.1fms hidden=%5.1f%% speedup=%.2fx\n",
         r->bucket_layers, r->nbuckets, r->no_overlap_ns / 1e6, r->overlap_ns / 1e6, r->hidden * 100.0, r->speedup);
}

/* The model's table for each bucket size and the summary of --best's (text fixed by the
** foundation issue, docs/simulate.md). Returns the exit status. */
static int print_table(const ovl_sim_params *p, const long *sizes, int nsizes, long best) {
  for (int i = 0; i < nsizes; i++) {
    ovl_sim_result r;
    if (ovl_sim_run(p, (int)sizes[i], &r)) {
      fprintf(stderr, "ovl: simulate: out of memory\n");
      return 2;
    }
    print_row(&r);
    ovl_sim_result_free(&r);
  }
  ovl_sim_result naive, chosen;
  if (ovl_sim_run(p, 1, &naive)) return 2;
  if (ovl_sim_run(p, (int)best, &chosen)) {
    ovl_sim_result_free(&naive);
    return 2;
  }
  printf("\nideal (compute only) : %.1f ms\n", chosen.compute_ns / 1e6);
  printf("naive (1-layer, no overlap) : %.1f ms\n", naive.no_overlap_ns / 1e6);
  printf("overlap + %ld-layer buckets : %.1f ms -> %.2fx faster than naive\n", best, chosen.overlap_ns / 1e6,
         naive.no_overlap_ns / chosen.overlap_ns);
  ovl_sim_result_free(&naive);
  ovl_sim_result_free(&chosen);
  return 0;
}

static void json_row(ovl_json *j, const char *key, const ovl_sim_result *r) {
  ovl_json_object_begin(j, key);
  ovl_json_int(j, "bucket_layers", r->bucket_layers);
  ovl_json_int(j, "buckets", r->nbuckets);
  ovl_json_double(j, "no_overlap_ns", r->no_overlap_ns);
  ovl_json_double(j, "overlap_ns", r->overlap_ns);
  ovl_json_double(j, "hidden", r->hidden);
  ovl_json_double(j, "speedup", r->speedup);
  ovl_json_object_end(j);
}

/* The same as JSON: {"model":{...},"rows":[...],"ideal_ns","naive_ns","best":{...}}. */
static int print_table_json(const ovl_sim_params *p, const long *sizes, int nsizes, long best) {
  ovl_sim_result naive, chosen;
  if (ovl_sim_run(p, 1, &naive)) return 2;
  if (ovl_sim_run(p, (int)best, &chosen)) {
    ovl_sim_result_free(&naive);
    return 2;
  }
  ovl_json j;
  ovl_json_init(&j, stdout, 1);
  ovl_json_object_begin(&j, NULL);
  ovl_json_object_begin(&j, "model");
  ovl_json_int(&j, "layers", p->layers);
  ovl_json_double(&j, "layer_bytes", p->layer_bytes);
  ovl_json_double(&j, "layer_compute_ns", p->layer_compute_ns);
  ovl_json_double(&j, "alpha_ns", p->alpha_ns);
  ovl_json_double(&j, "beta_bytes_per_s", p->beta_bytes_per_s);
  ovl_json_object_end(&j);
  ovl_json_array_begin(&j, "rows");
  int rc = 0;
  for (int i = 0; !rc && i < nsizes; i++) {
    ovl_sim_result r;
    if (ovl_sim_run(p, (int)sizes[i], &r)) {
      rc = 2;
      break;
    }
    json_row(&j, NULL, &r);
    ovl_sim_result_free(&r);
  }
  ovl_json_array_end(&j);
  ovl_json_double(&j, "ideal_ns", chosen.compute_ns);
  ovl_json_double(&j, "naive_ns", naive.no_overlap_ns);
  json_row(&j, "best", &chosen);
  ovl_json_double(&j, "best_speedup_over_naive", naive.no_overlap_ns / chosen.overlap_ns);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
  ovl_sim_result_free(&naive);
  ovl_sim_result_free(&chosen);
  if (rc) fprintf(stderr, "ovl: simulate: out of memory\n");
  return rc;
}

int ovl_cmd_simulate(int argc, char **argv) {
  static const struct option longopts[] = {
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"layer-bytes", required_argument, NULL, OPT_LAYER_BYTES},
    {"layer-compute", required_argument, NULL, OPT_LAYER_COMPUTE},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"bucket-layers", required_argument, NULL, OPT_BUCKETS},
    {"best", required_argument, NULL, OPT_BEST},
    {"emit-trace", required_argument, NULL, OPT_EMIT},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"misordered", no_argument, NULL, OPT_MISORDERED},
    {"late-launch", no_argument, NULL, OPT_LATE},
    {"find-unused", no_argument, NULL, OPT_UNUSED},
    {"first-step-single-bucket", no_argument, NULL, OPT_FIRST_SINGLE},
    {"blocking-allreduce", required_argument, NULL, OPT_BLOCKING},
    {"overlap-slowdown", required_argument, NULL, OPT_SLOWDOWN},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"dp", required_argument, NULL, OPT_DP},
    {"tp", required_argument, NULL, OPT_TP},
    {"stages", required_argument, NULL, OPT_STAGES},
    {"microbatches", required_argument, NULL, OPT_MICRO},
    {"experts", required_argument, NULL, OPT_EXPERTS},
    {"hot-factor", required_argument, NULL, OPT_HOT},
    {"act-bytes", required_argument, NULL, OPT_ACT},
    {"no-prefetch", no_argument, NULL, OPT_NO_PREFETCH},
    {"slow-stage", required_argument, NULL, OPT_SLOW},
    {"pp-pair-comms", no_argument, NULL, OPT_PAIRS},
    {"json", no_argument, NULL, OPT_JSON},
    {"force", no_argument, NULL, OPT_FORCE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  ovl_sim_params p = {48, 25e6, 3e6, 200e3, 12e9};
  long sizes[MAX_BUCKET_SIZES] = {1, 2, 4, 8, 16, 48};
  int nsizes = 6;
  long best = 8, steps = 3, ranks = 8, layers = 48;
  const char *emit = NULL;
  ovl_sim_faults faults = {0, 0, 0, 0, 0, 1.0};
  int any_fault = 0;
  /* --strategy: the strategy model's parameters; the shared ones only where given */
  int strategy = 0, json = 0, set_layers = 0, set_bytes = 0, set_compute = 0, set_alpha = 0, set_beta = 0,
      set_buckets = 0, any_strategy_opt = 0;
  ovl_pm_params pm;
  ovl_pm_defaults(OVL_PM_DDP, &pm);
  long dp = -1, tp = -1, stages = -1, micro = -1, experts = -1, slow = -1;
  double hot = -1, act = -1;
  int no_prefetch = 0, pairs = 0;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_LAYERS:
        if (ovl_cli_int("simulate", "--layers", optarg, 1, 1000000, &layers)) return 1;
        p.layers = (int)layers;
        set_layers = 1;
        break;
      case OPT_LAYER_BYTES:
        if (ovl_parse_bytes(optarg, &p.layer_bytes))
          return ovl_cli_usage("simulate", "--layer-bytes '%s': expected a size such as 25MB", optarg);
        set_bytes = 1;
        break;
      case OPT_LAYER_COMPUTE:
        if (ovl_parse_time_ns(optarg, &p.layer_compute_ns))
          return ovl_cli_usage("simulate", "--layer-compute '%s': expected a time such as 3ms", optarg);
        set_compute = 1;
        break;
      case OPT_ALPHA:
        if (ovl_parse_time_ns(optarg, &p.alpha_ns))
          return ovl_cli_usage("simulate", "--alpha '%s': expected a time such as 200us", optarg);
        set_alpha = 1;
        break;
      case OPT_BETA:
        if (ovl_parse_rate(optarg, &p.beta_bytes_per_s))
          return ovl_cli_usage("simulate", "--beta '%s': expected a rate such as 12GB/s", optarg);
        set_beta = 1;
        break;
      case OPT_BUCKETS:
        if (parse_list(optarg, sizes, &nsizes)) return 1;
        set_buckets = 1;
        break;
      case OPT_BEST:
        if (ovl_cli_int("simulate", "--best", optarg, 1, 1000000, &best)) return 1;
        break;
      case OPT_EMIT:
        if (ovl_cli_once("simulate", "--emit-trace", &emit, optarg)) return 1;
        break;
      case OPT_FORCE: ovl_output_plan_force(1); break;
      case OPT_STEPS:
        if (ovl_cli_int("simulate", "--steps", optarg, 1, 1000000, &steps)) return 1;
        break;
      case OPT_RANKS:
        if (ovl_cli_int("simulate", "--ranks", optarg, 1, 1000000, &ranks)) return 1;
        break;
      case OPT_MISORDERED: faults.misordered = any_fault = 1; break;
      case OPT_LATE: faults.late_launch = any_fault = 1; break;
      case OPT_UNUSED: faults.find_unused = any_fault = 1; break;
      case OPT_FIRST_SINGLE: faults.first_step_single_bucket = any_fault = 1; break;
      case OPT_BLOCKING:
        if (ovl_parse_bytes(optarg, &faults.blocking_bytes) || faults.blocking_bytes <= 0)
          return ovl_cli_usage("simulate", "--blocking-allreduce '%s': expected a size such as 4B or 1KB", optarg);
        any_fault = 1;
        break;
      case OPT_SLOWDOWN: {
        char *end = NULL;
        faults.overlap_slowdown = strtod(optarg, &end);
        if (end == optarg || *end || !(faults.overlap_slowdown >= 1.0) || faults.overlap_slowdown > 100.0)
          return ovl_cli_usage("simulate", "--overlap-slowdown '%s': expected a factor from 1 to 100", optarg);
        any_fault = 1;
        break;
      }
      case OPT_STRATEGY: {
        ovl_pm_strategy st;
        if (ovl_pm_strategy_parse(optarg, &st))
          return ovl_cli_usage("simulate", "--strategy '%s': expected ddp, zero1, zero2, zero3, tp, pp or moe", optarg);
        ovl_pm_defaults(st, &pm);
        strategy = 1;
        break;
      }
      case OPT_DP:
        if (ovl_cli_int("simulate", "--dp", optarg, 1, 64, &dp)) return 1;
        any_strategy_opt = 1;
        break;
      case OPT_TP:
        if (ovl_cli_int("simulate", "--tp", optarg, 1, 64, &tp)) return 1;
        any_strategy_opt = 1;
        break;
      case OPT_STAGES:
        if (ovl_cli_int("simulate", "--stages", optarg, 2, 64, &stages)) return 1;
        any_strategy_opt = 1;
        break;
      case OPT_MICRO:
        if (ovl_cli_int("simulate", "--microbatches", optarg, 1, 10000, &micro)) return 1;
        any_strategy_opt = 1;
        break;
      case OPT_EXPERTS:
        if (ovl_cli_int("simulate", "--experts", optarg, 2, 64, &experts)) return 1;
        any_strategy_opt = 1;
        break;
      case OPT_HOT: {
        char *end = NULL;
        hot = strtod(optarg, &end);
        if (end == optarg || *end || !(hot >= 1.0) || hot > 100.0)
          return ovl_cli_usage("simulate", "--hot-factor '%s': expected a factor from 1 to 100", optarg);
        any_strategy_opt = 1;
        break;
      }
      case OPT_ACT:
        if (ovl_parse_bytes(optarg, &act) || act <= 0)
          return ovl_cli_usage("simulate", "--act-bytes '%s': expected a size such as 4MB", optarg);
        any_strategy_opt = 1;
        break;
      case OPT_NO_PREFETCH: no_prefetch = any_strategy_opt = 1; break;
      case OPT_PAIRS: pairs = any_strategy_opt = 1; break;
      case OPT_SLOW:
        if (ovl_cli_int("simulate", "--slow-stage", optarg, 0, 63, &slow)) return 1;
        any_strategy_opt = 1;
        break;
      case OPT_JSON: json = 1; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("simulate", c, argv);
    }
  }
  if (optind < argc) return ovl_cli_usage("simulate", "unexpected argument '%s'", argv[optind]);
  if (any_strategy_opt && !strategy) return ovl_cli_usage("simulate", "--dp, --tp, --stages, --microbatches, --experts, "
                                                          "--hot-factor, --act-bytes, --slow-stage and --no-prefetch "
                                                          "need --strategy");
  if (strategy) {
    if (any_fault) return ovl_cli_usage("simulate", "faults do not apply to --strategy");
    if (set_buckets && nsizes != 1) return ovl_cli_usage("simulate", "--strategy takes one --bucket-layers value");
    if (set_layers) pm.layers = p.layers;
    if (set_bytes) pm.layer_bytes = p.layer_bytes;
    if (set_compute) pm.layer_compute_ns = p.layer_compute_ns;
    if (set_alpha) pm.alpha_ns = p.alpha_ns;
    if (set_beta) pm.beta_bytes_per_s = p.beta_bytes_per_s;
    if (set_buckets) pm.bucket_layers = (int)sizes[0];
    if (dp > 0) pm.dp = (int)dp;
    if (tp > 0) pm.tp = (int)tp;
    if (stages > 0) pm.stages = (int)stages;
    if (micro > 0) pm.microbatches = (int)micro;
    if (experts > 0) pm.experts = (int)experts;
    if (hot > 0) pm.hot_factor = hot;
    if (act > 0) pm.act_bytes = act;
    if (no_prefetch) pm.prefetch = 0;
    if (slow >= 0) pm.slow_stage = (int)slow;
    pm.pair_comms = pairs;
    return ovl_simulate_strategy(&pm, emit, steps, json);
  }
  /* The emitted schedule: the one --bucket-layers value, or --best's when none was given. */
  if (emit && set_buckets && nsizes != 1)
    return ovl_cli_usage("simulate", "--emit-trace writes one schedule: give one --bucket-layers value (got %d), or "
                         "none for --best's (%ld)", nsizes, best);
  if (any_fault && !emit) return ovl_cli_usage("simulate", "faults only change the emitted trace: add --emit-trace FILE");
  int emit_layers = set_buckets ? (int)sizes[0] : (int)best;
  if (emit && ovl_cli_plan_outputs((const char *const *)&emit, 1, NULL, 0)) return 1;
  int rc = json ? print_table_json(&p, sizes, nsizes, best) : print_table(&p, sizes, nsizes, best);
  if (rc || !emit) return rc;
  ovl_err err;
  ovl_err_clear(&err);
  ovl_sim_trace_options topt = {(int)steps, (int)ranks, "ovl simulate --emit-trace", &faults};
  if (ovl_sim_emit_trace(emit, &p, emit_layers, &topt, &err)) return ovl_cli_fail(&err);
  char what[128];
  snprintf(what, sizeof what, "%ld steps of %d-layer buckets%s", steps, emit_layers,
           any_fault ? ", with the faults asked for" : "");
  ovl_cli_wrote(emit, what);
  return 0;
}
