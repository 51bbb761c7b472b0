/*
** Kineto importer: see kineto_import.h.
**
** One pass over the document: each event of traceEvents is read into an ovl_kineto_event
** and written at once as a row (GPU work, api, nvtx). Kept in memory until the end, because
** they complete each other whatever their order in the file: the communication arguments
** of record_param_comms ops (by External id), the NCCL kernels and the api rows that launch
** them (by correlation id, see launch_seen), the process groups they name, and the
** document-level facts (distributedInfo, baseTimeNanoseconds).
*/
#include "kineto_import.h"

#include "base/hash.h"
#include "base/sane_values.h"
#include "base/i64map.h"
#include "base/nccl_ops.h"
#include "base/vec.h"
#include "byte_input.h"
#include "comm_names.h"
#include "hta_compat.h"
#include "import_collectives.h"
#include "import_meta.h"
#include "intern_cache.h"
#include "json_stream.h"
#include "kineto_event.h"
#include "trace_reader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The communication facts of one call, from kernel args or its record_param_comms op. */
typedef struct comm_facts {
  int present;
  const char *op, *dtype;
  int64_t dtype_size, in_nelems, group_size, seq;
  long group;                 /* index into groups, -1 when none was named */
} comm_facts;

typedef struct comm_op {      /* a record_param_comms CPU op */
  int64_t start, end, tid;
  comm_facts facts;
} comm_op;

typedef struct nccl_kernel {
  int64_t start, end, device, stream, correlation, external_id;
  const char *kernel_op, *redop;
  comm_facts facts;
} nccl_kernel;

typedef struct comm_annotation {  /* a `nccl:<op>` record_function range (older traces) */
  int64_t tid, start, end;
  const char *op, *dtype;
  int64_t count, dtype_size;
} comm_annotation;

typedef struct process_group {
  int64_t comm;               /* hash of name and ranks: equal on every member */
  char *ranks;                /* "0,1,2" or NULL */
  char label[128];            /* what users call it (comm_label); "" when the trace does not say */
} process_group;

/* What a kernel's name says about NCCL, judged once per distinct name: the judgement reads
** the name against every family of communication kernels, thousands of instructions. */
typedef struct kernel_name_facts {
  signed char nccl;           /* 1 NCCL, 0 not, -1 not judged yet */
  const char *op, *redop;     /* ovl_comm_kernel_op's name (NULL when unknown), the reduction; static */
} kernel_name_facts;

/* The host launches of NCCL kernels, caught as the trace streams instead of read back from
** every api row written (ovl_found_colls_resolve_launches: ~1,000 instructions a row). A
** call's launch is the first api row with its kernel's correlation id; real traces list a
** kernel before its launch's api row, and the first such row after the kernel is the first of
** all when no api row with that id came before the kernel. `api_corrs` (the ids of the api
** rows written so far) tells; where it cannot (an id it does not cover), the read-back decides. */
typedef struct launch_seen {
  int64_t start, end, tid;
  int seen;
} launch_seen;

/* A set of ids >= 0 as a bitmap over [base, base + 64 * nwords), grown on demand up to
** CORR_SPAN_LIMIT ids (8 MiB); ids in practice are a dense range of counters. */
typedef struct corr_bitmap {
  uint64_t *words;
  size_t nwords;
  int64_t base;               /* a multiple of 64 */
  int lost;                   /* an id it could not cover: it no longer answers */
} corr_bitmap;

enum { CORR_SPAN_LIMIT = 1 << 26, CORR_SPAN_FIRST = 1 << 12 };

typedef struct kineto_import {
  const char *path, *out_path;
  ovl_trace_writer *w;
  const ovl_import_options *opt;
  ovl_import_stats *st;
  ovl_json *j;
  ovl_kineto_event ev;
  ovl_intern_cache *names;   /* kernel and API names already interned */
  /* document facts */
  int saw_events;
  int64_t base_ns, host_pid;
  char nccl_version[64], hostname[256], cuda_version[64];
  /* kept until the end */
  OVL_VEC(comm_op) comm_ops;
  ovl_i64map comm_op_by_external_id;
  OVL_VEC(nccl_kernel) nccl;
  OVL_VEC(comm_annotation) annotations;
  OVL_VEC(process_group) groups;
  ovl_i64map group_by_comm;
  OVL_VEC(kernel_name_facts) name_facts;  /* by kernel name id (ids are dense) */
  const char *accelerator;   /* another accelerator's device events seen (ovl_kineto_accelerator), or NULL */
  long accelerator_events;
  int64_t gpu_step_last;     /* latest start of a GPU copy of a ProfilerStep (--hta-compat's cut), or OVL_NONE */
  corr_bitmap api_corrs;     /* correlation ids of the api rows written so far */
  ovl_i64map launch_by_corr; /* NCCL kernel correlation id -> index into launches */
  OVL_VEC(launch_seen) launches;
  int launches_unsure;       /* an api row may have come before its kernel: read them back */
} kineto_import;

/* ---------------------------------------------------------------------------------- */
/* Launches                                                                            */
/* ---------------------------------------------------------------------------------- */

/* 1 when the bitmap covers id, grown to if needed; 0 when it cannot (it is then lost). */
static int corr_cover(corr_bitmap *b, int64_t id) {
  int64_t hi = b->base + 64 * (int64_t)b->nwords;
  if (b->nwords && id >= b->base && id < hi) return 1;
  if (b->lost || id < 0 || id > INT64_MAX / 4) {
    b->lost = 1;
    return 0;
  }
  int64_t cell = id & ~(int64_t)63, lo = b->nwords ? b->base : cell;
  if (!b->nwords) hi = lo + CORR_SPAN_FIRST;
  int64_t span = hi - lo;
  if (id < lo) lo = cell < hi - 2 * span ? cell : (hi - 2 * span > 0 ? hi - 2 * span : 0);  /* doubles */
  else if (id >= hi) hi = cell + 64 > lo + 2 * span ? cell + 64 : lo + 2 * span;
  if (hi - lo > CORR_SPAN_LIMIT) {  /* no doubling: only what id needs */
    lo = b->nwords && b->base < cell ? b->base : cell;
    hi = b->nwords && b->base + 64 * (int64_t)b->nwords > cell + 64 ? b->base + 64 * (int64_t)b->nwords : cell + 64;
  }
  uint64_t *words = hi - lo <= CORR_SPAN_LIMIT ? calloc((size_t)(hi - lo) / 64, sizeof *words) : NULL;
  if (!words) {  /* too wide, or no memory: the read-back answers instead */
    free(b->words);
    *b = (corr_bitmap){NULL, 0, 0, 1};
    return 0;
  }
  if (b->nwords) memcpy(words + (b->base - lo) / 64, b->words, b->nwords * sizeof *words);
  free(b->words);
  b->words = words;
  b->nwords = (size_t)(hi - lo) / 64;
  b->base = lo;
  return 1;
}

static void corr_add(corr_bitmap *b, int64_t id) {
  if (corr_cover(b, id)) b->words[(id - b->base) >> 6] |= (uint64_t)1 << (id & 63);
}

/* 0 only when id is known not to be in the set. */
static int corr_may_have(const corr_bitmap *b, int64_t id) {
  if (b->lost) return 1;
  if (!b->nwords || id < b->base || id >= b->base + 64 * (int64_t)b->nwords) return 0;
  return (int)(b->words[(id - b->base) >> 6] >> (id & 63) & 1);
}

/* An NCCL kernel with correlation id c was read: its launch is the next api row with c. */
static void expect_launch(kineto_import *ki, int64_t c) {
  int64_t i;
  if (ki->launches_unsure || ovl_i64map_get(&ki->launch_by_corr, c, &i)) return;  /* grouped kernels share one */
  launch_seen none = {OVL_NONE, OVL_NONE, OVL_NONE, 0};
  if (corr_may_have(&ki->api_corrs, c) || OVL_VEC_PUSH(&ki->launches, none) ||
      ovl_i64map_put(&ki->launch_by_corr, c, (int64_t)ki->launches.len - 1)) {
    ki->launches_unsure = 1;  /* out of memory too: the read-back needs none of this */
    free(ki->api_corrs.words);
    ki->api_corrs = (corr_bitmap){NULL, 0, 0, 1};
    OVL_VEC_FREE(&ki->launches);
    ovl_i64map_free(&ki->launch_by_corr);
  }
}

/* An api row [start, end) on tid with correlation c was written. */
static void saw_api(kineto_import *ki, int64_t c, int64_t start, int64_t end, int64_t tid) {
  if (ki->launches_unsure) return;
  corr_add(&ki->api_corrs, c);
  int64_t i;
  if (ki->launch_by_corr.len && ovl_i64map_get(&ki->launch_by_corr, c, &i) && !ki->launches.items[i].seen)
    ki->launches.items[i] = (launch_seen){start, end, tid, 1};
}

/* ovl_found_colls_resolve_launches from the launches caught (valid unless launches_unsure). */
static void resolve_seen_launches(const kineto_import *ki, ovl_found_colls *fc) {
  for (size_t i = 0; i < fc->items.len; i++) {
    ovl_collective_row *row = &fc->items.items[i].row;
    int64_t k;
    if (row->host_start != OVL_NONE || fc->items.items[i].correlation == OVL_NONE ||
        !ovl_i64map_get(&ki->launch_by_corr, fc->items.items[i].correlation, &k) || !ki->launches.items[k].seen)
      continue;
    const launch_seen *l = &ki->launches.items[k];
    row->host_start = l->start;
    row->host_end = l->end;
    if (row->tid == OVL_NONE) row->tid = l->tid;
  }
}

/* ---------------------------------------------------------------------------------- */
/* Rows                                                                                */
/* ---------------------------------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* HTA's rounding, on the float64 values its JSON parser reads: end = ts + dur in float64,
** then the start rounded up and the end down to whole microseconds. A float64 holds about 15.9
** significant digits, so a 16-digit µs timestamp with a fraction is read as a multiple of
** 0.25 µs and the result can differ by a microsecond from rounding the exact decimal; compat
** mode follows HTA. 0 when out of range. */
static int hta_span(const ovl_kineto_event *ev, int64_t *start, int64_t *end) {
  if (!isfinite(ev->ts_us) || !isfinite(ev->dur_us)) return 0;
  double s = ceil(ev->ts_us), e = floor(ev->ts_us + ev->dur_us);
  if (!(fabs(s) < 9.0e15) || !(fabs(e) < 9.0e15)) return 0;
  *start = (int64_t)s * 1000;
  *end = (int64_t)e * 1000;
  if (*end < *start) *end = *start;
  return 1;
}

/* The event's [start, end) in ns; 0 when it has no usable times. --hta-compat rounds to whole
** microseconds as HTA does: start up, end down (an interval shorter than that becomes empty). */
static int event_span(const kineto_import *ki, int64_t *start, int64_t *end) {
  const ovl_kineto_event *ev = &ki->ev;
  /* Times out of base/sane_values.h's ranges are corrupt: the event counts as untimed. */
  if (ev->ts_ns == OVL_NONE || ev->dur_ns == OVL_NONE || ev->dur_ns < 0) return 0;
  if (!ovl_interval_ok(ev->ts_ns, ev->ts_ns + (ev->dur_ns <= OVL_SPAN_LIMIT_NS ? ev->dur_ns : 0)) ||
      ev->dur_ns > OVL_SPAN_LIMIT_NS || !ovl_time_ok(ev->ts_ns + ev->dur_ns))
    return 0;
  *start = ev->ts_ns;
  *end = ev->ts_ns + ev->dur_ns;
  if (ki->opt->hta_compat && hta_span(ev, start, end)) return 1;
  if (ki->opt->hta_compat) {
    *start = -floor_div(-*start, 1000) * 1000;
    *end = floor_div(*end, 1000) * 1000;
    if (*end < *start) *end = *start;
  }
  return 1;
}

static int64_t or_else(int64_t v, int64_t fallback) {
  return v != OVL_NONE ? v : fallback;
}

static int is_profiler_step(const char *name) {
  return strncmp(name, "ProfilerStep#", 13) == 0;
}

/* The name users know a group by: its description (PyTorch's group_desc, "default_pg"), else
** its name when that is more than a number, else "pg<name>"; "" when neither is known. */
static void comm_label(const ovl_kineto_comm_args *c, char *out, size_t cap) {
  out[0] = 0;
  if (c->group_desc[0] && strcmp(c->group_desc, "undefined") != 0) {
    snprintf(out, cap, "%s", c->group_desc);
    return;
  }
  if (!c->group_name[0]) return;
  size_t digits = strspn(c->group_name, "0123456789");
  snprintf(out, cap, "%s%.120s", c->group_name[digits] ? "" : "pg", c->group_name);
}

/* Interns a process group named by the event's comm args; *index = -1 when none is named. */
static int intern_group(kineto_import *ki, const ovl_kineto_comm_args *c, long *index, ovl_err *err) {
  *index = -1;
  const char *ranks = c->group_ranks && c->group_ranks[0] ? c->group_ranks : NULL;
  if (!c->group_name[0] && !ranks) return OVL_OK;
  uint64_t h = ovl_hash_bytes(OVL_HASH_SEED, "pg", 2);
  h = ovl_hash_bytes(h, c->group_name, strlen(c->group_name) + 1);
  if (ranks) h = ovl_hash_bytes(h, ranks, strlen(ranks));
  int64_t comm = ovl_comm_id(h), found;
  if (ovl_i64map_get(&ki->group_by_comm, comm, &found)) {
    *index = (long)found;
    process_group *known = &ki->groups.items[found];
    if (!known->label[0]) comm_label(c, known->label, sizeof known->label);  /* a later event may say */
    return OVL_OK;
  }
  process_group g = {comm, NULL, ""};
  comm_label(c, g.label, sizeof g.label);
  if (ranks && !(g.ranks = strdup(ranks))) return ovl_oom(err, "process groups");
  if (OVL_VEC_PUSH(&ki->groups, g)) {
    free(g.ranks);
    return ovl_oom(err, "process groups");
  }
  if (ovl_i64map_put(&ki->group_by_comm, comm, (int64_t)(ki->groups.len - 1))) return ovl_oom(err, "process groups");
  *index = (long)(ki->groups.len - 1);
  return OVL_OK;
}

static int event_comm_facts(kineto_import *ki, comm_facts *f, ovl_err *err) {
  const ovl_kineto_comm_args *c = &ki->ev.comm;
  *f = (comm_facts){c->present, c->op, c->dtype, c->dtype_size, c->in_nelems, c->group_size, c->seq, -1};
  return c->present ? intern_group(ki, c, &f->group, err) : OVL_OK;
}

/* A kernel name's facts, from name itself (NUL-terminated). */
static kernel_name_facts judge_name(const char *name) {
  kernel_name_facts f = {(signed char)ovl_is_comm_kernel_name(name), NULL, NULL};
  if (!f.nccl) return f;
  ovl_op op = ovl_comm_kernel_op(name);
  f.op = op == OVL_OP_UNKNOWN ? NULL : ovl_op_name(op);
  if (op == OVL_OP_ALLREDUCE || op == OVL_OP_REDUCE || op == OVL_OP_REDUCESCATTER) f.redop = ovl_comm_redop_from_kernel(name);
  return f;
}

/* The facts of kernel name `id` (its text: name), judged on first sight. */
static kernel_name_facts name_facts(kineto_import *ki, int64_t id, const char *name) {
  static const kernel_name_facts unjudged = {-1, NULL, NULL};
  if (id < 0 || id >= OVL_STRING_CACHE_LIMIT) return judge_name(name);
  while (ki->name_facts.len <= (size_t)id)
    if (OVL_VEC_PUSH(&ki->name_facts, unjudged)) return judge_name(name);
  kernel_name_facts *f = &ki->name_facts.items[id];
  if (f->nccl < 0) *f = judge_name(name);
  return *f;
}

static int on_kernel(kineto_import *ki, int64_t start, int64_t end, ovl_err *err) {
  const ovl_kineto_event *ev = &ki->ev;
  ovl_kernel_row row = {start, end, or_else(ev->device, ev->pid), or_else(ev->stream, ev->tid), ev->correlation,
                        OVL_NONE, {ev->grid[0], ev->grid[1], ev->grid[2]}, {ev->block[0], ev->block[1], ev->block[2]}};
  int rc = ovl_intern_cached(ki->names, ki->w, ev->name, &row.name, err);
  if (!rc) rc = ovl_tw_kernel(ki->w, &row, err);
  if (rc) return rc;
  ki->st->kernels++;
  kernel_name_facts f = name_facts(ki, row.name, ev->name);
  if (!f.nccl) return OVL_OK;
  ki->st->nccl_kernels++;
  /* Without a correlation id no collective_launches row can link a call to this kernel: a
  ** call row would claim a call that ran no GPU work. The analysis infers the call from the
  ** kernel itself, as for any communication kernel without a row. */
  if (ev->correlation == OVL_NONE) return OVL_OK;
  nccl_kernel k = {start, end, row.device, row.stream, ev->correlation, ev->external_id, f.op, f.redop, {0}};
  if ((rc = event_comm_facts(ki, &k.facts, err))) return rc;
  if (OVL_VEC_PUSH(&ki->nccl, k)) return ovl_oom(err, "NCCL kernels");
  expect_launch(ki, ev->correlation);
  return OVL_OK;
}

static int on_memop(kineto_import *ki, int64_t start, int64_t end, ovl_err *err) {
  const ovl_kineto_event *ev = &ki->ev;
  ovl_memop_row row = {start, end, or_else(ev->device, ev->pid), or_else(ev->stream, ev->tid), ev->correlation,
                       ev->cat == OVL_KCAT_MEMSET ? "memset" : ovl_memcpy_kind_from_name(ev->name), ev->bytes};
  int rc = ovl_tw_memop(ki->w, &row, err);
  if (!rc) ki->st->memops++;
  return rc;
}

static int on_api(kineto_import *ki, int64_t start, int64_t end, ovl_err *err) {
  const ovl_kineto_event *ev = &ki->ev;
  ovl_api_row row = {start, end, ev->tid, ev->correlation, OVL_NONE};
  int rc = ovl_intern_cached(ki->names, ki->w, ev->name, &row.name, err);
  if (!rc) rc = ovl_tw_api(ki->w, &row, err);
  if (rc) return rc;
  ki->st->api++;
  if (row.correlation != OVL_NONE) saw_api(ki, row.correlation, start, end, row.tid);
  return OVL_OK;
}

static int on_annotation(kineto_import *ki, const char *domain, int64_t start, int64_t end, ovl_err *err) {
  const ovl_kineto_event *ev = &ki->ev;
  ovl_nvtx_row row = {start, end, ev->tid, domain, ev->name};
  int rc = ovl_tw_nvtx(ki->w, &row, err);
  if (rc) return rc;
  ki->st->nvtx++;
  /* ProcessGroupNCCL wraps each call in `nccl:<op>`; with record_shapes it has the input. */
  if (domain || strncmp(ev->name, "nccl:", 5) != 0 || ev->tid == OVL_NONE) return OVL_OK;
  comm_annotation a = {ev->tid, start, end, ovl_comm_op_from_call(ev->name + 5), NULL, ev->input_numel, 0};
  ovl_comm_dtype(ev->input_type, &a.dtype, &a.dtype_size);
  return OVL_VEC_PUSH(&ki->annotations, a) ? ovl_oom(err, "communication annotations") : OVL_OK;
}

static int on_comm_op(kineto_import *ki, int64_t start, int64_t end, ovl_err *err) {
  comm_op op = {start, end, ki->ev.tid, {0}};
  int rc = event_comm_facts(ki, &op.facts, err);
  if (rc || !op.facts.present || ki->ev.external_id == OVL_NONE) return rc;
  if (OVL_VEC_PUSH(&ki->comm_ops, op) ||
      ovl_i64map_put(&ki->comm_op_by_external_id, ki->ev.external_id, (int64_t)(ki->comm_ops.len - 1)))
    return ovl_oom(err, "communication ops");
  return OVL_OK;
}

static int on_event(kineto_import *ki, ovl_err *err) {
  const ovl_kineto_event *ev = &ki->ev;
  ki->st->events++;
  if (ev->accelerator && (!ki->accelerator || ki->accelerator == ev->accelerator)) {
    ki->accelerator = ev->accelerator;  /* the first family seen: a trace is of one device kind */
    ki->accelerator_events++;
  }
  if (ev->ph != 'X' || ev->cat == OVL_KCAT_OTHER) return OVL_OK;
  int host_side = ev->cat == OVL_KCAT_RUNTIME || ev->cat == OVL_KCAT_CPU_OP || ev->cat == OVL_KCAT_USER_ANNOTATION;
  if (host_side && ki->host_pid == OVL_NONE && ev->pid != OVL_NONE) ki->host_pid = ev->pid;
  int64_t start, end;
  int timed = event_span(ki, &start, &end);
  switch (ev->cat) {
    case OVL_KCAT_KERNEL:
    case OVL_KCAT_MEMCPY:
    case OVL_KCAT_MEMSET:
    case OVL_KCAT_RUNTIME:
      if (!timed) {
        ki->st->skipped++;
        return OVL_OK;
      }
      if (ev->cat == OVL_KCAT_KERNEL) return on_kernel(ki, start, end, err);
      if (ev->cat == OVL_KCAT_RUNTIME) return on_api(ki, start, end, err);
      return on_memop(ki, start, end, err);
    case OVL_KCAT_USER_ANNOTATION:
      return timed ? on_annotation(ki, NULL, start, end, err) : OVL_OK;
    case OVL_KCAT_GPU_USER_ANNOTATION:
      /* Steps are host ranges: the GPU copy of ProfilerStep#N would overlap them. HTA's last-step
      ** cut sees it, though (hta_compat.h): its latest start is kept for that. */
      if (timed && is_profiler_step(ev->name) && (ki->gpu_step_last == OVL_NONE || start > ki->gpu_step_last))
        ki->gpu_step_last = start;
      if (!timed || is_profiler_step(ev->name)) return OVL_OK;
      return on_annotation(ki, "gpu_user_annotation", start, end, err);
    case OVL_KCAT_CPU_OP:
      if (!timed) return OVL_OK;
      if (is_profiler_step(ev->name)) return on_annotation(ki, NULL, start, end, err);  /* older traces */
      if (strcmp(ev->name, "record_param_comms") == 0) return on_comm_op(ki, start, end, err);
      return OVL_OK;
    default:
      return OVL_OK;
  }
}

/* ---------------------------------------------------------------------------------- */
/* Collectives                                                                         */
/* ---------------------------------------------------------------------------------- */

/* Position of `rank` in a "0,1,2" list, or OVL_NONE. */
static int64_t position_in(const char *ranks, int64_t rank) {
  int64_t i = 0;
  for (const char *p = ranks; p && *p; i++) {
    if (strtoll(p, NULL, 10) == rank) return i;
    p = strchr(p, ',');
    if (p) p++;
  }
  return OVL_NONE;
}

static int64_t count_ranks(const char *ranks) {
  if (!ranks || !*ranks) return OVL_NONE;
  int64_t n = 1;
  for (const char *p = ranks; *p; p++) n += *p == ',';
  return n;
}

/* count elements of dtype_size bytes, checked: a negative count or a size beyond
** OVL_BYTES_LIMIT rejects the file (one line naming the numbers) rather than store garbage. */
static int message_bytes(const kineto_import *ki, int64_t count, int64_t dtype_size, int64_t *bytes, ovl_err *err) {
  int64_t b;
  if (count < 0 || !ovl_mul_i64(count, dtype_size, &b) || b > OVL_BYTES_LIMIT)
    return ovl_fail(err, OVL_EUSER, "%s: collective message size out of range (%lld elements of %lld bytes)",
                    ki->path, (long long)count, (long long)dtype_size);
  *bytes = b;
  return OVL_OK;
}

static int describe_call(const kineto_import *ki, const nccl_kernel *k, ovl_found_coll *c, ovl_err *err) {
  comm_facts f = k->facts;
  int64_t found;
  /* The record_param_comms op that launched the kernel (same External id) is the call. */
  if (k->external_id != OVL_NONE && ovl_i64map_get(&ki->comm_op_by_external_id, k->external_id, &found)) {
    const comm_op *op = &ki->comm_ops.items[found];
    if (!f.present) f = op->facts;
    c->row.host_start = op->start;
    c->row.host_end = op->end;
    c->row.tid = op->tid;
  }
  int64_t rank = ki->st->rank, world = ki->st->world_size;
  const process_group *g = f.group >= 0 ? &ki->groups.items[f.group] : NULL;
  c->row.op = f.op ? f.op : k->kernel_op;
  c->row.redop = k->redop;
  c->row.dtype = f.dtype;
  c->row.count = f.in_nelems;
  if (f.in_nelems != OVL_NONE && f.dtype_size > 0) {
    int rc = message_bytes(ki, f.in_nelems, f.dtype_size, &c->row.bytes, err);
    if (rc) return rc;
  }
  c->row.seq = f.seq;
  /* A group size that is no size (0, negative, absurd) is unknown, not a communicator size. */
  if (f.group_size != OVL_NONE && (f.group_size <= 0 || f.group_size > INT32_MAX)) f.group_size = OVL_NONE;
  if (f.seq != OVL_NONE && f.seq < 0) c->row.seq = OVL_NONE;
  if (g) {
    c->row.comm = g->comm;
    c->row.nranks = or_else(f.group_size, count_ranks(g->ranks));
    c->row.rank = g->ranks ? (rank != OVL_NONE ? position_in(g->ranks, rank) : OVL_NONE) : OVL_NONE;
  } else {
    /* No process group named (older traces): PyTorch gives each communicator its own
    ** stream, and SPMD ranks create them in the same order, so the stream stands for it. */
    uint64_t h = ovl_hash_bytes(OVL_HASH_SEED, "stream", 6);
    h = ovl_hash_bytes(h, &k->stream, sizeof k->stream);
    h = ovl_hash_bytes(h, &world, sizeof world);
    c->row.comm = ovl_comm_id(h);
    c->row.nranks = or_else(f.group_size, world);
    c->row.rank = f.group_size == OVL_NONE || f.group_size == world ? rank : OVL_NONE;
  }
  return OVL_OK;
}

static int cmp_annotation(const void *pa, const void *pb) {
  const comm_annotation *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return (a->start > b->start) - (a->start < b->start);
}

/* The innermost `nccl:` annotation of thread tid containing time t, or NULL. */
static const comm_annotation *annotation_at(const kineto_import *ki, int64_t tid, int64_t t) {
  const comm_annotation *v = ki->annotations.items;
  size_t lo = 0, hi = ki->annotations.len;  /* first with (tid, start) > (tid, t) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].tid < tid || (v[mid].tid == tid && v[mid].start <= t)) lo = mid + 1;
    else hi = mid;
  }
  for (size_t i = lo; i-- > 0 && v[i].tid == tid;)
    if (t <= v[i].end) return &v[i];
  return NULL;
}

/* A call PyTorch gave no arguments for: its `nccl:<op>` range, found around the kernel's
** launch on the launching thread, names the operation and (with record_shapes) its input. */
static int describe_from_annotation(const kineto_import *ki, ovl_found_coll *c, ovl_err *err) {
  ovl_collective_row *r = &c->row;
  if (r->host_start == OVL_NONE || r->tid == OVL_NONE) return OVL_OK;
  const comm_annotation *a = annotation_at(ki, r->tid, r->host_start);
  if (!a) return OVL_OK;
  if (a->op) r->op = a->op;
  r->host_start = a->start;
  r->host_end = a->end;
  if (a->count == OVL_NONE) return OVL_OK;
  r->count = a->count;
  r->dtype = a->dtype;
  if (a->dtype_size > 0) return message_bytes(ki, a->count, a->dtype_size, &r->bytes, err);
  return OVL_OK;
}

/* Every NCCL kernel becomes a call. The kernels are the largest thing an import holds (a
** long job has millions), so they are converted from the last one down while their array
** shrinks: the two arrays are never both whole, and only a bit per kernel (whether its
** arguments described it) outlives the conversion. */
static int build_collectives(kineto_import *ki, ovl_err *err) {
  enum { SHRINK_EVERY = 1 << 16 };
  ovl_found_colls fc = {0};
  size_t n = ki->nccl.len;
  unsigned char *described = calloc(n / 8 + 1, 1);
  int rc = described && !ovl_found_colls_reserve(&fc, n) ? OVL_OK : ovl_oom(err, "collective calls");
  for (size_t i = n; !rc && i-- > 0;) {
    const nccl_kernel *k = &ki->nccl.items[i];
    ovl_found_coll c;
    memset(&c, 0, sizeof c);
    ovl_collective_row *r = &c.row;
    r->id = r->comm = r->rank = r->nranks = r->seq = r->count = r->bytes = r->peer = OVL_NONE;
    r->host_start = r->host_end = r->tid = r->group_id = OVL_NONE;
    r->device = k->device;
    r->stream = k->stream;
    c.correlation = k->correlation;
    c.gpu_start = k->start;
    if (k->facts.present) described[i / 8] |= (unsigned char)(1u << (i % 8));
    rc = describe_call(ki, k, &c, err);
    if (!rc) ovl_found_colls_set(&fc, i, &c);
    if (i % SHRINK_EVERY == 0 && i > 0) {  /* give the converted kernels back */
      nccl_kernel *smaller = realloc(ki->nccl.items, i * sizeof *smaller);
      if (smaller) {
        ki->nccl.items = smaller;
        ki->nccl.len = ki->nccl.cap = i;
      }
    }
  }
  OVL_VEC_FREE(&ki->nccl);
  if (!rc) fc.items.len = n;
  if (!rc && ki->launches_unsure) rc = ovl_found_colls_resolve_launches(&fc, ki->w, ki->out_path, err);
  else if (!rc) resolve_seen_launches(ki, &fc);
  if (!rc && ki->annotations.len) {
    ovl_qsort(ki->annotations.items, ki->annotations.len, sizeof *ki->annotations.items, cmp_annotation);
    for (size_t i = 0; !rc && i < fc.items.len; i++)  /* fc keeps the kernels' order until written */
      if (!(described[i / 8] & (1u << (i % 8)))) rc = describe_from_annotation(ki, &fc.items.items[i], err);
  }
  if (!rc) rc = ovl_found_colls_write(&fc, ki->w, &ki->st->collectives, err);
  ovl_found_colls_free(&fc);
  free(described);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* The document                                                                        */
/* ---------------------------------------------------------------------------------- */

static int not_a_trace(const kineto_import *ki, ovl_err *err, const char *why) {
  return ovl_fail(err, OVL_EUSER, "%s: JSON but not a Kineto trace: %s", ki->path, why);
}

static int read_events(kineto_import *ki, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(ki->j, &tok, err);
  if (rc) return rc;
  if (tok != OVL_JSON_ARRAY_BEGIN) return not_a_trace(ki, err, "traceEvents is not an array");
  ki->saw_events = 1;
  while (!(rc = ovl_json_next(ki->j, &tok, err)) && tok != OVL_JSON_ARRAY_END) {
    if (tok == OVL_JSON_OBJECT_BEGIN) {
      if (!(rc = ovl_kineto_read_event(ki->j, &ki->ev, err))) rc = on_event(ki, err);
    } else if (tok == OVL_JSON_ARRAY_BEGIN) {
      rc = ovl_json_skip_container(ki->j, err);
    }
    if (rc) return rc;
  }
  return rc;
}

/* Copies a string or number value into buf; "" for anything else. */
static int read_text(kineto_import *ki, char *buf, size_t cap, ovl_err *err) {
  ovl_json_token tok;
  buf[0] = 0;
  int rc = ovl_json_next(ki->j, &tok, err);
  if (rc) return rc;
  if (tok == OVL_JSON_OBJECT_BEGIN || tok == OVL_JSON_ARRAY_BEGIN) return ovl_json_skip_container(ki->j, err);
  if (tok == OVL_JSON_STRING || tok == OVL_JSON_NUMBER) snprintf(buf, cap, "%s", ovl_json_text(ki->j, NULL));
  return OVL_OK;
}

static int read_int_value(kineto_import *ki, int64_t *v, ovl_err *err) {
  char text[64];
  int rc = read_text(ki, text, sizeof text, err);
  if (!rc && (!text[0] || ovl_kineto_int(text, v))) *v = OVL_NONE;
  return rc;
}

static int read_distributed_info(kineto_import *ki, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(ki->j, &tok, err);
  if (rc || tok == OVL_JSON_ARRAY_BEGIN) return rc ? rc : ovl_json_skip_container(ki->j, err);
  if (tok != OVL_JSON_OBJECT_BEGIN) return OVL_OK;
  while (!(rc = ovl_json_next(ki->j, &tok, err)) && tok == OVL_JSON_KEY) {
    const char *k = ovl_json_text(ki->j, NULL);
    if (strcmp(k, "rank") == 0) rc = read_int_value(ki, &ki->st->rank, err);
    else if (strcmp(k, "world_size") == 0) rc = read_int_value(ki, &ki->st->world_size, err);
    else if (strcmp(k, "nccl_version") == 0) rc = read_text(ki, ki->nccl_version, sizeof ki->nccl_version, err);
    else rc = ovl_json_skip_value(ki->j, &tok, err);
    if (rc) return rc;
  }
  if (rc) return rc;
  int64_t r = ki->st->rank, n = ki->st->world_size;
  if (n != OVL_NONE && (n <= 0 || n > INT32_MAX))
    return ovl_fail(err, OVL_EUSER, "%s: distributedInfo: world_size %lld is out of range", ki->path, (long long)n);
  if (r != OVL_NONE && (r < 0 || r > INT32_MAX))
    return ovl_fail(err, OVL_EUSER, "%s: distributedInfo: rank %lld is out of range", ki->path, (long long)r);
  return rc;
}

static int read_document(kineto_import *ki, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(ki->j, &tok, err);
  if (rc) return rc;
  if (tok != OVL_JSON_OBJECT_BEGIN) return not_a_trace(ki, err, "the top level is not an object");
  while (!(rc = ovl_json_next(ki->j, &tok, err)) && tok == OVL_JSON_KEY) {
    const char *k = ovl_json_text(ki->j, NULL);
    if (strcmp(k, "traceEvents") == 0 && ki->saw_events)  /* which one is the trace? */
      return ovl_fail(err, OVL_EUSER, "%s: a second \"traceEvents\" key at byte %llu: duplicate keys are ambiguous",
                      ki->path, (unsigned long long)ovl_json_offset(ki->j));
    if (strcmp(k, "traceEvents") == 0) rc = read_events(ki, err);
    else if (strcmp(k, "distributedInfo") == 0) rc = read_distributed_info(ki, err);
    else if (strcmp(k, "baseTimeNanoseconds") == 0) rc = read_int_value(ki, &ki->base_ns, err);
    else if (strcmp(k, "hostname") == 0 || strcmp(k, "host_name") == 0)
      rc = read_text(ki, ki->hostname, sizeof ki->hostname, err);
    else if (strcmp(k, "cuda_runtime_version") == 0) rc = read_text(ki, ki->cuda_version, sizeof ki->cuda_version, err);
    else rc = ovl_json_skip_value(ki->j, &tok, err);
    if (rc) return rc;
  }
  if (!rc) rc = ovl_json_next(ki->j, &tok, err);  /* only whitespace may follow */
  if (!rc && !ki->saw_events) rc = not_a_trace(ki, err, "no traceEvents array");
  return rc;
}

static int write_meta(kineto_import *ki, ovl_err *err) {
  int based = ki->base_ns != OVL_NONE;
  ovl_import_meta m = {ki->st->rank, ki->st->world_size, ki->host_pid, based ? ki->base_ns : 0,
                       ki->hostname, based ? "kineto (relative to baseTimeNanoseconds)" : "kineto (CLOCK_REALTIME)",
                       "kineto", ki->path, ki->opt->hta_compat ? "hta-compat" : "full", ki->nccl_version,
                       ki->cuda_version, ki->st->skipped};
  int rc = ovl_import_write_meta(ki->w, &m, err);
  if (!rc && ki->accelerator) rc = ovl_tw_meta(ki->w, "import_accelerator", ki->accelerator, err);
  if (!rc && ki->accelerator) rc = ovl_tw_meta_int(ki->w, "import_accelerator_events", ki->accelerator_events, err);
  if (!rc && ki->opt->hta_compat && ki->gpu_step_last != OVL_NONE)
    rc = ovl_tw_meta_int(ki->w, OVL_HTA_GPU_STEP_META, ki->gpu_step_last, err);
  for (size_t i = 0; !rc && i < ki->groups.len; i++) {
    const process_group *g = &ki->groups.items[i];
    char key[64];
    snprintf(key, sizeof key, "%s%lld", OVL_COMM_NAME_META, (long long)g->comm);
    if (g->label[0]) rc = ovl_tw_meta(ki->w, key, g->label, err);
  }
  return rc;
}

int ovl_kineto_import(const char *path, ovl_trace_writer *w, const char *out_path, const ovl_import_options *opt,
                      ovl_import_stats *stats, ovl_err *err) {
  kineto_import ki;
  memset(&ki, 0, sizeof ki);
  ki.path = path;
  ki.out_path = out_path;
  ki.w = w;
  ki.opt = opt;
  ki.st = stats;
  ki.base_ns = ki.host_pid = ki.gpu_step_last = OVL_NONE;
  stats->rank = stats->world_size = OVL_NONE;
  ovl_byte_input *in = NULL;
  int rc = ovl_input_open(path, &in, err);
  /* A writer working behind means this import has a second CPU: the read(2) copies go there too. */
  if (!rc && ovl_tw_writes_behind(w)) ovl_input_read_ahead_plain(in);
  if (!rc && !(ki.names = calloc(1, sizeof *ki.names))) rc = ovl_oom(err, "name cache");
  if (!rc) rc = ovl_json_open(in, NULL, &ki.j, err);
  if (!rc) rc = read_document(&ki, err);
  if (!rc) rc = build_collectives(&ki, err);
  if (!rc) rc = write_meta(&ki, err);
  ovl_json_close(ki.j);
  ovl_input_close(in);
  ovl_kineto_event_free(&ki.ev);
  if (ki.names) ovl_intern_cache_free(ki.names);
  free(ki.names);
  for (size_t i = 0; i < ki.groups.len; i++) free(ki.groups.items[i].ranks);
  OVL_VEC_FREE(&ki.groups);
  OVL_VEC_FREE(&ki.comm_ops);
  OVL_VEC_FREE(&ki.nccl);
  OVL_VEC_FREE(&ki.annotations);
  OVL_VEC_FREE(&ki.name_facts);
  OVL_VEC_FREE(&ki.launches);
  free(ki.api_corrs.words);
  ovl_i64map_free(&ki.launch_by_corr);
  ovl_i64map_free(&ki.comm_op_by_external_id);
  ovl_i64map_free(&ki.group_by_comm);
  return rc;
}
