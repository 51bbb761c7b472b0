/* Text bucket view: see bucket_view.h. */
#include "bucket_view.h"

#include "base/units.h"

#include <math.h>

/* Time relative to the step start, or "-". */
static const char *rel_text(int64_t t, int64_t origin, char *buf) {
  if (t == OVL_NONE) snprintf(buf, 32, "-");
  else ovl_format_ns((double)(t - origin), buf, 32);
  return buf;
}

static const char *dur_text(int64_t ns, char *buf) {
  if (ns == OVL_NONE) snprintf(buf, 32, "-");
  else ovl_format_ns((double)ns, buf, 32);
  return buf;
}

static void bucket_label(const ovl_coll_result *c, char *buf, size_t len) { ovl_coll_bucket_label(c, buf, len); }

void ovl_bucket_view_text(FILE *out, const ovl_step_result *st, size_t max_rows) {
  if (st->ngrad == 0) return;
  char label[64];
  fprintf(out, "\n  Buckets of step %s in firing order (times from the step start", ovl_step_label(st, label, sizeof label));
  if (st->backward_end != OVL_NONE) {
    char b[32];
    fprintf(out, "; backward compute ends at %s", ovl_format_ns((double)(st->backward_end - st->start), b, sizeof b));
  }
  fprintf(out, ")\n");
  fprintf(out, "  %6s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "bucket", "bytes", "ready", "launch",
          "gpu start", "gpu end", "stall", "queueing", "exposed", "busbw GB/s");
  size_t shown = 0;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    if (c->diag.role != OVL_ROLE_GRADIENT) continue;
    if (shown++ == max_rows) {
      fprintf(out, "  ... %d more (use --all)\n", st->ngrad - (int)max_rows);
      break;
    }
    char lb[24], by[32], t1[32], t2[32], t3[32], t4[32], t5[32], t6[32], t7[32], bw[32];
    bucket_label(c, lb, sizeof lb);
    if (c->bytes != OVL_NONE) ovl_format_bytes((double)c->bytes, by, sizeof by);
    else snprintf(by, sizeof by, "?");
    double busbw = ovl_coll_busbw(c);
    if (isnan(busbw)) snprintf(bw, sizeof bw, "-");
    else snprintf(bw, sizeof bw, "%.2f", busbw);
    fprintf(out, "  %6s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", lb, by,
            rel_text(ovl_coll_ready(c), st->start, t1), rel_text(ovl_coll_host_launch(c), st->start, t2),
            rel_text(c->gpu_start, st->start, t3), rel_text(ovl_coll_gpu_end(c), st->start, t4),
            dur_text(ovl_coll_stall(c), t5), dur_text(ovl_coll_queueing(c), t6), dur_text(ovl_coll_exposed(c), t7), bw);
  }
  if (!st->misordered) return;
  fprintf(out, "  expected firing order (by readiness):");
  for (int pos = 0; pos < st->ngrad; pos++)
    for (size_t i = 0; i < st->ncolls; i++)
      if (st->colls[i].diag.role == OVL_ROLE_GRADIENT && st->colls[i].diag.ready_order == pos) {
        char lb[24];
        bucket_label(&st->colls[i], lb, sizeof lb);
        fprintf(out, " %s", lb);
      }
  fprintf(out, "\n  observed firing order:               ");
  for (size_t i = 0; i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT && st->colls[i].diag.ready_order >= 0) {
      char lb[24];
      bucket_label(&st->colls[i], lb, sizeof lb);
      fprintf(out, " %s", lb);
    }
  fputc('\n', out);
}
