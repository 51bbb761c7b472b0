/*
** The reference models: fully connected networks, ReLU between layers, softmax
** cross-entropy on the last layer, fp32. A model is its list of layer widths
** (input features first, classes last). Parameters are registered layer by layer, weight
** then bias, named fc<l>.weight and fc<l>.bias, and laid out in that order in one flat
** buffer (PyTorch's nn.Linear layout: weight[out][in]).
*/
#ifndef OVL_WL_MODEL_H
#define OVL_WL_MODEL_H

#include "base/status.h"

#include <stdint.h>

#define OVL_MODEL_MAX_LAYERS 32

typedef struct ovl_model {
  char name[200];                       /* "small", or the widths as given ("784-64-10") */
  int nlayers;                          /* fully connected layers */
  int width[OVL_MODEL_MAX_LAYERS + 1];  /* width[0] inputs ... width[nlayers] classes */
} ovl_model;

typedef struct ovl_param {
  char name[24];   /* fc<l>.weight or fc<l>.bias */
  int layer;
  int is_bias;
  int64_t count;   /* floats */
  int64_t offset;  /* floats from the start of the flat buffer */
} ovl_param;

/* The named models (small, medium, large, xlarge), NULL-terminated. */
extern const char *const ovl_model_names[];

/* A named model, or widths written as "784-1024-10" (2 to OVL_MODEL_MAX_LAYERS+1 widths,
** each 1..65536). Fails with OVL_EUSER and a message naming the text. */
int ovl_model_lookup(const char *text, ovl_model *m, ovl_err *err);

/* Number of parameter tensors: 2 per layer. */
int ovl_model_nparams(const ovl_model *m);
/* Fills out[ovl_model_nparams(m)] in registration order. */
void ovl_model_params(const ovl_model *m, ovl_param *out);
/* Total parameter floats. */
int64_t ovl_model_param_floats(const ovl_model *m);
/* The widest layer (sizes activation buffers). */
int ovl_model_max_width(const ovl_model *m);

#endif
