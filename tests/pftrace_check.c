/*
** ovl_pftrace_check: an independent checker for ovl's exports (a test tool, not part of ovl).
**
**   ovl_pftrace_check FILE.pftrace [--kernels N] [--slices OUT]   Perfetto protobuf, decoded with protobuf-c
**   ovl_pftrace_check --chrome FILE[.gz] [--kernels N] [--slices OUT]   Chrome Trace Event JSON
**
** Perfetto checks: every packet decodes; every track uuid an event or descriptor refers to
** was declared before; every name_iid was defined on its sequence (since its last clear)
** before use, and every annotation name_iid likewise (an iid meaning one name in the whole
** file); packets that use interned names or sequence defaults are on a sequence whose
** state was cleared first (SEQ_INCREMENTAL_STATE_CLEARED: Perfetto reads them against that
** state whether or not they set SEQ_NEEDS_INCREMENTAL_STATE); incremental timestamps have a
** clock snapshot on their sequence; no debug annotation holds a NaN or infinite double (unknown values are left
** out); on every track events are in time order, every END closes an open BEGIN and
** nothing is left open (so slices nest); counter values only on counter tracks; no track
** has a sibling_order_rank that Perfetto ignores (below a process or thread track, or below
** a parent without EXPLICIT child_ordering); every flow
** id starts exactly once and terminates exactly once, not before it started (ids as fixed64
** flow_ids or as varint flow_ids_old, which Perfetto also reads), its end no earlier in time
** than its start, in whatever order the packets come (the trace processor sorts the packets
** by time before it parses them, flows included; the export's host pass, drawn on a second
** thread, reaches the file in chunks beside the GPU pass's). Kernel slices
** are the slices on "stream ..." tracks that are not memcpy/memset; with --kernels their
** count must equal N. Prints statistics, among them the bytes per kernel slice (its BEGIN
** and END packets, framing and interned definitions included), and per process the order
** in which the UI shows its tracks ("track_order NAME | track | track ...").
**
** Chrome checks: the file is well-formed JSON (a strict validator), has a traceEvents
** array, and holds one "X" event of category kernel or nccl per kernel (--kernels N); with
** ts and dur read as a viewer reads them (doubles in µs, rounded to ns), the X events of
** every (pid, tid) nest (none crosses the end of one it starts in).
** With --slices OUT, both modes also write every slice to OUT, one per line, sorted:
** "process | track | name | start | end", times in ns after the earliest slice start (the
** Perfetto file's absolute times resolved from its incremental clocks; Chrome's ts and dur
** read as a viewer reads them), so that the two exports of one trace can be compared.
** With --events OUT (Perfetto), every event and track as decoded, one per line, sorted, for
** comparing two exports of one trace whose packets differ in order, uuids and sequence ids
** (test_export: the host pass drawn beside the GPU pass or after it): "track | process |
** name | rank R | kind", "slice | process | track#rank | name | start | end | annotations",
** "instant | ...", "counter | process | track#rank | t | value", and "flow | <slice> ->
** <slice>" (each end as "process | track#rank | name | start"), times as for --slices.
** Exit status 0 when every check passes, 1 otherwise (each problem printed), 2 on usage.
*/
#include "base/i64map.h"
#include "perfetto_subset.pb-c.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static long problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...) {
  if (problems++ < 20) {
    va_list ap;
    va_start(ap, fmt);
    fputs("check: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }
}

/* Reads a whole (possibly gzipped) file. */
static unsigned char *slurp(const char *path, size_t *len) {
  gzFile f = gzopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, n = 0;
  unsigned char *buf = malloc(cap);
  int got;
  while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)got;
    if (n == cap) {
      unsigned char *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  gzclose(f);
  *len = n;
  return buf;
}

/* ------------------------------------------------------------------------------------ */
/* Perfetto                                                                             */
/* ------------------------------------------------------------------------------------ */

typedef struct track {
  uint64_t uuid, parent;
  int is_process, is_thread, explicit_children, has_rank;
  int32_t rank;
  char *name;
  int counter, gpu;
  int64_t last_ts;
  long depth;
  unsigned char *open_kernel;  /* per open slice: is it a kernel slice */
  size_t open_cap;
  int64_t *open_start;         /* --slices: per open slice, its start and name */
  char **open_name;
  char **open_args;            /* --events: per open slice, its annotations */
} track;

typedef struct sequence {
  ovl_i64map iids;             /* defined name iids */
  ovl_i64map key_iids;         /* defined annotation name iids, to their names (key_names) */
  int cleared;                 /* its incremental state was cleared: valid from then on */
  int has_defaults, has_snapshot;
  uint64_t default_track;
  uint32_t default_clock;
  int64_t clock_value;         /* incremental clock */
} sequence;

static track *tracks;
static size_t ntracks, tracks_cap;
static ovl_i64map track_of_uuid, seq_index, flow_started, flow_ended;
static sequence *seqs;
static size_t nseqs;

static sequence *get_seq(uint32_t id) {
  int64_t idx;
  if (ovl_i64map_get(&seq_index, id, &idx)) return &seqs[idx];
  seqs = realloc(seqs, (nseqs + 1) * sizeof *seqs);
  memset(&seqs[nseqs], 0, sizeof *seqs);
  ovl_i64map_put(&seq_index, id, (int64_t)nseqs);
  return &seqs[nseqs++];
}

/* --slices: every slice as read, printed sorted at the end. */
typedef struct dumped {
  const char *process, *track;
  char *name;
  int64_t start, end;
} dumped;
static dumped *dumps;
static size_t ndumps, dumps_cap;
static int dumping;

static void dump_slice(const char *process, const char *track_name, const char *name, int64_t start, int64_t end) {
  if (ndumps == dumps_cap) dumps = realloc(dumps, (dumps_cap = dumps_cap ? 2 * dumps_cap : 1024) * sizeof *dumps);
  dumps[ndumps++] = (dumped){process, track_name, strdup(name ? name : ""), start, end};
}

static int cmp_dumped(const void *a, const void *b) {
  const dumped *x = a, *y = b;
  int c = strcmp(x->process, y->process);
  if (!c) c = strcmp(x->track, y->track);
  if (!c && x->start != y->start) c = x->start < y->start ? -1 : 1;
  if (!c && x->end != y->end) c = x->end < y->end ? -1 : 1;
  if (!c) c = strcmp(x->name, y->name);
  return c;
}

/* An output file of --slices or --events; NULL (said on stderr) when it cannot be made. */
static FILE *open_output(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "check: %s: cannot write\n", path);
  return f;
}

/* Writes the slices, sorted, with times after the earliest start; frees them. */
static int write_dumps(const char *path) {
  FILE *f = open_output(path);
  if (!f) return 1;
  int64_t t0 = INT64_MAX;
  for (size_t i = 0; i < ndumps; i++)
    if (dumps[i].start < t0) t0 = dumps[i].start;
  for (size_t i = 0; i < ndumps; i++) {
    dumps[i].start -= t0;
    dumps[i].end -= t0;
  }
  qsort(dumps, ndumps, sizeof *dumps, cmp_dumped);
  for (size_t i = 0; i < ndumps; i++) {
    fprintf(f, "%s | %s | %s | %" PRId64 " | %" PRId64 "\n", dumps[i].process, dumps[i].track, dumps[i].name,
            dumps[i].start, dumps[i].end);
    free(dumps[i].name);
  }
  free(dumps);
  return fclose(f) == 0 ? 0 : 1;
}

/* --events: every event and track as decoded (see the header), written sorted at the end. */
typedef struct devent {
  char kind;               /* 't' track, 's' slice, 'i' instant, 'c' counter */
  size_t track;
  char *name, *args;
  int64_t start, end, value;
} devent;
typedef struct flow_end {
  size_t track;
  int64_t ts;
  char *name;
} flow_end;
static devent *devents;
static size_t ndevents, devents_cap;
static ovl_i64map flow_out_at, flow_in_at;  /* --events: flow id -> flow_ends index */
static flow_end *flow_ends;
static size_t nflow_ends, flow_ends_cap;
static int eventing;

static void add_devent(devent e) {
  if (ndevents == devents_cap) devents = realloc(devents, (devents_cap = devents_cap ? 2 * devents_cap : 1024) * sizeof *devents);
  devents[ndevents++] = e;
}

static void add_flow_end(ovl_i64map *at, uint64_t id, size_t track, int64_t ts, const char *name) {
  /* grown geometrically: ASan's realloc always copies, so one slot at a time was quadratic */
  if (nflow_ends == flow_ends_cap)
    flow_ends = realloc(flow_ends, (flow_ends_cap = flow_ends_cap ? 2 * flow_ends_cap : 1024) * sizeof *flow_ends);
  flow_ends[nflow_ends] = (flow_end){track, ts, strdup(name ? name : "")};
  ovl_i64map_put(at, (int64_t)id, (int64_t)nflow_ends++);
}

/* Annotations as "name=value,...", in the order written. */
static char *render_args(const Perfetto__Protos__TrackEvent *ev) {
  size_t cap = 64, n = 0;
  char *out = malloc(cap);
  out[0] = 0;
  for (size_t i = 0; i < ev->n_debug_annotations; i++) {
    const Perfetto__Protos__DebugAnnotation *a = ev->debug_annotations[i];
    char one[512];
    if (a->has_int_value) snprintf(one, sizeof one, "%s=%" PRId64, a->name ? a->name : "", a->int_value);
    else if (a->has_double_value) snprintf(one, sizeof one, "%s=%.17g", a->name ? a->name : "", a->double_value);
    else snprintf(one, sizeof one, "%s='%s'", a->name ? a->name : "", a->string_value ? a->string_value : "");
    size_t k = strlen(one);
    while (n + k + 2 > cap) out = realloc(out, cap *= 2);
    if (n) out[n++] = ',';
    memcpy(out + n, one, k + 1);
    n += k;
  }
  return out;
}

static int is_memop_name(const char *n) { return strncmp(n, "memcpy ", 7) == 0 || strcmp(n, "memset") == 0; }

typedef struct stats {
  long packets, descriptors, begins, ends, instants, counters, kernel_slices, flows;
  long annotations, annotation_names_plain;  /* annotations; those named as text, not interned */
  uint64_t kernel_bytes, kernel_flow_bytes, total_bytes;
} stats;

static void declare(const Perfetto__Protos__TrackDescriptor *d, long at) {
  if (!d->has_uuid) {
    problem("packet %ld: track descriptor without uuid", at);
    return;
  }
  int64_t idx;
  if (d->uuid == 0) return;  /* the root descriptor */
  if (ovl_i64map_get(&track_of_uuid, (int64_t)d->uuid, &idx)) {
    problem("packet %ld: track uuid %" PRIu64 " declared twice", at, d->uuid);
    return;
  }
  if (d->has_parent_uuid && d->parent_uuid && !ovl_i64map_get(&track_of_uuid, (int64_t)d->parent_uuid, &idx))
    problem("packet %ld: parent uuid %" PRIu64 " used before it was declared", at, d->parent_uuid);
  if (ntracks == tracks_cap) tracks = realloc(tracks, (tracks_cap = tracks_cap ? tracks_cap * 2 : 64) * sizeof *tracks);
  track *t = &tracks[ntracks];
  memset(t, 0, sizeof *t);
  t->uuid = d->uuid;
  t->parent = d->has_parent_uuid ? d->parent_uuid : 0;
  t->is_process = d->process != NULL;
  t->is_thread = d->thread != NULL;
  t->explicit_children =
      d->has_child_ordering && d->child_ordering == PERFETTO__PROTOS__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
  t->has_rank = d->has_sibling_order_rank;
  t->rank = d->sibling_order_rank;
  t->name = strdup(d->process && d->process->process_name ? d->process->process_name : d->name ? d->name : "");
  t->counter = d->counter != NULL;
  t->gpu = d->name && (strncmp(d->name, "stream ", 7) == 0 || strncmp(d->name, "unknown stream", 14) == 0);
  t->last_ts = INT64_MIN;
  if (eventing)
    add_devent((devent){'t', ntracks, NULL, NULL, 0, 0,
                        d->process ? 2 : d->counter ? (d->counter->has_unit ? 10 + d->counter->unit : 1) : 0});
  ovl_i64map_put(&track_of_uuid, (int64_t)d->uuid, (int64_t)ntracks++);
}

static size_t varint_len(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) n++;
  return n;
}

/* The name of the process track above t ("" when none). */
static const char *process_of(const track *t) {
  for (int guard = 0; t && guard < 64; guard++) {
    if (t->is_process) return t->name;
    int64_t idx;
    if (!t->parent || !ovl_i64map_get(&track_of_uuid, (int64_t)t->parent, &idx)) break;
    t = &tracks[idx];
  }
  return "";
}

/* Annotation names interned on the sequence (debug_annotation_names): each annotation that
** names its key by iid gets the name itself (as if written so), for the checks and the dumps.
** An iid must be defined on its sequence before use (Perfetto resolves it per sequence), and
** here it must also mean one name in the whole file: ovl takes them from one fixed list. */
static char **key_names;  /* every annotation name iid defined, by iid: NULL when none yet */
static size_t nkey_names;

static void define_keys(sequence *sq, const Perfetto__Protos__InternedData *in, long at) {
  for (size_t i = 0; i < in->n_debug_annotation_names; i++) {
    const Perfetto__Protos__DebugAnnotationName *k = in->debug_annotation_names[i];
    const char *name = k->name ? k->name : "";
    if (!k->has_iid || k->iid == 0 || k->iid > 1u << 20) {
      problem("packet %ld: annotation name '%s' without a valid iid", at, name);
      continue;
    }
    if (k->iid >= nkey_names) {
      key_names = realloc(key_names, (size_t)(k->iid + 1) * sizeof *key_names);
      memset(key_names + nkey_names, 0, (size_t)(k->iid + 1 - nkey_names) * sizeof *key_names);
      nkey_names = (size_t)k->iid + 1;
    }
    if (!key_names[k->iid]) key_names[k->iid] = strdup(name);
    else if (strcmp(key_names[k->iid], name) != 0)
      problem("packet %ld: annotation name iid %" PRIu64 " means both '%s' and '%s'", at, k->iid, key_names[k->iid], name);
    ovl_i64map_put(&sq->key_iids, (int64_t)k->iid, 1);
  }
}

static void resolve_keys(sequence *sq, Perfetto__Protos__TrackEvent *ev, long at, stats *st) {
  for (size_t i = 0; i < ev->n_debug_annotations; i++) {
    Perfetto__Protos__DebugAnnotation *a = ev->debug_annotations[i];
    st->annotations++;
    if (!a->has_name_iid) {
      st->annotation_names_plain++;
      continue;
    }
    int64_t v;
    if (a->name) problem("packet %ld: annotation with both name_iid and name", at);
    else if (!ovl_i64map_get(&sq->key_iids, (int64_t)a->name_iid, &v))
      problem("packet %ld: annotation name_iid %" PRIu64 " not defined on its sequence", at, a->name_iid);
    else
      a->name = strdup(key_names[a->name_iid]);  /* freed with the packet (protobuf-c's default allocator) */
  }
}

static void check_event(const Perfetto__Protos__TracePacket *p, uint32_t seq_id, size_t bytes, long at, stats *st,
                        char **iid_names) {
  const Perfetto__Protos__TrackEvent *ev = p->track_event;
  sequence *sq = get_seq(seq_id);
  /* Time: the packet's clock, else the sequence default, else the trace clock. */
  uint32_t clock = p->has_timestamp_clock_id ? p->timestamp_clock_id : sq->has_defaults ? sq->default_clock : 0;
  int64_t ts = (int64_t)p->timestamp;

  if (clock >= 64 && clock < 128) {
    if (!sq->has_snapshot) problem("packet %ld: incremental timestamp without a clock snapshot", at);
    sq->clock_value += (int64_t)p->timestamp;
    ts = sq->clock_value;
  }
  if ((clock >= 64 || !ev->has_track_uuid || ev->has_name_iid) && !sq->cleared)
    problem("packet %ld: uses sequence state before SEQ_INCREMENTAL_STATE_CLEARED", at);
  uint64_t uuid = ev->has_track_uuid ? ev->track_uuid : sq->has_defaults ? sq->default_track : 0;
  int64_t ti;
  if (!ovl_i64map_get(&track_of_uuid, (int64_t)uuid, &ti)) {
    problem("packet %ld: track uuid %" PRIu64 " used before it was declared", at, uuid);
    return;
  }
  track *t = &tracks[ti];
  const char *name = NULL;
  if (ev->has_name_iid) {
    int64_t v;
    if (!ovl_i64map_get(&sq->iids, (int64_t)ev->name_iid, &v)) problem("packet %ld: name_iid %" PRIu64 " not defined on sequence %u", at, ev->name_iid, seq_id);
    else name = iid_names[v];
  }
  for (size_t i = 0; i < ev->n_debug_annotations; i++) {
    const Perfetto__Protos__DebugAnnotation *a = ev->debug_annotations[i];
    if (a->has_double_value && !isfinite(a->double_value))
      problem("packet %ld: annotation %s is %g (unknown values must be left out)", at, a->name ? a->name : "?",
              a->double_value);
  }
  if (ts < t->last_ts) problem("packet %ld: time goes back on a track (%" PRId64 " < %" PRId64 ")", at, ts, t->last_ts);
  t->last_ts = ts;
  switch (ev->type) {
    case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN: {
      st->begins++;
      if (t->counter) problem("packet %ld: slice on a counter track", at);
      int kernel = t->gpu && name && !is_memop_name(name);
      if ((size_t)t->depth == t->open_cap) {
        t->open_cap = t->open_cap ? t->open_cap * 2 : 4;
        t->open_kernel = realloc(t->open_kernel, t->open_cap);
        t->open_start = realloc(t->open_start, t->open_cap * sizeof *t->open_start);
        t->open_name = realloc(t->open_name, t->open_cap * sizeof *t->open_name);
        t->open_args = realloc(t->open_args, t->open_cap * sizeof *t->open_args);
      }
      t->open_args[t->depth] = eventing ? render_args(ev) : NULL;
      t->open_start[t->depth] = ts;
      t->open_name[t->depth] = (char *)name;
      t->open_kernel[t->depth++] = (unsigned char)kernel;
      if (kernel) {
        st->kernel_slices++;
        st->kernel_bytes += bytes;
        /* each flow id with its field key: the fixed64 fields 10 bytes, the varint ones 2 + its length */
        st->kernel_flow_bytes += 10 * (ev->n_flow_ids + ev->n_terminating_flow_ids);
        for (size_t i = 0; i < ev->n_flow_ids_old; i++) st->kernel_flow_bytes += 2 + varint_len(ev->flow_ids_old[i]);
        for (size_t i = 0; i < ev->n_terminating_flow_ids_old; i++)
          st->kernel_flow_bytes += 2 + varint_len(ev->terminating_flow_ids_old[i]);
      }
      break;
    }
    case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END:
      st->ends++;
      if (t->depth == 0) {
        problem("packet %ld: END without an open slice on its track", at);
        break;
      }
      if (t->open_kernel[--t->depth]) st->kernel_bytes += bytes;
      if (dumping) dump_slice(process_of(t), t->name, t->open_name[t->depth], t->open_start[t->depth], ts);
      if (eventing)
        add_devent((devent){'s', (size_t)ti, strdup(t->open_name[t->depth] ? t->open_name[t->depth] : ""),
                            t->open_args[t->depth], t->open_start[t->depth], ts, 0});
      break;
    case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT:
      st->instants++;
      if (eventing) add_devent((devent){'i', (size_t)ti, strdup(name ? name : ""), render_args(ev), ts, ts, 0});
      break;
    case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER:
      st->counters++;
      if (eventing) add_devent((devent){'c', (size_t)ti, NULL, NULL, ts, ts, ev->has_counter_value ? ev->counter_value : 0});
      if (!t->counter) problem("packet %ld: counter value on a slice track", at);
      break;
    default: problem("packet %ld: event without a type", at);
  }
  size_t nout = ev->n_flow_ids + ev->n_flow_ids_old, nin = ev->n_terminating_flow_ids + ev->n_terminating_flow_ids_old;
  for (size_t i = 0; i < nout; i++) {
    int64_t v;
    uint64_t id = i < ev->n_flow_ids ? ev->flow_ids[i] : ev->flow_ids_old[i - ev->n_flow_ids];
    if (ovl_i64map_get(&flow_started, (int64_t)id, &v)) problem("packet %ld: flow %" PRIx64 " starts twice", at, id);
    else if (ovl_i64map_get(&flow_ended, (int64_t)id, &v) && v < ts)
      problem("packet %ld: flow %" PRIx64 " ends before its start time", at, id);
    ovl_i64map_put(&flow_started, (int64_t)id, ts);
    if (eventing) add_flow_end(&flow_out_at, id, (size_t)ti, ts, name);
    st->flows++;
  }
  for (size_t i = 0; i < nin; i++) {
    int64_t v;
    uint64_t id = i < ev->n_terminating_flow_ids ? ev->terminating_flow_ids[i]
                                                 : ev->terminating_flow_ids_old[i - ev->n_terminating_flow_ids];
    if (ovl_i64map_get(&flow_ended, (int64_t)id, &v)) problem("packet %ld: flow %" PRIx64 " terminates twice", at, id);
    else if (ovl_i64map_get(&flow_started, (int64_t)id, &v) && ts < v)
      problem("packet %ld: flow %" PRIx64 " ends before its start time", at, id);
    ovl_i64map_put(&flow_ended, (int64_t)id, ts);
    if (eventing) add_flow_end(&flow_in_at, id, (size_t)ti, ts, name);
  }
}

/* Track order as the Perfetto UI shows it. The UI honours sibling_order_rank only below a
** parent whose child_ordering is EXPLICIT and which is neither a process nor a thread track
** (TrackDescriptor.sibling_order_rank in Perfetto's track_descriptor.proto); elsewhere this
** models its fallback, ordering by name. */
static const track *sort_parent;
static int by_shown_order(const void *a, const void *b) {
  const track *x = &tracks[*(const size_t *)a], *y = &tracks[*(const size_t *)b];
  if (sort_parent && sort_parent->explicit_children && !sort_parent->is_process && !sort_parent->is_thread &&
      x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Appends the names of the tracks below `parent` in shown order (leaves only; lanes, which
** share a name, once). */
static void shown_leaves(const track *parent, char *out, size_t cap) {
  size_t *kids = malloc((ntracks + 1) * sizeof *kids), n = 0;
  for (size_t i = 0; i < ntracks; i++)
    if (tracks[i].parent == parent->uuid) kids[n++] = i;
  sort_parent = parent;
  qsort(kids, n, sizeof *kids, by_shown_order);
  for (size_t k = 0; k < n; k++) {
    const track *t = &tracks[kids[k]];
    int has_children = 0;
    for (size_t i = 0; i < ntracks && !has_children; i++) has_children = tracks[i].parent == t->uuid;
    if (has_children) {
      shown_leaves(t, out, cap);
      continue;
    }
    const char *last = strrchr(out, '|');
    if (last && strcmp(last + 2, t->name) == 0) continue;
    size_t len = strlen(out);
    snprintf(out + len, cap - len, " | %s", t->name);
  }
  free(kids);
}

/* Ordering checks, and one "track_order PROCESS | name | ..." line per process. */
static void check_ordering(void) {
  for (size_t i = 0; i < ntracks; i++) {
    const track *t = &tracks[i];
    if (!t->has_rank || !t->parent) continue;
    for (size_t j = 0; j < ntracks; j++) {
      const track *p = &tracks[j];
      if (p->uuid != t->parent) continue;
      if (p->is_process || p->is_thread)
        problem("track '%s': sibling_order_rank below a process or thread track, which Perfetto ignores", t->name);
      else if (!p->explicit_children)
        problem("track '%s': sibling_order_rank below a parent without EXPLICIT child_ordering", t->name);
    }
  }
  size_t cap = 1 << 16;
  char *line = malloc(cap);
  for (size_t i = 0; i < ntracks; i++) {
    if (!tracks[i].is_process) continue;
    line[0] = 0;
    shown_leaves(&tracks[i], line, cap);
    printf("track_order %s%s\n", tracks[i].name, line);
  }
  free(line);
}

static int check_perfetto(const char *path, long expect_kernels) {
  size_t len;
  unsigned char *buf = slurp(path, &len);
  if (!buf) {
    fprintf(stderr, "check: %s: cannot read\n", path);
    return 1;
  }
  stats st;
  memset(&st, 0, sizeof st);
  st.total_bytes = len;
  char **iid_names = NULL;   /* all names ever defined, by definition number */
  size_t nnames = 0;
  size_t pos = 0;
  while (pos < len) {
    size_t start = pos;
    if (buf[pos++] != 0x0a) {
      problem("offset %zu: not a Trace.packet field", start);
      break;
    }
    uint64_t n = 0;
    for (int shift = 0; pos < len && shift < 64; shift += 7) {
      n |= (uint64_t)(buf[pos] & 0x7f) << shift;
      if (!(buf[pos++] & 0x80)) break;
    }
    if (n > len - pos) {
      problem("offset %zu: truncated packet", start);
      break;
    }
    Perfetto__Protos__TracePacket *p = perfetto__protos__trace_packet__unpack(NULL, (size_t)n, buf + pos);
    pos += (size_t)n;
    long at = st.packets++;
    if (!p) {
      problem("packet %ld: does not decode", at);
      continue;
    }
    uint32_t seq_id = p->has_trusted_packet_sequence_id ? p->trusted_packet_sequence_id : 0;
    sequence *sq = get_seq(seq_id);
    if (p->has_sequence_flags && (p->sequence_flags & 1)) {
      ovl_i64map_free(&sq->iids);
      ovl_i64map_free(&sq->key_iids);
      sq->has_defaults = sq->has_snapshot = 0;
      sq->cleared = 1;
    }
    if (p->trace_packet_defaults) {
      sq->has_defaults = 1;
      sq->default_clock = p->trace_packet_defaults->has_timestamp_clock_id ? p->trace_packet_defaults->timestamp_clock_id : 0;
      const Perfetto__Protos__TrackEventDefaults *ted = p->trace_packet_defaults->track_event_defaults;
      sq->default_track = ted && ted->has_track_uuid ? ted->track_uuid : 0;
    }
    if (p->interned_data)
      for (size_t i = 0; i < p->interned_data->n_event_names; i++) {
        const Perfetto__Protos__EventName *e = p->interned_data->event_names[i];
        iid_names = realloc(iid_names, (nnames + 1) * sizeof *iid_names);
        iid_names[nnames] = strdup(e->name ? e->name : "");
        ovl_i64map_put(&sq->iids, (int64_t)e->iid, (int64_t)nnames++);
      }
    if (p->interned_data) define_keys(sq, p->interned_data, at);
    if (p->track_event) resolve_keys(sq, p->track_event, at, &st);
    if (p->clock_snapshot) {
      for (size_t i = 0; i < p->clock_snapshot->n_clocks; i++) {
        const Perfetto__Protos__ClockSnapshot__Clock *c = p->clock_snapshot->clocks[i];
        if (c->clock_id >= 64 && c->clock_id < 128) {
          sq->has_snapshot = 1;
          sq->clock_value = (int64_t)c->timestamp;
        }
      }
    }
    if (p->track_descriptor) {
      st.descriptors++;
      declare(p->track_descriptor, at);
    }
    if (p->track_event) check_event(p, seq_id, pos - start, at, &st, iid_names);
    perfetto__protos__trace_packet__free_unpacked(p, NULL);
  }
  for (size_t i = 0; i < ntracks; i++)
    if (tracks[i].depth) problem("a track ends with %ld open slice(s)", tracks[i].depth);
  check_ordering();
  for (size_t s = 0; flow_started.mask && s <= flow_started.mask; s++) {
    int64_t v;
    if (flow_started.keys[s] != INT64_MIN && !ovl_i64map_get(&flow_ended, flow_started.keys[s], &v))
      problem("flow %" PRIx64 " never terminates", (uint64_t)flow_started.keys[s]);
  }
  for (size_t s = 0; flow_ended.mask && s <= flow_ended.mask; s++) {
    int64_t v;
    if (flow_ended.keys[s] != INT64_MIN && !ovl_i64map_get(&flow_started, flow_ended.keys[s], &v))
      problem("flow %" PRIx64 " terminates but never starts", (uint64_t)flow_ended.keys[s]);
  }
  if (expect_kernels >= 0 && st.kernel_slices != expect_kernels)
    problem("%ld kernel slices, the trace has %ld kernels", st.kernel_slices, expect_kernels);
  printf("packets %ld\ndescriptors %ld\nslices %ld\ninstants %ld\ncounter_values %ld\nflows %ld\n", st.packets,
         st.descriptors, st.begins, st.instants, st.counters, st.flows);
  printf("kernel_slices %ld\nbytes %" PRIu64 "\n", st.kernel_slices, st.total_bytes);
  printf("annotations %ld\nannotation_names_plain %ld\n", st.annotations, st.annotation_names_plain);
  if (st.kernel_slices) {
    printf("bytes_per_kernel_slice %.2f\n", (double)st.kernel_bytes / (double)st.kernel_slices);
    printf("bytes_per_kernel_slice_without_flow_ids %.2f\n",
           (double)(st.kernel_bytes - st.kernel_flow_bytes) / (double)st.kernel_slices);
  }
  for (size_t i = 0; i < nnames; i++) free(iid_names[i]);
  free(iid_names);
  for (size_t i = 0; i < nkey_names; i++) free(key_names[i]);
  free(key_names);
  free(buf);
  return problems ? 1 : 0;
}

/* ------------------------------------------------------------------------------------ */
/* Chrome JSON: a strict validator that also counts the kernel X events                 */
/* ------------------------------------------------------------------------------------ */

typedef struct jp {
  const char *s, *end;
  int bad;
} jp;

static void ws(jp *p) {
  while (p->s < p->end && (*p->s == ' ' || *p->s == '\n' || *p->s == '\r' || *p->s == '\t')) p->s++;
}

/* Parses a string; copies up to cap-1 bytes of its raw content into out when given. */
static void jstring(jp *p, char *out, size_t cap) {
  size_t k = 0;
  if (p->s >= p->end || *p->s != '"') {
    p->bad = 1;
    return;
  }
  for (p->s++; p->s < p->end && *p->s != '"'; p->s++) {
    if ((unsigned char)*p->s < 0x20) p->bad = 1;
    if (*p->s == '\\') {
      p->s++;
      if (p->s >= p->end || !strchr("\"\\/bfnrtu", *p->s)) p->bad = 1;
    }
    if (out && k + 1 < cap) out[k++] = *p->s;
  }
  if (p->s >= p->end) p->bad = 1;
  else p->s++;
  if (out) out[k] = 0;
}

static void jnumber(jp *p) {
  const char *st = p->s;
  if (p->s < p->end && *p->s == '-') p->s++;
  while (p->s < p->end && strchr("0123456789.eE+-", *p->s)) p->s++;
  if (p->s == st) p->bad = 1;
}

/* Complete events ("X") as a reader sees them: ts and dur parsed as doubles (µs), then
** rounded to whole ns, as trace viewers do. */
typedef struct xevent {
  double pid, tid;
  int64_t start, end;
  size_t at;
  char *name;              /* --slices only */
} xevent;

/* --slices: the process and thread names of the metadata events ("M"). */
typedef struct jname {
  double pid, tid;         /* tid -1: a process name */
  char *name;
} jname;
static jname *jnames;
static size_t njnames;

static const char *jname_of(double pid, double tid) {
  for (size_t i = 0; i < njnames; i++)
    if (jnames[i].pid == pid && jnames[i].tid == tid) return jnames[i].name;
  return "";
}

static xevent *xevents;
static size_t nxevents, xevents_cap;

static double jnumber_value(jp *p) {
  char buf[64];
  size_t n = 0;
  const char *st = p->s;
  jnumber(p);
  while (st + n < p->s && n + 1 < sizeof buf) {
    buf[n] = st[n];
    n++;
  }
  buf[n] = 0;
  return strtod(buf, NULL);
}

/* An object; `event` objects have their ph and cat looked at, and X events their place
** and times. With `capture` (an event's args, --slices), the raw text of its "name" string
** goes there (NAME_CAP bytes at most). */
#define NAME_CAP 4096
static void jvalue(jp *p, int depth, int events, long *kernels);
static void jobject(jp *p, int depth, int event, int events_key_seen, long *kernels, char *capture) {
  char ph[8] = "", cat[16] = "", name[NAME_CAP] = "", arg_name[NAME_CAP] = "";
  double pid = 0, tid = -1, ts = 0, dur = -1;
  p->s++;
  ws(p);
  if (p->s < p->end && *p->s == '}') {
    p->s++;
    return;
  }
  while (!p->bad) {
    char key[32];
    ws(p);
    jstring(p, key, sizeof key);
    ws(p);
    if (p->s >= p->end || *p->s != ':') {
      p->bad = 1;
      return;
    }
    p->s++;
    ws(p);
    if (capture && strcmp(key, "name") == 0 && p->s < p->end && *p->s == '"') jstring(p, capture, NAME_CAP);
    else if (event && strcmp(key, "ph") == 0 && p->s < p->end && *p->s == '"') jstring(p, ph, sizeof ph);
    else if (event && strcmp(key, "cat") == 0 && p->s < p->end && *p->s == '"') jstring(p, cat, sizeof cat);
    else if (event && dumping && strcmp(key, "name") == 0 && p->s < p->end && *p->s == '"')
      jstring(p, name, sizeof name);
    else if (event && dumping && strcmp(key, "args") == 0 && p->s < p->end && *p->s == '{')
      jobject(p, depth + 1, 0, 1, kernels, arg_name);
    else if (event && p->s < p->end && (*p->s == '-' || (*p->s >= '0' && *p->s <= '9')) &&
             (!strcmp(key, "pid") || !strcmp(key, "tid") || !strcmp(key, "ts") || !strcmp(key, "dur"))) {
      double v = jnumber_value(p);
      if (!strcmp(key, "pid")) pid = v;
      else if (!strcmp(key, "tid")) tid = v;
      else if (!strcmp(key, "ts")) ts = v;
      else dur = v;
    }
    else jvalue(p, depth + 1, !event && events_key_seen == 0 && depth == 0 && strcmp(key, "traceEvents") == 0, kernels);
    ws(p);
    if (p->s < p->end && *p->s == ',') {
      p->s++;
      continue;
    }
    if (p->s < p->end && *p->s == '}') {
      p->s++;
      break;
    }
    p->bad = 1;
  }
  if (event && strcmp(ph, "X") == 0 && (strcmp(cat, "kernel") == 0 || strcmp(cat, "nccl") == 0)) (*kernels)++;
  if (event && strcmp(ph, "X") == 0 && dur >= 0) {
    if (nxevents == xevents_cap) xevents = realloc(xevents, (xevents_cap = xevents_cap ? 2 * xevents_cap : 1024) * sizeof *xevents);
    int64_t start = llround(ts * 1000.0);
    xevents[nxevents] = (xevent){pid, tid, start, start + llround(dur * 1000.0), nxevents, dumping ? strdup(name) : NULL};
    nxevents++;
  }
  if (event && dumping && strcmp(ph, "M") == 0 && (!strcmp(name, "process_name") || !strcmp(name, "thread_name"))) {
    jnames = realloc(jnames, (njnames + 1) * sizeof *jnames);
    jnames[njnames++] = (jname){pid, strcmp(name, "process_name") == 0 ? -1 : tid, strdup(arg_name)};
  }
}

static int cmp_xevent(const void *a, const void *b) {
  const xevent *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->end != y->end) return x->end > y->end ? -1 : 1;  /* the enclosing slice first */
  return x->at < y->at ? -1 : 1;
}

/* On every (pid, tid) the X events, as read, nest: each lies inside every earlier one still
** open at its start, or starts after it ended. Returns the number that do not. */
static long chrome_overlaps(void) {
  qsort(xevents, nxevents, sizeof *xevents, cmp_xevent);
  int64_t *open_end = malloc((nxevents + 1) * sizeof *open_end);
  size_t depth = 0;
  long bad = 0;
  for (size_t i = 0; i < nxevents; i++) {
    const xevent *e = &xevents[i];
    if (i && (e->pid != xevents[i - 1].pid || e->tid != xevents[i - 1].tid)) depth = 0;
    while (depth && open_end[depth - 1] <= e->start) depth--;
    if (depth && e->end > open_end[depth - 1]) {
      if (bad++ < 5)
        problem("X events overlap on pid %.0f tid %.0f: [%" PRId64 ", %" PRId64 ") ns crosses the end %" PRId64 " ns of an enclosing one",
                e->pid, e->tid, e->start, e->end, open_end[depth - 1]);
      continue;
    }
    open_end[depth++] = e->end;
  }
  free(open_end);
  return bad;
}

static void jvalue(jp *p, int depth, int events, long *kernels) {
  ws(p);
  if (depth > 64 || p->s >= p->end) {
    p->bad = 1;
    return;
  }
  char c = *p->s;
  if (c == '{') {
    jobject(p, depth, 0, 0, kernels, NULL);
  } else if (c == '[') {
    p->s++;
    ws(p);
    if (p->s < p->end && *p->s == ']') {
      p->s++;
      return;
    }
    while (!p->bad) {
      ws(p);
      if (events && p->s < p->end && *p->s == '{') jobject(p, depth + 1, 1, 0, kernels, NULL);
      else jvalue(p, depth + 1, 0, kernels);
      ws(p);
      if (p->s < p->end && *p->s == ',') p->s++;
      else if (p->s < p->end && *p->s == ']') {
        p->s++;
        return;
      } else p->bad = 1;
    }
  } else if (c == '"') {
    jstring(p, NULL, 0);
  } else if (!strncmp(p->s, "true", 4) || !strncmp(p->s, "null", 4)) {
    p->s += 4;
  } else if (!strncmp(p->s, "false", 5)) {
    p->s += 5;
  } else {
    jnumber(p);
  }
}

static int check_chrome(const char *path, long expect_kernels) {
  size_t len;
  unsigned char *buf = slurp(path, &len);
  if (!buf) {
    fprintf(stderr, "check: %s: cannot read\n", path);
    return 1;
  }
  jp p = {(const char *)buf, (const char *)buf + len, 0};
  long kernels = 0;
  ws(&p);
  if (p.s < p.end && *p.s == '{') jobject(&p, 0, 0, 0, &kernels, NULL);
  else p.bad = 1;
  ws(&p);
  if (p.bad || p.s != p.end) problem("%s: not valid JSON (near byte %ld)", path, (long)(p.s - (const char *)buf));
  if (!strstr((const char *)buf, "\"traceEvents\"")) problem("%s: no traceEvents", path);
  if (expect_kernels >= 0 && kernels != expect_kernels)
    problem("%ld kernel X events, the trace has %ld kernels", kernels, expect_kernels);
  long overlaps = chrome_overlaps();
  for (size_t i = 0; dumping && i < nxevents; i++) {
    const xevent *e = &xevents[i];
    dump_slice(jname_of(e->pid, -1), jname_of(e->pid, e->tid), e->name, e->start, e->end);
    free(e->name);
  }
  printf("json_bytes %zu\nkernel_x_events %ld\nx_events %zu\noverlapping_x_events %ld\n", len, kernels, nxevents,
         overlaps);
  free(xevents);
  free(buf);
  return problems ? 1 : 0;
}

static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "process | track#rank" of a track. */
static void track_key(size_t ti, char *out, size_t cap) {
  const track *t = &tracks[ti];
  snprintf(out, cap, "%s | %s#%d", process_of(t), t->name, t->has_rank ? t->rank : -1);
}

/* --events: the lines, sorted, with times after the earliest slice, instant or counter. */
static int write_events(const char *path) {
  FILE *f = open_output(path);
  if (!f) return 1;
  int64_t t0 = INT64_MAX;
  for (size_t i = 0; i < ndevents; i++)
    if (devents[i].kind != 't' && devents[i].start < t0) t0 = devents[i].start;
  size_t nlines = 0;
  char **lines = malloc((ndevents + nflow_ends + 1) * sizeof *lines);
  char key[1024], key2[1024], line[8192];
  for (size_t i = 0; i < ndevents; i++) {
    const devent *e = &devents[i];
    track_key(e->track, key, sizeof key);
    if (e->kind == 't') {
      const track *t = &tracks[e->track];
      snprintf(line, sizeof line, "track | %s | %s | rank %d | kind %" PRId64, process_of(t), t->name,
               t->has_rank ? t->rank : -1, e->value);
    } else if (e->kind == 'c') {
      snprintf(line, sizeof line, "counter | %s | %" PRId64 " | %" PRId64, key, e->start - t0, e->value);
    } else {
      snprintf(line, sizeof line, "%s | %s | %s | %" PRId64 " | %" PRId64 " | %s", e->kind == 's' ? "slice" : "instant",
               key, e->name, e->start - t0, e->end - t0, e->args ? e->args : "");
    }
    lines[nlines++] = strdup(line);
    free(e->name);
    free(e->args);
  }
  for (size_t s = 0; flow_out_at.mask && s <= flow_out_at.mask; s++) {
    int64_t a, b;
    if (flow_out_at.keys[s] == INT64_MIN) continue;
    a = flow_out_at.vals[s];
    if (!ovl_i64map_get(&flow_in_at, flow_out_at.keys[s], &b)) continue;  /* a problem already */
    track_key(flow_ends[a].track, key, sizeof key);
    track_key(flow_ends[b].track, key2, sizeof key2);
    snprintf(line, sizeof line, "flow | %s | %s | %" PRId64 " -> %s | %s | %" PRId64, key, flow_ends[a].name,
             flow_ends[a].ts - t0, key2, flow_ends[b].name, flow_ends[b].ts - t0);
    lines[nlines++] = strdup(line);
  }
  qsort(lines, nlines, sizeof *lines, cmp_line);
  for (size_t i = 0; i < nlines; i++) {
    fprintf(f, "%s\n", lines[i]);
    free(lines[i]);
  }
  free(lines);
  return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *path = NULL, *slices = NULL, *events = NULL;
  int chrome = 0;
  long expect = -1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--chrome") == 0) chrome = 1;
    else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) expect = atol(argv[++i]);
    else if (strcmp(argv[i], "--slices") == 0 && i + 1 < argc) slices = argv[++i];
    else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc) events = argv[++i];
    else if (!path) path = argv[i];
    else path = NULL, i = argc;
  }
  if (!path) {
    fprintf(stderr, "usage: ovl_pftrace_check [--chrome] FILE [--kernels N] [--slices OUT] [--events OUT]\n");
    return 2;
  }
  dumping = slices != NULL;
  eventing = events != NULL && !chrome;
  int rc = chrome ? check_chrome(path, expect) : check_perfetto(path, expect);
  if (slices && write_dumps(slices)) rc = 1;
  if (eventing && write_events(events)) rc = 1;
  if (problems > 20) fprintf(stderr, "check: ... %ld problems in all\n", problems);
  return rc;
}
