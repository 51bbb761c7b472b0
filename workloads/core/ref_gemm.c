/* Multi-threaded float64 product for the reference trainer: see ref_gemm.h.
**
** Each thread owns a contiguous range of C's rows. Inside it a 4x4 register block of C is
** accumulated over the whole k (16 independent sums, 8 loads per 16 multiply-adds), so the
** loop runs near the core's speed without any vector intrinsics. */
#include "ref_gemm.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct gemm_job {
  const double *a, *b;
  double *c;
  int m0, m1, n, k;
} gemm_job;

/* One C element: the edges that do not fill a 4x4 block. */
static double dot(const double *x, const double *y, int k) {
  double s = 0;
  for (int i = 0; i < k; i++) s += x[i] * y[i];
  return s;
}

static void block4x4(const gemm_job *j, int r, int col) {
  const double *a0 = j->a + (int64_t)r * j->k, *a1 = a0 + j->k, *a2 = a1 + j->k, *a3 = a2 + j->k;
  const double *b0 = j->b + (int64_t)col * j->k, *b1 = b0 + j->k, *b2 = b1 + j->k, *b3 = b2 + j->k;
  double s[4][4] = {{0}};
  for (int i = 0; i < j->k; i++) {
    double x0 = a0[i], x1 = a1[i], x2 = a2[i], x3 = a3[i];
    double y0 = b0[i], y1 = b1[i], y2 = b2[i], y3 = b3[i];
    s[0][0] += x0 * y0; s[0][1] += x0 * y1; s[0][2] += x0 * y2; s[0][3] += x0 * y3;
    s[1][0] += x1 * y0; s[1][1] += x1 * y1; s[1][2] += x1 * y2; s[1][3] += x1 * y3;
    s[2][0] += x2 * y0; s[2][1] += x2 * y1; s[2][2] += x2 * y2; s[2][3] += x2 * y3;
    s[3][0] += x3 * y0; s[3][1] += x3 * y1; s[3][2] += x3 * y2; s[3][3] += x3 * y3;
  }
  for (int x = 0; x < 4; x++)
    for (int y = 0; y < 4; y++) j->c[(int64_t)(r + x) * j->n + col + y] = s[x][y];
}

static void *run_rows(void *arg) {
  const gemm_job *j = arg;
  /* Rows in panels of 32 so a panel of A stays in cache while all of B streams past it. */
  for (int p = j->m0; p < j->m1; p += 32) {
    int pend = p + 32 < j->m1 ? p + 32 : j->m1;
    int full_cols = j->n - j->n % 4;
    for (int col = 0; col < full_cols; col += 4) {
      int r = p;
      for (; r + 4 <= pend; r += 4) block4x4(j, r, col);
      for (; r < pend; r++)
        for (int y = 0; y < 4; y++)
          j->c[(int64_t)r * j->n + col + y] = dot(j->a + (int64_t)r * j->k, j->b + (int64_t)(col + y) * j->k, j->k);
    }
    for (int r = p; r < pend; r++)
      for (int col = full_cols; col < j->n; col++)
        j->c[(int64_t)r * j->n + col] = dot(j->a + (int64_t)r * j->k, j->b + (int64_t)col * j->k, j->k);
  }
  return NULL;
}

int ovl_ref_gemm_nt(const double *a, const double *b, int m, int n, int k, double *c, int nthreads) {
  if (nthreads > m / 4) nthreads = m / 4;
  if (nthreads > 256) nthreads = 256;
  if (nthreads <= 1) {
    gemm_job j = {a, b, c, 0, m, n, k};
    run_rows(&j);
    return 0;
  }
  gemm_job jobs[256];
  pthread_t threads[256];
  int running[256] = {0};
  int rc = 0;
  /* Split rows in multiples of 4 so every thread but the last runs full register blocks. */
  int per = ((m + nthreads - 1) / nthreads + 3) / 4 * 4;
  for (int t = 0; t < nthreads; t++) {
    int m0 = t * per, m1 = (t + 1) * per;
    if (m1 > m) m1 = m;
    if (m0 >= m1) continue;
    jobs[t] = (gemm_job){a, b, c, m0, m1, n, k};
    if (pthread_create(&threads[t], NULL, run_rows, &jobs[t]) == 0) {
      running[t] = 1;
    } else {
      rc = -1;
      run_rows(&jobs[t]);
    }
  }
  for (int t = 0; t < nthreads; t++)
    if (running[t]) pthread_join(threads[t], NULL);
  return rc;
}

void ovl_ref_transpose(const double *in, int rows, int cols, double *out) {
  /* 32x32 tiles keep both the reads and the writes in cache. */
  for (int r0 = 0; r0 < rows; r0 += 32)
    for (int c0 = 0; c0 < cols; c0 += 32)
      for (int r = r0; r < r0 + 32 && r < rows; r++)
        for (int c = c0; c < c0 + 32 && c < cols; c++) out[(int64_t)c * rows + r] = in[(int64_t)r * cols + c];
}
