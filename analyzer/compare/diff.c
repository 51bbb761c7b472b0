/* `ovl diff`: the job's metrics, the orchestration of the parts and freeing (diff.h). */
#include "diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[OVL_M_COUNT] = {"step_time", "compute", "comm", "exposed", "efficiency"};
static const char *const metric_titles[OVL_M_COUNT] = {"step time", "compute", "communication",
                                                       "exposed communication", "overlap efficiency"};

const char *ovl_metric_name(ovl_metric m) { return m < OVL_M_COUNT ? metric_names[m] : "?"; }
const char *ovl_metric_title(ovl_metric m) { return m < OVL_M_COUNT ? metric_titles[m] : "?"; }

const char *ovl_diff_status_name(ovl_diff_status s) {
  switch (s) {
    case OVL_DS_SAME: return "same";
    case OVL_DS_CHANGED: return "changed";
    case OVL_DS_NEW: return "new";
    case OVL_DS_VANISHED: return "vanished";
  }
  return "?";
}

ovl_order_key ovl_change_key(const ovl_change *c) {
  ovl_order_key k = {c->significant, isnan(c->delta) ? 0.0 : fabs(c->delta)};
  return k;
}

int ovl_order_key_cmp(ovl_order_key a, ovl_order_key b) {
  if (a.tier != b.tier) return a.tier > b.tier ? -1 : 1;
  if (a.size != b.size) return a.size > b.size ? -1 : 1;
  return 0;
}

int ovl_side_metrics_of(const ovl_profile *p, const size_t *idx, size_t n, ovl_side_metrics *out) {
  memset(out, 0, sizeof *out);
  if (!idx) n = p->nranks;
  size_t nsteps = 0;
  double exposed = 0, comm = 0;
  for (size_t k = 0; k < n; k++) {
    const ovl_prof_rank *r = &p->ranks[idx ? idx[k] : k];
    if (r->nsteps > nsteps) nsteps = r->nsteps;
    exposed += (double)r->exposed;
    comm += (double)r->comm;
    out->exposed_total += r->exposed;
  }
  out->efficiency = comm > 0 ? 1.0 - exposed / comm : NAN;
  out->steps = nsteps;
  double *v[OVL_M_COUNT];
  size_t nv[OVL_M_COUNT] = {0};
  int rc = 0;
  for (int m = 0; m < OVL_M_COUNT; m++)
    if (!(v[m] = malloc((nsteps ? nsteps : 1) * sizeof *v[m]))) rc = -1;
  for (size_t s = 0; !rc && s < nsteps; s++) {
    double sum[4] = {0}, ranks = 0;
    for (size_t k = 0; k < n; k++) {
      const ovl_prof_rank *r = &p->ranks[idx ? idx[k] : k];
      if (s >= r->nsteps) continue;
      const ovl_prof_step *st = &r->steps[s];
      sum[0] += (double)st->duration;
      sum[1] += (double)st->compute;
      sum[2] += (double)st->comm;
      sum[3] += (double)st->exposed;
      ranks++;
    }
    for (int m = 0; m < 4; m++) v[m][nv[m]++] = sum[m] / ranks;
    if (sum[2] > 0) v[OVL_M_EFFICIENCY][nv[OVL_M_EFFICIENCY]++] = 1.0 - sum[3] / sum[2];
  }
  for (int m = 0; m < OVL_M_COUNT; m++) {
    if (!rc) ovl_dist_of(v[m], nv[m], &out->d[m]);
    free(v[m]);
  }
  return rc;
}

void ovl_metrics_compare(const ovl_side_metrics *b, const ovl_side_metrics *a, ovl_metrics_diff *out) {
  out->before = *b;
  out->after = *a;
  for (int m = 0; m < OVL_M_EFFICIENCY; m++) ovl_change_of(&b->d[m], &a->d[m], OVL_Q_NS, &out->c[m]);
  ovl_change_between(b->efficiency, a->efficiency, &b->d[OVL_M_EFFICIENCY], &a->d[OVL_M_EFFICIENCY], OVL_Q_RATIO,
                     &out->c[OVL_M_EFFICIENCY]);
}

void ovl_diff_free(ovl_diff *d) {
  free(d->ranks);
  free(d->comms);
  free(d->colls);
  for (size_t i = 0; i < d->nkernels; i++) free(d->kernels[i].name);
  free(d->kernels);
  free(d->findings);
  memset(d, 0, sizeof *d);
}

int ovl_diff_compute(const ovl_profile *before, const ovl_profile *after, ovl_diff *out, ovl_err *err) {
  memset(out, 0, sizeof *out);
  out->before = before;
  out->after = after;
  ovl_side_metrics b, a;
  int rc = ovl_side_metrics_of(before, NULL, 0, &b) || ovl_side_metrics_of(after, NULL, 0, &a);
  if (!rc) {
    ovl_metrics_compare(&b, &a, &out->job);
    rc = ovl_diff_ranks(out) || ovl_diff_colls(out) || ovl_diff_kernels(out) || ovl_diff_findings(out);
  }
  if (rc) {
    ovl_diff_free(out);
    return ovl_oom(err, "diff");
  }
  ovl_diff_buckets(out);
  return OVL_OK;
}
