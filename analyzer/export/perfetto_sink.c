/*
** Perfetto protobuf sink (see export_sink.h for what it receives).
**
** Encoding, chosen for size and speed (docs/export.md has the figures):
**   - every slice or counter track (each lane) is a packet sequence of its own, whose first
**     packet sets CLEARED|NEEDS_INCREMENTAL_STATE and carries the sequence defaults (the
**     track, and an incremental clock) and a ClockSnapshot tying that clock to BOOTTIME;
**     later packets carry no track uuid and no sequence flags (Perfetto reads them against
**     the sequence's state either way), and their timestamp is the delta from the
**     sequence's previous packet (a few bytes);
**   - event names are interned per sequence: a name's first use on a sequence carries its
**     definition (iid, name) in interned_data of the same packet; so are annotation names
**     (debug_annotation_names), from one fixed list (KNOWN_KEYS) so that an iid means the
**     same name on every sequence; a key not listed is written as a name;
**   - flow ids are varints (TrackEvent.flow_ids_old and terminating_flow_ids_old, which
**     Perfetto still reads; the layout keeps the ids small): 3 to 6 bytes where the
**     fixed64 fields take 10. Repeated fields are written unpacked, as Perfetto reads them;
**   - the layout delivers each track's slices in start order, properly nested, so a slice's
**     END is written when the next slice on the track starts after it, or at close_track;
**     at equal timestamps the END goes first.
** Track descriptors (root, processes, tracks) are on sequence 1, each written before the
** track is used. Perfetto ignores sibling_order_rank on the children of a process (or
** thread) track, whatever its child_ordering (TrackDescriptor.sibling_order_rank in
** track_descriptor.proto), so a process's tracks hang below one plain track of its own,
** whose EXPLICIT child_ordering the UI honours: "steps" first, streams in numeric order.
** Descriptors and first packets are packed with protobuf-c; events, two or three per
** slice, are packed by hand into the output buffer (write_event, write_end, write_counter).
*/
#include "export_sink.h"
#include "base/vec.h"
#include "out_stream.h"

#include "perfetto_subset.pb-c.h"

#include <assert.h>
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
  uint8_t seq_bytes[8];    /* seq as a varint (at most 5 bytes), for the packets' heads */
  size_t seq_len;
  int closed;
  int64_t last_ts;         /* value of the sequence's incremental clock */
  int64_t *ends;           /* open slices' ends, outermost first */
  size_t nends, ends_cap;
  uint64_t *defined;       /* bitmap of name iids defined on the sequence */
  size_t defined_words;
  uint64_t keys_defined;   /* bit k: annotation name iid k (KNOWN_KEYS) defined on the sequence */
} pf_track;

/* Annotation keys by address (ovl_xarg.key lives as long as the sink), for their iids. */
#define KEY_SLOTS 128
typedef struct pf_key {
  const char *key;
  uint8_t iid;             /* 0: not in KNOWN_KEYS */
} pf_key;

typedef struct pf_sink {
  ovl_out out;
  pf_track *tracks;
  size_t ntracks, tracks_cap;
  uint64_t *parent_uuid;    /* per process: the plain track its tracks hang below */
  size_t nprocesses;
  uint64_t next_uuid;
  uint32_t next_seq;
  uint32_t step;            /* uuids and sequence ids go by 1, or by 2 while a child sink draws */
  ovl_out_queue *queue;     /* while a child sink draws: its chunks */
  pf_key keys[KEY_SLOTS];   /* open addressing by address */
} pf_sink;

static int oom(ovl_err *err) { return ovl_oom(err, "Perfetto export"); }

static size_t put_varint(uint8_t *dst, uint64_t v) {
  size_t k = 0;
  for (; v >= 0x80; v >>= 7) dst[k++] = (uint8_t)(v | 0x80);
  dst[k++] = (uint8_t)v;
  return k;
}

/* Writes one Trace.packet field packed by protobuf-c: descriptors and the first packet of
** each sequence (the events are packed by hand below). */
static int write_packet(pf_sink *s, const Perfetto__Protos__TracePacket *p, ovl_err *err) {
  size_t n = protobuf_c_message_get_packed_size(&p->base);
  uint8_t *dst = (uint8_t *)ovl_out_reserve(&s->out, n + 11);
  if (!dst) return oom(err);
  dst[0] = 0x0a;  /* Trace.packet = 1, bytes */
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
  return write_packet(s, &p, err);
}

static int pf_process(void *self, const ovl_xprocess *proc, ovl_err *err) {
  pf_sink *s = self;
  if (proc->index != s->nprocesses) return ovl_fail(err, OVL_EINTERNAL, "export: processes out of order");
  uint64_t *u = realloc(s->parent_uuid, (s->nprocesses + 1) * sizeof *u);
  if (!u) return oom(err);
  s->parent_uuid = u;
  uint64_t uuid = s->next_uuid, parent = s->next_uuid + s->step;
  s->next_uuid += 2 * s->step;
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
  pt->uuid = s->next_uuid;
  s->next_uuid += s->step;
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
  t->seq = s->next_seq;
  s->next_seq += s->step;
  t->seq_len = put_varint(t->seq_bytes, t->seq);
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
  return write_packet(s, &p, err);
}

/* ---- TrackEvent packets, packed by hand (the hot path: two or three per slice) ----
**
** Each packet's size is known before it is written (varint lengths are counted, strings
** measured once), so it is written once, in place, with minimal length prefixes. Slice ends
** and counter values, two thirds of the packets, have fixed shapes and paths of their own. */

/* Field keys (field number << 3 | wire type), as varints. */
#define K_TIMESTAMP 0x40u         /* TracePacket.timestamp = 8, varint */
#define K_SEQUENCE_ID 0x50u       /* TracePacket.trusted_packet_sequence_id = 10, varint */
#define K_TRACK_EVENT 0x5au       /* TracePacket.track_event = 11, bytes */
#define K_INTERNED 0x62u          /* TracePacket.interned_data = 12, bytes */
#define K_EVENT_NAMES 0x12u       /* InternedData.event_names = 2, bytes */
#define K_IID 0x08u               /* EventName.iid = 1, varint */
#define K_NAME 0x12u              /* EventName.name = 2, bytes */
#define K_ANNOTATION 0x22u        /* TrackEvent.debug_annotations = 4, bytes */
#define K_TYPE 0x48u              /* TrackEvent.type = 9, varint */
#define K_NAME_IID 0x50u          /* TrackEvent.name_iid = 10, varint */
#define K_COUNTER_VALUE 0xf0u     /* TrackEvent.counter_value = 30, varint (two bytes: 0xf0 0x01) */
#define K_FLOW_OUT 0x120u         /* TrackEvent.flow_ids_old = 36, varint (two bytes) */
#define K_FLOW_IN 0x150u          /* TrackEvent.terminating_flow_ids_old = 42, varint (two bytes) */
#define K_ARG_INT 0x20u           /* DebugAnnotation.int_value = 4, varint */
#define K_ARG_DOUBLE 0x29u        /* DebugAnnotation.double_value = 5, fixed64 */
#define K_ARG_STRING 0x32u        /* DebugAnnotation.string_value = 6, bytes */
#define K_ARG_NAME 0x52u          /* DebugAnnotation.name = 10, bytes */
#define K_ARG_NAME_IID 0x08u      /* DebugAnnotation.name_iid = 1, varint */
#define K_ARG_NAMES 0x1au         /* InternedData.debug_annotation_names = 3, bytes */
#define HEAD_MAX (1 + 10 + 1 + 10 + 1 + 5)  /* Trace.packet key and length, timestamp, sequence id */

/* Bytes of v as a varint: 7 bits a byte (bits * 9 / 64 rounds bits / 7 up, for 1..64 bits). */
static inline size_t varint_len(uint64_t v) {
  size_t bits = 64 - (size_t)__builtin_clzll(v | 1);
  return (bits * 9 + 64) >> 6;
}

static inline uint8_t *put_v(uint8_t *d, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *d++ = (uint8_t)(v | 0x80);
  *d++ = (uint8_t)v;
  return d;
}

/* A length-delimited field's size: key (one byte), length, content. */
static inline size_t bytes_field_len(size_t n) { return 1 + varint_len(n) + n; }

static inline uint8_t *put_bytes(uint8_t *d, uint8_t key, const void *p, size_t n) {
  *d++ = key;
  d = put_v(d, n);
  memcpy(d, p, n);
  return d + n;
}

/* Checks the event's time against the track's sequence (started by its first event) and
** returns the timestamp's delta on the sequence's incremental clock. */
static inline int event_time(pf_sink *s, pf_track *t, int64_t ts, uint64_t *delta, ovl_err *err) {
  if (!t->seq) {
    int rc = start_sequence(s, t, ts, err);
    if (rc) return rc;
  }
  if (ts < t->last_ts) return ovl_fail(err, OVL_EINTERNAL, "export: events out of time order on a track");
  *delta = (uint64_t)(ts - t->last_ts);
  return OVL_OK;
}

/* The fields every event packet starts with; `packet` is the size of the packet's content. */
static inline uint8_t *put_head(uint8_t *d, const pf_track *t, size_t packet, uint64_t delta) {
  *d++ = 0x0a;  /* Trace.packet = 1, bytes */
  d = put_v(d, packet);
  *d++ = K_TIMESTAMP;
  d = put_v(d, delta);
  *d++ = K_SEQUENCE_ID;
  memcpy(d, t->seq_bytes, sizeof t->seq_bytes);  /* a fixed-size copy; the room is reserved */
  return d + t->seq_len;
}

/* The room to reserve for a packet of `content` bytes after its head (the head's sequence id
** is copied as a whole seq_bytes, hence the margin). */
#define PACKET_ROOM(content) (HEAD_MAX + (content) + sizeof(((pf_track *)0)->seq_bytes))

/* TYPE_SLICE_END: no name, no annotation. */
static int write_end(pf_sink *s, pf_track *t, int64_t ts, ovl_err *err) {
  uint64_t delta = 0;
  int rc = event_time(s, t, ts, &delta, err);
  if (rc) return rc;
  size_t packet = 1 + varint_len(delta) + 1 + t->seq_len + 4;  /* < 128: a one-byte length */
  uint8_t *d = (uint8_t *)ovl_out_reserve(&s->out, PACKET_ROOM(4));
  if (!d) return oom(err);
  uint8_t *begin = d;
  d = put_head(d, t, packet, delta);
  d[0] = K_TRACK_EVENT;
  d[1] = 2;
  d[2] = K_TYPE;
  d[3] = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
  d += 4;
  assert((size_t)(d - begin) == 2 + packet);
  ovl_out_commit(&s->out, (size_t)(d - begin));
  t->last_ts = ts;
  return OVL_OK;
}

/* TYPE_COUNTER with its value. */
static int write_counter(pf_sink *s, pf_track *t, int64_t ts, int64_t value, ovl_err *err) {
  uint64_t delta = 0;
  int rc = event_time(s, t, ts, &delta, err);
  if (rc) return rc;
  size_t event = 2 + 2 + varint_len((uint64_t)value);
  size_t packet = 1 + varint_len(delta) + 1 + t->seq_len + 2 + event;  /* < 128 */
  uint8_t *d = (uint8_t *)ovl_out_reserve(&s->out, PACKET_ROOM(2 + 14));
  if (!d) return oom(err);
  uint8_t *begin = d;
  d = put_head(d, t, packet, delta);
  d[0] = K_TRACK_EVENT;
  d[1] = (uint8_t)event;
  d[2] = K_TYPE;
  d[3] = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
  d[4] = (uint8_t)(K_COUNTER_VALUE | 0x80);
  d[5] = (uint8_t)(K_COUNTER_VALUE >> 7);
  d = put_v(d + 6, (uint64_t)value);
  assert((size_t)(d - begin) == 2 + packet);
  ovl_out_commit(&s->out, (size_t)(d - begin));
  t->last_ts = ts;
  return OVL_OK;
}

/* Every annotation key the exporters write (export_gpu.c, export_host.c, export_job.c): key
** k's iid is k + 1 on every sequence. At most 63 (a track's keys_defined bitmap). A key not
** here is still written, by name. */
static const char *const KNOWN_KEYS[] = {
  "op", "bytes", "bucket", "exposed_ns", "readiness_stall_ns", "ready_ns", "busbw_gbps", "algbw_gbps",
  "step", "dim", "dim_role", "seq", "collectives", "count", "dtype", "comm", "peer", "message",
  "recoverable_ns", "t_compute_ns", "t_comm_ns", "t_exposed_ns", "overlap_efficiency", "dp_comm_ns",
  "tp_comm_ns", "pp_comm_ns", "ep_comm_ns", "dp_exposed_ns", "tp_exposed_ns", "pp_exposed_ns", "ep_exposed_ns",
};
#define NKNOWN_KEYS (sizeof KNOWN_KEYS / sizeof KNOWN_KEYS[0])
_Static_assert(NKNOWN_KEYS < 64, "annotation name iids must fit a track's keys_defined bitmap");

static uint8_t known_key(const char *key) {
  for (size_t k = 0; k < NKNOWN_KEYS; k++)
    if (strcmp(key, KNOWN_KEYS[k]) == 0) return (uint8_t)(k + 1);
  return 0;
}

/* The key's annotation name iid, 0 when it is written by name. Looked up by address: the
** exporters' keys are a few dozen literals, so the text is compared once per address. */
static uint8_t key_iid(pf_sink *s, const char *key) {
  size_t h = (size_t)(((uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 57);  /* 7 bits: KEY_SLOTS */
  for (size_t probe = 0; probe < KEY_SLOTS; probe++) {
    pf_key *k = &s->keys[(h + probe) & (KEY_SLOTS - 1)];
    if (k->key == key) {
      assert(!k->iid || strcmp(key, KNOWN_KEYS[k->iid - 1]) == 0);  /* the key did not change */
      return k->iid;
    }
    if (!k->key) {
      k->key = key;
      k->iid = known_key(key);
      return k->iid;
    }
  }
  return known_key(key);  /* over KEY_SLOTS addresses: no longer remembered */
}

/* Marks iid defined on the track's sequence; returns 1 if it already was, -1 on OOM. */
static int define_iid(pf_track *t, uint32_t iid) {
  size_t w = iid >> 6;
  uint64_t bit = (uint64_t)1 << (iid & 63);
  if (w < t->defined_words && (t->defined[w] & bit)) return 1;  /* the common case */
  if (ovl_grow_zeroed((void **)&t->defined, &t->defined_words, w, sizeof *t->defined, 4)) return -1;
  t->defined[w] |= bit;
  return 0;
}

/* One annotation as written: which arg, its content's size, its key's and string's, its name
** iid (0: by name) and the size of its name's definition when this packet defines it (else 0). */
typedef struct pf_arg {
  const ovl_xarg *x;
  size_t size, key_len, str_len, definition;
  uint8_t iid;
} pf_arg;

/* Measures the annotations written (an unknown double is left out; MAX_ARGS at most);
** returns their fields' total size. *keys_new: the name iids this packet defines on t's
** sequence; *definitions: the size of their entries in interned_data. */
static size_t measure_args(pf_sink *s, const pf_track *t, const ovl_xslice *sl, pf_arg *a, size_t *na,
                           uint64_t *keys_new, size_t *definitions) {
  size_t total = 0, n = 0;
  for (size_t i = 0; i < sl->nargs && n < MAX_ARGS; i++) {
    const ovl_xarg *x = &sl->args[i];
    if (x->type == OVL_XARG_DOUBLE && !isfinite(x->d)) continue;
    pf_arg *p = &a[n++];
    p->x = x;
    p->iid = key_iid(s, x->key);
    p->definition = 0;
    if (p->iid) {
      uint64_t bit = (uint64_t)1 << p->iid;
      p->size = 1 + varint_len(p->iid);
      if (!((t->keys_defined | *keys_new) & bit)) {
        *keys_new |= bit;
        p->key_len = strlen(x->key);
        p->definition = 1 + varint_len(p->iid) + bytes_field_len(p->key_len);  /* DebugAnnotationName */
        *definitions += bytes_field_len(p->definition);
      }
    } else {
      p->key_len = strlen(x->key);
      p->size = bytes_field_len(p->key_len);
    }
    if (x->type == OVL_XARG_INT) {
      p->size += 1 + varint_len((uint64_t)x->i);
    } else if (x->type == OVL_XARG_DOUBLE) {
      p->size += 9;
    } else {
      p->str_len = strlen(x->s ? x->s : "");
      p->size += bytes_field_len(p->str_len);
    }
    total += bytes_field_len(p->size);
  }
  *na = n;
  return total;
}

static uint8_t *put_arg(uint8_t *d, const pf_arg *a) {
  const ovl_xarg *x = a->x;
  *d++ = K_ANNOTATION;
  d = put_v(d, a->size);
  if (a->iid) {
    *d++ = K_ARG_NAME_IID;
    d = put_v(d, a->iid);
  } else {
    d = put_bytes(d, K_ARG_NAME, x->key, a->key_len);
  }
  if (x->type == OVL_XARG_INT) {
    *d++ = K_ARG_INT;
    return put_v(d, (uint64_t)x->i);
  }
  if (x->type == OVL_XARG_DOUBLE) {
    uint64_t bits;
    memcpy(&bits, &x->d, sizeof bits);
    *d++ = K_ARG_DOUBLE;
    for (int i = 0; i < 8; i++) *d++ = (uint8_t)(bits >> (8 * i));  /* fixed64: little-endian */
    return d;
  }
  return put_bytes(d, K_ARG_STRING, x->s ? x->s : "", a->str_len);
}

static inline uint8_t *put_flows(uint8_t *d, unsigned key, const uint64_t *ids, size_t n) {
  for (size_t i = 0; i < n; i++) {
    d[0] = (uint8_t)(key | 0x80);
    d[1] = (uint8_t)(key >> 7);
    d = put_v(d + 2, ids[i]);
  }
  return d;
}

/* A TYPE_SLICE_BEGIN or TYPE_INSTANT packet on the track's sequence. It names no track and
** sets no sequence flags: the sequence's defaults give the track, and Perfetto resolves
** interned names and the incremental clock against the sequence's state whatever the flags
** say (the flag SEQ_NEEDS_INCREMENTAL_STATE only asks it to drop the packet when that state
** was lost, which cannot happen in a file). */
static int write_event(pf_sink *s, pf_track *t, int64_t ts, int type, const ovl_xslice *sl, ovl_err *err) {
  uint64_t delta = 0;
  int rc = event_time(s, t, ts, &delta, err);
  if (rc) return rc;
  int defined = define_iid(t, sl->name_iid);
  if (defined < 0) return oom(err);
  size_t iid_len = varint_len(sl->name_iid);
  size_t event = 2 + 1 + iid_len, interned = 0, name_def = 0, name_len = 0;  /* the type, the name */
  size_t definitions = 0;  /* interned_data's content */
  if (!defined) {
    name_len = strlen(sl->name);
    name_def = 1 + iid_len + bytes_field_len(name_len);
    definitions = bytes_field_len(name_def);
  }
  pf_arg args[MAX_ARGS];
  size_t nargs = 0;
  uint64_t keys_new = 0;
  if (sl->nargs) event += measure_args(s, t, sl, args, &nargs, &keys_new, &definitions);
  if (definitions) interned = bytes_field_len(definitions);
  for (size_t i = 0; i < sl->nflows_out; i++) event += 2 + varint_len(sl->flows_out[i]);
  for (size_t i = 0; i < sl->nflows_in; i++) event += 2 + varint_len(sl->flows_in[i]);
  size_t packet = 1 + varint_len(delta) + 1 + t->seq_len + interned + bytes_field_len(event);
  uint8_t *d = (uint8_t *)ovl_out_reserve(&s->out, PACKET_ROOM(interned + 1 + 10 + event));
  if (!d) return oom(err);
  uint8_t *begin = d;
  d = put_head(d, t, packet, delta);
  if (interned) {
    *d++ = K_INTERNED;
    d = put_v(d, definitions);
    if (!defined) {
      *d++ = K_EVENT_NAMES;
      d = put_v(d, name_def);
      *d++ = K_IID;
      d = put_v(d, sl->name_iid);
      d = put_bytes(d, K_NAME, sl->name, name_len);
    }
    for (size_t i = 0; i < nargs; i++) {
      if (!args[i].definition) continue;
      *d++ = K_ARG_NAMES;
      d = put_v(d, args[i].definition);
      *d++ = K_IID;  /* DebugAnnotationName: iid = 1, name = 2, as EventName */
      d = put_v(d, args[i].iid);
      d = put_bytes(d, K_NAME, args[i].x->key, args[i].key_len);
    }
  }
  *d++ = K_TRACK_EVENT;
  d = put_v(d, event);
  for (size_t i = 0; i < nargs; i++) d = put_arg(d, &args[i]);
  *d++ = K_TYPE;
  *d++ = (uint8_t)type;
  *d++ = K_NAME_IID;
  d = put_v(d, sl->name_iid);
  d = put_flows(d, K_FLOW_OUT, sl->flows_out, sl->nflows_out);
  d = put_flows(d, K_FLOW_IN, sl->flows_in, sl->nflows_in);
  assert((size_t)(d - begin) == 1 + varint_len(packet) + packet);
  ovl_out_commit(&s->out, (size_t)(d - begin));
  t->last_ts = ts;
  t->keys_defined |= keys_new;
  return OVL_OK;
}

/* Ends the open slices that end at or before t (innermost first). */
static int end_until(pf_sink *s, pf_track *t, int64_t until, ovl_err *err) {
  while (t->nends && t->ends[t->nends - 1] <= until) {
    int rc = write_end(s, t, t->ends[--t->nends], err);
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
  rc = write_event(s, t, sl->start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, sl, err);
  if (!rc) t->ends[t->nends++] = sl->end;
  return rc;
}

static int pf_instant(void *self, uint32_t track, const ovl_xslice *sl, ovl_err *err) {
  pf_sink *s = self;
  pf_track *t = NULL;
  int rc = get_track(s, track, &t, err);
  if (!rc) rc = end_until(s, t, sl->start, err);
  if (!rc) rc = write_event(s, t, sl->start, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, sl, err);
  return rc;
}

static int pf_counter(void *self, uint32_t track, int64_t ts, int64_t value, ovl_err *err) {
  pf_sink *s = self;
  pf_track *t = NULL;
  int rc = get_track(s, track, &t, err);
  if (!rc) rc = write_counter(s, t, ts, value, err);
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
  s->step = 1;
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

/* ---- child sinks on other threads (export_sink.h) ----
** Each child writes its own tracks' packets into chunks (out_stream.h) of one queue that the
** parent writes between its own buffers. Nothing is shared while they draw: a child copies
** the processes' parent tracks, and uuids and sequence ids are allocated in turn (n
** children: the parent takes every (n+1)-th from where it stood, child k the ones k+1
** after), so all are unique and each side's are the same whatever the threads' timing. */

int ovl_perfetto_sink_fork(ovl_export_sink *sink, ovl_export_sink *children, size_t n, ovl_err *err) {
  pf_sink *s = sink->self;
  assert(s->step == 1 && !s->queue && n >= 1 && n < 8);
  ovl_out_queue *q = ovl_out_queue_new(4, n);
  if (!q) return oom(err);
  pf_sink *made[8] = {NULL};
  int rc = OVL_OK;
  for (size_t k = 0; !rc && k < n; k++) {
    pf_sink *c = made[k] = calloc(1, sizeof *c);
    if (c && s->nprocesses) c->parent_uuid = malloc(s->nprocesses * sizeof *c->parent_uuid);
    if (!c || (s->nprocesses && !c->parent_uuid)) rc = oom(err);
    if (!rc) rc = ovl_out_open_queue(&c->out, q, err);
    if (rc) break;
    if (s->nprocesses) memcpy(c->parent_uuid, s->parent_uuid, s->nprocesses * sizeof *c->parent_uuid);
    c->nprocesses = s->nprocesses;
    c->next_uuid = s->next_uuid + 1 + k;
    c->next_seq = s->next_seq + 1 + (uint32_t)k;
    c->step = (uint32_t)n + 1;
  }
  if (rc) {
    for (size_t k = 0; k < n; k++)
      if (made[k]) {
        free(made[k]->out.buf);
        free(made[k]->parent_uuid);
        free(made[k]);
      }
    ovl_out_queue_free(q);
    return rc;
  }
  s->step = (uint32_t)n + 1;
  s->queue = q;
  ovl_out_attach(&s->out, q);
  /* a child has no finish: ovl_perfetto_sink_child_done ends it */
  for (size_t k = 0; k < n; k++)
    children[k] = (ovl_export_sink){made[k], pf_process, pf_track_decl, pf_slice, pf_instant, pf_counter,
                                    pf_close_track, NULL, NULL};
  return OVL_OK;
}

void ovl_perfetto_sink_child_done(ovl_export_sink *child, int ok) {
  pf_sink *c = child->self;
  if (ok)
    for (size_t i = 0; i < c->ntracks; i++) assert(c->tracks[i].closed);  /* xgroup_close closed them all */
  ovl_out_producer_done(&c->out, ok);
}

int ovl_perfetto_sink_join(ovl_export_sink *sink, ovl_export_sink *children, size_t n, int cancel) {
  pf_sink *s = sink->self;
  ovl_out_drain(&s->out, cancel);
  ovl_out_queue_free(s->queue);
  s->queue = NULL;
  s->step = 1;
  int failed = 0;
  for (size_t k = 0; k < n; k++) {
    pf_sink *c = children[k].self;
    if (c->next_uuid > s->next_uuid) s->next_uuid = c->next_uuid;
    if (c->next_seq > s->next_seq) s->next_seq = c->next_seq;
    failed |= c->out.failed;
    pf_free(c);
    children[k].self = NULL;
  }
  return failed;
}
