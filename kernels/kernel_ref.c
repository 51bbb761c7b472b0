/* CPU references of the workload kernels: see kernel_ref.h. */
#include "kernel_ref.h"

#include <math.h>
#include <string.h>

void ovl_ref_bias_act(float *z, const float *bias, int rows, int cols, int relu) {
  for (int r = 0; r < rows; r++) {
    float *row = z + (int64_t)r * cols;
    for (int c = 0; c < cols; c++) {
      float v = row[c] + bias[c];
      row[c] = (relu && v < 0.0f) ? 0.0f : v;
    }
  }
}

void ovl_ref_relu_backward(float *dz, const float *a, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!(a[i] > 0.0f)) dz[i] = 0.0f;
}

void ovl_ref_bias_grad(const float *dz, int rows, int cols, float *db) {
  for (int c = 0; c < cols; c++) {
    double sum = 0;
    for (int r = 0; r < rows; r++) sum += dz[(int64_t)r * cols + c];
    db[c] = (float)sum;
  }
}

void ovl_ref_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float grad_scale,
                          float *dlogits, float *row_loss) {
  for (int r = 0; r < rows; r++) {
    const float *x = logits + (int64_t)r * classes;
    float *d = dlogits + (int64_t)r * classes;
    double max = x[0];
    for (int c = 1; c < classes; c++)
      if (x[c] > max) max = x[c];
    double sum = 0;
    for (int c = 0; c < classes; c++) sum += exp(x[c] - max);
    double lse = max + log(sum);
    row_loss[r] = (float)(lse - x[labels[r]]);
    for (int c = 0; c < classes; c++) {
      double p = exp(x[c] - lse);
      d[c] = (float)((p - (c == labels[r] ? 1.0 : 0.0)) * grad_scale);
    }
  }
}

void ovl_ref_sgd(float *w, const float *g, int64_t n, float lr) {
  for (int64_t i = 0; i < n; i++) w[i] -= lr * g[i];
}

void ovl_ref_scale(float *x, int64_t n, float factor) {
  for (int64_t i = 0; i < n; i++) x[i] *= factor;
}

void ovl_ref_pack(const float *flat, float *bucket, const ovl_segment *segs, int nsegs) {
  for (int s = 0; s < nsegs; s++)
    memcpy(bucket + segs[s].bucket_offset, flat + segs[s].flat_offset, (size_t)segs[s].count * sizeof(float));
}

void ovl_ref_unpack(const float *bucket, float *flat, const ovl_segment *segs, int nsegs) {
  for (int s = 0; s < nsegs; s++)
    memcpy(flat + segs[s].flat_offset, bucket + segs[s].bucket_offset, (size_t)segs[s].count * sizeof(float));
}

void ovl_ref_linear_forward(const float *a, const float *w, int rows, int in, int out, float *z) {
  for (int r = 0; r < rows; r++)
    for (int o = 0; o < out; o++) {
      const float *ar = a + (int64_t)r * in, *wo = w + (int64_t)o * in;
      double sum = 0;
      for (int i = 0; i < in; i++) sum += (double)ar[i] * wo[i];
      z[(int64_t)r * out + o] = (float)sum;
    }
}

void ovl_ref_linear_weight_grad(const float *dz, const float *a, int rows, int in, int out, float *dw) {
  for (int o = 0; o < out; o++)
    for (int i = 0; i < in; i++) {
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += (double)dz[(int64_t)r * out + o] * a[(int64_t)r * in + i];
      dw[(int64_t)o * in + i] = (float)sum;
    }
}

void ovl_ref_linear_input_grad(const float *dz, const float *w, int rows, int in, int out, float *da) {
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < in; i++) {
      double sum = 0;
      for (int o = 0; o < out; o++) sum += (double)dz[(int64_t)r * out + o] * w[(int64_t)o * in + i];
      da[(int64_t)r * in + i] = (float)sum;
    }
}

double ovl_emulated_allreduce_ns(double alpha_ns, double beta_bytes_per_s, int nranks, double bytes) {
  if (nranks < 1 || beta_bytes_per_s <= 0) return alpha_ns;
  return alpha_ns + 2.0 * (nranks - 1) / nranks * bytes / beta_bytes_per_s * 1e9;
}

double ovl_emulated_allgather_ns(double alpha_ns, double beta_bytes_per_s, int nranks, double bytes) {
  if (nranks < 1 || beta_bytes_per_s <= 0) return alpha_ns;
  return alpha_ns + (double)(nranks - 1) / nranks * bytes / beta_bytes_per_s * 1e9;
}
