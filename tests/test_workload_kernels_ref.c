/*
** The CPU references of the workload kernels (kernels/kernel_ref.h), which the GPU tests
** compare the CUDA kernels against: each checked against an independent computation (a
** direct formula, a finite-difference gradient, a round trip), and the references composed
** into one training step as ovl-ddp composes the kernels, against the float64 trainer.
*/
#include "bucket_plan.h"
#include "check.h"
#include "data.h"
#include "emulated_shape.h"
#include "kernel_ref.h"
#include "ref_trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float rnd(uint64_t stream, uint64_t i) { return ovl_uniform(12345, stream, i); }

static void fill(float *x, int64_t n, uint64_t stream, float scale) {
  for (int64_t i = 0; i < n; i++) x[i] = scale * rnd(stream, (uint64_t)i);
}

static void check_elementwise(void) {
  enum { R = 7, C = 5 };
  float z[R * C], z0[R * C], b[C];
  fill(z0, R * C, 1, 2.0f);
  fill(b, C, 2, 1.0f);
  memcpy(z, z0, sizeof z);
  ovl_ref_bias_act(z, b, R, C, 0);
  for (int i = 0; i < R * C; i++) CHECK_NEAR(z[i], z0[i] + b[i % C], 0);
  memcpy(z, z0, sizeof z);
  ovl_ref_bias_act(z, b, R, C, 1);
  int zeros = 0;
  for (int i = 0; i < R * C; i++) {
    CHECK_NEAR(z[i], fmaxf(0.0f, z0[i] + b[i % C]), 0);
    zeros += z[i] == 0;
  }
  CHECK(zeros > 0 && zeros < R * C);  /* the data exercises both sides of the ReLU */

  /* ReLU backward = upstream gradient times the ReLU's finite-difference slope. */
  float a[R * C], dz[R * C], up[R * C];
  fill(up, R * C, 3, 1.0f);
  for (int i = 0; i < R * C; i++) a[i] = fmaxf(0.0f, z0[i]);
  memcpy(dz, up, sizeof dz);
  ovl_ref_relu_backward(dz, a, R * C);
  for (int i = 0; i < R * C; i++) {
    double h = 1e-3, slope = (fmax(0.0, z0[i] + h) - fmax(0.0, z0[i] - h)) / (2 * h);
    CHECK_NEAR(dz[i], up[i] * slope, 1e-6);
  }

  float w[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, g[9] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  ovl_ref_sgd(w, g, 9, 0.5f);
  for (int i = 0; i < 9; i++) CHECK_NEAR(w[i], (i + 1) - 0.5 * (9 - i), 0);
  ovl_ref_scale(w, 9, 0.25f);
  for (int i = 0; i < 9; i++) CHECK_NEAR(w[i], ((i + 1) - 0.5 * (9 - i)) / 4, 0);
}

/* Bias gradient: the derivative of sum(dz * (z + b)) with respect to b. */
static void check_bias_grad(void) {
  enum { R = 33, C = 6 };
  float dz[R * C], db[C];
  fill(dz, R * C, 4, 1.0f);
  ovl_ref_bias_grad(dz, R, C, db);
  for (int c = 0; c < C; c++) {
    double sum = 0;
    for (int r = R - 1; r >= 0; r--) sum += dz[r * C + c];  /* another order */
    CHECK_NEAR(db[c], sum, 1e-5);
  }
}

static double mean_xent(const float *logits, const int32_t *labels, int rows, int classes) {
  double total = 0;
  for (int r = 0; r < rows; r++) {
    double denom = 0;
    for (int c = 0; c < classes; c++) denom += exp((double)logits[r * classes + c]);
    total += -log(exp((double)logits[r * classes + labels[r]]) / denom);
  }
  return total / rows;
}

/* Softmax cross-entropy: the loss against -log(softmax) written directly; the logits'
** gradient against central differences of the mean loss. */
static void check_softmax_xent(void) {
  enum { R = 6, K = 10 };
  float logits[R * K], d[R * K], loss[R];
  int32_t labels[R];
  fill(logits, R * K, 5, 3.0f);
  for (int r = 0; r < R; r++) labels[r] = (r * 7) % K;
  ovl_ref_softmax_xent(logits, labels, R, K, 1.0f / R, d, loss);
  double mean = 0;
  for (int r = 0; r < R; r++) mean += loss[r];
  CHECK_NEAR(mean / R, mean_xent(logits, labels, R, K), 1e-6);
  for (int i = 0; i < R * K; i++) {
    float saved = logits[i];
    float h = 1e-2f;
    logits[i] = saved + h;
    double up = mean_xent(logits, labels, R, K);
    logits[i] = saved - h;
    double down = mean_xent(logits, labels, R, K);
    logits[i] = saved;
    CHECK_NEAR(d[i], (up - down) / (2.0 * h), 2e-5);
  }
  /* Gradient rows sum to zero (softmax sums to one); huge logits stay finite. */
  for (int r = 0; r < R; r++) {
    double s = 0;
    for (int c = 0; c < K; c++) s += d[r * K + c];
    CHECK_NEAR(s, 0, 1e-6);
  }
  for (int i = 0; i < R * K; i++) logits[i] *= 400.0f;
  ovl_ref_softmax_xent(logits, labels, R, K, 1.0f / R, d, loss);
  for (int r = 0; r < R; r++) CHECK(isfinite(loss[r]) && loss[r] >= 0);
}

/* L = sum over r, o of g[r][o] * (a w^T)[r][o], with element bump_w of w or bump_a of a
** raised by one (-1: none). */
static double objective(const float *a, const float *w, const float *g, int rows, int in, int out, int bump_w,
                        int bump_a) {
  double total = 0;
  for (int r = 0; r < rows; r++)
    for (int o = 0; o < out; o++) {
      double dot = 0;
      for (int i = 0; i < in; i++)
        dot += ((double)a[r * in + i] + (r * in + i == bump_a)) * ((double)w[o * in + i] + (o * in + i == bump_w));
      total += g[r * out + o] * dot;
    }
  return total;
}

/* The three products of a linear layer, as gradients of L = sum(G * (A W^T)):
** dL/dW = G^T A (weight_grad) and dL/dA = G W (input_grad), by finite differences. */
static void check_linear(void) {
  enum { ROWS = 5, IN = 7, OUT = 3 };
  float a[ROWS * IN], w[OUT * IN], g[ROWS * OUT], z[ROWS * OUT], dw[OUT * IN], da[ROWS * IN];
  fill(a, ROWS * IN, 6, 1.0f);
  fill(w, OUT * IN, 7, 1.0f);
  fill(g, ROWS * OUT, 8, 1.0f);
  ovl_ref_linear_forward(a, w, ROWS, IN, OUT, z);
  for (int r = 0; r < ROWS; r++)
    for (int o = 0; o < OUT; o++) {
      double s = 0;
      for (int i = IN - 1; i >= 0; i--) s += (double)w[o * IN + i] * a[r * IN + i];
      CHECK_NEAR(z[r * OUT + o], s, 1e-6);
    }
  ovl_ref_linear_weight_grad(g, a, ROWS, IN, OUT, dw);
  ovl_ref_linear_input_grad(g, w, ROWS, IN, OUT, da);
  /* L is linear in each operand, so a unit step gives the exact derivative. */
  double base = objective(a, w, g, ROWS, IN, OUT, -1, -1);
  for (int k = 0; k < OUT * IN; k++) CHECK_NEAR(dw[k], objective(a, w, g, ROWS, IN, OUT, k, -1) - base, 1e-5);
  for (int k = 0; k < ROWS * IN; k++) CHECK_NEAR(da[k], objective(a, w, g, ROWS, IN, OUT, -1, k) - base, 1e-5);
}

/* Packing a real plan's buckets and unpacking them restores every gradient; a bucket holds
** its parameters back to back in bucket order. */
static void check_pack_unpack(void) {
  ovl_err err;
  ovl_model m;
  ovl_model_lookup("784-300-100-10", &m, &err);
  ovl_plan plan;
  ovl_plan_options o = {OVL_MODE_MISORDERED, 200000, 400000, 0};
  CHECK_I64(ovl_plan_build(&m, &o, &plan, &err), OVL_OK);
  CHECK(plan.nbuckets >= 2);
  int64_t n = ovl_model_param_floats(&m);
  float *flat = malloc((size_t)n * sizeof(float)), *back = calloc((size_t)n, sizeof(float));
  float *buckets = malloc((size_t)plan.bucket_floats * sizeof(float));
  fill(flat, n, 9, 1.0f);
  for (int k = 0; k < plan.nbuckets; k++) {
    const ovl_bucket *b = &plan.buckets[k];
    /* One gradient at a time, as the trainer packs them when they become ready. */
    for (int i = b->first_member; i < b->first_member + b->nmembers; i++)
      ovl_ref_pack(flat, buckets + b->base, &plan.segments[i], 1);
    int64_t at = b->base;
    for (int i = b->first_member; i < b->first_member + b->nmembers; i++) {
      const ovl_param *p = &plan.params[plan.members[i]];
      CHECK(memcmp(buckets + at, flat + p->offset, (size_t)p->count * sizeof(float)) == 0);
      at += p->count;
    }
    ovl_ref_unpack(buckets + b->base, back, plan.segments + b->first_member, b->nmembers);
  }
  CHECK(memcmp(back, flat, (size_t)n * sizeof(float)) == 0);
  free(flat);
  free(back);
  free(buckets);
  ovl_plan_free(&plan);
}

static void check_emulated_time(void) {
  /* alpha + 2(n-1)/n * bytes / beta */
  CHECK_NEAR(ovl_emulated_allreduce_ns(50e3, 25e9, 1, 1e9), 50e3, 1e-6);         /* one rank: no transfer */
  CHECK_NEAR(ovl_emulated_allreduce_ns(50e3, 25e9, 2, 25e6), 50e3 + 1e6, 1e-3);  /* 25 MB at 25 GB/s */
  CHECK_NEAR(ovl_emulated_allreduce_ns(0, 10e9, 8, 10e6), 1.75e6, 1e-3);
  CHECK(ovl_emulated_allreduce_ns(50e3, 25e9, 8, 2e6) < ovl_emulated_allreduce_ns(50e3, 25e9, 8, 4e6));
  /* all-gather and reduce-scatter: half an all-reduce's transfer (one ring pass) */
  CHECK_NEAR(ovl_emulated_allgather_ns(50e3, 25e9, 1, 1e9), 50e3, 1e-6);
  CHECK_NEAR(ovl_emulated_allgather_ns(50e3, 25e9, 2, 25e6), 50e3 + 0.5e6, 1e-3);
  CHECK_NEAR(ovl_emulated_allgather_ns(0, 10e9, 8, 10e6), 0.875e6, 1e-3);
}

/* One training step composed from the references exactly as ovl-ddp composes the kernels
** (gpu_mlp.c: forward products and bias+ReLU, softmax cross-entropy scaled by 1/rows, bias
** then weight gradient, input gradient through the ReLU, SGD), against the float64 trainer. */
static void check_composed_step(void) {
  ovl_err err;
  ovl_model m;
  ovl_model_lookup("20-16-12-10", &m, &err);
  enum { ROWS = 8 };
  ovl_dataset d;
  ovl_dataset_init(&d, 3, 64, 20, 10, &err);
  ovl_sharding sh = {64, ROWS, 1};
  int64_t n = ovl_model_param_floats(&m);
  float *params = malloc((size_t)n * sizeof(float)), *grads = malloc((size_t)n * sizeof(float));
  double *ref = malloc((size_t)n * sizeof(double));
  ovl_init_params(&m, 5, params);
  for (int64_t i = 0; i < n; i++) ref[i] = params[i];
  ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
  ovl_model_params(&m, ps);

  float x[ROWS * 20], act[4][ROWS * 20], dz[ROWS * 20], dz_next[ROWS * 20], loss[ROWS];
  int32_t labels[ROWS];
  for (int i = 0; i < ROWS; i++) ovl_dataset_sample(&d, ovl_shard_sample(&sh, 0, 0, i), x + i * 20, &labels[i]);
  const float *in = x;
  for (int l = 0; l < m.nlayers; l++) {
    ovl_ref_linear_forward(in, params + ps[2 * l].offset, ROWS, m.width[l], m.width[l + 1], act[l + 1]);
    ovl_ref_bias_act(act[l + 1], params + ps[2 * l + 1].offset, ROWS, m.width[l + 1], l < m.nlayers - 1);
    in = act[l + 1];
  }
  ovl_ref_softmax_xent(act[m.nlayers], labels, ROWS, 10, 1.0f / ROWS, dz, loss);
  for (int l = m.nlayers - 1; l >= 0; l--) {
    const float *a = l == 0 ? x : act[l];
    ovl_ref_bias_grad(dz, ROWS, m.width[l + 1], grads + ps[2 * l + 1].offset);
    ovl_ref_linear_weight_grad(dz, a, ROWS, m.width[l], m.width[l + 1], grads + ps[2 * l].offset);
    if (l == 0) break;
    ovl_ref_linear_input_grad(dz, params + ps[2 * l].offset, ROWS, m.width[l], m.width[l + 1], dz_next);
    ovl_ref_relu_backward(dz_next, act[l], ROWS * m.width[l]);
    memcpy(dz, dz_next, sizeof dz);
  }
  float *start = malloc((size_t)n * sizeof(float));
  memcpy(start, params, (size_t)n * sizeof(float));
  ovl_ref_sgd(params, grads, n, 0.1f);

  ovl_ref_run run = {&m, &d, sh, 1, 0, 1, 0.1, 1, 0};
  double ref_loss = 0;
  CHECK_I64(ovl_ref_train(&run, ref, &ref_loss, &err), OVL_OK);
  double mean = 0;
  for (int i = 0; i < ROWS; i++) mean += loss[i];
  CHECK_NEAR(mean / ROWS, ref_loss, 1e-5);
  double worst = 0, biggest = 0;
  for (int64_t i = 0; i < n; i++) {
    worst = fmax(worst, fabs(params[i] - ref[i]));
    biggest = fmax(biggest, fabs(ref[i] - start[i]));
  }
  CHECK(biggest > 0);
  CHECK(worst <= 1e-4 * biggest + 1e-7);
  free(params);
  free(grads);
  free(ref);
  free(start);
  ovl_dataset_free(&d);
}

/* One emulated collective's shape: within bounds, and its touch fits in its share of the wait
** at the assumed per-block rate (or it touches one group, the least it can). */
static int shape_fits(int64_t bytes, double wait_ns) {
  ovl_emulated_shape sh = ovl_emulated_shape_for(bytes, (int64_t)wait_ns);
  double touch_ns = ovl_emulated_touch_bytes(bytes, sh) / (sh.blocks * OVL_EMULATED_BLOCK_BYTES_PER_NS);
  int ok = sh.blocks >= 1 && sh.blocks <= OVL_EMULATED_MAX_BLOCKS && sh.stride >= 1 &&
           (touch_ns <= OVL_EMULATED_TOUCH_SHARE * wait_ns || ovl_emulated_touch_bytes(bytes, sh) <= 32.0);
  /* the whole buffer whenever the blocks allow it */
  double all_ns = 2.0 * bytes / (OVL_EMULATED_MAX_BLOCKS * OVL_EMULATED_BLOCK_BYTES_PER_NS);
  if (all_ns <= OVL_EMULATED_TOUCH_SHARE * wait_ns && sh.stride != 1) ok = 0;
  if (!ok)
    fprintf(stderr, "%lld bytes, wait %.0f ns: %d blocks, stride %lld, touch %.0f ns\n", (long long)bytes, wait_ns,
            sh.blocks, (long long)sh.stride, touch_ns);
  return ok;
}

/* The emulated kernels last the modelled alpha + bytes/beta for every bucket of every plan
** ovl-ddp can make (models, modes, caps; the defaults, and the GPU tests' 1 ms / 100 GB/s / 8
** ranks), and for a fast fabric where the buffer cannot all be touched in time. */
static void check_emulated_shapes(void) {
  static const char *models[] = {"small", "medium", "large", "xlarge"};
  static const double fabrics[][3] = {{50e3, 25e9, 8}, {1e6, 100e9, 8}, {5e3, 900e9, 8}, {50e3, 25e9, 1}};
  static const int64_t caps[] = {1 << 20, 5 << 20, 25 << 20, 100 << 20};
  int buckets = 0, strided = 0;
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
    ovl_model m;
    ovl_err err;
    CHECK_I64(ovl_model_lookup(models[mi], &m, &err), OVL_OK);
    for (int mode = OVL_MODE_NAIVE; mode < OVL_MODE_COUNT; mode++)
      for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
        ovl_plan_options o = {(ovl_mode)mode, caps[ci], caps[ci], 0};
        ovl_plan plan;
        if (ovl_plan_build(&m, &o, &plan, &err) != OVL_OK) continue;
        for (int k = 0; k < plan.nbuckets; k++)
          for (size_t f = 0; f < sizeof fabrics / sizeof fabrics[0]; f++) {
            double bytes = (double)plan.buckets[k].bytes;
            double wait = ovl_emulated_allreduce_ns(fabrics[f][0], fabrics[f][1], (int)fabrics[f][2], bytes);
            CHECK(shape_fits(plan.buckets[k].bytes, wait));
            strided += ovl_emulated_shape_for(plan.buckets[k].bytes, (int64_t)wait).stride > 1;
            buckets++;
          }
        ovl_plan_free(&plan);
      }
  }
  printf("emulated shapes: %d buckets x fabrics checked, %d touch a share of their buffer\n", buckets, strided);
  CHECK(buckets > 100);
  CHECK(strided > 0);  /* the fast fabric and the one-rank wait exercise the stride */
  /* the one-block kernel of before could not: a 100 MiB all-reduce at 1 ms / 100 GB/s on 8 ranks
  ** waits 2.8 ms, and touching it in half of that takes 15 blocks at the rate */
  double wait = ovl_emulated_allreduce_ns(1e6, 100e9, 8, 100 << 20);
  ovl_emulated_shape big = ovl_emulated_shape_for(100 << 20, (int64_t)wait);
  CHECK(big.blocks > 1 && big.blocks < OVL_EMULATED_MAX_BLOCKS && big.stride == 1);
  ovl_emulated_shape tiny = ovl_emulated_shape_for(4096, 50000);
  CHECK(tiny.blocks == 1 && tiny.stride == 1);
  ovl_emulated_shape none = ovl_emulated_shape_for(0, 0);
  CHECK(none.blocks == 1 && none.stride == 1);
  CHECK(shape_fits(1 << 30, 1000));  /* 1 GiB in 1 us: one group per block slot */
}

int main(void) {
  check_elementwise();
  check_bias_grad();
  check_softmax_xent();
  check_linear();
  check_pack_unpack();
  check_emulated_time();
  check_emulated_shapes();
  check_composed_step();
  return check_summary();
}
