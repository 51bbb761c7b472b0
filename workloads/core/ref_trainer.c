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
} ref_ws;

static void ws_free(ref_ws *w, const ovl_model *m) {
  for (int l = 0; l <= m->nlayers; l++) free(w->act[l]);
  free(w->dz);
  free(w->dz_next);
  free(w->scratch_a);
  free(w->scratch_b);
}

static int ws_alloc(ref_ws *w, const ovl_model *m, int rows, ovl_err *err) {
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
  if (!ok) {
    ws_free(w, m);
    return ovl_oom(err, "reference trainer buffers");
  }
  return OVL_OK;
}

/* Forward, loss and (when grad) backward on the input already in ws->act[0]. */
static void pass(const ovl_model *m, const double *params, const int32_t *labels, int rows, ref_ws *ws,
                 double *loss, double *grad, int nthreads) {
  ovl_param ps[2 * OVL_MODEL_MAX_LAYERS];
  ovl_model_params(m, ps);
  for (int l = 0; l < m->nlayers; l++) {
    int in = m->width[l], out = m->width[l + 1];
    const double *w = params + ps[2 * l].offset, *b = params + ps[2 * l + 1].offset;
    double *z = ws->act[l + 1];
    ovl_ref_gemm_nt(ws->act[l], w, rows, out, in, z, nthreads);
    int relu = l < m->nlayers - 1;
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

  for (int l = m->nlayers - 1; l >= 0; l--) {
    int in = m->width[l], out = m->width[l + 1];
    double *dw = grad + ps[2 * l].offset, *db = grad + ps[2 * l + 1].offset;
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
  int rc = ws_alloc(&ws, m, rows, err);
  if (rc) return rc;
  for (int64_t i = 0; i < (int64_t)rows * m->width[0]; i++) ws.act[0][i] = x[i];
  pass(m, params, labels, rows, &ws, loss, grad, nthreads);
  ws_free(&ws, m);
  return OVL_OK;
}

int ovl_ref_train(const ovl_ref_run *run, double *params, double *last_loss, ovl_err *err) {
  const ovl_model *m = run->model;
  int shard_rows = ovl_shard_rows(&run->sharding);
  int rows = shard_rows * run->shards;
  int features = m->width[0];
  int64_t nparams = ovl_model_param_floats(m);
  ref_ws ws;
  int rc = ws_alloc(&ws, m, rows, err);
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
    pass(m, params, labels, rows, &ws, last_loss, grad, run->nthreads);
    for (int64_t i = 0; i < nparams; i++) params[i] -= run->lr * grad[i];
    if (run->fp32_weights)
      for (int64_t i = 0; i < nparams; i++) params[i] = (float)params[i];
  }
done:
  free(grad);
  free(x);
  free(labels);
  ws_free(&ws, m);
  return rc;
}
