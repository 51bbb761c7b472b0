/* Text report: see report_text.h. */
#include "report_text.h"

#include "base/text_clean.h"
#include "base/units.h"
#include "base/vec.h"
#include "bucket_view.h"
#include "report_dims.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *ns_text(double ns, char *buf) { return ovl_format_ns(ns, buf, 32); }

static const char *pct_text(double ratio, char *buf) {
  if (isnan(ratio)) snprintf(buf, 32, "n/a");
  else snprintf(buf, 32, "%.1f%%", ratio * 100.0);
  return buf;
}

static const char *gbps_text(double v, char *buf) {
  if (isnan(v)) snprintf(buf, 32, "-");
  else snprintf(buf, 32, "%.2f", v);
  return buf;
}

static int cmp_step_exposed(const void *pa, const void *pb) {
  const ovl_step_result *a = *(const ovl_step_result *const *)pa, *b = *(const ovl_step_result *const *)pb;
  if (a->totals.exposed != b->totals.exposed) return a->totals.exposed > b->totals.exposed ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static int cmp_coll_exposed(const void *pa, const void *pb) {
  const ovl_coll_result *a = *(const ovl_coll_result *const *)pa, *b = *(const ovl_coll_result *const *)pb;
  if (ovl_coll_exposed(a) != ovl_coll_exposed(b)) return ovl_coll_exposed(a) > ovl_coll_exposed(b) ? -1 : 1;
  return (a->order > b->order) - (a->order < b->order);
}

#define WRAP_COLUMNS 100

/* Prints text from column `col`, wrapping at spaces to WRAP_COLUMNS with `indent` spaces. */
static void print_wrapped(FILE *out, const char *text, size_t col, size_t indent) {
  const char *p = text;
  while (*p) {
    const char *word = p;
    while (*p && *p != ' ') p++;
    size_t len = (size_t)(p - word);
    if (col > indent && col + 1 + len > WRAP_COLUMNS) {
      fprintf(out, "\n%*s", (int)indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', out);
      col++;
    }
    fwrite(word, 1, len, out);
    col += len;
    while (*p == ' ') p++;
  }
  fputc('\n', out);
}

/* Findings in full: code, recoverable time, then the wrapped message. */
static void print_findings(FILE *out, const ovl_finding *f, size_t n) {
  if (n == 0) return;
  fprintf(out, "\n  Findings\n");
  for (size_t i = 0; i < n; i++) {
    char t[32], head[128], conf[32] = "";
    if (ovl_confidence_name(f[i].confidence))
      snprintf(conf, sizeof conf, " (%s confidence)", ovl_confidence_name(f[i].confidence));
    if (f[i].recoverable_ns > 0)
      snprintf(head, sizeof head, "  [%s] recoverable %s%s:", f[i].code, ns_text((double)f[i].recoverable_ns, t), conf);
    else
      snprintf(head, sizeof head, "  [%s]%s", f[i].code, conf);
    fputs(head, out);
    assert(!f[i].text);  /* a rank's or the job's findings keep their message */
    print_wrapped(out, f[i].message, strlen(head), 6);
  }
}

/* A step's findings on one line: codes and what each says it recovers (the rank's findings
** explain them). A finding that knows no fix recovers nothing: said in words, beside the
** step's exposed time, never as a bare "0 ns" that reads as the exposure. */
static void print_step_findings(FILE *out, const ovl_step_result *st) {
  if (st->nfindings == 0) return;
  char label[64];
  fprintf(out, "  findings of step %s:", ovl_step_label(st, label, sizeof label));
  for (size_t i = 0; i < st->nfindings; i++) {
    char t[32];
    const ovl_finding *f = &st->findings[i];
    if (f->recoverable_ns > 0)
      fprintf(out, "%s %s (recoverable %s)", i ? "," : "", f->code, ns_text((double)f->recoverable_ns, t));
    else
      fprintf(out, "%s %s (%s exposed; no fix known, nothing counted as recoverable)", i ? "," : "", f->code,
              ns_text((double)st->totals.exposed, t));
  }
  fputc('\n', out);
}

static void print_collectives(FILE *out, const ovl_step_result *st, int64_t origin, const ovl_text_options *opt) {
  const ovl_coll_result **sorted = malloc((st->ncolls ? st->ncolls : 1) * sizeof *sorted);
  if (!sorted) return;
  for (size_t i = 0; i < st->ncolls; i++) sorted[i] = &st->colls[i];
  ovl_qsort(sorted, st->ncolls, sizeof *sorted, cmp_coll_exposed);
  char label[64];
  fprintf(out, "\n  Collectives of step %s, most exposed first\n", ovl_step_label(st, label, sizeof label));
  fprintf(out, "  %5s  %-13s %10s %6s %11s %10s %10s %10s %10s %10s\n", "order", "op", "bytes", "bucket", "gpu start",
          "duration", "exposed", "stall", "algbw GB/s", "busbw GB/s");
  size_t shown = st->ncolls < opt->max_collectives ? st->ncolls : opt->max_collectives;
  for (size_t i = 0; i < shown; i++) {
    const ovl_coll_result *c = sorted[i];
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], bucket[24];
    if (c->bytes != OVL_NONE) ovl_format_bytes((double)c->bytes, b1, sizeof b1);
    else snprintf(b1, sizeof b1, "?");
    ovl_coll_bucket_label(c, bucket, sizeof bucket);
    if (ovl_coll_stall(c) != OVL_NONE) ns_text((double)ovl_coll_stall(c), b5);
    else snprintf(b5, sizeof b5, "-");
    fprintf(out, "  %5d  %-13s %10s %6s %11s %10s %10s %10s %10s %10s\n", c->order, ovl_op_name(c->op), b1, bucket,
            ns_text((double)(c->gpu_start - origin), b2), ns_text((double)(ovl_coll_gpu_end(c) - c->gpu_start), b3),
            ns_text((double)ovl_coll_exposed(c), b4), b5, gbps_text(ovl_coll_algbw(c), b6),
            gbps_text(ovl_coll_busbw(c), b7));
  }
  if (shown < st->ncolls) fprintf(out, "  ... %zu more (use --all)\n", st->ncolls - shown);
  free(sorted);
}

/* HTA's temporal breakdown: how idle the GPU is explains a low efficiency. */
static void print_breakdown(FILE *out, const ovl_totals *t) {
  if (t->busy_start == INT64_MAX || t->busy_end <= t->busy_start) return;
  double span = (double)(t->busy_end - t->busy_start);
  char a[32];
  fprintf(out, "  GPU time over %s from its first to its last work: idle %.1f%%, compute %.1f%%, non-compute %.1f%%\n",
          ns_text(span, a), 100.0 * (span - (double)t->busy) / span, 100.0 * (double)t->compute / span,
          100.0 * (double)(t->busy - t->compute) / span);
}

/* NCCL's timing of its kernel channels (its profiler plugin), when the trace has it. */
static void print_channel_facts(FILE *out, const ovl_channel_facts *f) {
  if (f->collectives == 0) return;
  char a[32], b[32];
  fprintf(out, "  NCCL timed the channels of %ld collective%s", f->collectives, f->collectives == 1 ? "" : "s");
  if (f->timed) fprintf(out, ": %ld without a captured kernel, timed by their channels", f->timed);
  if (f->checked)
    fprintf(out, "%s %ld of %ld agree with their kernels (farthest outside: %s)", f->timed ? ";" : ":", f->agree,
            f->checked, ns_text((double)f->max_outside, a));
  fprintf(out, ";\n  widest spread between a collective's first and last channel to finish: %s (collective %lld)\n",
          ns_text((double)f->max_spread, b),
          (long long)f->max_spread_id);
}

/* A rank's summary: who it is, its work, totals, breakdown and what the analysis left out. */
static void print_rank_header(FILE *out, const ovl_rank_result *r, size_t nparts) {
  char a[32], b[32], c[32], d[32];
  char rank[32];
  if (r->rank != OVL_NONE) snprintf(rank, sizeof rank, "rank %lld", (long long)r->rank);
  else snprintf(rank, sizeof rank, "rank ?");
  char path[1024];  /* a file name found in a directory may hold escape sequences too */
  ovl_text_clean_into(r->trace_path ? r->trace_path : "", path, sizeof path);
  fprintf(out, "%s  device %lld", rank, (long long)r->device);
  if (nparts > 1) fprintf(out, "  job %d", r->job + 1);
  if (r->hostname && r->hostname[0]) {
    char host[256];
    ovl_text_clean_into(r->hostname, host, sizeof host);
    fprintf(out, "  host %s", host);
  }
  fprintf(out, "  (%s)\n", path);
  fprintf(out, "  %ld kernels (%ld communication), %ld memops (%ld communication); ", r->n_kernels,
          r->n_comm_kernels, r->n_memops, r->n_comm_memops);
  switch (r->step_detection) {
    case OVL_STEPS_NVTX:
      fprintf(out, "%zu step%s from NVTX ranges, %s\n", r->nsteps, r->nsteps == 1 ? "" : "s",
              r->step_projection == OVL_PROJECT_CORRELATION ? "projected through launch correlation"
                                                            : "used as GPU time windows");
      break;
    case OVL_STEPS_PERIODIC:
      fprintf(out, "%zu steps inferred from the collective sequence (%zu collective%s per step)\n", r->nsteps,
              r->period, r->period == 1 ? "" : "s");
      break;
    case OVL_STEPS_WHOLE:
      fprintf(out, "no steps found: the whole trace is one step\n");
      break;
  }
  fprintf(out, "  compute %s   communication %s   exposed %s   overlap efficiency %s\n",
          ns_text((double)r->totals.compute, a), ns_text((double)r->totals.comm, b),
          ns_text((double)r->totals.exposed, c), pct_text(ovl_overlap_efficiency(&r->totals), d));
  print_breakdown(out, &r->totals);
  if (r->colls_without_gpu_work || r->colls_outside_steps)
    fprintf(out, "  %ld collective calls launched no GPU work; %ld ran outside every step\n", r->colls_without_gpu_work,
            r->colls_outside_steps);
  if (r->colls_without_gpu_work && r->cupti_late)
    fprintf(out, "  (CUPTI was attached late, from NCCL's profiler plugin, so no launching call was recorded to link "
                 "collectives to their kernels: also set CUDA_INJECTION64_PATH=libovl.so, docs/capture.md)\n");
  if (r->colls_before_window)
    fprintf(out, "  %ld collective%s at the start of step 0 ran GPU work launched before the profiler window opened "
                 "(no launching call in the trace): not counted in step 0's buckets or findings\n",
            r->colls_before_window, r->colls_before_window == 1 ? "" : "s");
  print_channel_facts(out, &r->channel_facts);
}

/* The steps table and, for the worst steps, buckets, collectives and step findings. */
static void print_rank_steps(FILE *out, const ovl_rank_result *r, const ovl_text_options *opt) {
  char a[32], b[32], c[32], d[32], e[32], f[32];
  if (r->nsteps == 0) return;

  int64_t origin = r->totals.busy_start != INT64_MAX ? r->totals.busy_start : 0;
  const ovl_step_result **sorted = malloc(r->nsteps * sizeof *sorted);
  if (!sorted) return;
  for (size_t i = 0; i < r->nsteps; i++) sorted[i] = &r->steps[i];
  ovl_qsort(sorted, r->nsteps, sizeof *sorted, cmp_step_exposed);
  fprintf(out, "\n  Steps, most exposed first\n");
  int numbered = 0;
  for (size_t i = 0; i < r->nsteps; i++) numbered |= r->steps[i].number >= 0;
  fprintf(out, "  %5s %11s %10s %10s %10s %10s %10s %6s%s\n", "step", "start", "duration", "compute", "comm", "exposed",
          "efficiency", "colls", numbered ? "  ProfilerStep" : "");
  size_t shown = r->nsteps < opt->max_steps ? r->nsteps : opt->max_steps;
  for (size_t i = 0; i < shown; i++) {
    const ovl_step_result *st = sorted[i];
    fprintf(out, "  %5ld %11s %10s %10s %10s %10s %10s %6zu", st->index, ns_text((double)(st->start - origin), a),
            ns_text((double)(st->end - st->start), b), ns_text((double)st->totals.compute, c),
            ns_text((double)st->totals.comm, d), ns_text((double)st->totals.exposed, e),
            pct_text(ovl_overlap_efficiency(&st->totals), f), st->ncolls);
    if (st->number >= 0) fprintf(out, "  #%ld", st->number);
    fputc('\n', out);
  }
  if (shown < r->nsteps) fprintf(out, "  ... %zu more (use --all)\n", r->nsteps - shown);
  size_t detail = r->nsteps < opt->detail_steps ? r->nsteps : opt->detail_steps;
  for (size_t i = 0; i < detail; i++) {
    ovl_bucket_view_text(out, sorted[i], opt->max_collectives);
    if (sorted[i]->ncolls) print_collectives(out, sorted[i], origin, opt);
    print_step_findings(out, sorted[i]);
  }
  free(sorted);
}

static void print_rank(FILE *out, const ovl_rank_result *r, size_t nparts, const ovl_text_options *opt) {
  print_rank_header(out, r, nparts);
  print_findings(out, r->findings, r->nfindings);
  print_rank_steps(out, r, opt);
}

/* ---------------------------------------------------------------------------------- */
/* Several ranks: summaries, findings grouped across ranks, the most exposed rank's steps  */
/* ---------------------------------------------------------------------------------- */

static const char *rank_name(const ovl_rank_result *r, char *buf, size_t len) {
  if (r->rank != OVL_NONE) snprintf(buf, len, "%lld", (long long)r->rank);
  else snprintf(buf, len, "?");
  return buf;
}

/* One entry per finding code of the ranks' own findings: the ranks that have it and the
** worst one's finding (the JSON keeps every rank's). */
static void print_grouped_findings(FILE *out, const ovl_job *job) {
  size_t total = 0;
  for (size_t i = 0; i < job->nranks; i++) total += job->ranks[i].nfindings;
  if (total == 0) return;
  char *done = calloc(total, 1);  /* findings already printed in a group, by flat index */
  if (!done) return;
  fprintf(out, "\nFindings, grouped across ranks (the evidence of the rank that loses most; --json or --all for "
               "each rank's)\n");
  size_t flat = 0;
  for (size_t i = 0; i < job->nranks; i++)
    for (size_t k = 0; k < job->ranks[i].nfindings; k++, flat++) {
      if (done[flat]) continue;
      const char *code = job->ranks[i].findings[k].code;
      const ovl_finding *worst = NULL;
      const ovl_rank_result *worst_rank = NULL;
      int64_t lo = INT64_MAX, hi = 0, sum = 0;
      char ranks[512] = "";
      size_t used = 0, nranks = 0, f2 = 0;
      for (size_t i2 = 0; i2 < job->nranks; i2++)
        for (size_t k2 = 0; k2 < job->ranks[i2].nfindings; k2++, f2++) {
          const ovl_finding *f = &job->ranks[i2].findings[k2];
          if (done[f2] || strcmp(f->code, code) != 0) continue;
          done[f2] = 1;
          if (!worst || f->recoverable_ns > worst->recoverable_ns) {
            worst = f;
            worst_rank = &job->ranks[i2];
          }
          if (f->recoverable_ns < lo) lo = f->recoverable_ns;
          if (f->recoverable_ns > hi) hi = f->recoverable_ns;
          sum += f->recoverable_ns;
          char rn[24];
          rank_name(&job->ranks[i2], rn, sizeof rn);
          if (used + 32 < sizeof ranks) {
            snprintf(ranks + used, sizeof ranks - used, "%s%s", nranks ? ", " : "", rn);
            used = strlen(ranks);
          }
          nranks++;
        }
      char head[768], t1[32], t2[32], t3[32], rn[24], conf[32] = "";
      if (ovl_confidence_name(worst->confidence))
        snprintf(conf, sizeof conf, " (%s confidence)", ovl_confidence_name(worst->confidence));
      int n = snprintf(head, sizeof head, "  [%s] rank%s %s%s", code, nranks == 1 ? "" : "s", ranks, conf);
      if (hi > 0 && nranks > 1)
        n += snprintf(head + n, sizeof head - (size_t)n, "; recoverable %s to %s per rank, %s in all",
                      ns_text((double)lo, t1), ns_text((double)hi, t2), ns_text((double)sum, t3));
      else if (hi > 0)
        n += snprintf(head + n, sizeof head - (size_t)n, "; recoverable %s", ns_text((double)hi, t1));
      if (nranks > 1)
        snprintf(head + n, sizeof head - (size_t)n, "; rank %s:", rank_name(worst_rank, rn, sizeof rn));
      else
        snprintf(head + n, sizeof head - (size_t)n, ":");
      fputs("  ", out);
      assert(!worst->text);  /* a rank's findings keep their message */
      size_t len = strlen(head) + strlen(worst->message) + 2;
      char *text = malloc(len);
      if (!text) break;
      snprintf(text, len, "%s %s", head + 2, worst->message);
      print_wrapped(out, text, 2, 6);
      free(text);
    }
  free(done);
}

/* Several ranks, all of one job (sharing communicators), each with its own rank number. */
static int one_job(const ovl_job *job) {
  if (job->nranks < 2 || !job->cross.present || job->cross.nmembers != job->nranks) return 0;
  for (size_t i = 1; i < job->nranks; i++)  /* ranks are sorted by rank */
    if (job->ranks[i].rank == OVL_NONE || job->ranks[i].rank == job->ranks[i - 1].rank) return 0;
  return job->ranks[0].rank != OVL_NONE;
}

static void print_job_ranks(FILE *out, const ovl_job *job, const ovl_text_options *opt) {
  const ovl_rank_result *worst = NULL;
  for (size_t i = 0; i < job->nranks; i++) {
    if (i) fputc('\n', out);
    print_rank_header(out, &job->ranks[i], job->nparts);
    if (!worst || job->ranks[i].totals.exposed > worst->totals.exposed) worst = &job->ranks[i];
  }
  print_grouped_findings(out, job);
  if (!worst || worst->nsteps == 0) return;
  char rn[24];
  fprintf(out, "\nRank %s, the most exposed: its steps (every rank's: --json, or --all here)\n",
          rank_name(worst, rn, sizeof rn));
  print_rank_steps(out, worst, opt);
}

static double ratio_or_nan(int64_t part, int64_t whole) {
  return whole > 0 ? 1.0 - (double)part / (double)whole : NAN;
}

/* Ranks shown in the job table: stragglers and the latest arrivers first. */
static int cmp_rank_lateness(const void *pa, const void *pb) {
  const ovl_rank_result *a = *(const ovl_rank_result *const *)pa, *b = *(const ovl_rank_result *const *)pb;
  if (a->cross.straggler != b->cross.straggler) return b->cross.straggler - a->cross.straggler;
  if (a->cross.times_last != b->cross.times_last) return a->cross.times_last > b->cross.times_last ? -1 : 1;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

static void print_job(FILE *out, const ovl_job *job, const ovl_text_options *opt) {
  const ovl_job_cross *c = &job->cross;
  char a[32], b[32], d[32], e[32];
  if (job->nparts > 1) fprintf(out, "\nJob %d across %zu ranks", job->ranks[c->members[0]].job + 1, c->nmembers);
  else fprintf(out, "\nJob across %zu ranks", c->nmembers);
  if (c->njobs > 1) fprintf(out, " (the largest of %zu groups of ranks sharing communicators)", c->njobs);
  fprintf(out, ": %zu collectives matched on every rank, %zu unmatched", c->matched, c->unmatched);
  if (c->point_to_point) fprintf(out, ", %zu point-to-point calls not matched", c->point_to_point);
  fputc('\n', out);
  if (c->has_mismatch) fprintf(out, "  WARNING: collectives do not line up across ranks: %s\n", c->mismatch);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < c->nmembers; i++) {
    int64_t o = job->ranks[c->members[i]].clock_offset;
    if (o < lo) lo = o;
    if (o > hi) hi = o;
  }
  fprintf(out, "  clocks: aligned on %zu collectives; offsets from %s to %s (rank %lld's clock is the job's); "
               "residual %s (p50), %s (p99)\n",
          c->alignment_samples, ovl_format_ns((double)lo, a, sizeof a), ovl_format_ns((double)hi, b, sizeof b),
          (long long)job->ranks[c->members[0]].rank, ovl_format_ns((double)c->residual_p50, d, sizeof d),
          ovl_format_ns((double)c->residual_p99, e, sizeof e));
  fprintf(out, "  arrival skew: %s (p50), %s (p99); gaps under %s count as clock noise\n",
          ovl_format_ns((double)c->skew_p50, a, sizeof a), ovl_format_ns((double)c->skew_p99, b, sizeof b),
          ovl_format_ns((double)c->decisive_margin, d, sizeof d));
  fprintf(out, "  overlap efficiency: %s of all communication, %s of transfer time only "
               "(time waiting for peers: %s: a straggler problem, not an overlap one)\n",
          pct_text(ratio_or_nan(c->t_exposed, c->t_comm), a), pct_text(ratio_or_nan(c->t_exposed_transfer, c->t_transfer), b),
          ovl_format_ns((double)c->t_wait, d, sizeof d));

  const ovl_rank_result **sorted = malloc(c->nmembers * sizeof *sorted);
  if (!sorted) return;
  for (size_t i = 0; i < c->nmembers; i++) sorted[i] = &job->ranks[c->members[i]];
  ovl_qsort(sorted, c->nmembers, sizeof *sorted, cmp_rank_lateness);
  size_t shown = opt->max_steps == OVL_TEXT_ALL ? c->nmembers : (c->nmembers < 16 ? c->nmembers : 16);
  fprintf(out, "\n  %6s %10s %11s %10s %10s %9s %10s  %s\n", "rank", "efficiency", "on transfer", "waiting",
          "transfer", "last", "waits for", "");
  for (size_t i = 0; i < shown; i++) {
    const ovl_rank_result *r = sorted[i];
    char f[32], g[32], h[32], k[32], rank[24];
    if (r->rank != OVL_NONE) snprintf(rank, sizeof rank, "%lld", (long long)r->rank);
    else snprintf(rank, sizeof rank, "?");
    fprintf(out, "  %6s %10s %11s %10s %10s %4ld/%-4ld %10s  %s\n", rank, pct_text(ovl_overlap_efficiency(&r->totals), f),
            pct_text(ratio_or_nan(r->cross.exposed_transfer_ns, r->cross.transfer_ns), g),
            ovl_format_ns((double)r->cross.wait_ns, h, sizeof h), ovl_format_ns((double)r->cross.transfer_ns, k, sizeof k),
            r->cross.times_last, r->cross.decisive, ovl_format_ns((double)r->cross.wait_caused_ns, a, sizeof a),
            r->cross.straggler ? "straggler" : "");
  }
  if (shown < c->nmembers) fprintf(out, "  ... %zu more ranks (use --all)\n", c->nmembers - shown);
  fprintf(out, "  (last: times it arrived last / collectives where arrivals differed; waits for: the others' "
               "waiting it caused)\n");
  int stragglers = 0;
  for (size_t i = 0; i < c->nmembers; i++) stragglers += job->ranks[c->members[i]].cross.straggler;
  if (!stragglers && c->most_waited_for != SIZE_MAX) {
    const ovl_rank_result *w = &job->ranks[c->most_waited_for];
    fprintf(out, "  stragglers: none significant; the others waited most for rank %s (last %ld/%ld, %s caused)\n",
            rank_name(w, a, sizeof a), w->cross.times_last, w->cross.decisive,
            ovl_format_ns((double)w->cross.wait_caused_ns, b, sizeof b));
  }
  free(sorted);
}

/* Traces of several jobs given together: which jobs, and why they cannot be one. */
static void print_parts(FILE *out, const ovl_job *job) {
  if (job->nparts < 2) return;
  fprintf(out, "These traces come from %zu different jobs (%s); each is analysed apart:\n", job->nparts, job->why_parts);
  for (size_t k = 0; k < job->nparts; k++) {
    char part[768], clean[768];
    ovl_job_parts_describe(job, k, part, sizeof part);
    ovl_text_clean_into(part, clean, sizeof clean);
    fprintf(out, "  %s\n", clean);
  }
  fputc('\n', out);
}

void ovl_report_text(FILE *out, const ovl_job *job, const ovl_text_options *opt) {
  /* The ranks of one job repeat one another: grouped unless everything is asked for (--all). */
  int grouped = one_job(job) && opt->max_steps != OVL_TEXT_ALL;
  print_parts(out, job);
  if (grouped) {
    print_job_ranks(out, job, opt);
  } else {
    for (size_t i = 0; i < job->nranks; i++) {
      if (i) fputc('\n', out);
      print_rank(out, &job->ranks[i], job->nparts, opt);
    }
  }
  if (job->nno_gpu) {
    fprintf(out, "\nWithout GPU work (%zu trace%s, not analysed)\n", job->nno_gpu, job->nno_gpu == 1 ? "" : "s");
    for (size_t i = 0; i < job->nno_gpu; i++) {
      const ovl_host_only *h = &job->no_gpu[i];
      char line[2048];
      int n = h->rank != OVL_NONE ? snprintf(line, sizeof line, "  rank %lld: ", (long long)h->rank)
                                  : snprintf(line, sizeof line, "  rank ?: ");
      ovl_host_only_describe(h, line + n, sizeof line - (size_t)n);
      fputs("  ", out);
      print_wrapped(out, line + 2, 2, 4);
    }
  }
  if (job->cross.present) print_job(out, job, opt);
  if (ovl_report_dims_beyond_ddp(job)) ovl_report_dims_text(out, job, !grouped);
  if (job->nfindings) {
    fprintf(out, "\nJob");
    print_findings(out, job->findings, job->nfindings);
  }
}
