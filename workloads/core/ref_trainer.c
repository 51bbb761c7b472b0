/* Float64 reference training: see ref_trainer.h. */
#include "ref_trainer.h"

#include "ref_gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Buffers for one forward and backward pass. */
typedef struct ref_ws {
  double *act[OVL_MODEL_MAX_LAYERS + 1];  /* act[0] input, act[l+1] output of layer l (post-ReLU) */
  double *dz, *dz_next;                   /* gradient w.r.t. the current layer's output */
  double *scratch_a, *scratch_b;          /* transposes */
  /* Only when the undecidable ReLU inputs are tracked (ref_bound): */
  unsigned char *undecided[OVL_MODEL_MAX_LAYERS];  /* [rows][out] of each ReLU layer: 1 where float32
                                                   ** cannot decide the sign of the input */
  double *uncertain, *uncertain_next;     /* [rows][width]: bound on |dz| that such a sign may flip */
  unsigned char *row_uncertain;           /* [rows]: the row has a non-zero bound */
} ref_ws;

/* What ovl_ref_train_bounded accumulates (see ref_trainer.h). */
typedef struct ref_bound {
  double *allowance;   /* per parameter, NULL when not tracked */
  int64_t undecided;   /* ReLU inputs whose sign float32 could not decide */
  double lr;
} ref_bound;

static void ws_free(ref_ws *w, const ovl_model *m) {
  for (int l = 0; l <= m->nlayers; l++) free(w->act[l]);
  for (int l = 0; l < m->nlayers; l++) free(w->undecided[l]);
  free(w->uncertain);
  free(w->uncertain_next);
  free(w->row_uncertain);
  free(w->dz);
  free(w->dz_next);
  free(w->scratch_a);
  free(w->scratch_b);
}

static int ws_alloc(ref_ws *w, const ovl_model *m, int rows, int track, ovl_err *err) {
  memset(w, 0, sizeof *w);
  int64_t maxw = ovl_model_max_width(m);
  int64_t biggest = 0;  /* the largest weight matrix or activation */
  for (int l = 0; l < m->nlayers; l++)
    if ((int64_t)m->width[l] * m->width[l + 1] > biggest) biggest = (int64_t)m->width[l] * m->width[l + 1];
  if (rows * maxw > biggest) biggest = rows * maxw;
  int ok = 1;
  for (int l = 0; l <= m->nlayers; l++) ok &= (w->act[l] = malloc((size_t)rows * (size_t)m->width[l] * sizeof(double))) != NULL;
  ok &= (w->dz = malloc((size_t)(rows * maxw) * sizeof(double))) != NULL;
  ok &= (w->dz_next = malloc((size_t)(rows * maxw) * sizeof(double))) != NULL;
  ok &= (w->scratch_a = malloc((size_t)biggest * sizeof(double))) != NULL;
  ok &= (w->scratch_b = malloc((size_t)biggest * sizeof(double))) != NULL;
  if (track) {
    for (int l = 0; l < m->nlayers - 1; l++)
      ok &= (w->undecided[l] = calloc((size_t)rows * (size_t)m->width[l + 1], 1)) != NULL;
    ok &= (w->uncertain = calloc((size_t)(rows * maxw), sizeof(double))) != NULL;
    ok &= (w->uncertain_next = calloc((size_t)(rows * maxw), sizeof(double))) != NULL;
    ok &= (w->row_uncertain = calloc((size_t)rows, 1)) != NULL;
  }
  if (!ok) {
    ws_free(w, m);
    return ovl_oom(err, "reference trainer buffers");
  }
  return OVL_OK;
}

/* The bound on what a float32 evaluation of a ReLU input may differ by, relative to the sum of
** the magnitudes of its terms: a few units of rounding times sqrt(terms), the typical growth
** of a long float sum (a worst-case n*u bound would flag hundreds of inputs per step). */
static double undecided_margin(int terms) { return 2.0 * 0x1p-24 * sqrt((double)terms + 1); }

/* Marks the inputs of layer l's ReLU whose sign float32 cannot decide: |v| within the margin
** of sum |a_i w_i| + |b|. Uses the scratch buffers (free during the forward pass). */
static void find_undecided(ref_ws *ws, int l, int in, int out, int rows, const double *w, const double *b,
                           ref_bound *bound, int nthreads) {
  const double *a = ws->act[l];
  double *abs_a = ws->scratch_a, *abs_w = ws->scratch_b;
  double *mag = ws->uncertain;  /* [rows][out] <= rows * maxw, free until the backward pass */
  for (int64_t i = 0; i < (int64_t)rows * in; i++) abs_a[i] = fabs(a[i]);
  for (int64_t i = 0; i < (int64_t)out * in; i++) abs_w[i] = fabs(w[i]);
  ovl_ref_gemm_nt(abs_a, abs_w, rows, out, in, mag, nthreads);
  const double *z = ws->act[l + 1];  /* before bias and ReLU */
  double margin = undecided_margin(in);
  for (int64_t i = 0; i < (int64_t)rows * out; i++) {
    double v = z[i] + b[i % out];
    int undecided = fabs(v) <= margin * (mag[i] + fabs(b[i % out]));
    ws->undecided[l][i] = (unsigned char)undecided;
    bound->undecided += undecided;
  }
  memset(mag, 0, (size_t)rows * (size_t)out * sizeof(double));
}

/* At layer l in the backward pass, with ws->uncertain[rows][out] bounding how far float32 may
** have moved the gradient w.r.t. the layer's output (from undecided ReLU signs at or above
** it): adds the resulting bound on the SGD change of the layer's weights and bias to the
** allowance, then carries the bound down through |W| and the ReLU below (an undecided sign
** there adds its own). First order: a flipped sign moves the weights by lr times one sample's
** term, too little to change the later steps' gradients measurably. */
static void bound_layer(ref_ws *ws, int l, int in, int out, int rows, const double *w, double *allow_w,
                        double *allow_b, double lr) {
  const double *a = ws->act[l];
  double *next = ws->uncertain_next;
  memset(next, 0, (size_t)rows * (size_t)in * sizeof(double));
  for (int r = 0; r < rows; r++) {
    if (!ws->row_uncertain[r]) continue;
    const double *u = ws->uncertain + (int64_t)r * out;
    const double *ar = a + (int64_t)r * in;
    for (int o = 0; o < out; o++) {
      if (u[o] == 0) continue;
      allow_b[o] += lr * u[o];
      for (int i = 0; i < in; i++) allow_w[(int64_t)o * in + i] += lr * u[o] * fabs(ar[i]);
      if (l > 0)
        for (int i = 0; i < in; i++) next[(int64_t)r * in + i] += u[o] * fabs(w[(int64_t)o * in + i]);
    }
    if (l > 0)  /* through the ReLU below: where it was off (and decided), nothing flows */
      for (int i = 0; i < in; i++)
        if (!(a[i + (int64_t)r * in] > 0) && !ws->undecided[l - 1][(int64_t)r * in + i]) next[(int64_t)r * in + i] = 0;
  }
  double *t = ws->uncertain;
  ws->uncertain = ws->uncertain_next;
  ws->uncertain_next = t;
}

/* Forward, loss and (when grad) backward on the input already in ws->act[0]; with bound, also
** the undecided ReLU inputs and the allowance they make. */
static void pass(const ovl_model *m, const double *params, const int32_t *labels, int rows, ref_ws *ws,
                 double *loss, double *grad, int nthreads, ref_bound *bound) {
  ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
  ovl_model_params(m, ps);
  for (int l = 0; l < m->nlayers; l++) {
    int in = m->width[l], out = m->width[l + 1];
    const double *w = params + ps[2 * l].offset, *b = params + ps[2 * l + 1].offset;
    double *z = ws->act[l + 1];
    ovl_ref_gemm_nt(ws->act[l], w, rows, out, in, z, nthreads);
    int relu = l < m->nlayers - 1;
    if (relu && bound) find_undecided(ws, l, in, out, rows, w, b, bound, nthreads);
    for (int64_t i = 0; i < (int64_t)rows * out; i++) {
      double v = z[i] + b[i % out];
      z[i] = relu && v < 0 ? 0 : v;
    }
  }

  int classes = m->width[m->nlayers];
  const double *logits = ws->act[m->nlayers];
  double total = 0;
  for (int r = 0; r < rows; r++) {
    const double *x = logits + (int64_t)r * classes;
    double max = x[0];
    for (int c = 1; c < classes; c++)
      if (x[c] > max) max = x[c];
    double sum = 0;
    for (int c = 0; c < classes; c++) sum += exp(x[c] - max);
    double lse = max + log(sum);
    total += lse - x[labels[r]];
    for (int c = 0; c < classes; c++)
      ws->dz[(int64_t)r * classes + c] = (exp(x[c] - lse) - (c == labels[r])) / rows;
  }
  *loss = total / rows;
  if (!grad) return;

  if (bound) {
    int64_t width = ovl_model_max_width(m);
    memset(ws->row_uncertain, 0, (size_t)rows);
    memset(ws->uncertain, 0, (size_t)(rows * width) * sizeof(double));
    memset(ws->uncertain_next, 0, (size_t)(rows * width) * sizeof(double));
  }
  for (int l = m->nlayers - 1; l >= 0; l--) {
    int in = m->width[l], out = m->width[l + 1];
    double *dw = grad + ps[2 * l].offset, *db = grad + ps[2 * l + 1].offset;
    if (bound) bound_layer(ws, l, in, out, rows, params + ps[2 * l].offset, bound->allowance + ps[2 * l].offset,
                           bound->allowance + ps[2 * l + 1].offset, bound->lr);
    for (int o = 0; o < out; o++) db[o] = 0;
    for (int r = 0; r < rows; r++)
      for (int o = 0; o < out; o++) db[o] += ws->dz[(int64_t)r * out + o];
    /* dw[out][in] = dz^T . a  ==  (dz^T)(a^T)^T */
    ovl_ref_transpose(ws->dz, rows, out, ws->scratch_a);
    ovl_ref_transpose(ws->act[l], rows, in, ws->scratch_b);
    ovl_ref_gemm_nt(ws->scratch_a, ws->scratch_b, out, in, rows, dw, nthreads);
    if (l == 0) break;
    /* da[rows][in] = dz . w  ==  dz (w^T)^T, then through the ReLU of layer l-1 */
    ovl_ref_transpose(params + ps[2 * l].offset, out, in, ws->scratch_a);
    ovl_ref_gemm_nt(ws->dz, ws->scratch_a, rows, in, out, ws->dz_next, nthreads);
    /* An undecided input of layer l-1's ReLU: float32 may have let its gradient through. */
    if (bound)
      for (int64_t i = 0; i < (int64_t)rows * in; i++)
        if (ws->undecided[l - 1][i] && fabs(ws->dz_next[i]) > ws->uncertain[i]) {
          ws->uncertain[i] = fabs(ws->dz_next[i]);
          ws->row_uncertain[i / in] = 1;
        }
    for (int64_t i = 0; i < (int64_t)rows * in; i++)
      if (!(ws->act[l][i] > 0)) ws->dz_next[i] = 0;
    double *t = ws->dz;
    ws->dz = ws->dz_next;
    ws->dz_next = t;
  }
}

int ovl_ref_loss_grad(const ovl_model *m, const double *params, const float *x, const int32_t *labels, int rows,
                      double *loss, double *grad, int nthreads, ovl_err *err) {
  ref_ws ws;
  int rc = ws_alloc(&ws, m, rows, 0, err);
  if (rc) return rc;
  for (int64_t i = 0; i < (int64_t)rows * m->width[0]; i++) ws.act[0][i] = x[i];
  pass(m, params, labels, rows, &ws, loss, grad, nthreads, NULL);
  ws_free(&ws, m);
  return OVL_OK;
}

int ovl_ref_train(const ovl_ref_run *run, double *params, double *last_loss, ovl_err *err) {
  return ovl_ref_train_bounded(run, params, last_loss, NULL, NULL, err);
}

int ovl_ref_train_bounded(const ovl_ref_run *run, double *params, double *last_loss, double *allowance,
                          int64_t *undecided, ovl_err *err) {
  const ovl_model *m = run->model;
  int shard_rows = ovl_shard_rows(&run->sharding);
  int rows = shard_rows * run->shards;
  int features = m->width[0];
  int64_t nparams = ovl_model_param_floats(m);
  ref_bound bound = {allowance, 0, run->lr};
  if (undecided) *undecided = 0;
  ref_ws ws;
  int rc = ws_alloc(&ws, m, rows, allowance != NULL, err);
  if (rc) return rc;
  double *grad = malloc((size_t)nparams * sizeof(double));
  float *x = malloc((size_t)features * sizeof(float));
  int32_t *labels = malloc((size_t)rows * sizeof(int32_t));
  if (!grad || !x || !labels) {
    rc = ovl_oom(err, "reference trainer buffers");
    goto done;
  }
  for (int64_t s = run->first_step; s < run->first_step + run->steps; s++) {
    for (int shard = 0; shard < run->shards; shard++)
      for (int i = 0; i < shard_rows; i++) {
        int row = shard * shard_rows + i;
        ovl_dataset_sample(run->data, ovl_shard_sample(&run->sharding, s, shard, i), x, &labels[row]);
        for (int f = 0; f < features; f++) ws.act[0][(int64_t)row * features + f] = x[f];
      }
    pass(m, params, labels, rows, &ws, last_loss, grad, run->nthreads, allowance ? &bound : NULL);
    for (int64_t i = 0; i < nparams; i++) params[i] -= run->lr * grad[i];
    if (run->fp32_weights)
      for (int64_t i = 0; i < nparams; i++) params[i] = (float)params[i];
  }
done:
  if (undecided) *undecided = bound.undecided;
  free(grad);
  free(x);
  free(labels);
  ws_free(&ws, m);
  return rc;
}
