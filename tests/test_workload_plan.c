/*
** ovl-ddp's bucket plans: every model x mode against the rules of the issue (bucket count
** and sizes, no split, first-bucket cap, index/launch order, misordered), the --plan JSON
** on a hand-worked example, and (when the CUDA binary was built: argv[1]) the binary's
** --plan output and usage errors.
*/
#include "bucket_plan.h"
#include "check.h"
#include "model.h"
#include "plan_json.h"
#include "run_cmd.h"
#include "ddp_options.h"
#include "zero3_plan.h"

#include <stdlib.h>
#include <string.h>

/* The models of the issue: layer widths and the parameter counts it states. */
static const struct {
  const char *name;
  int widths[10];
  int nwidths;
  int64_t stated_params;
} models[] = {
  {"small", {784, 1024, 512, 256, 10}, 5, 1462538},
  {"medium", {784, 2048, 2048, 1024, 512, 10}, 6, 8432138},
  {"large", {784, 4096, 4096, 2048, 2048, 1024, 512, 10}, 8, 35211786},
  {"xlarge", {784, 4096, 4096, 4096, 2048, 2048, 1024, 512, 10}, 9, 51993098},
};

static const int64_t MiB = 1048576;

/* Parameter p (registration order) of widths: its float count, from the layer sizes. */
static int64_t param_floats(const int *w, int p) {
  int l = p / 2;
  return p % 2 ? w[l + 1] : (int64_t)w[l + 1] * w[l];
}

static void check_model(int i) {
  ovl_err err;
  ovl_model m;
  CHECK_I64(ovl_model_lookup(models[i].name, &m, &err), OVL_OK);
  CHECK_I64(m.nlayers, models[i].nwidths - 1);
  int64_t total = 0;
  for (int l = 0; l + 1 < models[i].nwidths; l++) total += (int64_t)models[i].widths[l + 1] * (models[i].widths[l] + 1);
  CHECK_I64(total, models[i].stated_params);
  CHECK_I64(ovl_model_param_floats(&m), total);

  ovl_param ps[64];
  ovl_model_params(&m, ps);
  int64_t offset = 0;
  for (int p = 0; p < ovl_model_nparams(&m); p++) {
    char name[32];
    snprintf(name, sizeof name, "fc%d.%s", p / 2, p % 2 ? "bias" : "weight");
    CHECK_STR(ps[p].name, name);
    CHECK_I64(ps[p].count, param_floats(models[i].widths, p));
    CHECK_I64(ps[p].offset, offset);
    offset += ps[p].count;
  }
  CHECK_I64(offset, total);
}

/* The invariants every plan satisfies, whatever the mode. */
static void check_common(const ovl_plan *plan) {
  int n = plan->nparams;
  /* Gradients are ready in the reverse of registration. */
  for (int pos = 0; pos < n; pos++) CHECK_I64(plan->ready_order[pos], n - 1 - pos);
  /* No split: every parameter in exactly one bucket, whole. */
  int *seen = calloc((size_t)n, sizeof *seen);
  int64_t base = 0;
  for (int k = 0; k < plan->nbuckets; k++) {
    const ovl_bucket *b = &plan->buckets[k];
    int64_t floats = 0;
    CHECK(b->nmembers >= 1);
    for (int i = b->first_member; i < b->first_member + b->nmembers; i++) {
      int p = plan->members[i];
      seen[p]++;
      CHECK_I64(plan->bucket_of[p], k);
      CHECK_I64(plan->segments[i].count, plan->params[p].count);
      CHECK_I64(plan->segments[i].flat_offset, plan->params[p].offset);
      CHECK_I64(plan->segments[i].bucket_offset, floats);
      floats += plan->params[p].count;
      int pos = ovl_plan_ready_pos(plan, p);
      CHECK(pos <= b->ready_pos);
    }
    CHECK_I64(b->floats, floats);
    CHECK_I64(b->bytes, 4 * floats);
    if (plan->packed) {
      CHECK_I64(b->base, base);
      base += floats;
    }
    /* Launch rule: after its last gradient and after bucket k-1 (strict index order). */
    int expect = b->ready_pos;
    if (k > 0 && plan->buckets[k - 1].launch_pos > expect) expect = plan->buckets[k - 1].launch_pos;
    if (plan->opt.mode == OVL_MODE_NAIVE) expect = n - 1;
    CHECK_I64(b->launch_pos, expect);
    CHECK_I64(plan->launch_order[k], k);
  }
  if (plan->packed) CHECK_I64(plan->bucket_floats, base);
  for (int p = 0; p < n; p++) CHECK_I64(seen[p], plan->opt.mode == OVL_MODE_SINGLE ? 0 : 1);
  free(seen);
}

/* The size rule walked in `walk` order: each bucket is a run of consecutive parameters that
** reaches its cap and would not without its last parameter; only the last may stay below. */
static void check_size_rule(const ovl_plan *plan, const int *walk) {
  int i = 0;
  for (int k = 0; k < plan->nbuckets; k++) {
    const ovl_bucket *b = &plan->buckets[k];
    int64_t cap = k == 0 ? plan->opt.first_cap_bytes : plan->opt.cap_bytes;
    int64_t bytes = 0;
    for (int j = 0; j < b->nmembers; j++, i++) {
      CHECK_I64(plan->members[b->first_member + j], walk[i]);
      int64_t pb = 4 * plan->params[walk[i]].count;
      if (j < b->nmembers - 1) CHECK(bytes + pb < cap);  /* would have closed earlier */
      bytes += pb;
    }
    if (k < plan->nbuckets - 1) CHECK(bytes >= cap);
  }
  CHECK_I64(i, plan->nparams);
}

static void build(const ovl_model *m, ovl_mode mode, int64_t first, int64_t cap, int find_unused, ovl_plan *plan) {
  ovl_err err;
  ovl_plan_options o = {mode, first, cap, find_unused};
  int rc = ovl_plan_build(m, &o, plan, &err);
  CHECK_I64(rc, OVL_OK);
  if (rc) fprintf(stderr, "%s\n", err.msg);
}

static void check_modes(const ovl_model *m, int64_t first, int64_t cap) {
  int n = ovl_model_nparams(m);
  int walk_ready[64], walk_registration[64];
  for (int i = 0; i < n; i++) {
    walk_ready[i] = n - 1 - i;
    walk_registration[i] = i;
  }
  ovl_plan plan;

  build(m, OVL_MODE_SINGLE, first, cap, 0, &plan);
  CHECK_I64(plan.nbuckets, 0);
  check_common(&plan);
  ovl_plan_free(&plan);

  /* naive and interleaved: one all-reduce per gradient, in ready order. */
  for (int mode = OVL_MODE_NAIVE; mode <= OVL_MODE_INTERLEAVED; mode++) {
    build(m, (ovl_mode)mode, first, cap, 0, &plan);
    CHECK_I64(plan.nbuckets, n);
    CHECK(!plan.packed);
    check_common(&plan);
    for (int k = 0; k < plan.nbuckets; k++) {
      CHECK_I64(plan.buckets[k].nmembers, 1);
      CHECK_I64(plan.members[k], walk_ready[k]);
      CHECK_I64(plan.buckets[k].launch_pos, mode == OVL_MODE_NAIVE ? n - 1 : k);
    }
    ovl_plan_free(&plan);
  }

  build(m, OVL_MODE_BUCKETED, first, cap, 0, &plan);
  CHECK(plan.packed);
  check_common(&plan);
  check_size_rule(&plan, walk_ready);
  /* Ready order: each bucket launches as soon as its own last gradient is ready. */
  for (int k = 0; k < plan.nbuckets; k++) CHECK_I64(plan.buckets[k].launch_pos, plan.buckets[k].ready_pos);
  ovl_plan_free(&plan);

  build(m, OVL_MODE_MISORDERED, first, cap, 0, &plan);
  check_common(&plan);
  check_size_rule(&plan, walk_registration);
  /* Bucket 0 holds the first layer's weight, ready last: nothing launches before the end. */
  CHECK_I64(plan.bucket_of[0], 0);
  CHECK_I64(plan.buckets[0].ready_pos, n - 1);
  for (int k = 0; k < plan.nbuckets; k++) CHECK_I64(plan.buckets[k].launch_pos, n - 1);
  ovl_plan_free(&plan);
}

/* Bucket counts worked out by hand for the default caps (1 MiB first, 25 MiB after). */
static void check_default_counts(void) {
  /* small, ready order: fc3.b 40 B, fc3.w 10 KiB, fc2.b, fc2.w 512 KiB, fc1.b, fc1.w 2 MiB
  ** -> reaches 1 MiB at fc1.w; fc0.b + fc0.w (3.2 MB) stay below 25 MiB: 2 buckets. */
  static const struct { const char *model; int bucketed, misordered; } expected[] = {
    {"small", 2, 2},
    /* medium: b0 ends at fc3.w (2 MiB); fc2.w 8 MiB + fc1.w 16 MiB < 25 MiB, + fc0.w 6.4 MB
    ** closes b1: 2 buckets. misordered: fc0.w 6.4 MB >= 1 MiB alone; fc0.b, fc1.w 16 MiB,
    ** fc1.b, fc2.w 8 MiB reach 24 MiB + 8 KiB, + fc2.b < 25 MiB, + fc3.w 2 MiB closes;
    ** the rest (fc3.b, fc4) is the third. */
    {"medium", 2, 3},
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    ovl_err err;
    ovl_model m;
    ovl_model_lookup(expected[i].model, &m, &err);
    ovl_plan plan;
    build(&m, OVL_MODE_BUCKETED, MiB, 25 * MiB, 0, &plan);
    CHECK_I64(plan.nbuckets, expected[i].bucketed);
    ovl_plan_free(&plan);
    build(&m, OVL_MODE_MISORDERED, MiB, 25 * MiB, 0, &plan);
    CHECK_I64(plan.nbuckets, expected[i].misordered);
    ovl_plan_free(&plan);
  }
}

static void check_caps_and_errors(void) {
  ovl_err err;
  ovl_model m;
  ovl_model_lookup("large", &m, &err);
  int n = ovl_model_nparams(&m);
  ovl_plan plan;
  /* A 1-byte first cap closes bucket 0 on the first gradient (the last layer's bias). */
  build(&m, OVL_MODE_BUCKETED, 1, 25 * MiB, 0, &plan);
  CHECK_I64(plan.buckets[0].nmembers, 1);
  CHECK_I64(plan.members[0], n - 1);
  ovl_plan_free(&plan);
  /* Caps larger than the model: one bucket holding everything. */
  build(&m, OVL_MODE_BUCKETED, 1000 * MiB, 1000 * MiB, 0, &plan);
  CHECK_I64(plan.nbuckets, 1);
  CHECK_I64(plan.buckets[0].bytes, 4 * ovl_model_param_floats(&m));
  ovl_plan_free(&plan);
  /* Tiny caps: every gradient is its own bucket, never split. */
  build(&m, OVL_MODE_BUCKETED, 1, 1, 0, &plan);
  CHECK_I64(plan.nbuckets, n);
  ovl_plan_free(&plan);

  /* A bucket that reaches its cap exactly is closed (size >= cap): 4-3-2 has fc1.bias 8 B and
  ** fc1.weight 24 B, so a 32-byte first cap closes bucket 0 right after fc1.weight. */
  ovl_model tiny;
  ovl_model_lookup("4-3-2", &tiny, &err);
  build(&tiny, OVL_MODE_BUCKETED, 32, 1000, 0, &plan);
  CHECK_I64(plan.nbuckets, 2);
  CHECK_I64(plan.buckets[0].nmembers, 2);
  ovl_plan_free(&plan);
  build(&tiny, OVL_MODE_BUCKETED, 33, 1000, 0, &plan);  /* one byte more: fc0.bias joins it */
  CHECK_I64(plan.nbuckets, 2);
  CHECK_I64(plan.buckets[0].nmembers, 3);
  ovl_plan_free(&plan);

  build(&m, OVL_MODE_BUCKETED, MiB, 25 * MiB, 1, &plan);
  CHECK_I64(plan.used_map_bytes, 4 * n);
  ovl_plan_free(&plan);
  ovl_plan_options bad = {OVL_MODE_NAIVE, MiB, 25 * MiB, 1};
  CHECK_I64(ovl_plan_build(&m, &bad, &plan, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "find_unused") != NULL);
  ovl_plan_options zero = {OVL_MODE_BUCKETED, 0, 25 * MiB, 0};
  CHECK_I64(ovl_plan_build(&m, &zero, &plan, &err), OVL_EUSER);

  ovl_mode mode;
  CHECK_I64(ovl_mode_lookup("misordered", &mode, &err), OVL_OK);
  CHECK_I64(mode, OVL_MODE_MISORDERED);
  CHECK_I64(ovl_mode_lookup("ddp", &mode, &err), OVL_EUSER);
  CHECK_I64(ovl_model_lookup("784-64-10", &m, &err), OVL_OK);
  CHECK_I64(m.nlayers, 2);
  CHECK_I64(m.width[1], 64);
  const char *bad_models[] = {"tiny", "784", "784-0-10", "784--10", "784-10-", "-784-10", "784-10x", ""};
  for (size_t i = 0; i < sizeof bad_models / sizeof bad_models[0]; i++) {
    CHECK_I64(ovl_model_lookup(bad_models[i], &m, &err), OVL_EUSER);
    CHECK(strstr(err.msg, "model") != NULL);
  }
}

/* --plan JSON of a 4-3-2 network, worked out by hand: fc0.weight 12 floats (48 B), fc0.bias
** 12 B, fc1.weight 24 B, fc1.bias 8 B; first cap 30 B, cap 40 B. Ready order fc1.bias,
** fc1.weight (32 B >= 30: bucket 0), fc0.bias, fc0.weight (60 B: bucket 1). */
static void check_json(void) {
  static const char expected[] =
      "{\"model\":\"4-3-2\",\"mode\":\"bucketed\",\"widths\":[4,3,2],\"param_floats\":23,"
      "\"first_bucket_bytes\":30,\"bucket_bytes\":40,"
      "\"params\":[{\"name\":\"fc0.weight\",\"bytes\":48},{\"name\":\"fc0.bias\",\"bytes\":12},"
      "{\"name\":\"fc1.weight\",\"bytes\":24},{\"name\":\"fc1.bias\",\"bytes\":8}],"
      "\"ready_order\":[\"fc1.bias\",\"fc1.weight\",\"fc0.bias\",\"fc0.weight\"],"
      "\"buckets\":[{\"index\":0,\"params\":[\"fc1.bias\",\"fc1.weight\"],\"bytes\":32,"
      "\"ready_after\":\"fc1.weight\",\"launch_after\":\"fc1.weight\"},"
      "{\"index\":1,\"params\":[\"fc0.bias\",\"fc0.weight\"],\"bytes\":60,"
      "\"ready_after\":\"fc0.weight\",\"launch_after\":\"fc0.weight\"}],"
      "\"launch_order\":[0,1],\"find_unused\":{\"used_map_bytes\":16,\"after_bucket\":1}}\n";
  ovl_err err;
  ovl_model m;
  ovl_model_lookup("4-3-2", &m, &err);
  ovl_plan plan;
  build(&m, OVL_MODE_BUCKETED, 30, 40, 1, &plan);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK_I64(ovl_plan_write_json(&plan, f, 0), 0);
  fclose(f);
  CHECK_STR(text, expected);
  free(text);
  ovl_plan_free(&plan);

  /* Misordered: bucket 0 = fc0.weight (48 B >= 30) ready last, so both launch after it. */
  build(&m, OVL_MODE_MISORDERED, 30, 40, 0, &plan);
  f = open_memstream(&text, &len);
  ovl_plan_write_json(&plan, f, 0);
  fclose(f);
  CHECK(strstr(text, "\"buckets\":[{\"index\":0,\"params\":[\"fc0.weight\"],\"bytes\":48,\"ready_after\":"
                     "\"fc0.weight\",\"launch_after\":\"fc0.weight\"},{\"index\":1,\"params\":[\"fc0.bias\","
                     "\"fc1.weight\",\"fc1.bias\"],\"bytes\":44,\"ready_after\":\"fc0.bias\",\"launch_after\":"
                     "\"fc0.weight\"}]") != NULL);
  CHECK(strstr(text, "\"find_unused\":null") != NULL);
  free(text);
  ovl_plan_free(&plan);
}

/* The CUDA binary prints the library's plan, needs no GPU for it, and reports bad usage.
** Every mode and option on the first model, the default mode on the others: each start of
** the binary loads cuBLAS and NCCL (~0.7 s here, several under ASan), and the library's
** plans themselves are checked for every model above. */
static void check_binary(const char *ovl_ddp) {
  static const char *extra[] = {"", "--bucket-mb 4 --first-bucket-mb 0.5", "--find-unused"};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    for (int mode = 0; mode < OVL_MODE_COUNT; mode++)
      for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++) {
        int find_unused = strstr(extra[e], "find-unused") != NULL;
        if (find_unused && mode != OVL_MODE_BUCKETED && mode != OVL_MODE_MISORDERED) continue;
        if (i > 0 && (mode != OVL_MODE_BUCKETED || e > 0)) continue;
        char cmd[512];
        snprintf(cmd, sizeof cmd, "'%s' --plan --model %s --mode %s %s", ovl_ddp, models[i].name,
                 ovl_mode_names[mode], extra[e]);
        cmd_result r = run_cmd(cmd);
        CHECK_I64(r.status, 0);
        ovl_err err;
        ovl_model m;
        ovl_model_lookup(models[i].name, &m, &err);
        int small_caps = e == 1;
        ovl_plan plan;
        build(&m, (ovl_mode)mode, small_caps ? MiB / 2 : MiB, small_caps ? 4 * MiB : 25 * MiB, find_unused, &plan);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ovl_plan_write_json(&plan, f, 1);
        fclose(f);
        CHECK_STR(r.out, text);
        free(text);
        ovl_plan_free(&plan);
        cmd_free(&r);
      }
  static const char *bad[] = {"--plan --mode naive --find-unused", "--plan --model tiny", "--plan --bucket-mb 0",
                              "--plan --bogus", "--plan --mode", "--plan extra"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' %s", ovl_ddp, bad[i]);
    cmd_result r = run_cmd(cmd);
    CHECK_I64(r.status, 1);
    CHECK_I64(count_lines(r.err), 1);
    CHECK(strncmp(r.err, "ovl-ddp: ", 9) == 0);
    CHECK_STR(r.out, "");
    cmd_free(&r);
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "'%s' --help", ovl_ddp);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "--first-bucket-mb") != NULL);
  cmd_free(&r);
}

/* --mode zero3: one reduce-scatter unit per layer after its weight gradient, the gathers with
** the next layer prefetched, the padded shards, the --plan JSON, and the world sizes it trains on. */
static void check_zero3(const ovl_model *m) {
  ovl_plan plan;
  build(m, OVL_MODE_ZERO3, MiB, 25 * MiB, 0, &plan);
  check_common(&plan);
  int L = m->nlayers;
  CHECK_I64(plan.nbuckets, L);
  CHECK(!plan.packed);
  for (int k = 0; k < plan.nbuckets; k++) {
    const ovl_bucket *b = &plan.buckets[k];
    int layer = L - 1 - k;
    CHECK_I64(b->nmembers, 2);
    CHECK_I64(plan.members[b->first_member], 2 * layer + 1);  /* bias, ready first */
    CHECK_I64(plan.members[b->first_member + 1], 2 * layer);  /* then weight */
    CHECK_I64(b->launch_pos, 2 * k + 1);                      /* right after the weight */
    CHECK_I64(b->floats, ovl_z3_layer_floats(m, layer));
    /* the layer's slice is contiguous: reduced in place */
    CHECK_I64(plan.params[2 * layer + 1].offset, plan.params[2 * layer].offset + plan.params[2 * layer].count);
  }
  ovl_z3_gather g[2 * OVL_MODEL_MAX_LAYERS];
  int n = ovl_z3_gathers(m, g);
  CHECK_I64(n, 2 * L);
  int fwd_seen[OVL_MODEL_MAX_LAYERS] = {0}, bwd_seen[OVL_MODEL_MAX_LAYERS] = {0};
  for (int i = 0; i < n; i++) {
    if (g[i].backward) bwd_seen[g[i].layer]++;
    else fwd_seen[g[i].layer]++;
    if (i < L) {  /* forward, in layer order; layer l+1 prefetched while fc(l) computes */
      CHECK_I64(g[i].backward, 0);
      CHECK_I64(g[i].layer, i);
      CHECK_I64(g[i].trigger, i == 0 ? OVL_Z3_STEP_START : OVL_Z3_FORWARD_OF);
      if (i > 0) CHECK_I64(g[i].with, i - 1);
    } else {      /* backward, last layer first; layer l-1 prefetched while fc(l) computes */
      CHECK_I64(g[i].backward, 1);
      CHECK_I64(g[i].layer, 2 * L - 1 - i);
      CHECK_I64(g[i].trigger, i == L ? OVL_Z3_LOSS : OVL_Z3_BACKWARD_OF);
      if (i > L) CHECK_I64(g[i].with, g[i].layer + 1);
    }
  }
  for (int l = 0; l < L; l++) CHECK(fwd_seen[l] == 1 && bwd_seen[l] == 1);
  for (int nr = 1; nr <= 8; nr++)
    for (int l = 0; l < L; l++) {
      int64_t pf = ovl_z3_padded_floats(m, l, nr), f = ovl_z3_layer_floats(m, l);
      CHECK(pf % nr == 0 && pf >= f && pf - f < nr);
    }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ovl_plan_write_json(&plan, f, 0);
  fclose(f);
  CHECK(strstr(text, "\"mode\":\"zero3\"") != NULL);
  CHECK(strstr(text, "\"all_gathers\":[{\"layer\":0,\"phase\":\"forward\",\"issued_with\":\"step start\"") != NULL);
  CHECK(strstr(text, "{\"layer\":1,\"phase\":\"forward\",\"issued_with\":\"forward fc0\"") != NULL);
  free(text);
  ovl_plan_free(&plan);
  /* zero3 trains on any world size the batch splits over, NCCL or emulated */
  ovl_ddp_options o;
  ovl_err err;
  char *argv[] = {"ovl-ddp", "--mode", "zero3", NULL};
  CHECK_I64(ovl_ddp_parse_options(3, argv, &o, &err), OVL_OK);
  CHECK_I64(ovl_ddp_check_world(&o, 2, &err), OVL_OK);
  CHECK_I64(ovl_ddp_check_world(&o, 3, &err), OVL_EUSER);  /* 1024 samples over 3 ranks */
  char *emu[] = {"ovl-ddp", "--mode", "zero3", "--comm", "emulated", NULL};
  CHECK_I64(ovl_ddp_parse_options(5, emu, &o, &err), OVL_OK);
  CHECK_I64(ovl_ddp_check_world(&o, 1, &err), OVL_OK);
}

/* The shard layout the zero3 trainer allocates and communicates with: for every world size
** and rank, each layer's shards tile the layer exactly once (padding only at its end, less than
** one float per rank), shards and staging buffers are back to back. */
static void check_zero3_shards(const ovl_model *m) {
  ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
  ovl_model_params(m, ps);
  for (int nr = 1; nr <= 8; nr++) {
    int64_t covered[OVL_MODEL_MAX_LAYERS] = {0};
    for (int r = 0; r < nr; r++) {
      ovl_z3_shard sh[OVL_MODEL_MAX_LAYERS];
      ovl_z3_shard_layout(m, nr, r, sh);
      int64_t local = 0, staged = 0;
      for (int l = 0; l < m->nlayers; l++) {
        const ovl_z3_shard *s = &sh[l];
        CHECK_I64(s->layer_offset, ps[2 * l].offset);
        CHECK_I64(s->floats, ps[2 * l].count + ps[2 * l + 1].count);
        CHECK_I64(s->shard_floats * nr, s->padded);
        CHECK(s->padded >= s->floats && s->padded - s->floats < nr);
        CHECK_I64(s->begin, covered[l]);  /* rank r starts where rank r-1 ended */
        CHECK(s->valid >= 0 && s->valid <= s->shard_floats);
        if (s->valid < s->shard_floats) CHECK_I64(s->begin + s->valid, s->floats > s->begin ? s->floats : s->begin);
        covered[l] += s->shard_floats;
        CHECK_I64(s->local_offset, local);
        CHECK_I64(s->padded_offset, staged);
        local += s->shard_floats;
        staged += s->padded;
      }
      CHECK_I64(local, ovl_z3_local_floats(m, nr));
      CHECK_I64(staged, ovl_z3_staging_floats(m, nr));
    }
    for (int l = 0; l < m->nlayers; l++) CHECK_I64(covered[l], ovl_z3_padded_floats(m, l, nr));
  }
}

/* Worked by hand: 784-1-1 has fc0 785 floats and fc1 2; over 4 ranks fc0 pads to 788 (197 a
** rank, the last holding 194 real floats) and fc1 to 4 (ranks 2 and 3 hold only padding). */
static void check_zero3_shard_example(void) {
  ovl_model m;
  ovl_err err;
  CHECK_I64(ovl_model_lookup("784-1-1", &m, &err), OVL_OK);
  ovl_z3_shard sh[2];
  ovl_z3_shard_layout(&m, 4, 3, sh);
  CHECK_I64(sh[0].padded, 788);
  CHECK_I64(sh[0].shard_floats, 197);
  CHECK_I64(sh[0].begin, 591);
  CHECK_I64(sh[0].valid, 194);
  CHECK_I64(sh[1].layer_offset, 785);
  CHECK_I64(sh[1].begin, 3);
  CHECK_I64(sh[1].valid, 0);
  CHECK_I64(sh[1].local_offset, 197);
  CHECK_I64(sh[1].padded_offset, 788);
  ovl_z3_shard_layout(&m, 4, 1, sh);
  CHECK_I64(sh[1].valid, 1);
  CHECK_I64(ovl_z3_local_floats(&m, 4), 198);
  CHECK_I64(ovl_z3_staging_floats(&m, 4), 792);
}

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    check_model((int)i);
    ovl_err err;
    ovl_model m;
    ovl_model_lookup(models[i].name, &m, &err);
    check_modes(&m, MiB, 25 * MiB);
    check_modes(&m, MiB / 4, 4 * MiB);
    check_modes(&m, 8 * MiB, 8 * MiB);
  }
  check_default_counts();
  check_caps_and_errors();
  check_json();
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    ovl_err err;
    ovl_model m;
    ovl_model_lookup(models[i].name, &m, &err);
    check_zero3(&m);
    check_zero3_shards(&m);
  }
  check_zero3_shard_example();
  if (argc > 1) check_binary(argv[1]);
  else fprintf(stderr, "ovl-ddp not built (no CUDA toolkit): its --plan output is not checked\n");
  return check_summary();
}
