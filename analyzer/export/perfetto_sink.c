/*
** Perfetto protobuf sink (see export_sink.h for what it receives).
**
** Encoding, chosen for size (a kernel slice costs 30 bytes on a synthetic trace, 40 to 165
** on real ones, whose long names are defined once per sequence; docs/export.md):
**   - every slice or counter track (each lane) is a packet sequence of its own, whose first
**     packet sets CLEARED|NEEDS_INCREMENTAL_STATE and carries the sequence defaults (the
**     track, and an incremental clock) and a ClockSnapshot tying that clock to BOOTTIME;
**     later packets set NEEDS_INCREMENTAL_STATE and carry no track uuid, and their
**     timestamp is the delta from the sequence's previous packet (a few bytes);
**   - event names are interned per sequence: a name's first use on a sequence carries its
**     definition (iid, name) in interned_data of the same packet;
**   - the layout delivers each track's slices in start order, properly nested, so a slice's
**     END is written when the next slice on the track starts after it, or at close_track;
**     at equal timestamps the END goes first.
** Track descriptors (root, processes, tracks) are on sequence 1, each written before the
** track is used. Perfetto ignores sibling_order_rank on the children of a process (or
** thread) track, whatever its child_ordering (TrackDescriptor.sibling_order_rank in
** track_descriptor.proto), so a process's tracks hang below one plain track of its own,
** whose EXPLICIT child_ordering the UI honours: "steps" first, streams in numeric order. Packets are packed with protobuf-c and written as Trace.packet fields.
*/
#include "export_sink.h"
#include "out_stream.h"

#include "perfetto_subset.pb-c.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIPTOR_SEQUENCE 1
#define INCREMENTAL_CLOCK 64   /* first sequence-scoped clock id */
#define BOOTTIME_CLOCK 6
#define MAX_ARGS 16
#define SEQ_CLEARED PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED
#define SEQ_NEEDS PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE

typedef struct pf_track {
  uint64_t uuid;
  uint32_t seq;            /* 0 until the first event */
  int closed;
  int64_t last_ts;         /* value of the sequence's incremental clock */
  int64_t *ends;           /* open slices' ends, outermost first */
  size_t nends, ends_cap;
  uint64_t *defined;       /* bitmap of name iids defined on the sequence */
  size_t defined_words;
} pf_track;

typedef struct pf_sink {
  ovl_out out;
  pf_track *tracks;
  size_t ntracks, tracks_cap;
  uint64_t *parent_uuid;    /* per process: the plain track its tracks hang below */
  size_t nprocesses;
  uint64_t next_uuid;
  uint32_t next_seq;
} pf_sink;

static int oom(ovl_err *err) { return ovl_oom(err, "Perfetto export"); }

static size_t put_varint(uint8_t *dst, uint64_t v) {
  size_t k = 0;
  for (; v >= 0x80; v >>= 7) dst[k++] = (uint8_t)(v | 0x80);
  dst[k++] = (uint8_t)v;
  return k;
}

/* Writes one Trace.packet field: tag, varint length, the packed TracePacket. `bound`, when
** not 0, is an upper bound of the packed size below 2^14: the packet is then packed once,
** behind room for a two-byte length, and moved up when one byte is enough (cheaper than
** protobuf-c's separate size pass on the hot path). */
static int write_packet(pf_sink *s, const Perfetto__Protos__TracePacket *p, size_t bound, ovl_err *err) {
  if (bound && bound < (1u << 14)) {
    uint8_t *dst = (uint8_t *)ovl_out_reserve(&s->out, bound + 3);
    if (!dst) return oom(err);
    size_t n = protobuf_c_message_pack(&p->base, dst + 3);
    dst[0] = 0x0a;  /* field 1, length-delimited */
    size_t k = 1 + put_varint(dst + 1, n);
    if (k != 3) memmove(dst + k, dst + 3, n);
    ovl_out_commit(&s->out, k + n);
    return OVL_OK;
  }
  size_t n = protobuf_c_message_get_packed_size(&p->base);
  uint8_t *dst = (uint8_t *)ovl_out_reserve(&s->out, n + 11);
  if (!dst) return oom(err);
  dst[0] = 0x0a;
  size_t k = 1 + put_varint(dst + 1, n);
  k += protobuf_c_message_pack(&p->base, dst + k);
  ovl_out_commit(&s->out, k);
  return OVL_OK;
}

static int write_descriptor(pf_sink *s, Perfetto__Protos__TrackDescriptor *d, ovl_err *err) {
  Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
  p.has_trusted_packet_sequence_id = 1;
  p.trusted_packet_sequence_id = DESCRIPTOR_SEQUENCE;
  p.track_descriptor = d;
  return write_packet(s, &p, 0, err);
}

static int pf_process(void *self, const ovl_xprocess *proc, ovl_err *err) {
  pf_sink *s = self;
  if (proc->index != s->nprocesses) return ovl_fail(err, OVL_EINTERNAL, "export: processes out of order");
  uint64_t *u = realloc(s->parent_uuid, (s->nprocesses + 1) * sizeof *u);
  if (!u) return oom(err);
  s->parent_uuid = u;
  uint64_t uuid = s->next_uuid++, parent = s->next_uuid++;
  s->parent_uuid[s->nprocesses++] = parent;
  Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
  pd.has_pid = 1;
  pd.pid = (int32_t)proc->index + 1;  /* synthetic and unique: real pids repeat across hosts; 0 is the idle task */
  pd.process_name = (char *)proc->name;
  Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  d.has_uuid = 1;
  d.uuid = uuid;
  d.process = &pd;
  d.has_sibling_order_rank = 1;
  d.sibling_order_rank = (int32_t)proc->index;
  int rc = write_descriptor(s, &d, err);
  if (rc) return rc;
  Perfetto__Protos__TrackDescriptor g = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  g.has_uuid = g.has_parent_uuid = g.has_child_ordering = 1;
  g.uuid = parent;
  g.parent_uuid = uuid;
  g.name = "timeline";
  g.child_ordering = PERFETTO__PROTOS__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
  return write_descriptor(s, &g, err);
}

static int pf_track_decl(void *self, const ovl_xtrack *t, ovl_err *err) {
  pf_sink *s = self;
  if (t->id != s->ntracks) return ovl_fail(err, OVL_EINTERNAL, "export: tracks out of order");
  if (s->ntracks == s->tracks_cap) {
    size_t cap = s->tracks_cap ? s->tracks_cap * 2 : 64;
    pf_track *grown = realloc(s->tracks, cap * sizeof *grown);
    if (!grown) return oom(err);
    s->tracks = grown;
    s->tracks_cap = cap;
  }
  pf_track *pt = &s->tracks[s->ntracks++];
  memset(pt, 0, sizeof *pt);
  pt->uuid = s->next_uuid++;
  Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
  d.has_uuid = 1;
  d.uuid = pt->uuid;
  d.name = (char *)t->name;
  if (t->process != OVL_NO_PROCESS) {
    if (t->process >= s->nprocesses) return ovl_fail(err, OVL_EINTERNAL, "export: track of an undeclared process");
    d.has_parent_uuid = 1;
    d.parent_uuid = s->parent_uuid[t->process];
  }
  d.has_sibling_order_rank = 1;
  d.sibling_order_rank = t->order;
  if (t->kind != OVL_XTRACK_SLICES) {
    cd.has_unit = 1;
    cd.unit = t->kind == OVL_XTRACK_COUNTER_BYTES ? PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES
                                                  : PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT;
    d.counter = &cd;
  }
  return write_descriptor(s, &d, err);
}

static int get_track(pf_sink *s, uint32_t id, pf_track **out, ovl_err *err) {
  if (id >= s->ntracks || s->tracks[id].closed) return ovl_fail(err, OVL_EINTERNAL, "export: event on a closed track");
  *out = &s->tracks[id];
  return OVL_OK;
}

/* First packet of a track's sequence: state cleared, defaults, clock snapshot at t0. */
static int start_sequence(pf_sink *s, pf_track *t, int64_t t0, ovl_err *err) {
  t->seq = s->next_seq++;
  t->last_ts = t0;
  Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
  ted.has_track_uuid = 1;
  ted.track_uuid = t->uuid;
  Perfetto__Protos__TracePacketDefaults defaults = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
  defaults.has_timestamp_clock_id = 1;
  defaults.timestamp_clock_id = INCREMENTAL_CLOCK;
  defaults.track_event_defaults = &ted;
  Perfetto__Protos__ClockSnapshot__Clock boot = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
  boot.has_clock_id = boot.has_timestamp = 1;
  boot.clock_id = BOOTTIME_CLOCK;
  boot.timestamp = (uint64_t)t0;
  Perfetto__Protos__ClockSnapshot__Clock inc = boot;
  inc.clock_id = INCREMENTAL_CLOCK;
  inc.has_is_incremental = 1;
  inc.is_incremental = 1;
  Perfetto__Protos__ClockSnapshot__Clock *clocks[2] = {&boot, &inc};
  Perfetto__Protos__ClockSnapshot snap = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
  snap.n_clocks = 2;
  snap.clocks = clocks;
  Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
  p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
  p.trusted_packet_sequence_id = t->seq;
  p.sequence_flags = SEQ_CLEARED | SEQ_NEEDS;
  p.trace_packet_defaults = &defaults;
  p.clock_snapshot = &snap;
  return write_packet(s, &p, 0, err);
}

/* Marks iid defined on the track's sequence; returns 1 if it already was, -1 on OOM. */
static int define_iid(pf_track *t, uint32_t iid) {
  size_t w = iid >> 6;
  if (w >= t->defined_words) {
    size_t n = t->defined_words ? t->defined_words : 4;
    while (n <= w) n *= 2;
    uint64_t *d = realloc(t->defined, n * sizeof *d);
    if (!d) return -1;
    memset(d + t->defined_words, 0, (n - t->defined_words) * sizeof *d);
    t->defined = d;
    t->defined_words = n;
  }
  uint64_t bit = (uint64_t)1 << (iid & 63);
  if (t->defined[w] & bit) return 1;
  t->defined[w] |= bit;
  return 0;
}

/* One TrackEvent packet on the track's sequence. sl: name, annotations and flows (NULL for
** END and counters). */
static int write_event(pf_sink *s, pf_track *t, int64_t ts, Perfetto__Protos__TrackEvent__Type type,
                       const ovl_xslice *sl, const int64_t *counter, ovl_err *err) {
  if (!t->seq) {
    int rc = start_sequence(s, t, ts, err);
    if (rc) return rc;
  }
  if (ts < t->last_ts) return ovl_fail(err, OVL_EINTERNAL, "export: events out of time order on a track");
  Perfetto__Protos__TrackEvent ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;
  ev.has_type = 1;
  ev.type = type;
  Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
  Perfetto__Protos__EventName name = PERFETTO__PROTOS__EVENT_NAME__INIT;
  Perfetto__Protos__EventName *names[1] = {&name};
  Perfetto__Protos__DebugAnnotation ann[MAX_ARGS], *annp[MAX_ARGS];
  Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
  if (sl) {
    ev.has_name_iid = 1;
    ev.name_iid = sl->name_iid;
    int defined = define_iid(t, sl->name_iid);
    if (defined < 0) return oom(err);
    if (!defined) {
      name.has_iid = 1;
      name.iid = sl->name_iid;
      name.name = (char *)sl->name;
      interned.n_event_names = 1;
      interned.event_names = names;
      p.interned_data = &interned;
    }
    size_t na = 0;
    for (size_t i = 0; i < sl->nargs && na < MAX_ARGS; i++) {
      Perfetto__Protos__DebugAnnotation a = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
      const ovl_xarg *x = &sl->args[i];
      if (x->type == OVL_XARG_DOUBLE && !isfinite(x->d)) continue;  /* unknown: left out */
      a.name = (char *)x->key;
      if (x->type == OVL_XARG_INT) {
        a.has_int_value = 1;
        a.int_value = x->i;
      } else if (x->type == OVL_XARG_DOUBLE) {
        a.has_double_value = 1;
        a.double_value = x->d;
      } else {
        a.string_value = (char *)(x->s ? x->s : "");
      }
      ann[na] = a;
      annp[na] = &ann[na];
      na++;
    }
    ev.n_debug_annotations = na;
    ev.debug_annotations = na ? annp : NULL;
    ev.n_flow_ids = sl->nflows_out;
    ev.flow_ids = (uint64_t *)sl->flows_out;
    ev.n_terminating_flow_ids = sl->nflows_in;
    ev.terminating_flow_ids = (uint64_t *)sl->flows_in;
  }
  if (counter) {
    ev.has_counter_value = 1;
    ev.counter_value = *counter;
  }
  p.has_timestamp = p.has_trusted_packet_sequence_id = p.has_sequence_flags = 1;
  p.timestamp = (uint64_t)(ts - t->last_ts);
  p.trusted_packet_sequence_id = t->seq;
  p.sequence_flags = SEQ_NEEDS;
  p.track_event = &ev;
  t->last_ts = ts;
  /* Bound of the common shape (no definition, no annotations): fixed fields and flow ids. */
  size_t bound = p.interned_data || ev.n_debug_annotations ? 0 : 64 + 10 * (ev.n_flow_ids + ev.n_terminating_flow_ids);
  return write_packet(s, &p, bound, err);
}

/* Ends the open slices that end at or before t (innermost first). */
static int end_until(pf_sink *s, pf_track *t, int64_t until, ovl_err *err) {
  while (t->nends && t->ends[t->nends - 1] <= until) {
    int rc = write_event(s, t, t->ends[--t->nends], PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, NULL, err);
    if (rc) return rc;
  }
  return OVL_OK;
}

static int pf_slice(void *self, uint32_t track, const ovl_xslice *sl, ovl_err *err) {
  pf_sink *s = self;
  pf_track *t = NULL;
  int rc = get_track(s, track, &t, err);
  if (!rc) rc = end_until(s, t, sl->start, err);
  if (rc) return rc;
  if (t->nends && sl->end > t->ends[t->nends - 1]) return ovl_fail(err, OVL_EINTERNAL, "export: slices do not nest");
  if (t->nends == t->ends_cap) {
    size_t cap = t->ends_cap ? t->ends_cap * 2 : 4;
    int64_t *e = realloc(t->ends, cap * sizeof *e);
    if (!e) return oom(err);
    t->ends = e;
    t->ends_cap = cap;
  }
  rc = write_event(s, t, sl->start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, sl, NULL, err);
  if (!rc) t->ends[t->nends++] = sl->end;
  return rc;
}

static int pf_instant(void *self, uint32_t track, const ovl_xslice *sl, ovl_err *err) {
  pf_sink *s = self;
  pf_track *t = NULL;
  int rc = get_track(s, track, &t, err);
  if (!rc) rc = end_until(s, t, sl->start, err);
  if (!rc) rc = write_event(s, t, sl->start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, sl, NULL, err);
  return rc;
}

static int pf_counter(void *self, uint32_t track, int64_t ts, int64_t value, ovl_err *err) {
  pf_sink *s = self;
  pf_track *t = NULL;
  int rc = get_track(s, track, &t, err);
  if (!rc) rc = write_event(s, t, ts, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER, NULL, &value, err);
  return rc;
}

static int pf_close_track(void *self, uint32_t track, ovl_err *err) {
  pf_sink *s = self;
  pf_track *t = NULL;
  int rc = get_track(s, track, &t, err);
  if (!rc) rc = end_until(s, t, INT64_MAX, err);
  if (rc) return rc;
  free(t->ends);
  free(t->defined);
  t->ends = NULL;
  t->defined = NULL;
  t->nends = t->ends_cap = t->defined_words = 0;
  t->closed = 1;
  return OVL_OK;
}

static void pf_free(pf_sink *s) {
  for (size_t i = 0; i < s->ntracks; i++) {
    free(s->tracks[i].ends);
    free(s->tracks[i].defined);
  }
  free(s->tracks);
  free(s->parent_uuid);
  free(s);
}

static int pf_finish(void *self, ovl_err *err) {
  pf_sink *s = self;
  int rc = OVL_OK;
  for (uint32_t i = 0; !rc && i < s->ntracks; i++)
    if (!s->tracks[i].closed) rc = pf_close_track(s, i, err);
  if (rc) ovl_out_discard(&s->out);
  else rc = ovl_out_close(&s->out, err);
  pf_free(s);
  return rc;
}

static void pf_destroy(void *self) {
  pf_sink *s = self;
  ovl_out_discard(&s->out);
  pf_free(s);
}

int ovl_perfetto_sink_open(const char *path, ovl_export_sink *sink, ovl_err *err) {
  pf_sink *s = calloc(1, sizeof *s);
  if (!s) return oom(err);
  int rc = ovl_out_open(&s->out, path, err);
  if (rc) {
    free(s);
    return rc;
  }
  s->next_uuid = 1;
  s->next_seq = DESCRIPTOR_SEQUENCE + 1;
  /* The root descriptor (uuid 0) makes the UI honour the processes' sibling_order_rank. */
  Perfetto__Protos__TrackDescriptor root = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
  root.has_uuid = root.has_process_ordering = 1;
  root.uuid = 0;
  root.process_ordering = PERFETTO__PROTOS__TRACK_DESCRIPTOR__PROCESS_ORDERING__PROCESS_ORDERING_EXPLICIT;
  rc = write_descriptor(s, &root, err);
  if (rc) {
    pf_destroy(s);
    return rc;
  }
  *sink = (ovl_export_sink){s, pf_process, pf_track_decl, pf_slice, pf_instant, pf_counter, pf_close_track, pf_finish,
                            pf_destroy};
  return OVL_OK;
}
