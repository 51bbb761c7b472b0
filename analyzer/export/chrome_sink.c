/*
** Chrome Trace Event Format sink (JSON, gzip when the file name ends in ".gz"), for
** chrome://tracing and tools that read Kineto-style traces.
**
** Slices are complete events ("ph":"X") with ts/dur in microseconds to 3 decimals (exact ns),
** ts counted from a time origin stated in otherData.time_origin_ns (a reader's double holds
** an epoch time in µs to about 0.2 µs only: neighbouring slices would overlap);
** pid is the process's chrome_pid (the rank), tid the track's chrome_tid (the CUDA stream
** for a stream's first lane) or a synthetic id counting down from 2^31-1; process and
** thread names and sort orders are metadata events ("M"); flows are "s"/"f" pairs (the end
** binds to the enclosing slice, "bp":"e") with string ids; counters are "C" events and
** instants "i" events with thread scope.
*/
#include "export_sink.h"
#include "base/vec.h"
#include "number_text.h"
#include "out_stream.h"
#include "base/text_clean.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNTHETIC_TID_TOP 2147483647LL

typedef struct ch_track {
  int64_t pid, tid;
  int counter;
  char *name;              /* counters: the series name */
  char where[64];          /* the events' ,"pid":..,"tid":..,"ts": (counters: no tid) */
  size_t where_len;
} ch_track;

typedef struct ch_name {
  char *json;              /* the name as a JSON string, quotes included; NULL until used */
  size_t len;
} ch_name;

typedef struct ch_sink {
  ovl_out out;
  int64_t origin;          /* ns subtracted from every timestamp */
  int first;               /* no event written yet */
  int64_t *pids;
  size_t nprocesses;
  ch_track *tracks;
  size_t ntracks, tracks_cap;
  ch_name *names;          /* per name iid: slices' names are written from here */
  size_t names_cap;
} ch_sink;

static int oom(ovl_err *err) { return ovl_oom(err, "Chrome JSON export"); }

/* Appends s as a JSON string. */
static int put_string(ovl_out *o, const char *s) {
  size_t n = strlen(s ? s : "");
  char *d = ovl_out_reserve(o, n * 6 + 2);
  if (!d) return -1;
  size_t k = 0;
  d[k++] = '"';
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') {
      d[k++] = '\\';
      d[k++] = (char)*p;
    } else if (*p < 0x20) {
      k += (size_t)snprintf(d + k, 7, "\\u%04x", *p);
    } else if (*p < 0x80) {
      d[k++] = (char)*p;
    } else {  /* JSON is UTF-8: a malformed byte becomes U+FFFD */
      size_t m = ovl_utf8_len(p);
      if (!m) k += (size_t)snprintf(d + k, 7, "\\ufffd");
      for (size_t i = 0; i < m; i++) d[k++] = (char)p[i];
      if (m) p += m - 1;
    }
  }
  d[k++] = '"';
  ovl_out_commit(o, k);
  return 0;
}

static int put_fmt(ovl_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put_fmt(ovl_out *o, const char *fmt, ...) {
  char *d = ovl_out_reserve(o, 256);
  if (!d) return -1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(d, 256, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= 256) return -1;
  ovl_out_commit(o, (size_t)n);
  return 0;
}

/* ---- numbers, formatted by hand (number_text.h): the events' fields are all integers (printf's format
** parsing cost more than the rest of the export) ---- */

#define PUT_LITERAL(o, lit) ovl_out_write((o), (lit), sizeof(lit) - 1)
/* Copies a literal's bytes (no NUL) to d; evaluates to the end. */
#define COPY_LITERAL(d, lit) (memcpy((d), (lit), sizeof(lit) - 1), (d) + sizeof(lit) - 1)

static int put_i64(ovl_out *o, int64_t v) {
  char *d = ovl_out_reserve(o, OVL_NUMBER_ROOM);
  if (!d) return -1;
  ovl_out_commit(o, (size_t)(ovl_dec_i64(d, v) - d));
  return 0;
}

static int put_us(ovl_out *o, int64_t ns) {
  char *d = ovl_out_reserve(o, OVL_NUMBER_ROOM);
  if (!d) return -1;
  ovl_out_commit(o, (size_t)(ovl_dec_us(d, ns) - d));
  return 0;
}

/* Starts an event object: separator, then {"ph":"<ph>" (ph: one letter). */
static int begin_event(ch_sink *s, char ph) {
  char *d = ovl_out_reserve(&s->out, 16);
  if (!d) return -1;
  char *e = s->first ? COPY_LITERAL(d, "\n{\"ph\":\"") : COPY_LITERAL(d, ",\n{\"ph\":\"");
  s->first = 0;
  e[0] = ph;
  e[1] = '"';
  ovl_out_commit(&s->out, (size_t)(e + 2 - d));
  return 0;
}

static int put_args(ovl_out *o, const ovl_xarg *args, size_t n) {
  int rc = PUT_LITERAL(o, ",\"args\":{");
  int any = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    if (args[i].type == OVL_XARG_DOUBLE && !isfinite(args[i].d)) continue;  /* unknown: left out */
    if (any++) rc = PUT_LITERAL(o, ",");
    if (!rc) rc = put_string(o, args[i].key);
    if (!rc) rc = PUT_LITERAL(o, ":");
    if (rc) break;
    if (args[i].type == OVL_XARG_INT) rc = put_i64(o, args[i].i);
    else if (args[i].type == OVL_XARG_DOUBLE) rc = put_fmt(o, "%.6g", args[i].d);
    else rc = put_string(o, args[i].s);
  }
  if (!rc) rc = PUT_LITERAL(o, "}");
  return rc;
}

static int metadata(ch_sink *s, const char *what, int64_t pid, int64_t tid, const char *key, const char *text,
                    int64_t number) {
  int rc = begin_event(s, 'M');
  if (!rc) rc = put_fmt(&s->out, ",\"name\":\"%s\",\"pid\":%" PRId64, what, pid);
  if (!rc && tid >= 0) rc = put_fmt(&s->out, ",\"tid\":%" PRId64, tid);
  if (!rc) rc = put_fmt(&s->out, ",\"args\":{\"%s\":", key);
  if (!rc) rc = text ? put_string(&s->out, text) : put_fmt(&s->out, "%" PRId64, number);
  if (!rc) rc = ovl_out_puts(&s->out, "}}");
  return rc;
}

static int ch_process(void *self, const ovl_xprocess *p, ovl_err *err) {
  ch_sink *s = self;
  int64_t *pids = realloc(s->pids, (s->nprocesses + 1) * sizeof *pids);
  if (!pids) return oom(err);
  s->pids = pids;
  s->pids[s->nprocesses++] = p->chrome_pid;
  int rc = metadata(s, "process_name", p->chrome_pid, -1, "name", p->name, 0);
  if (!rc) rc = metadata(s, "process_sort_index", p->chrome_pid, -1, "sort_index", NULL, (int64_t)p->index);
  return rc ? oom(err) : OVL_OK;
}

static int ch_track_decl(void *self, const ovl_xtrack *t, ovl_err *err) {
  ch_sink *s = self;
  if (t->id != s->ntracks) return ovl_fail(err, OVL_EINTERNAL, "export: tracks out of order");
  if (s->ntracks == s->tracks_cap) {
    size_t cap = s->tracks_cap ? s->tracks_cap * 2 : 64;
    ch_track *grown = realloc(s->tracks, cap * sizeof *grown);
    if (!grown) return oom(err);
    s->tracks = grown;
    s->tracks_cap = cap;
  }
  ch_track *ct = &s->tracks[s->ntracks++];
  memset(ct, 0, sizeof *ct);
  /* Trace-wide tracks go to a pseudo-process -1. */
  ct->pid = t->process == OVL_NO_PROCESS ? -1 : s->pids[t->process];
  ct->tid = t->chrome_tid >= 0 ? t->chrome_tid : SYNTHETIC_TID_TOP - (int64_t)t->id;
  ct->counter = t->kind != OVL_XTRACK_SLICES;
  char *e = ovl_dec_i64(COPY_LITERAL(ct->where, ",\"pid\":"), ct->pid);
  if (!ct->counter) e = ovl_dec_i64(COPY_LITERAL(e, ",\"tid\":"), ct->tid);
  e = COPY_LITERAL(e, ",\"ts\":");
  ct->where_len = (size_t)(e - ct->where);
  if (ct->counter) {
    if (!(ct->name = strdup(t->name))) return oom(err);
    return OVL_OK;
  }
  int rc = metadata(s, "thread_name", ct->pid, ct->tid, "name", t->name, 0);
  if (!rc) rc = metadata(s, "thread_sort_index", ct->pid, ct->tid, "sort_index", NULL, t->order);
  return rc ? oom(err) : OVL_OK;
}

/* The common head of X, i, s and f events: ,"pid":..,"tid":..,"ts":.. */
static int put_where(ch_sink *s, const ch_track *t, int64_t ts) {
  char *d = ovl_out_reserve(&s->out, sizeof t->where + OVL_NUMBER_ROOM);
  if (!d) return -1;
  memcpy(d, t->where, sizeof t->where);  /* a fixed-size copy; the room is reserved */
  char *e = ovl_dec_us(d + t->where_len, ts - s->origin);
  ovl_out_commit(&s->out, (size_t)(e - d));
  return 0;
}

static int put_flows(ch_sink *s, const ch_track *t, int64_t ts, const uint64_t *ids, size_t n, int end) {
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    rc = begin_event(s, end ? 'f' : 's');
    char *d = rc ? NULL : ovl_out_reserve(&s->out, 64);
    if (!d) return -1;
    char *e = ovl_hex_u64(COPY_LITERAL(d, ",\"cat\":\"flow\",\"name\":\"flow\",\"id\":\""), ids[i]);
    *e++ = '"';
    if (end) e = COPY_LITERAL(e, ",\"bp\":\"e\"");
    ovl_out_commit(&s->out, (size_t)(e - d));
    rc = put_where(s, t, ts);
    if (!rc) rc = PUT_LITERAL(&s->out, "}");
  }
  return rc;
}

/* Writes the slice's name as a JSON string, escaped once per name iid. */
static int put_name(ch_sink *s, const ovl_xslice *sl) {
  uint32_t iid = sl->name_iid;
  if (ovl_grow_zeroed((void **)&s->names, &s->names_cap, iid, sizeof *s->names, 256)) return -1;
  ch_name *n = &s->names[iid];
  if (!n->json) {
    uint64_t at = ovl_out_size(&s->out);
    if (put_string(&s->out, sl->name)) return -1;
    n->len = (size_t)(ovl_out_size(&s->out) - at);
    if (!(n->json = malloc(n->len))) return -1;
    memcpy(n->json, s->out.buf + s->out.len - n->len, n->len);  /* still in the buffer: written in one piece */
    return 0;
  }
  return ovl_out_write(&s->out, n->json, n->len);
}

static int put_named(ch_sink *s, const ovl_xslice *sl) {
  int rc = PUT_LITERAL(&s->out, ",\"cat\":");
  if (!rc) rc = put_string(&s->out, sl->category ? sl->category : "ovl");
  if (!rc) rc = PUT_LITERAL(&s->out, ",\"name\":");
  if (!rc) rc = put_name(s, sl);
  return rc;
}

static int ch_slice(void *self, uint32_t track, const ovl_xslice *sl, ovl_err *err) {
  ch_sink *s = self;
  if (track >= s->ntracks) return ovl_fail(err, OVL_EINTERNAL, "export: slice on an undeclared track");
  const ch_track *t = &s->tracks[track];
  int rc = begin_event(s, 'X');
  if (!rc) rc = put_named(s, sl);
  if (!rc) rc = put_where(s, t, sl->start);
  if (!rc) rc = PUT_LITERAL(&s->out, ",\"dur\":");
  if (!rc) rc = put_us(&s->out, sl->end - sl->start);
  if (!rc && sl->nargs) rc = put_args(&s->out, sl->args, sl->nargs);
  if (!rc) rc = PUT_LITERAL(&s->out, "}");
  if (!rc) rc = put_flows(s, t, sl->start, sl->flows_out, sl->nflows_out, 0);
  if (!rc) rc = put_flows(s, t, sl->start, sl->flows_in, sl->nflows_in, 1);
  return rc ? oom(err) : OVL_OK;
}

static int ch_instant(void *self, uint32_t track, const ovl_xslice *sl, ovl_err *err) {
  ch_sink *s = self;
  if (track >= s->ntracks) return ovl_fail(err, OVL_EINTERNAL, "export: instant on an undeclared track");
  int rc = begin_event(s, 'i');
  if (!rc) rc = PUT_LITERAL(&s->out, ",\"s\":\"t\"");
  if (!rc) rc = put_named(s, sl);
  if (!rc) rc = put_where(s, &s->tracks[track], sl->start);
  if (!rc && sl->nargs) rc = put_args(&s->out, sl->args, sl->nargs);
  if (!rc) rc = PUT_LITERAL(&s->out, "}");
  return rc ? oom(err) : OVL_OK;
}

static int ch_counter(void *self, uint32_t track, int64_t ts, int64_t value, ovl_err *err) {
  ch_sink *s = self;
  if (track >= s->ntracks) return ovl_fail(err, OVL_EINTERNAL, "export: counter on an undeclared track");
  const ch_track *t = &s->tracks[track];
  int rc = begin_event(s, 'C');
  if (!rc) rc = PUT_LITERAL(&s->out, ",\"name\":");
  if (!rc) rc = put_string(&s->out, t->name);
  char *d = rc ? NULL : ovl_out_reserve(&s->out, sizeof t->where + 2 * OVL_NUMBER_ROOM + 32);
  if (d) {
    memcpy(d, t->where, sizeof t->where);
    char *e = ovl_dec_us(d + t->where_len, ts - s->origin);
    e = ovl_dec_i64(COPY_LITERAL(e, ",\"args\":{\"value\":"), value);
    e = COPY_LITERAL(e, "}}");
    ovl_out_commit(&s->out, (size_t)(e - d));
  }
  if (!d) rc = -1;
  return rc ? oom(err) : OVL_OK;
}

static int ch_close_track(void *self, uint32_t track, ovl_err *err) {
  (void)self;
  (void)track;
  (void)err;
  return OVL_OK;  /* complete events leave nothing open */
}

static void ch_free(ch_sink *s) {
  for (size_t i = 0; i < s->ntracks; i++) free(s->tracks[i].name);
  for (size_t i = 0; i < s->names_cap; i++) free(s->names[i].json);
  free(s->names);
  free(s->tracks);
  free(s->pids);
  free(s);
}

static int ch_finish(void *self, ovl_err *err) {
  ch_sink *s = self;
  int rc = ovl_out_puts(&s->out, "\n]}\n") ? oom(err) : OVL_OK;
  if (rc) ovl_out_discard(&s->out);
  else rc = ovl_out_close(&s->out, err);
  ch_free(s);
  return rc;
}

static void ch_destroy(void *self) {
  ch_sink *s = self;
  ovl_out_discard(&s->out);
  ch_free(s);
}

int ovl_chrome_sink_open(const char *path, int64_t time_origin, ovl_export_sink *sink, ovl_err *err) {
  ch_sink *s = calloc(1, sizeof *s);
  if (!s) return oom(err);
  int rc = ovl_out_open(&s->out, path, err);
  if (rc) {
    free(s);
    return rc;
  }
  s->first = 1;
  s->origin = time_origin;
  /* The origin as a string: a JSON number that large would lose digits in a double. */
  if (put_fmt(&s->out,
              "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"time_origin_ns\":\"%" PRId64
              "\",\"time_origin\":\"ts = microseconds after time_origin_ns on the traces' clock\"},"
              "\"traceEvents\":[",
              time_origin)) {
    ch_destroy(s);
    return oom(err);
  }
  *sink = (ovl_export_sink){s, ch_process, ch_track_decl, ch_slice, ch_instant, ch_counter, ch_close_track, ch_finish,
                            ch_destroy};
  return OVL_OK;
}
