/*
** ovl-ddp's command line (defaults, every value check, --verify's short run), the checks
** against the job size, the RESULTS_JSON line and the --verify comparison, all without CUDA.
*/
#include "check.h"
#include "ddp_options.h"
#include "results_json.h"
#include "verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parses a space-separated command line. */
static int parse(const char *line, ovl_ddp_options *o, ovl_err *err) {
  char buf[512];
  char *argv[64];
  int argc = 0;
  snprintf(buf, sizeof buf, "ovl-ddp %s", line);
  for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && argc < 63; tok = strtok_r(NULL, " ", &save))
    argv[argc++] = tok;
  argv[argc] = NULL;
  return ovl_ddp_parse_options(argc, argv, o, err);
}

static void check_defaults(void) {
  ovl_ddp_options o;
  ovl_err err;
  CHECK_I64(parse("", &o, &err), OVL_OK);
  CHECK_STR(o.model.name, "small");
  CHECK_I64(o.plan.mode, OVL_MODE_BUCKETED);
  CHECK_I64(o.plan.first_cap_bytes, 1048576);
  CHECK_I64(o.plan.cap_bytes, 25 * 1048576);
  CHECK_I64(o.samples, 32768);
  CHECK_I64(o.global_batch, 1024);
  CHECK_NEAR(o.lr, 0.01, 0);
  CHECK_I64(o.emulated, 0);
  CHECK_NEAR(o.alpha_ns, 50e3, 0);
  CHECK_NEAR(o.beta_bytes_per_s, 25e9, 0);
  CHECK_I64(o.emulate_ranks, 8);
  CHECK_I64(o.nvtx, 1);
  CHECK_I64(o.verify, 0);
  CHECK_I64(o.steps, 0);

  CHECK_I64(parse("--model 784-64-10 --mode misordered --bucket-mb 2.5 --first-bucket-mb 0.25 --find-unused "
                  "--comm emulated --alpha 10us --beta 100GB/s --emulate-ranks 4 --steps 7 --warmup 0 --no-nvtx "
                  "--find-unused-delay 1ms --seed 9 --lr 0.5 --batch 256 --samples 4096",
                  &o, &err),
            OVL_OK);
  CHECK_I64(o.model.nlayers, 2);
  CHECK_I64(o.plan.mode, OVL_MODE_MISORDERED);
  CHECK_I64(o.plan.cap_bytes, 2621440);
  CHECK_I64(o.plan.first_cap_bytes, 262144);
  CHECK_I64(o.plan.find_unused, 1);
  CHECK_I64(o.emulated, 1);
  CHECK_NEAR(o.alpha_ns, 10e3, 1e-9);
  CHECK_NEAR(o.beta_bytes_per_s, 100e9, 1);
  CHECK_I64(o.emulate_ranks, 4);
  CHECK_I64(o.steps, 7);
  CHECK_I64(o.nvtx, 0);
  CHECK_NEAR(o.find_unused_delay_ns, 1e6, 1e-6);
  CHECK_I64(o.seed, 9);
  CHECK_I64(o.global_batch, 256);

  /* --verify: a short run from the initial weights. */
  CHECK_I64(parse("--verify", &o, &err), OVL_OK);
  CHECK_I64(o.steps, 3);
  CHECK_I64(o.warmup, 0);
  CHECK_I64(parse("--verify --steps 5", &o, &err), OVL_OK);
  CHECK_I64(o.steps, 5);
  CHECK_I64(parse("--verify --warmup 2", &o, &err), OVL_EUSER);
  CHECK_I64(parse("--verify", &o, &err), OVL_OK);
  CHECK(o.save_weights == NULL);
  CHECK_I64(parse("--verify --save-weights w.f32", &o, &err), OVL_OK);
  CHECK_STR(o.save_weights, "w.f32");

  CHECK_I64(parse("--help", &o, &err), OVL_OK);
  CHECK_I64(o.help, 1);
  CHECK_I64(parse("--plan --mode single", &o, &err), OVL_OK);
  CHECK_I64(o.plan_only, 1);
}

static void check_errors(void) {
  static const struct { const char *line, *needle; } bad[] = {
    {"--mode ddp", "mode 'ddp'"},
    {"--model huge", "model 'huge'"},
    {"--comm mpi", "--comm 'mpi'"},
    {"--alpha 5", "--alpha '5'"},
    {"--beta fast", "--beta 'fast'"},
    {"--bucket-mb -1", "--bucket-mb '-1'"},
    {"--bucket-mb 0", "--bucket-mb '0'"},
    {"--first-bucket-mb x", "--first-bucket-mb 'x'"},
    {"--epochs 0", "--epochs '0'"},
    {"--steps 1.5", "--steps '1.5'"},
    {"--emulate-ranks 0", "--emulate-ranks '0'"},
    {"--lr nan", "--lr 'nan'"},
    {"--find-unused --mode interleaved", "--find-unused"},
    {"--find-unused-delay soon", "--find-unused-delay"},
    {"--timeout 0", "--timeout '0'"},
    {"--bogus", "--bogus: unknown option"},
    {"--model", "--model: missing value"},
    {"stray", "unexpected argument 'stray'"},
    {"--save-weights w.f32", "--save-weights needs --verify"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ovl_ddp_options o;
    ovl_err err;
    ovl_err_clear(&err);
    int rc = parse(bad[i].line, &o, &err);
    CHECK_I64(rc, OVL_EUSER);
    if (!strstr(err.msg, bad[i].needle)) {
      fprintf(stderr, "'%s' gave '%s', expected to mention '%s'\n", bad[i].line, err.msg, bad[i].needle);
      CHECK(0);
    }
  }
}

static void check_world(void) {
  ovl_ddp_options o;
  ovl_err err;
  parse("", &o, &err);
  CHECK_I64(ovl_ddp_check_world(&o, 1, &err), OVL_OK);
  CHECK_I64(ovl_ddp_check_world(&o, 8, &err), OVL_OK);
  CHECK_I64(ovl_ddp_data_ranks(&o, 8), 8);
  CHECK_I64(ovl_ddp_check_world(&o, 3, &err), OVL_EUSER);  /* 1024 / 3 */
  CHECK(strstr(err.msg, "3 ranks") != NULL);
  parse("--mode single", &o, &err);
  CHECK_I64(ovl_ddp_check_world(&o, 2, &err), OVL_EUSER);
  parse("--comm emulated --emulate-ranks 8", &o, &err);
  CHECK_I64(ovl_ddp_check_world(&o, 1, &err), OVL_OK);
  CHECK_I64(ovl_ddp_data_ranks(&o, 1), 8);
  CHECK_I64(ovl_ddp_check_world(&o, 2, &err), OVL_EUSER);
  parse("--comm emulated --emulate-ranks 6", &o, &err);
  CHECK_I64(ovl_ddp_check_world(&o, 1, &err), OVL_EUSER);
  parse("--comm emulated --mode single --emulate-ranks 6", &o, &err);  /* nothing emulated */
  CHECK_I64(ovl_ddp_data_ranks(&o, 1), 1);
  CHECK_I64(ovl_ddp_check_world(&o, 1, &err), OVL_OK);
}

static void check_results_line(void) {
  ovl_ddp_options o;
  ovl_err err;
  parse("--model medium --mode naive", &o, &err);
  ovl_ddp_result r = {0};
  r.gpus = 4;
  r.nbuckets = 10;
  r.epochs = 5;
  r.steps = 160;
  r.avg_epoch_s = 0.5;
  r.comm_s = 0.125;
  r.throughput = 65536;
  r.final_loss = 2.25;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK_I64(ovl_ddp_write_results(f, &o, &r), 0);
  fclose(f);
  CHECK_STR(text,
            "RESULTS_JSON {\"model\":\"medium\",\"mode\":\"naive\",\"comm\":\"nccl\",\"gpus\":4,\"emulated_ranks\":null,"
            "\"params\":8432138,\"bucket_mb\":25,\"first_bucket_mb\":1,\"buckets\":10,\"find_unused\":false,"
            "\"epochs\":5,\"steps\":160,\"avg_epoch_s\":0.5,\"comm_s\":0.125,\"throughput\":65536,"
            "\"final_loss\":2.25,\"verify\":null}\n");
  free(text);

  parse("--comm emulated --emulate-ranks 4", &o, &err);
  r.verified = 1;
  r.verify_passed = 1;
  r.verify_max_rel_err = 0.5e-5;
  f = open_memstream(&text, &len);
  ovl_ddp_write_results(f, &o, &r);
  fclose(f);
  CHECK(strstr(text, "\"comm\":\"emulated\",\"gpus\":4,\"emulated_ranks\":4,") != NULL);
  CHECK(strstr(text, "\"verify\":{\"passed\":true,\"max_rel_err\":5e-06,\"tolerance\":0.001}}\n") != NULL);
  CHECK(strchr(text, '\n') == text + strlen(text) - 1);
  free(text);
}

static void check_verify_compare(void) {
  ovl_model m;
  ovl_err err;
  ovl_model_lookup("3-2-2", &m, &err);  /* fc0.weight 6, fc0.bias 2, fc1.weight 4, fc1.bias 2 */
  int64_t n = ovl_model_param_floats(&m);
  CHECK_I64(n, 14);
  float init[14], gpu[14];
  double ref[14];
  for (int i = 0; i < n; i++) {
    init[i] = (float)i;
    ref[i] = i + 0.5;   /* every weight moved by 0.5 */
    gpu[i] = (float)ref[i];
  }
  ovl_verify_result vr;
  ovl_verify_compare(&m, init, gpu, ref, 0, NULL, &vr);
  CHECK_NEAR(vr.max_rel_err, 0, 0);
  gpu[9] += 0.01f;  /* fc1.weight: off by 2 % of its change */
  ovl_verify_compare(&m, init, gpu, ref, 0, NULL, &vr);
  CHECK_NEAR(vr.max_rel_err, 0.02, 1e-6);
  CHECK_I64(vr.worst_param, 2);
  /* The error is relative to the tensor's own change: a bias that barely moved counts. */
  ref[12] = 12 + 1e-3;
  gpu[12] = (float)ref[12];
  ref[13] = 13 + 1e-3;
  gpu[13] = (float)(13 + 2e-3);
  ovl_verify_compare(&m, init, gpu, ref, 0, NULL, &vr);
  CHECK(vr.max_rel_err > 0.5);
  CHECK_I64(vr.worst_param, 3);
  gpu[0] = NAN;
  ovl_verify_compare(&m, init, gpu, ref, 0, NULL, &vr);
  CHECK(isinf(vr.max_rel_err));
  CHECK_I64(vr.worst_param, 0);
  CHECK(isinf(vr.param_err[0]));
  CHECK(vr.param_err[3] > 0.5);

  /* A float rounding decision that went the other way: one ulp of the weight is forgiven
  ** per allowed ulp, and nothing more. */
  CHECK_NEAR(ovl_float_ulp(1.0), 0x1p-23, 0);
  CHECK_NEAR(ovl_float_ulp(-1.5), 0x1p-23, 0);
  CHECK_NEAR(ovl_float_ulp(0.03125), 0x1p-28, 0);
  for (int i = 0; i < n; i++) {
    init[i] = 1.0f;
    ref[i] = 1.0 - 64 * 0x1p-23;  /* every weight moved by 128 ulps (below 1, the ulp is 2^-24) */
    gpu[i] = (float)ref[i];
  }
  gpu[5] = nextafterf(gpu[5], 2.0f);
  ovl_verify_compare(&m, init, gpu, ref, 0, NULL, &vr);
  CHECK(vr.max_rel_err > 1e-3);  /* 1/128 with no allowance */
  ovl_verify_compare(&m, init, gpu, ref, 1, NULL, &vr);
  CHECK_NEAR(vr.max_rel_err, 0, 0);
  gpu[5] = nextafterf(gpu[5], 2.0f);  /* two ulps off, one allowed: 1/128 again */
  ovl_verify_compare(&m, init, gpu, ref, 1, NULL, &vr);
  CHECK_NEAR(vr.max_rel_err, 1.0 / 128, 1e-9);
}

int main(void) {
  check_defaults();
  check_errors();
  check_world();
  check_results_line();
  check_verify_compare();
  return check_summary();
}
