/* A run's profile from an analysed job, and freeing profiles (run_profile.h). */
#include "run_profile.h"

#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_findings(ovl_prof_finding *f, size_t n) {
  for (size_t i = 0; i < n; i++) free(f[i].message);
  free(f);
}

static void free_rank(ovl_prof_rank *r) {
  free(r->trace);
  for (size_t s = 0; s < r->nsteps; s++) free(r->steps[s].colls);
  free(r->steps);
  free_findings(r->findings, r->nfindings);
  for (size_t k = 0; k < r->nkernels; k++) {
    free(r->kernels[k].name);
    free(r->kernels[k].step_ns);
  }
  free(r->kernels);
}

void ovl_profile_free(ovl_profile *p) {
  for (size_t i = 0; i < p->nranks; i++) free_rank(&p->ranks[i]);
  free(p->ranks);
  free_findings(p->findings, p->nfindings);
  free(p->label);
  memset(p, 0, sizeof *p);
}

/* Positions of a step's calls ordered by (communicator, operation, firing order). */
static const ovl_prof_coll *sort_base;
static int cmp_call(const void *pa, const void *pb) {
  size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
  const ovl_prof_coll *a = &sort_base[ia], *b = &sort_base[ib];
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  return (ia > ib) - (ia < ib);
}

int ovl_prof_step_index_colls(ovl_prof_step *st) {
  size_t *pos = malloc((st->ncolls ? st->ncolls : 1) * sizeof *pos);
  if (!pos) return -1;
  for (size_t i = 0; i < st->ncolls; i++) pos[i] = i;
  sort_base = st->colls;  /* qsort has no context argument; profiles are built on one thread */
  ovl_qsort(pos, st->ncolls, sizeof *pos, cmp_call);
  for (size_t k = 0; k < st->ncolls; k++) {
    const ovl_prof_coll *prev = k ? &st->colls[pos[k - 1]] : NULL, *c = &st->colls[pos[k]];
    st->colls[pos[k]].index = prev && prev->comm == c->comm && prev->op == c->op ? st->colls[pos[k - 1]].index + 1 : 0;
  }
  free(pos);
  return 0;
}

/* Appends copies of findings f[0..n), those of step st (NULL: a rank's or the job's). Returns 0,
** or -1 when memory runs out. */
static int copy_findings(ovl_prof_finding **list, size_t *len, const ovl_step_result *st, const ovl_finding *f,
                         size_t n) {
  if (n == 0) return OVL_OK;
  ovl_prof_finding *grown = realloc(*list, (*len + n) * sizeof *grown);
  if (!grown) return -1;
  *list = grown;
  for (size_t i = 0; i < n; i++) {
    ovl_prof_finding *o = &grown[*len];
    memset(o, 0, sizeof *o);
    snprintf(o->code, sizeof o->code, "%s", f[i].code);
    o->step = f[i].step;
    o->steps_affected = f[i].steps_affected;
    o->recoverable = f[i].recoverable_ns;
    const char *conf = ovl_confidence_name(f[i].confidence);
    snprintf(o->confidence, sizeof o->confidence, "%s", conf ? conf : "");
    snprintf(o->evidence, sizeof o->evidence, "%s", f[i].evidence ? f[i].evidence : "");
    char buf[OVL_FINDING_TEXT_MAX];
    const char *text = ovl_finding_message(st, &f[i], buf, sizeof buf);
    if (!text && f[i].text) return -1;
    o->message = strdup(text ? text : "");
    if (!o->message) return -1;
    (*len)++;
  }
  return OVL_OK;
}

static int step_from_job(const ovl_step_result *st, ovl_prof_step *o) {
  o->index = st->index;
  o->duration = st->end - st->start;
  o->compute = st->totals.compute;
  o->comm = st->totals.comm;
  o->exposed = st->totals.exposed;
  o->misordered = st->misordered;
  o->colls = calloc(st->ncolls ? st->ncolls : 1, sizeof *o->colls);
  if (!o->colls) return -1;
  o->ncolls = st->ncolls;
  for (size_t i = 0; i < st->ncolls; i++) {
    const ovl_coll_result *c = &st->colls[i];
    ovl_prof_coll *p = &o->colls[i];
    p->comm = c->comm;
    p->op = c->op;
    p->bytes = c->bytes;
    p->duration = ovl_coll_gpu_end(c) - c->gpu_start;
    p->exposed = ovl_coll_exposed(c);
    p->bucket = c->bucket;
    p->gradient = c->diag.role == OVL_ROLE_GRADIENT;
    p->ready_order = c->diag.ready_order;
  }
  return ovl_prof_step_index_colls(o);
}

static int kernels_from_stats(const ovl_rank_stats *rs, ovl_prof_rank *o) {
  o->kernels = calloc(rs->nkernels ? rs->nkernels : 1, sizeof *o->kernels);
  if (!o->kernels) return -1;
  for (size_t k = 0; k < rs->nkernels; k++) {
    const ovl_kernel_stat *s = &rs->kernels[k];
    ovl_prof_kernel *p = &o->kernels[o->nkernels++];
    p->name = strdup(s->name);
    p->comm = s->cls == OVL_CLASS_COMM;
    p->count = s->t.count;
    p->total = s->t.total;
    if (!p->name) return -1;
    if (s->step_ns && rs->nsteps == o->nsteps) {
      p->step_ns = malloc((rs->nsteps ? rs->nsteps : 1) * sizeof *p->step_ns);
      if (!p->step_ns) return -1;
      memcpy(p->step_ns, s->step_ns, rs->nsteps * sizeof *p->step_ns);
    }
  }
  return 0;
}

static int rank_from_job(const ovl_rank_result *r, const ovl_rank_stats *rs, ovl_prof_rank *o) {
  o->rank = r->rank;
  o->device = r->device;
  o->trace = strdup(r->trace_path ? r->trace_path : "");
  o->compute = r->totals.compute;
  o->comm = r->totals.comm;
  o->exposed = r->totals.exposed;
  if (!o->trace) return -1;
  o->steps = calloc(r->nsteps ? r->nsteps : 1, sizeof *o->steps);
  if (!o->steps) return -1;
  for (size_t s = 0; s < r->nsteps; s++, o->nsteps++)
    if (step_from_job(&r->steps[s], &o->steps[s])) return -1;
  if (copy_findings(&o->findings, &o->nfindings, NULL, r->findings, r->nfindings)) return -1;
  for (size_t s = 0; s < r->nsteps; s++)
    if (copy_findings(&o->findings, &o->nfindings, &r->steps[s], r->steps[s].findings, r->steps[s].nfindings)) return -1;
  return rs ? kernels_from_stats(rs, o) : 0;
}

int ovl_profile_from_job(const ovl_job *job, const ovl_stats *kernels, const char *label, ovl_profile *out,
                         ovl_err *err) {
  memset(out, 0, sizeof *out);
  int rc = !(out->label = strdup(label)) || !(out->ranks = calloc(job->nranks ? job->nranks : 1, sizeof *out->ranks));
  /* out->nranks counts a rank that failed part-way too: freed with the rest */
  for (size_t i = 0; !rc && i < job->nranks; i++, out->nranks++) {
    const ovl_rank_stats *rs = kernels && i < kernels->nranks ? &kernels->ranks[i] : NULL;
    rc = rank_from_job(&job->ranks[i], rs, &out->ranks[i]);
  }
  if (!rc) rc = copy_findings(&out->findings, &out->nfindings, NULL, job->findings, job->nfindings);
  if (rc) {
    ovl_profile_free(out);
    return ovl_oom(err, "profile");
  }
  return OVL_OK;
}
