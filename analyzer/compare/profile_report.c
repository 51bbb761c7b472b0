/* A run's profile read back from a saved `ovl report --json` (run_profile.h, docs/report.md):
** the keys the report contract fixes and the few more the diff compares; every other key is
** skipped unread. Streamed with the JSON tokenizer: memory holds the profile, not the text. */
#include "run_profile.h"

#include "base/vec.h"
#include "load/byte_input.h"
#include "load/json_stream.h"
#include "load/trace_detect.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Reports this reader knows (report_json.c writes version 1). */
#define REPORT_VERSION_KNOWN 1

typedef struct reader {
  ovl_json *j;
  const char *path;
  ovl_err *err;
} reader;

static int malformed(reader *r, const char *what) {
  return ovl_fail(r->err, OVL_EUSER, "%s: not a readable ovl report: %s at byte %llu", r->path, what,
                  (unsigned long long)ovl_json_offset(r->j));
}

static int next(reader *r, ovl_json_token *tok) { return ovl_json_next(r->j, tok, r->err); }

/* The value after a key, as an integer: a number (a fraction is rounded), null = OVL_NONE. */
static int read_int(reader *r, int64_t *v) {
  ovl_json_token tok;
  int rc = next(r, &tok);
  if (rc) return rc;
  if (tok == OVL_JSON_NULL) {
    *v = OVL_NONE;
    return OVL_OK;
  }
  if (tok != OVL_JSON_NUMBER) return malformed(r, "expected a number");
  const char *text = ovl_json_text(r->j, NULL);
  char *end;
  errno = 0;
  long long i = strtoll(text, &end, 10);
  if (*end == 0 && errno == 0) {
    *v = i;
    return OVL_OK;
  }
  double d = strtod(text, &end);
  if (*end || !isfinite(d) || fabs(d) > 9.2e18) return malformed(r, "a number out of range");
  *v = (int64_t)llround(d);
  return OVL_OK;
}

static int read_long(reader *r, long *v) {
  int64_t x;
  int rc = read_int(r, &x);
  if (!rc) *v = x == OVL_NONE ? -1 : (long)x;
  return rc;
}

/* A string value copied into buf (cut to fit); null gives "". */
static int read_text(reader *r, char *buf, size_t cap) {
  ovl_json_token tok;
  int rc = next(r, &tok);
  if (rc) return rc;
  if (tok == OVL_JSON_NULL) {
    buf[0] = 0;
    return OVL_OK;
  }
  if (tok != OVL_JSON_STRING) return malformed(r, "expected a string");
  snprintf(buf, cap, "%s", ovl_json_text(r->j, NULL));
  return OVL_OK;
}

static int read_dup(reader *r, char **out) {
  ovl_json_token tok;
  int rc = next(r, &tok);
  if (rc) return rc;
  if (tok != OVL_JSON_STRING && tok != OVL_JSON_NULL) return malformed(r, "expected a string");
  free(*out);
  *out = strdup(tok == OVL_JSON_STRING ? ovl_json_text(r->j, NULL) : "");
  return *out ? OVL_OK : ovl_oom(r->err, "report");
}

static int read_bool(reader *r, int *v) {
  ovl_json_token tok;
  int rc = next(r, &tok);
  if (rc) return rc;
  if (tok != OVL_JSON_TRUE && tok != OVL_JSON_FALSE && tok != OVL_JSON_NULL) return malformed(r, "expected true or false");
  *v = tok == OVL_JSON_TRUE;
  return OVL_OK;
}

static int skip(reader *r) {
  ovl_json_token tok;
  return ovl_json_skip_value(r->j, &tok, r->err);
}

/* Reads an object whose '{' was just read: field(r, key, ctx) reads (or skips) each value. */
typedef int (*field_fn)(reader *r, const char *key, void *ctx);
static int read_fields(reader *r, field_fn field, void *ctx) {
  for (;;) {
    ovl_json_token tok;
    int rc = next(r, &tok);
    if (rc) return rc;
    if (tok == OVL_JSON_OBJECT_END) return OVL_OK;
    if (tok != OVL_JSON_KEY) return malformed(r, "expected a key");
    char key[64];
    snprintf(key, sizeof key, "%s", ovl_json_text(r->j, NULL));
    if ((rc = field(r, key, ctx))) return rc;
  }
}

/* Reads an array value of objects (null: none): elem(r, ctx) after each '{' reads its fields. */
typedef int (*elem_fn)(reader *r, void *ctx);
static int read_objects(reader *r, elem_fn elem, void *ctx) {
  ovl_json_token tok;
  int rc = next(r, &tok);
  if (rc || tok == OVL_JSON_NULL) return rc;
  if (tok != OVL_JSON_ARRAY_BEGIN) return malformed(r, "expected an array");
  for (;;) {
    if ((rc = next(r, &tok))) return rc;
    if (tok == OVL_JSON_ARRAY_END) return OVL_OK;
    if (tok != OVL_JSON_OBJECT_BEGIN) return malformed(r, "expected an object in an array");
    if ((rc = elem(r, ctx))) return rc;
  }
}

/* ---- findings ---- */

typedef OVL_VEC(ovl_prof_finding) finding_vec;

static int finding_field(reader *r, const char *key, void *ctx) {
  ovl_prof_finding *f = ctx;
  if (strcmp(key, "code") == 0) return read_text(r, f->code, sizeof f->code);
  if (strcmp(key, "message") == 0) return read_dup(r, &f->message);
  if (strcmp(key, "recoverable_ns") == 0) return read_int(r, &f->recoverable);
  if (strcmp(key, "step") == 0) return read_long(r, &f->step);
  if (strcmp(key, "steps_affected") == 0) return read_long(r, &f->steps_affected);
  if (strcmp(key, "confidence") == 0) return read_text(r, f->confidence, sizeof f->confidence);
  if (strcmp(key, "evidence") == 0) return read_text(r, f->evidence, sizeof f->evidence);
  return skip(r);
}

typedef struct finding_target {
  finding_vec *v;
  long step;               /* the step whose findings these are, or -1 */
} finding_target;

static int finding_elem(reader *r, void *ctx) {
  finding_target *t = ctx;
  ovl_prof_finding f;
  memset(&f, 0, sizeof f);
  f.step = t->step;
  int rc = read_fields(r, finding_field, &f);
  if (f.steps_affected < 0) f.steps_affected = 0;
  if (!rc && !f.message && !(f.message = strdup(""))) rc = ovl_oom(r->err, "report");
  if (!rc && f.code[0] == 0) rc = malformed(r, "a finding without its code");
  if (!rc && OVL_VEC_PUSH(t->v, f)) rc = ovl_oom(r->err, "report");
  if (rc) free(f.message);
  return rc;
}

/* ---- collectives and steps ---- */

typedef struct coll_fields {
  ovl_prof_coll c;
  int64_t start, end;
  char op[24], role[24];
} coll_fields;

static int coll_field(reader *r, const char *key, void *ctx) {
  coll_fields *f = ctx;
  if (strcmp(key, "op") == 0) return read_text(r, f->op, sizeof f->op);
  if (strcmp(key, "role") == 0) return read_text(r, f->role, sizeof f->role);
  if (strcmp(key, "bytes") == 0) return read_int(r, &f->c.bytes);
  if (strcmp(key, "bucket") == 0) return read_long(r, &f->c.bucket);
  if (strcmp(key, "gpu_start_ns") == 0) return read_int(r, &f->start);
  if (strcmp(key, "gpu_end_ns") == 0) return read_int(r, &f->end);
  if (strcmp(key, "exposed_ns") == 0) return read_int(r, &f->c.exposed);
  if (strcmp(key, "comm") == 0) return read_int(r, &f->c.comm);
  if (strcmp(key, "ready_order") == 0) {
    long v = -1;
    int rc = read_long(r, &v);
    if (!rc) f->c.ready_order = v >= 0 && v <= INT_MAX ? (int)v : -1;  /* out of range: unknown */
    return rc;
  }
  return skip(r);
}

typedef OVL_VEC(ovl_prof_coll) coll_vec;

static int coll_elem(reader *r, void *ctx) {
  coll_fields f;
  memset(&f, 0, sizeof f);
  f.c.comm = f.c.bytes = f.start = f.end = OVL_NONE;
  f.c.bucket = -1;
  f.c.ready_order = -1;
  int rc = read_fields(r, coll_field, &f);
  if (rc) return rc;
  if (f.start == OVL_NONE || f.end == OVL_NONE || f.end < f.start) return malformed(r, "a collective without its GPU times");
  f.c.op = ovl_op_from_name(f.op);
  f.c.duration = f.end - f.start;
  if (f.c.exposed == OVL_NONE || f.c.exposed < 0) f.c.exposed = 0;
  f.c.gradient = strcmp(f.role, "gradient") == 0;
  return OVL_VEC_PUSH((coll_vec *)ctx, f.c) ? ovl_oom(r->err, "report") : OVL_OK;
}

typedef struct step_fields {
  ovl_prof_step s;
  int64_t start, end;
  coll_vec colls;
  finding_vec *findings;   /* the rank's */
} step_fields;

static int step_field(reader *r, const char *key, void *ctx) {
  step_fields *f = ctx;
  if (strcmp(key, "index") == 0) return read_long(r, &f->s.index);
  if (strcmp(key, "start_ns") == 0) return read_int(r, &f->start);
  if (strcmp(key, "end_ns") == 0) return read_int(r, &f->end);
  if (strcmp(key, "t_compute_ns") == 0) return read_int(r, &f->s.compute);
  if (strcmp(key, "t_comm_ns") == 0) return read_int(r, &f->s.comm);
  if (strcmp(key, "t_exposed_ns") == 0) return read_int(r, &f->s.exposed);
  if (strcmp(key, "misordered") == 0) return read_bool(r, &f->s.misordered);
  if (strcmp(key, "collectives") == 0) return read_objects(r, coll_elem, &f->colls);
  if (strcmp(key, "findings") == 0) {
    finding_target t = {f->findings, f->s.index};  /* "index" comes first in a report */
    return read_objects(r, finding_elem, &t);
  }
  return skip(r);
}

typedef OVL_VEC(ovl_prof_step) step_vec;

typedef struct rank_fields {
  ovl_prof_rank r;
  step_vec steps;
  finding_vec findings;
} rank_fields;

static int step_elem(reader *r, void *ctx) {
  rank_fields *rf = ctx;
  step_fields f;
  memset(&f, 0, sizeof f);
  f.s.index = (long)rf->steps.len;
  f.start = f.end = OVL_NONE;
  f.findings = &rf->findings;
  int rc = read_fields(r, step_field, &f);
  if (!rc && (f.start == OVL_NONE || f.end == OVL_NONE || f.end < f.start)) rc = malformed(r, "a step without its times");
  if (!rc && (f.s.compute < 0 || f.s.comm < 0 || f.s.exposed < 0)) rc = malformed(r, "a step with unknown totals");
  if (rc) {
    OVL_VEC_FREE(&f.colls);
    return rc;
  }
  f.s.duration = f.end - f.start;
  f.s.colls = f.colls.items;
  f.s.ncolls = f.colls.len;
  if (ovl_prof_step_index_colls(&f.s) || OVL_VEC_PUSH(&rf->steps, f.s)) {
    free(f.s.colls);
    return ovl_oom(r->err, "report");
  }
  return OVL_OK;
}

static int rank_field(reader *r, const char *key, void *ctx) {
  rank_fields *f = ctx;
  if (strcmp(key, "rank") == 0) return read_int(r, &f->r.rank);
  if (strcmp(key, "device") == 0) return read_int(r, &f->r.device);
  if (strcmp(key, "trace") == 0) return read_dup(r, &f->r.trace);
  if (strcmp(key, "t_compute_ns") == 0) return read_int(r, &f->r.compute);
  if (strcmp(key, "t_comm_ns") == 0) return read_int(r, &f->r.comm);
  if (strcmp(key, "t_exposed_ns") == 0) return read_int(r, &f->r.exposed);
  if (strcmp(key, "steps") == 0) return read_objects(r, step_elem, f);
  if (strcmp(key, "findings") == 0) {
    finding_target t = {&f->findings, -1};
    return read_objects(r, finding_elem, &t);
  }
  return skip(r);
}

typedef struct report_fields {
  OVL_VEC(ovl_prof_rank) ranks;
  finding_vec findings;
} report_fields;

static void free_rank_fields(rank_fields *f) {
  free(f->r.trace);
  for (size_t i = 0; i < f->steps.len; i++) free(f->steps.items[i].colls);
  OVL_VEC_FREE(&f->steps);
  for (size_t i = 0; i < f->findings.len; i++) free(f->findings.items[i].message);
  OVL_VEC_FREE(&f->findings);
}

static int rank_elem(reader *r, void *ctx) {
  report_fields *rep = ctx;
  rank_fields f;
  memset(&f, 0, sizeof f);
  f.r.rank = f.r.device = OVL_NONE;
  f.r.compute = f.r.comm = f.r.exposed = -1;
  int rc = read_fields(r, rank_field, &f);
  if (!rc && (f.r.compute < 0 || f.r.comm < 0 || f.r.exposed < 0)) rc = malformed(r, "a rank without its totals");
  if (!rc && !f.r.trace && !(f.r.trace = strdup(""))) rc = ovl_oom(r->err, "report");
  if (rc) {
    free_rank_fields(&f);
    return rc;
  }
  f.r.steps = f.steps.items;
  f.r.nsteps = f.steps.len;
  f.r.findings = f.findings.items;
  f.r.nfindings = f.findings.len;
  if (OVL_VEC_PUSH(&rep->ranks, f.r)) {
    free_rank_fields(&f);
    return ovl_oom(r->err, "report");
  }
  return OVL_OK;
}

static int report_field(reader *r, const char *key, void *ctx) {
  report_fields *f = ctx;
  if (strcmp(key, "ranks") == 0) return read_objects(r, rank_elem, f);
  if (strcmp(key, "findings") == 0) {
    finding_target t = {&f->findings, -1};
    return read_objects(r, finding_elem, &t);
  }
  return skip(r);
}

/* Opens path and reads up to the first key's value: the report version. */
static int open_report(const char *path, ovl_byte_input **in, ovl_json **j, int64_t *version, ovl_err *err) {
  *in = NULL;
  *j = NULL;
  int rc = ovl_input_open(path, in, err);
  if (!rc) rc = ovl_json_open(*in, NULL, j, err);
  if (rc) return rc;
  reader r = {*j, path, err};
  ovl_json_token tok;
  if ((rc = next(&r, &tok))) return rc;
  if (tok != OVL_JSON_OBJECT_BEGIN) return malformed(&r, "not a JSON object");
  if ((rc = next(&r, &tok))) return rc;
  if (tok != OVL_JSON_KEY || strcmp(ovl_json_text(*j, NULL), "ovl_report_version") != 0)
    return malformed(&r, "its first key is not ovl_report_version");
  return read_int(&r, version);
}

int ovl_is_saved_report(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;  /* a FIFO is never peeked at: it reads once */
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char head[OVL_HEAD_BYTES];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  ovl_head_kind kind = ovl_detect_head(head, n);
  if (kind != OVL_HEAD_JSON && kind != OVL_HEAD_GZIP) return 0;
  ovl_byte_input *in;
  ovl_json *j;
  int64_t version;
  ovl_err err;
  ovl_err_clear(&err);
  int rc = open_report(path, &in, &j, &version, &err);
  if (j) ovl_json_close(j);
  if (in) ovl_input_close(in);
  return rc == OVL_OK;
}

int ovl_profile_from_report(const char *path, ovl_profile *out, ovl_err *err) {
  memset(out, 0, sizeof *out);
  ovl_byte_input *in;
  ovl_json *j;
  int64_t version = OVL_NONE;
  int rc = open_report(path, &in, &j, &version, err);
  reader r = {j, path, err};
  if (!rc && (version == OVL_NONE || version < 1))
    rc = ovl_fail(err, OVL_EUSER, "%s: not a readable ovl report: bad ovl_report_version", path);
  if (!rc && version > REPORT_VERSION_KNOWN)
    rc = ovl_fail(err, OVL_EUSER, "%s: ovl report version %lld is newer than this ovl reads (%d): use a newer ovl",
                  path, (long long)version, REPORT_VERSION_KNOWN);
  report_fields f;
  memset(&f, 0, sizeof f);
  if (!rc) rc = read_fields(&r, report_field, &f);
  ovl_json_token tok;
  if (!rc && (rc = next(&r, &tok)) == 0 && tok != OVL_JSON_EOF) rc = malformed(&r, "text after the report");
  if (!rc && f.ranks.len == 0)
    rc = ovl_fail(err, OVL_EUSER, "%s: the report has no ranks: nothing to compare", path);
  if (j) ovl_json_close(j);
  if (in) ovl_input_close(in);
  out->ranks = f.ranks.items;
  out->nranks = f.ranks.len;
  out->findings = f.findings.items;
  out->nfindings = f.findings.len;
  out->from_report = 1;
  if (!rc && !(out->label = strdup(path))) rc = ovl_oom(err, "report");
  if (rc) ovl_profile_free(out);
  return rc;
}
