/* Small helpers on analysis results: see analysis.h. */
#include "analysis.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ovl_coll_extra ovl_coll_extra_none = {
    .channels = {.n = 0, .start = OVL_NONE, .end = OVL_NONE, .spread = OVL_NONE, .outside = OVL_NONE},
    .d2h_start = OVL_NONE,
    .d2h_end = OVL_NONE,
    .d2h_bytes = OVL_NONE,
    .id = OVL_NONE};

int ovl_coll_extra_is_none(const ovl_coll_extra *x) {
  const ovl_coll_extra *z = &ovl_coll_extra_none;
  const ovl_coll_channels *a = &x->channels, *b = &z->channels;
  return a->n == b->n && a->start == b->start && a->end == b->end && a->spread == b->spread &&
         a->outside == b->outside && a->timed == b->timed && a->agree == b->agree && x->d2h_start == z->d2h_start &&
         x->d2h_end == z->d2h_end && x->d2h_bytes == z->d2h_bytes && !x->algorithm[0] && !x->protocol[0] &&
         x->id == z->id;
}

int ovl_coll_extra_set(ovl_coll_result *c, const ovl_coll_extra *x) {
  if (!c->extra && ovl_coll_extra_is_none(x)) return 0;  /* the many: nothing to keep, nothing to give */
  ovl_coll_extra y = *x;  /* the wide values, a flexible array member, are not copied */
  y.id = ovl_coll_extra_of(c)->id;
  if (c->wide) {
    *c->extra = y;
    return 0;
  }
  free(c->extra);
  c->extra = NULL;
  if (ovl_coll_extra_is_none(&y)) return 0;
  if (!(c->extra = malloc(sizeof *c->extra))) return -1;
  *c->extra = y;
  return 0;
}

int ovl_coll_set_id_far(ovl_coll_result *c, int64_t v) {
  int64_t d;
  int narrow = v != OVL_NONE && ovl_c32_fits(v, 0, &d);
  c->id32 = narrow ? (int32_t)d : OVL_C32_NONE;
  int64_t far = narrow ? OVL_NONE : v;
  if (c->extra) c->extra->id = far;
  else if (far != OVL_NONE) {
    if (!(c->extra = malloc(sizeof *c->extra))) return -1;
    *c->extra = ovl_coll_extra_none;
    c->extra->id = far;
  }
  return 0;
}

int ovl_coll_widen(ovl_coll_result *c, const ovl_coll_wide *w) {
  assert(!c->wide);
  ovl_coll_extra *x = malloc(sizeof *x + sizeof *w);
  if (!x) return -1;
  *x = *ovl_coll_extra_of(c);  /* its id, when beyond int32, included */
  x->wide[0] = *w;
  free(c->extra);
  c->extra = x;
  c->wide = 1;
  c->seq32 = c->stream32 = c->exposed32 = OVL_C32_NONE;
  c->launch32 = c->end32 = c->ready32 = c->ready_gpu32 = c->before32 = c->after32 = OVL_C32_NONE;
  return 0;
}

int ovl_coll_set_wide(ovl_coll_result *c, size_t at, int64_t v) {
  assert(at % sizeof(int64_t) == 0 && at < sizeof(ovl_coll_wide));
  if (!c->wide) {
    ovl_coll_wide w = {.seq = ovl_coll_seq(c),
                       .stream = ovl_coll_stream(c),
                       .host_launch = ovl_coll_host_launch(c),
                       .gpu_end = ovl_coll_gpu_end(c),
                       .exposed = ovl_coll_exposed(c),
                       .ready = ovl_coll_ready(c),
                       .ready_gpu = ovl_coll_ready_gpu(c),
                       .compute_before = ovl_coll_compute_before(c),
                       .compute_after = ovl_coll_compute_after(c)};
    if (ovl_coll_widen(c, &w)) return -1;
  }
  memcpy((char *)&c->extra->wide[0] + at, &v, sizeof v);
  return 0;
}

static void free_coll_extras(ovl_coll_result *colls, size_t n) {
  for (size_t i = 0; colls && i < n; i++) free(colls[i].extra);
}

double ovl_overlap_efficiency(const ovl_totals *t) {
  if (t->comm <= 0) return NAN;
  return 1.0 - (double)t->exposed / (double)t->comm;
}

const char *ovl_step_method_name(ovl_step_method m) {
  switch (m) {
    case OVL_STEPS_NVTX: return "nvtx";
    case OVL_STEPS_PERIODIC: return "periodic";
    case OVL_STEPS_WHOLE: return "whole";
  }
  return "whole";
}

const char *ovl_step_label(const ovl_step_result *st, char *buf, size_t len) {
  if (st->number >= 0) snprintf(buf, len, "%ld (ProfilerStep#%ld)", st->index, st->number);
  else snprintf(buf, len, "%ld", st->index);
  return buf;
}

const char *ovl_step_projection_name(ovl_step_projection p) {
  switch (p) {
    case OVL_PROJECT_CORRELATION: return "correlation";
    case OVL_PROJECT_TIME: return "time";
    case OVL_PROJECT_NONE: return "none";
  }
  return "none";
}

const char *ovl_coll_role_name(ovl_coll_role role) {
  switch (role) {
    case OVL_ROLE_GRADIENT: return "gradient";
    case OVL_ROLE_UNUSED_MAP: return "unused_map";
    case OVL_ROLE_BLOCKING: return "blocking";
    case OVL_ROLE_OTHER: return "other";
    case OVL_ROLE_BEFORE_WINDOW: return "before_window";
  }
  return "other";
}

const char *ovl_stream_role_name(const ovl_stream_stat *s) {
  if (s->compute_ns == 0 && s->comm_ns == 0 && s->memory_ns == 0) return "idle";
  if (s->compute_ns > s->comm_ns && s->compute_ns >= s->memory_ns) return "compute";
  if (s->comm_ns >= s->memory_ns) return "communication";
  return "memory";
}

/* A new finding at the end of the list, its text not yet given; NULL when memory runs out. */
static ovl_finding *append_finding(ovl_finding **list, size_t *n, const char *code, long step,
                                   int64_t recoverable_ns) {
  ovl_finding *grown = realloc(*list, (*n + 1) * sizeof *grown);
  if (!grown) return NULL;
  *list = grown;
  ovl_finding *f = &grown[*n];
  memset(f, 0, sizeof *f);
  snprintf(f->code, sizeof f->code, "%s", code);
  f->recoverable_ns = recoverable_ns;
  f->step = step;
  f->at_ns = OVL_NONE;
  f->confidence = OVL_CONF_UNSET;
  return f;
}

int ovl_add_finding(ovl_finding **list, size_t *n, const char *code, long step, int64_t recoverable_ns,
                    const char *message) {
  ovl_finding *f = append_finding(list, n, code, step, recoverable_ns);
  if (!f || !(f->message = strdup(message ? message : ""))) return -1;
  (*n)++;
  return 0;
}

int ovl_add_finding_text(ovl_finding **list, size_t *n, const char *code, long step, int64_t recoverable_ns,
                         ovl_finding_text_fn text) {
  assert(text);
  ovl_finding *f = append_finding(list, n, code, step, recoverable_ns);
  if (!f) return -1;
  f->text = text;
  (*n)++;
  return 0;
}

const char *ovl_finding_message(const ovl_step_result *st, const ovl_finding *f, char *buf, size_t size) {
  if (!f->text) return f->message;
  assert(st && st->index == f->step);  /* a text is written from its own step */
  return f->text(st, f, buf, size) == 0 ? buf : NULL;
}

const char *ovl_coll_bucket_label(const ovl_coll_result *c, char *buf, size_t len) {
  if (c->bucket >= 0) snprintf(buf, len, "%ld", (long)c->bucket);
  else if (c->diag.role == OVL_ROLE_GRADIENT) snprintf(buf, len, "#%d", c->order);
  else snprintf(buf, len, "-");
  return buf;
}

const char *ovl_confidence_name(ovl_confidence c) {
  switch (c) {
    case OVL_CONF_HIGH: return "high";
    case OVL_CONF_MEDIUM: return "medium";
    case OVL_CONF_LOW: return "low";
    default: return NULL;
  }
}

void ovl_free_findings(ovl_finding *list, size_t n) {
  for (size_t i = 0; i < n; i++) free(list[i].message);
  free(list);
}

_Static_assert(OVL_DIM_COUNT <= 8, "a step's dimensions are a bit each of dims_mask");

void ovl_step_dims_clear(ovl_rank_result *r) {
  free(r->step_dims);
  r->step_dims = NULL;
  r->nstep_dims = r->step_dims_cap = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    r->steps[s].dims_kept = NULL;
    r->steps[s].dims_mask = 0;
  }
}

int ovl_step_dims_put(ovl_rank_result *r, ovl_step_result *st, const ovl_dim_totals d[OVL_DIM_COUNT]) {
  assert(r->steps && st >= r->steps && !st->dims_mask);  /* one of r's, not put yet */
  for (int k = 0; k < OVL_DIM_COUNT; k++) {
    if (d[k].comm == 0 && d[k].exposed == 0 && d[k].colls == 0) continue;  /* zero: read as such */
    if (r->nstep_dims == r->step_dims_cap) {
      size_t cap = r->step_dims_cap ? 2 * r->step_dims_cap : 64;
      ovl_dim_totals *grown = realloc(r->step_dims, cap * sizeof *grown);
      if (!grown) return -1;
      r->step_dims = grown;
      r->step_dims_cap = cap;
    }
    r->step_dims[r->nstep_dims++] = d[k];
    st->dims_mask |= (uint8_t)(1u << k);
  }
  return 0;
}

void ovl_step_dims_seal(ovl_rank_result *r) {
  if (r->nstep_dims && r->nstep_dims < r->step_dims_cap) {  /* the spare room back, then point */
    ovl_dim_totals *shrunk = realloc(r->step_dims, r->nstep_dims * sizeof *shrunk);
    if (shrunk) {
      r->step_dims = shrunk;
      r->step_dims_cap = r->nstep_dims;
    }
  }
  size_t at = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    r->steps[s].dims_kept = r->steps[s].dims_mask ? r->step_dims + at : NULL;
    at += (size_t)__builtin_popcount(r->steps[s].dims_mask);
  }
  assert(at == r->nstep_dims);  /* put in step order, each once */
}

void ovl_rank_result_free(ovl_rank_result *r) {
  if (!r) return;
  for (size_t s = 0; s < r->nsteps; s++) {
    free_coll_extras(r->steps[s].colls, r->steps[s].ncolls);
    if (!r->coll_block) free(r->steps[s].colls);
    ovl_free_findings(r->steps[s].findings, r->steps[s].nfindings);
  }
  free(r->steps);
  free(r->step_dims);
  free(r->coll_block);
  free_coll_extras(r->unstepped, r->nunstepped);
  free(r->unstepped);
  free(r->coll_cross);
  free(r->coll_piece_bounds);
  for (size_t i = 0; i < r->nkernel_totals; i++) free(r->kernel_totals[i].name);
  free(r->kernel_totals);
  free(r->marks);
  free(r->streams);
  for (size_t i = 0; i < r->nslowdowns; i++) free(r->slowdowns[i].name);
  free(r->slowdowns);
  for (size_t i = 0; i < r->nlookalikes; i++) free(r->lookalikes[i].name);
  free(r->lookalikes);
  for (size_t i = 0; i < r->nkernel_fits; i++) free(r->kernel_fits[i].name);
  free(r->kernel_fits);
  ovl_free_findings(r->findings, r->nfindings);
  for (size_t i = 0; i < r->ncomm_names; i++) free(r->comm_names[i].name);
  free(r->comm_names);
  free(r->trace_path);
  free(r->ovl_path);
  free(r->hostname);
  memset(r, 0, sizeof *r);
}

const char *ovl_rank_comm_name(const ovl_rank_result *r, int64_t comm) {
  for (size_t i = 0; i < r->ncomm_names; i++)
    if (r->comm_names[i].comm == comm) return r->comm_names[i].name;
  return NULL;
}
