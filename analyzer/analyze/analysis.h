/*
** The analysis of ovl traces: what `ovl report` prints and exporters draw.
**
** ovl_analyze_file() reads one trace and returns one ovl_rank_result per CUDA device the
** trace used (a process driving one GPU gives one). All times are integer ns on the trace's
** clock; OVL_NONE marks an unknown integer, NAN an unknown bandwidth.
**
** Steps come from NVTX step ranges when the trace has them ("nvtx": projected onto the
** GPU through the launch correlation of the api table when it has rows, else by time),
** else from the repetition of the collective sequence ("periodic"), else the whole trace
** is one step ("whole").
*/
#ifndef OVL_ANALYSIS_H
#define OVL_ANALYSIS_H

#include "base/nccl_ops.h"
#include "base/status.h"
#include "../load/import_options.h"
#include "../load/trace_reader.h"
#include "classify.h"
#include "coll_types.h"
#include "nccl_channels.h"
#include "parallel_dim.h"
#include "sweep.h"

#include <assert.h>
#include <math.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ovl_step_method {
  OVL_STEPS_NVTX,
  OVL_STEPS_PERIODIC,
  OVL_STEPS_WHOLE
} ovl_step_method;

typedef enum ovl_step_projection {
  OVL_PROJECT_NONE,         /* periodic or whole */
  OVL_PROJECT_CORRELATION,  /* host ranges -> GPU work launched inside them */
  OVL_PROJECT_TIME          /* host ranges used as GPU time windows */
} ovl_step_projection;

/* How sure a finding is (docs/findings.md says why each has its level). */
typedef enum ovl_confidence {
  OVL_CONF_UNSET = 0,      /* not judged (a finding made outside the diagnosis) */
  OVL_CONF_HIGH,           /* measured directly: times of the trace's own work */
  OVL_CONF_MEDIUM,         /* rests on a model, an approximation or a signature match */
  OVL_CONF_LOW             /* rests on names alone */
} ovl_confidence;

struct ovl_step_result;
struct ovl_finding;
/* Writes the text of a finding kept without one (ovl_finding.text) into buf, from the step
** whose findings hold it. Returns 0, or -1 when memory runs out or the text needs more than
** size bytes (OVL_FINDING_TEXT_MAX is enough for every such text). */
typedef int (*ovl_finding_text_fn)(const struct ovl_step_result *st, const struct ovl_finding *f, char *buf,
                                   size_t size);
#define OVL_FINDING_TEXT_MAX 8192

typedef struct ovl_finding {
  char code[32];           /* contract section 2 finding codes (docs/findings.md) */
  char *message;           /* evidence and a concrete suggestion; NULL when `text` writes it */
  /* A step finding that a trace can have in every step keeps no message (about 1 KB each: as
  ** much as the step's collectives on a long trace): `text` writes it from the step when it is
  ** read (ovl_finding_message), with what it needs from outside the step (text_fit, text_r2:
  ** the rank's fit of its gradient collectives as the diagnosis judged it). Set only by the
  ** diagnosis, so a packed rank (rank_pack.c, before its diagnosis) has none. */
  ovl_finding_text_fn text;
  int64_t recoverable_ns;
  long step;               /* step index, or -1 for a rank- or job-level finding */
  int64_t at_ns;           /* the instant it points at (trace clock), or OVL_NONE */
  long steps_affected;     /* rank-level summaries: steps whose findings it sums; else 0 */
  ovl_confidence confidence;
  int text_fit;            /* for `text` (diagnose_steps.c); else 0 */
  const char *evidence;    /* static: what it rests on, in a few words; NULL until judged */
  double text_r2;          /* for `text`; else 0 */
} ovl_finding;

/* "high", "medium", "low"; NULL for OVL_CONF_UNSET. */
const char *ovl_confidence_name(ovl_confidence c);

/* What a collective is in its step (set by the measurement of the gradient phase, grad_phase.h). */
typedef enum ovl_coll_role {
  OVL_ROLE_OTHER = 0,      /* not part of the gradient reduction */
  OVL_ROLE_GRADIENT,       /* reduces a gradient bucket */
  OVL_ROLE_UNUSED_MAP,     /* DDP's find_unused_parameters used-parameter map */
  OVL_ROLE_BLOCKING,       /* runs on a compute stream: compute waits for it */
  OVL_ROLE_BEFORE_WINDOW   /* first step: launched before the trace's window (no launching call) */
} ovl_coll_role;

/* The role of a collective (grad_phase.c): what it is in its step. In 32 bits, as a job holds one
** per collective (ovl_coll_result). */
typedef struct ovl_coll_diag {
  unsigned role : 3;       /* ovl_coll_role */
  /* gradient collectives: position in readiness order, else -1 (at most OVL_READY_ORDER_MAX: a
  ** step's collectives are far fewer) */
  signed ready_order : 29;
} ovl_coll_diag;

#define OVL_READY_ORDER_MAX ((1 << 28) - 1)
_Static_assert(OVL_ROLE_BEFORE_WINDOW < 8, "ovl_coll_diag.role holds an ovl_coll_role in 3 bits");

/* The exact values of a wide collective (ovl_coll_result.wide): one whose numbers do not all fit
** the 32-bit fields that keep them (a time an int32 away from its GPU start, a sequence number
** or stream beyond int32): clocks that disagree, a readiness seconds early, a collective that
** hangs. Kept after its extra, read through the accessors below. */
typedef struct ovl_coll_wide {
  int64_t seq, stream, host_launch, gpu_end, exposed, ready, ready_gpu, compute_before, compute_after;
} ovl_coll_wide;

/* What few collectives have (only NCCL's profiler plugin times channels and names the algorithm
** and protocol; a device-to-host copy right after a collective is rare), kept out of
** ovl_coll_result so that the many do not pay for it. */
typedef struct ovl_coll_extra {
  ovl_coll_channels channels;              /* NCCL's timing of its kernel channels (nccl_channels.h) */
  int64_t d2h_start, d2h_end, d2h_bytes;   /* a device-to-host copy right after it; OVL_NONE if none */
  char algorithm[16], protocol[8];         /* NCCL's own account (its profiler plugin); "" when unknown */
  /* its collectives.id when beyond int32 (ovl_coll_result.id32 then OVL_C32_NONE), else OVL_NONE:
  ** the tracer's ids of the profiler plugin's calls carry a tag in their top bits, and those
  ** calls have an extra anyway (its 8 bytes fit in the same malloc chunk) */
  int64_t id;
  /* a wide collective's exact values (wide[0]), allocated with it only then: a plugin's trace,
  ** whose every collective has an extra, does not pay for them (a copy of the struct leaves
  ** them out) */
  ovl_coll_wide wide[];
} ovl_coll_extra;

/* No channel timing (channels.n = 0, its times OVL_NONE), no copy after it, no algorithm or protocol. */
extern const ovl_coll_extra ovl_coll_extra_none;
/* 1 when x holds nothing beyond ovl_coll_extra_none (its wide values aside). */
int ovl_coll_extra_is_none(const ovl_coll_extra *x);

/* A collective across ranks (job_cross_rank.c), for a call matched on every rank. Its transfer
** time and the bus bandwidth over it follow from these and the collective's own fields:
** ovl_coll_transfer_ns, ovl_coll_transfer_busbw. */
typedef struct ovl_coll_cross {
  int64_t wait_ns;         /* GPU time spent waiting for the last peer to arrive */
  int64_t exposed_transfer_ns;  /* exposed time within the transfer part */
  int arrived_last;        /* this rank was the last to arrive (beyond clock noise) */
} ovl_coll_cross;

/* One collective of a rank, in three parts, each filled by one stage: the measurement (the
** fields below diag's: what its trace shows, analysis_results.c), its role in the step (diag,
** grad_phase.c) and the cross-rank part (cross, job_cross_rank.c; stored once per matched
** call in the rank's coll_cross, so ranks outside a job carry one pointer). A job holds one
** per collective of every rank: keep it small (what follows from other fields is computed by
** the accessors below, texts are interned, small numbers are small, and what no stage or output
** reads is not kept: the trace's count, peer, group, host end, device and correlation of a call
** stay in the trace).
**
** Narrow fields (the *32 ones but step, nranks32 and rank32): its id, sequence number, stream
** and exposed time as int32, its other times as int32 offsets from gpu_start, OVL_C32_NONE for
** OVL_NONE. An id beyond int32 is kept in its extra (ovl_coll_extra.id). A collective with
** another value that does not fit is wide: every narrow value but the id is then kept exactly in
** its extra (ovl_coll_wide) and those narrow fields are all OVL_C32_NONE (so a read of a narrow
** collective tests the field alone). Read them through ovl_coll_id() ...
** ovl_coll_compute_after(), write them through ovl_coll_set_*(), after ovl_coll_begin() has set
** gpu_start: it is not changed after (a change would move the times kept relative to it). */
typedef struct ovl_coll_result {
  /* What the cross-rank stage reads of every call of the job (job_cross_rank.c read_call), kept
  ** together: it visits the ranks' calls in matching order, a cache miss per line touched. */
  int64_t comm, bytes;
  int64_t gpu_start;
  int32_t seq32;
  int32_t launch32, end32; /* host_launch (OVL_NONE when unknown), gpu_end */
  int32_t step;            /* -1 when outside every step (a rank's steps are far fewer than 2^31) */
  /* Rank count and rank of its communicator, -1 when unknown: read through ovl_coll_nranks and
  ** ovl_coll_rank (OVL_NONE then), set through ovl_coll_set_ranks. The reader keeps no other
  ** (trace_reader.c: 0..INT32_MAX, a rank count above 0). */
  int32_t nranks32, rank32;
  uint8_t op;              /* ovl_op */
  ovl_coll_dim pdim;       /* parallelism dimension and role (job_dims.c); zero until then */
  /* Where the exposed time lies: npieces (start, end) pairs from pair pieces_at of the rank's
  ** coll_piece_bounds (pieces_exact as ovl_exposed_pieces.exact), when has_pieces. The
  ** cross-rank stage's input, dropped once it has run. Read through ovl_coll_pieces. */
  unsigned npieces : 3, pieces_exact : 1, has_pieces : 1;
  unsigned bytes_from_marks : 1;  /* the trace gave no size (a collective known by its kernel
                           ** only, such as an emulated one) and bytes is the sum of its
                           ** bucket's grad_ready marks since the bucket's previous launch */
  unsigned wide : 1;       /* its narrow values are in its extra (ovl_coll_wide) */
  /* the rest */
  int32_t id32;            /* collectives.id; OVL_NONE when inferred from a kernel name */
  int32_t stream32;
  int32_t exposed32;       /* ns of its GPU interval with no compute running */
  int32_t ready32;         /* bucket readiness (host time, set only with host_launch); OVL_NONE when unknown */
  int32_t ready_gpu32;     /* the bucket's readiness on the GPU's timeline (its last mark's gpu_t) */
  /* compute_before: end of the last compute kernel that started before it; compute_after: start
  ** of the first compute kernel at or after its end; OVL_NONE if none */
  int32_t before32, after32;
  int order;               /* firing order within its step, from 0 */
  int32_t bucket;          /* from the `bucket <k>` NVTX range (k <= INT32_MAX: nvtx_conventions.c); -1 when unknown */
  uint32_t types;          /* its dtype and redop (coll_types.h): read through ovl_coll_dtype/_redop */
  uint32_t pieces_at;
  ovl_coll_diag diag;      /* {OVL_ROLE_OTHER, -1} until the gradient phase is measured */
  ovl_coll_cross *cross;   /* NULL unless matched on every rank of its job */
  /* what few collectives have, kept apart (owned by the collective: ovl_rank_result_free frees
  ** it), with a wide collective's values and an id beyond int32; NULL when it would equal
  ** ovl_coll_extra_none and the collective is not wide. Read it through ovl_coll_extra_of. */
  ovl_coll_extra *extra;
} ovl_coll_result;

/* The bound issues 30 and 35 set (240 B, then 160 B before): a job holds one per collective of
** every rank, and `ovl report --mpi`'s root all ranks' (1.37 M collectives a rank take 164 MB at
** 120 B). A new field must fit in the 3 bytes left or make room: narrow or compute another. */
_Static_assert(sizeof(ovl_coll_result) <= 120, "ovl_coll_result must stay within 120 bytes (issues 30, 35)");
_Static_assert(OVL_EXPOSED_PIECES < 8, "ovl_coll_result.npieces holds up to OVL_EXPOSED_PIECES in 3 bits");

/* A narrow field's OVL_NONE, and every narrow field of a wide collective. */
#define OVL_C32_NONE INT32_MIN

/* 1 when v - base fits a narrow field (|v - base| <= INT32_MAX), into *d; base known. */
static inline int ovl_c32_fits(int64_t v, int64_t base, int64_t *d) {
  return base != OVL_NONE && !__builtin_sub_overflow(v, base, d) &&
         (uint64_t)*d + INT32_MAX <= 2 * (uint64_t)INT32_MAX;
}

/* Makes c wide (its narrow values but the id copied into a wide extra, their fields
** OVL_C32_NONE) and writes v at byte `at` of its ovl_coll_wide. -1: no memory (c unchanged). */
int ovl_coll_set_wide(ovl_coll_result *c, size_t at, int64_t v);

/* Writes v into the narrow field *slot of c (kept relative to base), or into c's wide values
** (at: the field's offset in ovl_coll_wide) when c is wide or v does not fit. -1: no memory. */
static inline int ovl_c32_set(ovl_coll_result *c, int32_t *slot, int64_t base, size_t at, int64_t v) {
  int64_t d;
  if (!c->wide && (v == OVL_NONE || ovl_c32_fits(v, base, &d))) {
    *slot = v == OVL_NONE ? OVL_C32_NONE : (int32_t)d;
    return 0;
  }
  return ovl_coll_set_wide(c, at, v);
}

/* A narrow value: slot + base, else (OVL_C32_NONE) the wide value when c is wide, else
** OVL_NONE. A field that is not OVL_C32_NONE has its base known (the setters keep it so). */
#define OVL_COLL_NARROW(name, slot, base)                                                            \
  static inline int64_t ovl_coll_##name(const ovl_coll_result *c) {                                 \
    if (c->slot != OVL_C32_NONE) {                                                                   \
      assert((base) != OVL_NONE);                                                                    \
      return (base) + c->slot;                                                                       \
    }                                                                                                \
    return c->wide ? c->extra->wide[0].name : OVL_NONE;                                              \
  }                                                                                                  \
  static inline int ovl_coll_set_##name(ovl_coll_result *c, int64_t v) {                            \
    return ovl_c32_set(c, &c->slot, base, offsetof(ovl_coll_wide, name), v);                         \
  }
/* The accessors of the narrow values: ovl_coll_X(c) reads X (OVL_NONE when unknown), and
** ovl_coll_set_X(c, v) writes it (0, or -1 when memory for a wide collective runs out). The
** times are relative to gpu_start, which is set before them. */
OVL_COLL_NARROW(seq, seq32, 0)
OVL_COLL_NARROW(stream, stream32, 0)
OVL_COLL_NARROW(exposed, exposed32, 0)
OVL_COLL_NARROW(host_launch, launch32, c->gpu_start)
OVL_COLL_NARROW(gpu_end, end32, c->gpu_start)
OVL_COLL_NARROW(ready, ready32, c->gpu_start)
OVL_COLL_NARROW(ready_gpu, ready_gpu32, c->gpu_start)
OVL_COLL_NARROW(compute_before, before32, c->gpu_start)
OVL_COLL_NARROW(compute_after, after32, c->gpu_start)
#undef OVL_COLL_NARROW

/* collectives.id; OVL_NONE when inferred from a kernel name. */
static inline int64_t ovl_coll_id(const ovl_coll_result *c) {
  return c->id32 != OVL_C32_NONE ? c->id32 : c->extra ? c->extra->id : OVL_NONE;
}
/* Sets c's id: in id32, or in its extra when beyond int32. -1: no memory (the id unknown). */
int ovl_coll_set_id_far(ovl_coll_result *c, int64_t v);
static inline int ovl_coll_set_id(ovl_coll_result *c, int64_t v) {
  if (c->extra || v < -(int64_t)INT32_MAX || v > INT32_MAX) return ovl_coll_set_id_far(c, v);
  c->id32 = (int32_t)v;
  return 0;
}

/* Starts a new collective's narrow part: its gpu_start (which the times are kept relative to),
** every narrow value OVL_NONE, not wide, no extra (c's own is not freed: c is new). Then
** ovl_coll_set_values sets all but the id at once, or the setters one by one. */
static inline void ovl_coll_begin(ovl_coll_result *c, int64_t gpu_start) {
  c->gpu_start = gpu_start;
  c->wide = 0;
  c->extra = NULL;
  c->id32 = c->seq32 = c->stream32 = c->exposed32 = OVL_C32_NONE;
  c->launch32 = c->end32 = c->ready32 = c->ready_gpu32 = c->before32 = c->after32 = OVL_C32_NONE;
}

/* Makes c (not wide) wide with the values w. -1: no memory (c unchanged). */
int ovl_coll_widen(ovl_coll_result *c, const ovl_coll_wide *w);

/* 1 when v is OVL_NONE or within int32 of base, written into *slot. */
static inline int ovl_c32_put(int32_t *slot, int64_t v, int64_t base) {
  int64_t d;
  if (v == OVL_NONE) *slot = OVL_C32_NONE;
  else if (ovl_c32_fits(v, base, &d)) *slot = (int32_t)d;
  else return 0;
  return 1;
}

/* Sets every narrow value of c but its id from v: c narrow when they all fit, else wide. c is
** not wide yet (as ovl_coll_begin leaves it). -1: no memory (c's values then unknown). */
static inline int ovl_coll_set_values(ovl_coll_result *c, const ovl_coll_wide *v) {
  int64_t t0 = c->gpu_start;
  assert(!c->wide);
  int fit = ovl_c32_put(&c->seq32, v->seq, 0) & ovl_c32_put(&c->stream32, v->stream, 0) &
            ovl_c32_put(&c->exposed32, v->exposed, 0) & ovl_c32_put(&c->launch32, v->host_launch, t0) &
            ovl_c32_put(&c->end32, v->gpu_end, t0) & ovl_c32_put(&c->ready32, v->ready, t0) &
            ovl_c32_put(&c->ready_gpu32, v->ready_gpu, t0) & ovl_c32_put(&c->before32, v->compute_before, t0) &
            ovl_c32_put(&c->after32, v->compute_after, t0);
  return fit ? 0 : ovl_coll_widen(c, v);
}

/* Its communicator's rank count and its rank there; OVL_NONE when unknown. */
static inline int64_t ovl_coll_nranks(const ovl_coll_result *c) { return c->nranks32 >= 0 ? c->nranks32 : OVL_NONE; }
static inline int64_t ovl_coll_rank(const ovl_coll_result *c) { return c->rank32 >= 0 ? c->rank32 : OVL_NONE; }

/* 1 when v can be a collective's rank count or rank: OVL_NONE or 0..INT32_MAX. */
static inline int ovl_coll_rank_ok(int64_t v) { return v == OVL_NONE || (v >= 0 && v <= INT32_MAX); }

/* Sets c's rank count and rank (each OVL_NONE or 0..INT32_MAX: ovl_coll_rank_ok). */
static inline void ovl_coll_set_ranks(ovl_coll_result *c, int64_t nranks, int64_t rank) {
  assert(ovl_coll_rank_ok(nranks) && ovl_coll_rank_ok(rank));
  c->nranks32 = nranks == OVL_NONE ? -1 : (int32_t)nranks;
  c->rank32 = rank == OVL_NONE ? -1 : (int32_t)rank;
}

/* gpu_start - host_launch; OVL_NONE when either is unknown, or when the work starts before its
** launch (clocks that disagree, a broken link): the queueing is then unknown, not negative. */
static inline int64_t ovl_coll_queueing(const ovl_coll_result *c) {
  int64_t launch = ovl_coll_host_launch(c);
  return launch != OVL_NONE && c->gpu_start != OVL_NONE && c->gpu_start >= launch ? c->gpu_start - launch : OVL_NONE;
}

/* The readiness stall: launch - ready (host times); OVL_NONE when the readiness is unknown. */
static inline int64_t ovl_coll_stall(const ovl_coll_result *c) {
  int64_t ready = ovl_coll_ready(c), launch = ovl_coll_host_launch(c);
  return ready != OVL_NONE && launch != OVL_NONE ? launch - ready : OVL_NONE;
}

/* GPU time from the last arrival to the end (its duration less its wait); OVL_NONE when not
** matched across ranks. */
static inline int64_t ovl_coll_transfer_ns(const ovl_coll_result *c) {
  if (!c->cross || c->cross->wait_ns == OVL_NONE) return OVL_NONE;
  return (ovl_coll_gpu_end(c) - c->gpu_start) - c->cross->wait_ns;
}

/* Bus bandwidth over the transfer part; NAN when unknown (not matched, no size, no transfer). */
static inline double ovl_coll_transfer_busbw(const ovl_coll_result *c) {
  int64_t t = ovl_coll_transfer_ns(c);
  if (t == OVL_NONE || t <= 0 || c->bytes == OVL_NONE || c->bytes < 0) return NAN;
  return ovl_algbw_bytes((ovl_op)c->op, c->bytes, ovl_coll_nranks(c)) / (double)t * ovl_busbw_factor((ovl_op)c->op, ovl_coll_nranks(c));
}

/* Algorithm bandwidth over its GPU interval in GB/s (bytes/ns); NAN when its size or its GPU
** interval is unknown, or the interval is empty. Computed rather than stored (a job holds one
** collective per call of every rank): the expression is the one the measurement used to store,
** so the printed values stay bit-identical. */
static inline double ovl_coll_algbw(const ovl_coll_result *c) {
  int64_t end = ovl_coll_gpu_end(c);
  if (c->bytes == OVL_NONE || c->bytes < 0 || c->gpu_start == OVL_NONE || end == OVL_NONE) return NAN;
  int64_t dur = end - c->gpu_start;
  return dur > 0 ? ovl_algbw_bytes((ovl_op)c->op, c->bytes, ovl_coll_nranks(c)) / (double)dur : NAN;
}

/* Bus bandwidth over its GPU interval: the algorithm bandwidth times the op's bus factor; NAN
** when that is unknown, and when the size came from grad_ready marks (a kernel known alone)
** without a rank count: the factor needs it. With a size from the trace, an unknown rank count
** takes the factor of one rank (as the measurement always has). */
static inline double ovl_coll_busbw(const ovl_coll_result *c) {
  double algbw = ovl_coll_algbw(c);
  if (isnan(algbw) || (c->bytes_from_marks && c->nranks32 <= 0)) return NAN;
  return algbw * ovl_busbw_factor((ovl_op)c->op, ovl_coll_nranks(c));
}

/* Its data type and reduction op as the trace names them; "" when unknown. */
static inline const char *ovl_coll_dtype(const ovl_coll_result *c) { return ovl_coll_types_dtype(c->types); }
static inline const char *ovl_coll_redop(const ovl_coll_result *c) { return ovl_coll_types_redop(c->types); }

/* Gives c a copy of x (c's previous one freed), or none (c->extra NULL) when x is none; a wide
** collective keeps its wide values (and its extra). -1: no memory (c->extra NULL; a wide c
** cannot fail). */
int ovl_coll_extra_set(ovl_coll_result *c, const ovl_coll_extra *x);

/* A collective's extra facts, or ovl_coll_extra_none (never NULL). */
static inline const ovl_coll_extra *ovl_coll_extra_of(const ovl_coll_result *c) {
  return c->extra ? c->extra : &ovl_coll_extra_none;
}

/* A `grad_ready` mark (host time). */
typedef struct ovl_grad_mark {
  int64_t t;               /* host time of the mark */
  long bucket;
  int64_t bytes;
  int64_t tid;
  long step;
  /* The mark on the GPU's timeline: the host runs ahead of the GPU by its launch queue (90 ms
  ** in an H200 trace), so a gradient exists on the GPU when the work launched before its mark
  ** (on its thread) ends. launch_corr: that launch's correlation id; gpu_t: the end of its GPU
  ** work. OVL_NONE when the trace has no such launch (no api rows) or no work for it. */
  int64_t launch_corr, gpu_t;
} ovl_grad_mark;

typedef struct ovl_step_result {
  long index;
  long number;             /* N of the `ProfilerStep#N` range it comes from, else -1 */
  int64_t start, end;
  ovl_totals totals;
  /* The gradient phase (grad_phase.h); OVL_NONE when the step has no gradient collective. */
  int64_t backward_end;    /* end of the last compute kernel before the last gradient collective */
  int64_t grad_end;        /* end of the last gradient collective */
  int64_t grad_bytes;      /* bytes of the gradient collectives */
  int ngrad;               /* gradient collectives */
  int misordered;          /* their firing order differs from their readiness order */
  ovl_coll_result *colls;  /* in firing order */
  size_t ncolls;
  ovl_finding *findings;
  size_t nfindings;
  /* Per parallelism dimension (job_dims.c): the totals of the dimensions whose bit is set in
  ** dims_mask, in dimension order, at dims_kept (in the rank's step_dims); every other dimension's
  ** are zero. Most steps have one dimension: 24 bytes where five took 120 (114 k steps of the
  ** 1.37 M-collective trace: 12 MB at the analysis' peak). Read through ovl_step_dim. */
  const ovl_dim_totals *dims_kept;
  uint8_t dims_mask;
} ovl_step_result;

/* Time per CUDA stream of a device, by class of work (sums of durations). */
typedef struct ovl_stream_stat {
  int64_t stream;
  int64_t compute_ns, comm_ns, memory_ns;
  long kernels, memops;
} ovl_stream_stat;

/* A compute kernel signature (name, grid, block) whose duration was fitted against the time
** communication overlapped its runs (kernel_stats.h): a candidate of the measurement, or,
** in a rank's slowdowns, one the diagnosis found to run measurably slower while overlapped. */
typedef struct ovl_kernel_slowdown {
  char *name;
  int64_t grid[3], block[3];  /* OVL_NONE when unknown */
  long runs, runs_alone, runs_overlapped;
  double alone_ns, factor, cost_ns;
  double slope, t_stat;
  double alone_mean_ns, alone_sd_ns;  /* durations of the runs alone */
  double over_mean_ns, over_sd_ns;    /* durations of the runs overlapped */
} ovl_kernel_slowdown;

/* Compute time per kernel name, grid and block (the largest totals of the rank). */
typedef struct ovl_kernel_total {
  char *name;
  int64_t grid[3], block[3];  /* OVL_NONE when unknown */
  long runs;
  double total_ns;
} ovl_kernel_total;

#define OVL_KERNEL_TOTALS_KEPT 64

/* What the job analysis learned about a rank from its peers (in_job = 0: nothing). */
typedef struct ovl_rank_cross {
  int in_job;
  long matched;            /* collective calls matched on every rank */
  int64_t wait_ns, transfer_ns, exposed_transfer_ns;
  long times_last, decisive;
  double expected_last;    /* times it would arrive last by chance */
  double p_value;          /* chance of arriving last that often */
  int straggler;           /* judged by the diagnosis (diagnose/diagnose_cross.c), 0 before */
  int64_t wait_caused_ns;  /* others' waiting in collectives it arrived last at */
  int64_t late_gpu_ns, late_host_ns;  /* median lateness when last (host: OVL_NONE unknown) */
  int64_t delay_ns;        /* the job's delay it caused: its arrival - the second-last, summed */
} ovl_rank_cross;

/* A process group's name as its trace gives it (meta OVL_COMM_NAME_META, load/trace_reader.h). */
typedef struct ovl_comm_name {
  int64_t comm;
  char *name;
} ovl_comm_name;

typedef struct ovl_rank_result {
  char *trace_path;        /* the file the user named */
  char *ovl_path;          /* the ovl trace analysed: trace_path itself, or the job's conversion of
                           ** this rank's process (kept until the job is freed; export reads it) */
  char *hostname;
  int64_t rank, world_size, pid, device;
  int job;                 /* which of the job's parts (job/job.h: traces of one job) it belongs to; 0 until known */
  int cupti_late;          /* meta.cupti says CUPTI was attached late (from NCCL's profiler plugin): the trace
                           ** has no launching API calls, so collectives cannot be linked to their kernels */
  ovl_totals totals;
  ovl_step_method step_detection;
  ovl_step_projection step_projection;
  size_t period;           /* periodic steps: collectives per step */
  ovl_step_result *steps;
  size_t nsteps;
  /* When set, every step's colls lie in this one block (on huge pages: one fault per 2 MiB
  ** where each step's own allocation faulted page by page), freed once; otherwise each step's
  ** colls is an allocation of its own. */
  ovl_coll_result *coll_block;
  ovl_grad_mark *marks;
  size_t nmarks;
  long n_kernels, n_comm_kernels, n_memops, n_comm_memops;
  long n_moe_kernels;      /* kernels named for mixture-of-experts work (classify.h): evidence of expert parallelism */
  long colls_outside_steps, colls_without_gpu_work;
  long colls_numbered;     /* collectives the importer numbered (meta.import_seq_numbered): no Seq in the trace */
  ovl_bad_rows bad;
  ovl_stream_stat *streams;
  size_t nstreams;
  ovl_kernel_slowdown *kernel_fits; /* measured: signatures run both alone and overlapped */
  size_t nkernel_fits;
  ovl_kernel_slowdown *slowdowns;  /* diagnosed: the significant fits, largest cost first */
  size_t nslowdowns;
  int first_step_differs;  /* step 0's bucket layout differs from the steady state */
  long colls_before_window; /* of the first step: launched before the trace's window (grad_phase.h) */
  ovl_coll_result *unstepped;  /* collectives outside every step (needed to match ranks) */
  size_t nunstepped;
  ovl_coll_cross *coll_cross;  /* the cross parts of its matched collectives (job_cross_rank.c) */
  size_t ncoll_cross;
  /* its collectives' exposed pieces, each one's pairs together (16 bytes a piece, where the
  ** pass's fixed-size records take 72 a collective), until the cross-rank stage */
  int64_t *coll_piece_bounds;
  ovl_kernel_total *kernel_totals;  /* largest first, at most OVL_KERNEL_TOTALS_KEPT */
  size_t nkernel_totals;
  ovl_kernel_total *lookalikes;     /* compute kernels named like communication (load/comm_names.h), largest first */
  size_t nlookalikes;
  int64_t realtime_offset;  /* meta.realtime_offset_ns; OVL_NONE when unknown */
  ovl_comm_name *comm_names; /* the process groups its trace names ("default_pg") */
  size_t ncomm_names;
  /* Times in this result are on the trace's own clock; clock_offset (from the job's clock
  ** alignment, 0 otherwise) added to them gives job time. Consumers apply it. */
  int64_t clock_offset;
  ovl_rank_cross cross;
  ovl_finding *findings;
  size_t nfindings;
  ovl_dim_totals dims[OVL_DIM_COUNT];  /* per parallelism dimension, over its steps (job_dims.c) */
  /* its steps' dimension totals, the steps in order (ovl_step_result.dims_kept points here) */
  ovl_dim_totals *step_dims;
  size_t nstep_dims, step_dims_cap;
  ovl_pipeline_stats pipeline;         /* stage < 0 unless it is a pipeline stage */
  ovl_channel_facts channel_facts;     /* NCCL's channel timing over its collectives (nccl_channels.h) */
} ovl_rank_result;

/* c's exposed pieces ((start, end) pairs, c->npieces of them) in r, its rank; NULL when it has
** none recorded or they were dropped. */
static inline const int64_t *ovl_coll_pieces(const ovl_rank_result *r, const ovl_coll_result *c) {
  return c->has_pieces && r->coll_piece_bounds ? r->coll_piece_bounds + 2 * (size_t)c->pieces_at : NULL;
}

/* The name r's trace gives comm, or NULL (borrowed until r is freed). */
const char *ovl_rank_comm_name(const ovl_rank_result *r, int64_t comm);

/* Sees each piece of GPU work the analysis's pass classifies, so that a consumer needing
** per-item facts of the work (the timeline export: the streams' roles, the correlation ids
** with GPU work) need not read the trace again. A file's calls come from the one thread
** analysing it; files may be analysed concurrently, so open must be thread-safe. */
struct ovl_classified_work;
typedef struct ovl_work_observer {
  void *self;
  /* The final pass over the ovl trace at path starts: the file's state, or NULL (memory). */
  void *(*open)(void *self, const char *path);
  /* The pass reads the work sorted by SQLite (rows further out of order than the reorder
  ** window, so any pass with that window must sort), from its first item again: right after
  ** open when known before, or when found out during the pass. */
  void (*restart)(void *file_state);
  /* One item, in the pass's order. Returns 0, or -1 when memory runs out. */
  int (*on_work)(void *file_state, const struct ovl_classified_work *cw);
} ovl_work_observer;

typedef struct ovl_analysis_options {
  const char *comm_pattern;   /* extra communication kernel names (POSIX ERE), or NULL */
  const char *step_pattern;   /* extra step range names (POSIX ERE), or NULL */
  size_t reorder_window;      /* 0: OVL_DEFAULT_REORDER_WINDOW */
  int launch_dims;            /* read kernel grid/block sizes */
  ovl_import_options import;  /* how foreign traces (Kineto, Nsight) are converted */
  const char *dim_overrides;  /* "COMM=DIM,..." (job_dims.h), or NULL */
  const ovl_work_observer *observer;  /* NULL: none */
} ovl_analysis_options;

/* Compiled options, shared read-only by concurrent analyses. */
typedef struct ovl_analysis_ctx {
  ovl_analysis_options opt;
  ovl_classifier classifier;
  int has_step_pattern;
  regex_t step_pattern;
} ovl_analysis_ctx;

int ovl_analysis_ctx_init(ovl_analysis_ctx *ctx, const ovl_analysis_options *opt, ovl_err *err);
void ovl_analysis_ctx_free(ovl_analysis_ctx *ctx);

/* Analyses one ovl trace file. *ranks is an array of *nranks results (free each with
** ovl_rank_result_free, then the array with free). */
int ovl_analyze_file(const ovl_analysis_ctx *ctx, const char *path, ovl_rank_result **ranks, size_t *nranks,
                     ovl_err *err);
void ovl_rank_result_free(ovl_rank_result *r);

/* 1 - exposed/comm, or NAN when there is no communication. */
double ovl_overlap_efficiency(const ovl_totals *t);
const char *ovl_step_method_name(ovl_step_method m);
const char *ovl_step_projection_name(ovl_step_projection p);
/* "3", or "3 (ProfilerStep#1012)" when the step is a numbered ProfilerStep; into buf. */
const char *ovl_step_label(const ovl_step_result *st, char *buf, size_t len);
/* How every output names a collective's bucket, into buf: "3" for the `bucket 3` NVTX range
** around it; "#2" for a gradient collective without one (its firing order in the step); "-" for
** any other collective. */
const char *ovl_coll_bucket_label(const ovl_coll_result *c, char *buf, size_t len);
/* "gradient", "unused_map", "blocking", "other". */
const char *ovl_coll_role_name(ovl_coll_role role);
/* What a stream mostly runs: "compute", "communication", "memory" or "idle". */
const char *ovl_stream_role_name(const ovl_stream_stat *s);

/* Step st's totals of dimension d (0 <= d < OVL_DIM_COUNT); zero when it has none. */
static inline ovl_dim_totals ovl_step_dim(const ovl_step_result *st, int d) {
  assert(d >= 0 && d < OVL_DIM_COUNT);
  if (!(st->dims_mask >> d & 1)) return (ovl_dim_totals){0, 0, 0};
  assert(st->dims_kept);  /* set: ovl_step_dims_seal has run */
  return st->dims_kept[__builtin_popcount(st->dims_mask & ((1u << d) - 1))];
}

/* A rank's steps' dimension totals are put step by step, in step order, each step once
** (those not put have none), then sealed: ovl_step_dims_seal points every step at its own.
** ovl_step_dims_clear empties them (before putting them again). Put returns -1 out of memory. */
void ovl_step_dims_clear(ovl_rank_result *r);
int ovl_step_dims_put(ovl_rank_result *r, ovl_step_result *st, const ovl_dim_totals d[OVL_DIM_COUNT]);
void ovl_step_dims_seal(ovl_rank_result *r);

/* Appends a finding (message is copied). Returns 0 or -1 when memory runs out. */
int ovl_add_finding(ovl_finding **list, size_t *n, const char *code, long step, int64_t recoverable_ns,
                    const char *message);
/* Appends a finding whose text `text` writes when it is read; its text_fit and text_r2 are the
** caller's to set. Returns 0 or -1 when memory runs out. */
int ovl_add_finding_text(ovl_finding **list, size_t *n, const char *code, long step, int64_t recoverable_ns,
                         ovl_finding_text_fn text);
/* A finding's text: its message, or the text its `text` writes into buf (size bytes,
** OVL_FINDING_TEXT_MAX) from st, the step whose findings hold it (NULL for a rank's or a job's
** findings, which all keep their message). NULL when memory runs out. */
const char *ovl_finding_message(const struct ovl_step_result *st, const ovl_finding *f, char *buf, size_t size);
void ovl_free_findings(ovl_finding *list, size_t n);

#endif
