/* `ovl fit` output: see fit_report.h. */
#include "fit_report.h"

#include "base/json_out.h"
#include "base/units.h"

#include <math.h>
#include <string.h>

/* What the user calls f's communicator: the traces' name when no other fit's communicator has
** it, else the name with the id, else the id ("?" when unknown). */
static const char *comm_label(const ovl_comm_fit *fits, size_t n, size_t i, char *buf, size_t len) {
  const ovl_comm_fit *f = &fits[i];
  if (f->comm == OVL_NONE) return snprintf(buf, len, "?"), buf;
  int shared = 0;
  for (size_t k = 0; f->name && k < n; k++)
    shared |= fits[k].comm != f->comm && fits[k].name && strcmp(fits[k].name, f->name) == 0;
  if (f->name && !shared) snprintf(buf, len, "%s", f->name);
  else if (f->name) snprintf(buf, len, "%s (%lld)", f->name, (long long)f->comm);
  else snprintf(buf, len, "%lld", (long long)f->comm);
  return buf;
}

void ovl_fit_text(FILE *out, const ovl_comm_fit *fits, size_t n) {
  if (n == 0) {
    fprintf(out, "no collective with a known size and a GPU interval to fit\n");
    return;
  }
  int width = 4;  /* the comm column fits its longest label (19-digit ids, names) */
  for (size_t i = 0; i < n; i++) {
    char comm[160];
    int len = (int)strlen(comm_label(fits, n, i, comm, sizeof comm));
    if (len > width) width = len;
  }
  fprintf(out, "%-*s %-14s %7s %21s %10s %12s %8s\n", width, "comm", "op", "samples", "sizes", "alpha", "beta", "r2");
  for (size_t i = 0; i < n; i++) {
    const ovl_comm_fit *f = &fits[i];
    char comm[160], lo[32], hi[32], sizes[80], alpha[32], beta[32], r2[16];
    comm_label(fits, n, i, comm, sizeof comm);
    ovl_format_bytes(f->fit.min_bytes, lo, sizeof lo);
    ovl_format_bytes(f->fit.max_bytes, hi, sizeof hi);
    snprintf(sizes, sizeof sizes, "%s - %s", lo, hi);
    if (f->fit.separable) ovl_format_ns(f->fit.alpha_ns, alpha, sizeof alpha);
    else snprintf(alpha, sizeof alpha, "-");
    snprintf(beta, sizeof beta, "%.3f GB/s", f->fit.beta_bytes_per_s / 1e9);
    if (isnan(f->fit.r2)) snprintf(r2, sizeof r2, "-");
    else snprintf(r2, sizeof r2, "%.4f", f->fit.r2);
    fprintf(out, "%-*s %-14s %7zu %21s %10s %12s %8s\n", width, comm, ovl_op_name(f->op), f->fit.samples, sizes, alpha,
            beta, r2);
  }
  for (size_t i = 0; i < n; i++) {
    const ovl_comm_fit *f = &fits[i];
    char label[160], comm[180];
    if (f->comm != OVL_NONE) snprintf(comm, sizeof comm, "comm %s", comm_label(fits, n, i, label, sizeof label));
    else snprintf(comm, sizeof comm, "unknown comm");
    if (!f->fit.separable)
      fprintf(out, "note: %s %s: message sizes do not vary enough to separate alpha from beta (the largest is less "
                   "than %.2fx the smallest); beta is the effective bandwidth, median bytes/time\n",
              comm, ovl_op_name(f->op), OVL_FIT_MIN_SPREAD);
    else if (f->fit.r2 < 0)
      fprintf(out, "warning: %s %s: r2 %.2f: the line alpha + bytes/beta explains these times worse than their mean "
                   "does (calls that wait for peers or share the link vary more than their sizes explain): do not "
                   "rely on this alpha and beta\n",
              comm, ovl_op_name(f->op), f->fit.r2);
    if (f->fit.separable && f->fit.kept < f->fit.samples)
      fprintf(out, "note: %s %s: %zu of %zu samples left out as outliers (e.g. waiting for a peer)\n", comm,
              ovl_op_name(f->op), f->fit.samples - f->fit.kept, f->fit.samples);
  }
  fprintf(out, "time = alpha + bytes/beta, bytes = the per-rank size of the call (collectives.bytes)\n");
}

void ovl_fit_json(FILE *out, const ovl_comm_fit *fits, size_t n, int pretty) {
  ovl_json j;
  ovl_json_init(&j, out, pretty);
  ovl_json_object_begin(&j, NULL);
  ovl_json_array_begin(&j, "fits");
  for (size_t i = 0; i < n; i++) {
    const ovl_comm_fit *f = &fits[i];
    ovl_json_object_begin(&j, NULL);
    if (f->comm != OVL_NONE) ovl_json_int(&j, "comm", f->comm);
    else ovl_json_null(&j, "comm");
    ovl_json_string(&j, "op", ovl_op_name(f->op));
    ovl_json_double(&j, "alpha_ns", f->fit.separable ? f->fit.alpha_ns : NAN);
    ovl_json_double(&j, "beta_bytes_per_s", f->fit.beta_bytes_per_s);
    ovl_json_double(&j, "r2", f->fit.r2);
    ovl_json_int(&j, "samples", (int64_t)f->fit.samples);
    ovl_json_bool(&j, "separable", f->fit.separable);
    ovl_json_int(&j, "kept", (int64_t)f->fit.kept);
    ovl_json_double(&j, "min_bytes", f->fit.min_bytes);
    ovl_json_double(&j, "max_bytes", f->fit.max_bytes);
    if (f->name) ovl_json_string(&j, "comm_name", f->name);
    else ovl_json_null(&j, "comm_name");
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
}
