/* The MLP on one GPU: see gpu_mlp.h. */
#include "gpu_mlp.h"

#include "gpu_status.h"
#include "kernels.h"
#include "linear.h"

#include <stdlib.h>
#include <string.h>

static int device_alloc(void **p, size_t bytes, ovl_err *err) {
  CUDA_TRY(cudaMalloc(p, bytes ? bytes : 1));
  return OVL_OK;
}

/* Generates this rank's samples for every slot of an epoch and uploads them. */
static int upload_shard(ovl_gpu_mlp *g, const ovl_dataset *d, const ovl_sharding *sh, int shard, ovl_err *err) {
  int features = g->model.width[0];
  size_t nrows = (size_t)g->slots * (size_t)g->rows;
  float *x = malloc(nrows * (size_t)features * sizeof(float));
  int32_t *y = malloc(nrows * sizeof(int32_t));
  if (!x || !y) {
    free(x);
    free(y);
    return ovl_oom(err, "data shard");
  }
  for (int64_t s = 0; s < g->slots; s++)
    for (int i = 0; i < g->rows; i++) {
      size_t row = (size_t)s * (size_t)g->rows + (size_t)i;
      ovl_dataset_sample(d, ovl_shard_sample(sh, s, shard, i), x + row * (size_t)features, &y[row]);
    }
  cudaError_t e1 = cudaMemcpy(g->d_x, x, nrows * (size_t)features * sizeof(float), cudaMemcpyHostToDevice);
  cudaError_t e2 = cudaMemcpy(g->d_labels, y, nrows * sizeof(int32_t), cudaMemcpyHostToDevice);
  free(x);
  free(y);
  CUDA_TRY(e1);
  CUDA_TRY(e2);
  return OVL_OK;
}

int ovl_gpu_mlp_init(ovl_gpu_mlp *g, const ovl_model *m, const float *init_params, const ovl_dataset *d,
                     const ovl_sharding *sh, int shard, cudaStream_t stream, ovl_err *err) {
  memset(g, 0, sizeof *g);
  g->model = *m;
  ovl_model_params(m, g->params);
  g->nfloats = ovl_model_param_floats(m);
  g->rows = ovl_shard_rows(sh);
  g->slots = ovl_steps_per_epoch(sh);
  g->stream = stream;
  size_t rows = (size_t)g->rows, maxw = (size_t)ovl_model_max_width(m);
  int rc = OVL_OK;
  rc = rc ? rc : device_alloc((void **)&g->d_params, (size_t)g->nfloats * sizeof(float), err);
  rc = rc ? rc : device_alloc((void **)&g->d_grads, (size_t)g->nfloats * sizeof(float), err);
  for (int l = 1; l <= m->nlayers; l++)
    rc = rc ? rc : device_alloc((void **)&g->d_act[l], rows * (size_t)m->width[l] * sizeof(float), err);
  rc = rc ? rc : device_alloc((void **)&g->d_dz, rows * maxw * sizeof(float), err);
  rc = rc ? rc : device_alloc((void **)&g->d_dz_next, rows * maxw * sizeof(float), err);
  rc = rc ? rc : device_alloc((void **)&g->d_row_loss, rows * sizeof(float), err);
  rc = rc ? rc : device_alloc((void **)&g->d_x, (size_t)g->slots * rows * (size_t)m->width[0] * sizeof(float), err);
  rc = rc ? rc : device_alloc((void **)&g->d_labels, (size_t)g->slots * rows * sizeof(int32_t), err);
  if (rc) return rc;
  CUDA_TRY(cudaMemcpy(g->d_params, init_params, (size_t)g->nfloats * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemset(g->d_grads, 0, (size_t)g->nfloats * sizeof(float)));
  CUBLAS_TRY(cublasCreate(&g->blas));
  CUBLAS_TRY(cublasSetStream(g->blas, stream));
  /* Full fp32 products (the default mode never trades mantissa bits for TF32 tensor cores),
  ** stated explicitly because --verify depends on it. */
  CUBLAS_TRY(cublasSetMathMode(g->blas, CUBLAS_DEFAULT_MATH));
  return upload_shard(g, d, sh, shard, err);
}

void ovl_gpu_mlp_free(ovl_gpu_mlp *g) {
  if (!g->d_params) return;  /* never initialised: touch no CUDA API (cudaFree(0) would create a context) */
  if (g->blas) cublasDestroy(g->blas);
  cudaFree(g->d_params);
  cudaFree(g->d_grads);
  for (int l = 1; l <= g->model.nlayers; l++) cudaFree(g->d_act[l]);
  cudaFree(g->d_dz);
  cudaFree(g->d_dz_next);
  cudaFree(g->d_row_loss);
  cudaFree(g->d_x);
  cudaFree(g->d_labels);
  memset(g, 0, sizeof *g);
}

static int64_t slot_of(const ovl_gpu_mlp *g, int64_t step) { return step % g->slots; }

int ovl_gpu_mlp_forward_layer(ovl_gpu_mlp *g, int64_t step, int l, ovl_err *err) {
  const ovl_model *m = &g->model;
  if (l == 0) g->d_act[0] = g->d_x + slot_of(g, step) * g->rows * m->width[0];
  const float *w = g->d_params + g->params[2 * l].offset, *b = g->d_params + g->params[2 * l + 1].offset;
  CUBLAS_TRY(ovl_linear_forward(g->blas, g->d_act[l], w, g->rows, m->width[l], m->width[l + 1], g->d_act[l + 1]));
  CUDA_TRY(ovl_k_bias_act(g->d_act[l + 1], b, g->rows, m->width[l + 1], l < m->nlayers - 1, g->stream));
  return OVL_OK;
}

int ovl_gpu_mlp_forward(ovl_gpu_mlp *g, int64_t step, ovl_err *err) {
  for (int l = 0; l < g->model.nlayers; l++) {
    int rc = ovl_gpu_mlp_forward_layer(g, step, l, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

int ovl_gpu_mlp_loss(ovl_gpu_mlp *g, int64_t step, ovl_err *err) {
  const ovl_model *m = &g->model;
  const int32_t *labels = g->d_labels + slot_of(g, step) * g->rows;
  CUDA_TRY(ovl_k_softmax_xent(g->d_act[m->nlayers], labels, g->rows, m->width[m->nlayers], 1.0f / (float)g->rows,
                              g->d_dz, g->d_row_loss, g->stream));
  return OVL_OK;
}

int ovl_gpu_mlp_backward_layer(ovl_gpu_mlp *g, int l, ovl_grad_ready_fn ready, void *ctx, ovl_err *err) {
  const ovl_model *m = &g->model;
  int in = m->width[l], out = m->width[l + 1];
  const ovl_param *wp = &g->params[2 * l], *bp = &g->params[2 * l + 1];
  /* Bias first: the reverse of registration order (weight, bias). */
  CUDA_TRY(ovl_k_bias_grad(g->d_dz, g->rows, out, g->d_grads + bp->offset, g->stream));
  int rc = ready(ctx, 2 * l + 1, err);
  if (rc) return rc;
  CUBLAS_TRY(ovl_linear_weight_grad(g->blas, g->d_dz, g->d_act[l], g->rows, in, out, g->d_grads + wp->offset));
  rc = ready(ctx, 2 * l, err);
  if (rc) return rc;
  if (l == 0) return OVL_OK;
  CUBLAS_TRY(ovl_linear_input_grad(g->blas, g->d_dz, g->d_params + wp->offset, g->rows, in, out, g->d_dz_next));
  CUDA_TRY(ovl_k_relu_backward(g->d_dz_next, g->d_act[l], (int64_t)g->rows * in, g->stream));
  float *t = g->d_dz;
  g->d_dz = g->d_dz_next;
  g->d_dz_next = t;
  return OVL_OK;
}

int ovl_gpu_mlp_backward(ovl_gpu_mlp *g, ovl_grad_ready_fn ready, void *ctx, ovl_err *err) {
  for (int l = g->model.nlayers - 1; l >= 0; l--) {
    int rc = ovl_gpu_mlp_backward_layer(g, l, ready, ctx, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

int ovl_gpu_mlp_sgd(ovl_gpu_mlp *g, float lr, ovl_err *err) {
  CUDA_TRY(ovl_k_sgd(g->d_params, g->d_grads, g->nfloats, lr, g->stream));
  return OVL_OK;
}

int ovl_gpu_mlp_last_loss(ovl_gpu_mlp *g, double *loss, ovl_err *err) {
  float *rows = malloc((size_t)g->rows * sizeof(float));
  if (!rows) return ovl_oom(err, "loss");
  cudaError_t e = cudaMemcpyAsync(rows, g->d_row_loss, (size_t)g->rows * sizeof(float), cudaMemcpyDeviceToHost, g->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(g->stream);
  double sum = 0;
  for (int i = 0; i < g->rows; i++) sum += rows[i];
  free(rows);
  CUDA_TRY(e);
  *loss = sum / g->rows;
  return OVL_OK;
}
