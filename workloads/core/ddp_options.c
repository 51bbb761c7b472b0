/* ovl-ddp's command line: see ddp_options.h. */
#include "ddp_options.h"

#include "base/units.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char ovl_ddp_help[] =
    "usage: ovl-ddp [options]\n"
    "\n"
    "Reference data-parallel trainer: an MLP (ReLU, softmax cross-entropy, fp32, SGD) on random\n"
    "data, trained single-GPU or data-parallel over NCCL in one of six modes. Launch it alone,\n"
    "under torchrun, or under mpirun; each rank uses GPU LOCAL_RANK. Prints one line\n"
    "RESULTS_JSON {...} (rank 0).\n"
    "\n"
    "Model and training (defaults in brackets):\n"
    "  --model NAME|WIDTHS     small, medium, large, xlarge or widths such as 784-256-10 [small]\n"
    "  --mode MODE             single, naive, interleaved, bucketed, misordered, zero3 [bucketed]\n"
    "                          (zero3: sharded parameters, per-layer all-gather with the next\n"
    "                          layer prefetched on the communication stream, reduce-scatter of\n"
    "                          gradients on it; the optimizer updates the shard)\n"
    "  --epochs N              timed epochs (a pass over the samples) [5]\n"
    "  --steps N               timed steps instead of epochs\n"
    "  --warmup N              untimed steps first [5]\n"
    "  --samples N             samples in the data set [32768]\n"
    "  --batch N               global batch, split evenly over the ranks [1024]\n"
    "  --lr X                  SGD learning rate [0.01]\n"
    "  --seed N                data and weight seed [1]\n"
    "Buckets (bucketed and misordered modes):\n"
    "  --bucket-mb MB          bucket cap in MiB [25]\n"
    "  --first-bucket-mb MB    cap of bucket 0 in MiB [1]\n"
    "  --find-unused           add what DDP's find_unused_parameters=True adds: a host-side graph\n"
    "                          walk after forward, an int32 all-reduce of the used-parameter map\n"
    "                          after the last bucket, and a blocking device-to-host copy of it\n"
    "  --find-unused-delay T   duration of that graph walk [200us]\n"
    "Communication:\n"
    "  --comm nccl|emulated    NCCL all-reduces, or on one GPU an emulation: a kernel\n"
    "                          ovl_emulated_allreduce per all-reduce that waits\n"
    "                          alpha + 2(n-1)/n * bytes / beta on the GPU timer [nccl]\n"
    "  --alpha TIME            emulated latency [50us]\n"
    "  --beta RATE             emulated bandwidth [25GB/s]\n"
    "  --emulate-ranks N       emulated ranks n; each step trains on batch/n samples [8]\n"
    "  --timeout SECONDS       limit for the NCCL id exchange and communicator set-up [300]\n"
    "Output and checks:\n"
    "  --plan                  print the parameters, buckets and launch order as JSON and exit\n"
    "                          (no GPU needed)\n"
    "  --verify                short run (3 steps unless --steps), then compare the final weights\n"
    "                          with a float64 CPU reference; exit 3 when they differ\n"
    "  --verify-tol X          allowed error, relative to the largest weight change [1e-3]\n"
    "  --save-weights FILE     with --verify: also write the GPU's final weights to FILE (raw\n"
    "                          little-endian float32, registration order; rank 0)\n"
    "  --no-nvtx               do not emit the NVTX step, grad_ready and bucket annotations\n"
    "  -h, --help              this help\n"
    "\n"
    "Environment: RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT (torchrun), Open MPI and\n"
    "MPICH variables (mpirun); the NCCL id goes through MPI (MPI build), NCCL_COMM_ID when set,\n"
    "or a TCP rendezvous on OVL_DDP_PORT (default MASTER_PORT+1).\n";

enum {
  OPT_MODEL = 256, OPT_MODE, OPT_EPOCHS, OPT_STEPS, OPT_WARMUP, OPT_SAMPLES, OPT_BATCH, OPT_LR, OPT_SEED,
  OPT_BUCKET_MB, OPT_FIRST_BUCKET_MB, OPT_FIND_UNUSED, OPT_FIND_UNUSED_DELAY, OPT_COMM, OPT_ALPHA, OPT_BETA,
  OPT_EMULATE_RANKS, OPT_TIMEOUT, OPT_PLAN, OPT_VERIFY, OPT_VERIFY_TOL, OPT_SAVE_WEIGHTS, OPT_NO_NVTX
};

static int parse_long(const char *flag, const char *text, long min, long max, long *out, ovl_err *err) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (!*text || *end || errno || v < min || v > max)
    return ovl_fail(err, OVL_EUSER, "%s '%s': expected an integer in %ld..%ld", flag, text, min, max);
  *out = v;
  return OVL_OK;
}

static int parse_positive(const char *flag, const char *text, double *out, ovl_err *err) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (!*text || *end || !isfinite(v) || v <= 0)
    return ovl_fail(err, OVL_EUSER, "%s '%s': expected a positive number", flag, text);
  *out = v;
  return OVL_OK;
}

static int64_t mib_to_bytes(double mb) { return (int64_t)llround(mb * 1048576.0); }

int ovl_ddp_parse_options(int argc, char **argv, ovl_ddp_options *o, ovl_err *err) {
  static const struct option longopts[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"mode", required_argument, NULL, OPT_MODE},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"lr", required_argument, NULL, OPT_LR},
    {"seed", required_argument, NULL, OPT_SEED},
    {"bucket-mb", required_argument, NULL, OPT_BUCKET_MB},
    {"first-bucket-mb", required_argument, NULL, OPT_FIRST_BUCKET_MB},
    {"find-unused", no_argument, NULL, OPT_FIND_UNUSED},
    {"find-unused-delay", required_argument, NULL, OPT_FIND_UNUSED_DELAY},
    {"comm", required_argument, NULL, OPT_COMM},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"emulate-ranks", required_argument, NULL, OPT_EMULATE_RANKS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"plan", no_argument, NULL, OPT_PLAN},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"verify-tol", required_argument, NULL, OPT_VERIFY_TOL},
    {"save-weights", required_argument, NULL, OPT_SAVE_WEIGHTS},
    {"no-nvtx", no_argument, NULL, OPT_NO_NVTX},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  memset(o, 0, sizeof *o);
  ovl_model_lookup("small", &o->model, err);
  o->plan.mode = OVL_MODE_BUCKETED;
  o->bucket_mb = 25;
  o->first_bucket_mb = 1;
  o->alpha_ns = 50e3;
  o->beta_bytes_per_s = 25e9;
  o->emulate_ranks = 8;
  o->find_unused_delay_ns = 200e3;
  o->epochs = 5;
  o->warmup = 5;
  o->samples = 32768;
  o->global_batch = 1024;
  o->lr = 0.01;
  o->seed = 1;
  o->verify_tol = 1e-3;
  o->nvtx = 1;
  o->timeout_s = 300;
  int warmup_given = 0;

  optind = 1;
  opterr = 0;
  int c, rc = OVL_OK;
  long v = 0;  /* set by parse_long on success only; -O3 cannot see that and warns */
  while (rc == OVL_OK && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
      case OPT_MODEL: rc = ovl_model_lookup(optarg, &o->model, err); break;
      case OPT_MODE: rc = ovl_mode_lookup(optarg, &o->plan.mode, err); break;
      case OPT_EPOCHS:
        if (!(rc = parse_long("--epochs", optarg, 1, 1000000, &v, err))) o->epochs = (int)v;
        break;
      case OPT_STEPS:
        if (!(rc = parse_long("--steps", optarg, 1, 1000000000, &v, err))) o->steps = v;
        break;
      case OPT_WARMUP:
        if (!(rc = parse_long("--warmup", optarg, 0, 1000000, &v, err))) o->warmup = (int)v;
        warmup_given = 1;
        break;
      case OPT_SAMPLES:
        if (!(rc = parse_long("--samples", optarg, 1, 1L << 30, &v, err))) o->samples = v;
        break;
      case OPT_BATCH:
        if (!(rc = parse_long("--batch", optarg, 1, 1 << 20, &v, err))) o->global_batch = (int)v;
        break;
      case OPT_LR: rc = parse_positive("--lr", optarg, &o->lr, err); break;
      case OPT_SEED:
        if (!(rc = parse_long("--seed", optarg, 0, 2147483647L, &v, err))) o->seed = (uint64_t)v;
        break;
      case OPT_BUCKET_MB: rc = parse_positive("--bucket-mb", optarg, &o->bucket_mb, err); break;
      case OPT_FIRST_BUCKET_MB: rc = parse_positive("--first-bucket-mb", optarg, &o->first_bucket_mb, err); break;
      case OPT_FIND_UNUSED: o->plan.find_unused = 1; break;
      case OPT_FIND_UNUSED_DELAY:
        if (ovl_parse_time_ns(optarg, &o->find_unused_delay_ns))
          rc = ovl_fail(err, OVL_EUSER, "--find-unused-delay '%s': expected a time such as 200us", optarg);
        break;
      case OPT_COMM:
        if (strcmp(optarg, "nccl") == 0) o->emulated = 0;
        else if (strcmp(optarg, "emulated") == 0) o->emulated = 1;
        else rc = ovl_fail(err, OVL_EUSER, "--comm '%s': expected nccl or emulated", optarg);
        break;
      case OPT_ALPHA:
        if (ovl_parse_time_ns(optarg, &o->alpha_ns))
          rc = ovl_fail(err, OVL_EUSER, "--alpha '%s': expected a time such as 50us", optarg);
        break;
      case OPT_BETA:
        if (ovl_parse_rate(optarg, &o->beta_bytes_per_s) || o->beta_bytes_per_s <= 0)
          rc = ovl_fail(err, OVL_EUSER, "--beta '%s': expected a rate such as 25GB/s", optarg);
        break;
      case OPT_EMULATE_RANKS:
        if (!(rc = parse_long("--emulate-ranks", optarg, 1, 1 << 20, &v, err))) o->emulate_ranks = (int)v;
        break;
      case OPT_TIMEOUT:
        if (!(rc = parse_long("--timeout", optarg, 1, 86400, &v, err))) o->timeout_s = (int)v;
        break;
      case OPT_PLAN: o->plan_only = 1; break;
      case OPT_VERIFY: o->verify = 1; break;
      case OPT_VERIFY_TOL: rc = parse_positive("--verify-tol", optarg, &o->verify_tol, err); break;
      case OPT_SAVE_WEIGHTS: o->save_weights = optarg; break;
      case OPT_NO_NVTX: o->nvtx = 0; break;
      case 'h': o->help = 1; return OVL_OK;
      case ':': rc = ovl_fail(err, OVL_EUSER, "%s: missing value", argv[optind - 1]); break;
      default: rc = ovl_fail(err, OVL_EUSER, "%s: unknown option (see ovl-ddp --help)", argv[optind - 1]); break;
    }
  }
  if (rc) return rc;
  if (optind < argc) return ovl_fail(err, OVL_EUSER, "unexpected argument '%s' (see ovl-ddp --help)", argv[optind]);

  o->plan.first_cap_bytes = mib_to_bytes(o->first_bucket_mb);
  o->plan.cap_bytes = mib_to_bytes(o->bucket_mb);
  if (o->plan.first_cap_bytes < 1 || o->plan.cap_bytes < 1)
    return ovl_fail(err, OVL_EUSER, "--bucket-mb and --first-bucket-mb must be at least one byte");
  if (o->plan.find_unused && o->plan.mode != OVL_MODE_BUCKETED && o->plan.mode != OVL_MODE_MISORDERED)
    return ovl_fail(err, OVL_EUSER, "--find-unused applies to the bucketed and misordered modes, not %s",
                    ovl_mode_names[o->plan.mode]);
  if (o->save_weights && !o->verify) return ovl_fail(err, OVL_EUSER, "--save-weights needs --verify");
  if (o->verify) {
    if (o->steps == 0) o->steps = 3;
    if (warmup_given && o->warmup > 0)
      return ovl_fail(err, OVL_EUSER, "--verify compares from the initial weights: drop --warmup");
    o->warmup = 0;
  }
  return OVL_OK;
}

int ovl_ddp_data_ranks(const ovl_ddp_options *o, int world_size) {
  return o->emulated && o->plan.mode != OVL_MODE_SINGLE ? o->emulate_ranks : world_size;
}

int ovl_ddp_check_world(const ovl_ddp_options *o, int world_size, ovl_err *err) {
  if (o->plan.mode == OVL_MODE_SINGLE && world_size > 1)
    return ovl_fail(err, OVL_EUSER, "--mode single runs on one rank, not %d (launch it alone)", world_size);
  if (o->emulated && world_size > 1)
    return ovl_fail(err, OVL_EUSER, "--comm emulated runs on one rank, not %d (launch it alone)", world_size);
  int ranks = ovl_ddp_data_ranks(o, world_size);
  if (o->global_batch % ranks != 0)
    return ovl_fail(err, OVL_EUSER, "the global batch of %d samples does not split evenly over %d ranks",
                    o->global_batch, ranks);
  return OVL_OK;
}
