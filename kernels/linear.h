/*
** The matrix products of a fully connected layer through cuBLAS (fp32, no TF32), on row-major
** data: cuBLAS is column-major, so a row-major [rows][cols] matrix is passed as its
** column-major transpose. References: ovl_ref_linear_* in kernel_ref.h. Each returns the
** cuBLAS status (CUBLAS_STATUS_SUCCESS = 0); the handle's stream is used.
*/
#ifndef OVL_LINEAR_H
#define OVL_LINEAR_H

#include <cublas_v2.h>

/* z[rows][out] = a[rows][in] . w[out][in]^T */
int ovl_linear_forward(cublasHandle_t h, const float *a, const float *w, int rows, int in, int out, float *z);
/* dw[out][in] = dz[rows][out]^T . a[rows][in] */
int ovl_linear_weight_grad(cublasHandle_t h, const float *dz, const float *a, int rows, int in, int out, float *dw);
/* da[rows][in] = dz[rows][out] . w[out][in] */
int ovl_linear_input_grad(cublasHandle_t h, const float *dz, const float *w, int rows, int in, int out, float *da);

#endif
