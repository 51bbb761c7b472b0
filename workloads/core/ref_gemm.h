/*
** The one matrix product the float64 reference trainer needs, multi-threaded:
** C[m][n] = sum_k A[m][k] * B[n][k] (both operands row-major with k contiguous, "A times B
** transposed"). The other products are brought to this form by transposing an operand.
*/
#ifndef OVL_WL_REF_GEMM_H
#define OVL_WL_REF_GEMM_H

/* Overwrites C. nthreads <= 1 runs on the calling thread. Returns 0, or -1 when a thread
** could not be started (the product is then computed on the calling thread anyway). */
int ovl_ref_gemm_nt(const double *a, const double *b, int m, int n, int k, double *c, int nthreads);

/* out[cols][rows] = in[rows][cols]^T */
void ovl_ref_transpose(const double *in, int rows, int cols, double *out);

#endif
