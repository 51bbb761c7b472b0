/* `ovl whatif` output: see whatif_report.h. */
#include "whatif_report.h"

#include "base/json_out.h"
#include "base/units.h"

#include <math.h>

#define MIB 1048576.0

static const char *ns_text(double ns, char *buf) { return ovl_format_ns(ns, buf, 32); }

void ovl_whatif_text(FILE *out, const ovl_whatif_result *w, double first_cap_bytes) {
  char a[32], b[32], c[32], d[32];
  fprintf(out, "replayed %zu step%s of %zu rank%s%s; gradient readiness from %s\n", w->steps, w->steps == 1 ? "" : "s",
          w->ranks, w->ranks == 1 ? "" : "s", w->skipped_first_step ? " (a differing first step left out)" : "",
          w->approximated ? "an approximation (no grad_ready marks: an even rate over the backward compute)"
                          : "the grad_ready marks");
  fprintf(out, "cost: alpha %s (%s), beta %.3f GB/s (%s)", ns_text(w->alpha_ns, a),
          w->alpha_given ? "given" : w->alpha_assumed ? "assumed" : "fitted", w->beta / 1e9,
          w->beta_given ? "given" : w->alpha_assumed ? "effective bandwidth" : "fitted");
  if (!w->alpha_given || !w->beta_given) {
    fprintf(out, " on %zu %s collectives", w->fit.fit.samples, ovl_op_name(w->fit.op));
    if (w->fit.comm != OVL_NONE && w->fit.name) fprintf(out, " of %s (comm %lld)", w->fit.name, (long long)w->fit.comm);
    else if (w->fit.comm != OVL_NONE) fprintf(out, " of comm %lld", (long long)w->fit.comm);
    else fprintf(out, " known by their kernels (no communicator)");
    if (w->fit.fit.separable) fprintf(out, ", r2 %.2f", w->fit.fit.r2);
  }
  fprintf(out, "\nfirst bucket cap: ");
  if (first_cap_bytes > 0) fprintf(out, "%g MiB\n", first_cap_bytes / MIB);
  else fprintf(out, "none (the first bucket uses the bucket cap)\n");
  fprintf(out, "model check: the trace's own buckets replay to %s per step (the trace shows %s); candidates are "
               "compared with that replay\n",
          ns_text(w->model_step_ns, a), ns_text(w->current_step_ns, b));
  if (w->alpha_assumed) {
    char lo[32], hi[32];
    fprintf(out, "caveat: the gradient collectives are all about one size (%s to %s), which tells the bandwidth but "
                 "not the latency alpha: alpha is taken as 0, so smaller buckets look cheaper than they are; give "
                 "--alpha (the time of a small all-reduce on this network) for a firm answer\n",
            ovl_format_bytes(w->fit.fit.min_bytes, lo, sizeof lo), ovl_format_bytes(w->fit.fit.max_bytes, hi, sizeof hi));
  }
  if (w->fit_weak)
    fprintf(out, "caveat: the fitted cost explains %s of the %zu collectives' time (r2 %.2f): the predictions are "
                 "rough; give --alpha and --beta measured elsewhere (nccl-tests) to rely on them\n",
            w->fit.fit.r2 <= 0 ? "none" : "little", w->fit.fit.samples, w->fit.fit.r2);
  fprintf(out, "\n%-22s %12s %12s %9s %12s\n", "", "step", "exposed", "buckets", "vs replay");
  fprintf(out, "%-22s %12s %12s %9s %12s\n", "trace", ns_text(w->current_step_ns, a), ns_text(w->current_exposed_ns, b),
          "", "");
  fprintf(out, "%-22s %12s %12s %9s %12s\n", "trace, replayed", ns_text(w->model_step_ns, a),
          ns_text(w->model_exposed_ns, b), "", "");
  for (size_t i = 0; i < w->ncands; i++) {
    const ovl_whatif_candidate *k = &w->cands[i];
    char label[48], buckets[16];
    snprintf(label, sizeof label, "%sbucket %g MiB", i == w->best && w->gain_ns > 0 ? "* " : "  ", k->cap_bytes / MIB);
    snprintf(buckets, sizeof buckets, "%.1f", k->buckets);
    if (w->model_step_ns > 0) snprintf(d, sizeof d, "%+.1f%%", 100.0 * (k->step_ns - w->model_step_ns) / w->model_step_ns);
    else snprintf(d, sizeof d, "n/a");  /* no relative change from a zero-length step */
    fprintf(out, "%-22s %12s %12s %9s %12s\n", label, ns_text(k->step_ns, a), ns_text(k->exposed_ns, b), buckets, d);
  }
  if (w->ncands && w->gain_ns > 0) {
    const ovl_whatif_candidate *best = &w->cands[w->best];
    fprintf(out, "\nbest: bucket_cap_mb=%g: %s per step, %s faster than the trace's own buckets replayed by the same "
                 "model", best->cap_bytes / MIB, ns_text(best->step_ns, a), ns_text(w->gain_ns, c));
    if (w->model_step_ns > 0) fprintf(out, " (%.1f%%)", 100.0 * w->gain_ns / w->model_step_ns);
    fprintf(out, "\n");
  } else if (w->ncands) {
    fprintf(out, "\nno size beats the trace: every candidate replays no faster than the trace's own buckets (%s per "
                 "step in the same model)\n", ns_text(w->model_step_ns, a));
  }
}

void ovl_whatif_json(FILE *out, const ovl_whatif_result *w, double first_cap_bytes, int pretty) {
  ovl_json j;
  ovl_json_init(&j, out, pretty);
  ovl_json_object_begin(&j, NULL);
  ovl_json_object_begin(&j, "current");
  ovl_json_double(&j, "step_ns", w->current_step_ns);
  ovl_json_double(&j, "t_exposed_ns", w->current_exposed_ns);
  ovl_json_object_end(&j);
  ovl_json_array_begin(&j, "candidates");
  for (size_t i = 0; i < w->ncands; i++) {
    ovl_json_object_begin(&j, NULL);
    ovl_json_double(&j, "bucket_mb", w->cands[i].cap_bytes / MIB);
    ovl_json_double(&j, "step_ns", w->cands[i].step_ns);
    ovl_json_double(&j, "t_exposed_ns", w->cands[i].exposed_ns);
    ovl_json_double(&j, "buckets", w->cands[i].buckets);
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);
  ovl_json_object_begin(&j, "best");
  if (w->ncands) {
    ovl_json_double(&j, "bucket_mb", w->cands[w->best].cap_bytes / MIB);
    ovl_json_double(&j, "step_ns", w->cands[w->best].step_ns);
    ovl_json_double(&j, "gain_ns", w->gain_ns);
    ovl_json_bool(&j, "beats_trace", w->gain_ns > 0);
  }
  ovl_json_object_end(&j);
  ovl_json_object_begin(&j, "model_current");
  ovl_json_double(&j, "step_ns", w->model_step_ns);
  ovl_json_double(&j, "t_exposed_ns", w->model_exposed_ns);
  ovl_json_object_end(&j);
  ovl_json_double(&j, "first_bucket_mb", first_cap_bytes / MIB);
  ovl_json_double(&j, "alpha_ns", w->alpha_ns);
  ovl_json_double(&j, "beta_bytes_per_s", w->beta);
  ovl_json_string(&j, "alpha_source", w->alpha_given ? "given" : w->alpha_assumed ? "assumed" : "fitted");
  ovl_json_string(&j, "beta_source", w->beta_given ? "given" : "fitted");
  ovl_json_string(&j, "readiness", w->approximated ? "approximated" : "marks");
  if (!w->alpha_given || !w->beta_given) ovl_json_double(&j, "fit_r2", w->fit.fit.r2);
  else ovl_json_null(&j, "fit_r2");
  if (w->alpha_assumed) ovl_json_string(&j, "caveat", "alpha unknown (the collectives are all about one size): taken as 0");
  else if (w->fit_weak) ovl_json_string(&j, "caveat", w->fit.fit.r2 <= 0 ? "the fitted cost explains none of the time"
                                                                           : "the fitted cost explains little of the time");
  else ovl_json_null(&j, "caveat");
  ovl_json_int(&j, "ranks", (int64_t)w->ranks);
  ovl_json_int(&j, "steps", (int64_t)w->steps);
  ovl_json_bool(&j, "first_step_skipped", w->skipped_first_step);
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
}
