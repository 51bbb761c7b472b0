/* Fully connected layer products through cuBLAS: see linear.h.
**
** Row-major X[r][c] is column-major X^T with leading dimension c. Each product below is the
** row-major formula rewritten on those transposes:
**   z = a w^T    ->  z^T[out][rows] = w^T^T . a^T   = op_T(w as [in][out]) . a as [in][rows]
**   dw = dz^T a  ->  dw^T[in][out]  = a^T . dz       = a as [in][rows] . op_T(dz as [out][rows])
**   da = dz w    ->  da^T[in][rows] = w^T . dz^T     = w as [in][out] . dz as [out][rows]
*/
#include "linear.h"

static const float one = 1.0f, zero = 0.0f;

int ovl_linear_forward(cublasHandle_t h, const float *a, const float *w, int rows, int in, int out, float *z) {
  return (int)cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &one, w, in, a, in, &zero, z, out);
}

int ovl_linear_weight_grad(cublasHandle_t h, const float *dz, const float *a, int rows, int in, int out, float *dw) {
  return (int)cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, in, out, rows, &one, a, in, dz, out, &zero, dw, in);
}

int ovl_linear_input_grad(cublasHandle_t h, const float *dz, const float *w, int rows, int in, int out, float *da) {
  return (int)cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in, rows, out, &one, w, in, dz, out, &zero, da, in);
}
