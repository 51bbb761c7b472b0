/*
** The MLP on one GPU: parameters and gradients in flat device buffers (registration order,
** as ovl_model_params), this rank's data shard resident on the device, and the forward and
** backward passes on the compute stream (cuBLAS products, kernels/ kernels).
**
** Backward produces the gradients in ready order (the reverse of registration: the last
** layer's bias first) and calls `ready` right after enqueuing each one, so the caller can
** pack, annotate and launch communication at the moment DDP's autograd hook would fire.
*/
#ifndef OVL_DDP_GPU_MLP_H
#define OVL_DDP_GPU_MLP_H

#include "data.h"
#include "model.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

typedef struct ovl_gpu_mlp {
  ovl_model model;
  ovl_param params[2 * OVL_MODEL_MAX_LAYERS];
  int64_t nfloats;
  int rows;                    /* samples per step on this rank */
  int64_t slots;               /* steps per epoch: the shard holds one batch per step */
  float *d_params, *d_grads;
  float *d_act[OVL_MODEL_MAX_LAYERS + 1];  /* d_act[0] is set to the step's input */
  float *d_dz, *d_dz_next, *d_row_loss;
  float *d_x;                  /* [slots][rows][features] */
  int32_t *d_labels;           /* [slots][rows] */
  cudaStream_t stream;
  cublasHandle_t blas;
} ovl_gpu_mlp;

/* Allocates everything, uploads the initial parameters and this rank's samples (rank
** `shard` of sh.nranks) for every step of an epoch. */
int ovl_gpu_mlp_init(ovl_gpu_mlp *g, const ovl_model *m, const float *init_params, const ovl_dataset *d,
                     const ovl_sharding *sh, int shard, cudaStream_t stream, ovl_err *err);
void ovl_gpu_mlp_free(ovl_gpu_mlp *g);

/* Forward pass of global step `step` up to the logits (no loss yet). */
int ovl_gpu_mlp_forward(ovl_gpu_mlp *g, int64_t step, ovl_err *err);
/* The same, one layer at a time (layer 0 first): --mode zero3 gathers each layer's
** parameters in between. */
int ovl_gpu_mlp_forward_layer(ovl_gpu_mlp *g, int64_t step, int layer, ovl_err *err);
/* Softmax cross-entropy of the logits: per-row losses and the logits' gradient. */
int ovl_gpu_mlp_loss(ovl_gpu_mlp *g, int64_t step, ovl_err *err);
typedef int (*ovl_grad_ready_fn)(void *ctx, int param, ovl_err *err);
/* Backward pass; ready(ctx, p) after each gradient p is enqueued. */
int ovl_gpu_mlp_backward(ovl_gpu_mlp *g, ovl_grad_ready_fn ready, void *ctx, ovl_err *err);
/* Backward of one layer (the last layer first), with its two ready calls. */
int ovl_gpu_mlp_backward_layer(ovl_gpu_mlp *g, int layer, ovl_grad_ready_fn ready, void *ctx, ovl_err *err);
/* params -= lr * grads. */
int ovl_gpu_mlp_sgd(ovl_gpu_mlp *g, float lr, ovl_err *err);
/* Mean of the last step's per-row losses (synchronises the stream). */
int ovl_gpu_mlp_last_loss(ovl_gpu_mlp *g, double *loss, ovl_err *err);

#endif
