/*
** Nsight Systems importer: see nsys_import.h.
**
** Each activity table is read once, in start order (SQLite sorts: the export has no
** indexes), and written row by row. The NCCL kernels, their launches and the NCCL NVTX
** ranges are kept (they are few) to link each NCCL call to the kernel it launched: a kernel
** launched on a thread executes every NCCL call made on that thread since the previous
** NCCL launch (one call, or all the calls of a ncclGroupStart/End group).
*/
#include "nsys_import.h"

#include "base/i64map.h"
#include "base/progress.h"
#include "base/vec.h"
#include "comm_names.h"
#include "import_collectives.h"
#include "import_meta.h"
#include "scan_vfs.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVTX_EVENTS.eventType values (Nsight Systems export schema). */
enum { NVTX_MARK = 34, NVTX_PUSHPOP_RANGE = 59, NVTX_STARTEND_RANGE = 60, NVTX_DOMAIN_CREATE = 75 };

typedef struct nccl_kernel_ref {
  int64_t start, device, stream;
} nccl_kernel_ref;

typedef struct nccl_launch {
  int64_t tid, start, correlation;
} nccl_launch;

typedef struct nccl_call {
  int64_t tid;
  ovl_found_coll coll;
} nccl_call;

typedef struct comm_info {
  int64_t comm, rank, nranks;
} comm_info;

typedef struct nvtx_domain {
  int64_t id;
  char *name;
} nvtx_domain;

typedef struct nsys_import {
  const char *path;
  sqlite3 *db;
  ovl_trace_writer *w;
  ovl_import_stats *st;
  int has_strings;
  int64_t pid;                        /* the process read, or OVL_NONE for all */
  int64_t first_pid;
  OVL_VEC(nccl_kernel_ref) kernels;   /* NCCL kernels */
  ovl_i64map kernel_by_correlation;
  OVL_VEC(nccl_launch) launches;      /* their launches */
  OVL_VEC(nccl_call) calls;           /* NCCL NVTX ranges of collective calls */
  OVL_VEC(comm_info) comms;           /* from ncclCommInitRank* ranges */
  OVL_VEC(nvtx_domain) domains;
  OVL_VEC(int64_t) pids;              /* ovl_nsys_processes */
  const char *progress;               /* the table being converted, as progress names it; NULL: none */
} nsys_import;

/* Rows between two progress reports: a large export's tables hold tens of millions. */
#define PROGRESS_ROWS 65536

/* ---------------------------------------------------------------------------------- */
/* SQLite helpers                                                                      */
/* ---------------------------------------------------------------------------------- */

static int db_fail(const nsys_import *ni, ovl_err *err) {
  return ovl_fail(err, OVL_EUSER, "%s: cannot read the Nsight Systems export: %s", ni->path, sqlite3_errmsg(ni->db));
}

static int has_table(const nsys_import *ni, const char *table) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(ni->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL) ==
      SQLITE_OK) {
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return found;
}

static int has_column(const nsys_import *ni, const char *table, const char *column) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(ni->db, "SELECT 1 FROM pragma_table_info(?) WHERE name=?", -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return found;
}

/* "<alias>.<column>" when the table has it, else "NULL". */
static const char *column_or_null(const nsys_import *ni, const char *table, const char *alias, const char *column,
                                  char *buf, size_t cap) {
  if (!has_column(ni, table, column)) return "NULL";
  snprintf(buf, cap, "%s.%s", alias, column);
  return buf;
}

static int64_t col_int(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? OVL_NONE : sqlite3_column_int64(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i) {
  return (const char *)sqlite3_column_text(st, i);
}

static int64_t pid_of(int64_t global_id) {
  return global_id == OVL_NONE ? OVL_NONE : (global_id >> 24) & 0xffffff;
}

static int64_t tid_of(int64_t global_tid) {
  return global_tid == OVL_NONE ? OVL_NONE : global_tid & 0xffffff;
}

/* Steps a prepared query, calling fn for each row, then finalizes it. */
static int each_row(nsys_import *ni, sqlite3_stmt *st, int (*fn)(nsys_import *, sqlite3_stmt *, ovl_err *),
                    ovl_err *err) {
  int rc = OVL_OK, step;
  uint64_t rows = 0;
  /* How much of a table remains is not known cheaply (a process filter, an unindexed sort), so
  ** progress names the table without a percentage. */
  if (ni->progress) ovl_progress(ni->progress, NAN);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if ((rc = fn(ni, st, err))) break;
    if (ni->progress && ++rows % PROGRESS_ROWS == 0) ovl_progress(ni->progress, NAN);
  }
  if (!rc && step != SQLITE_DONE) rc = db_fail(ni, err);
  sqlite3_finalize(st);
  return rc;
}

/* Runs sql, whose ?1 (if any) is the process filtered on. */
static int query(nsys_import *ni, const char *sql, int (*fn)(nsys_import *, sqlite3_stmt *, ovl_err *),
                 ovl_err *err) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(ni->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(ni, err);
  if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int64(st, 1, ni->pid);
  return each_row(ni, st, fn, err);
}

/* " WHERE"/" AND" condition selecting the process on a globalPid/globalTid column, or "". */
static void process_filter(const nsys_import *ni, const char *table, const char *alias, const char *column,
                           const char *joiner, char *buf, size_t cap) {
  if (ni->pid == OVL_NONE || !has_column(ni, table, column)) snprintf(buf, cap, "%s", "");
  else snprintf(buf, cap, " %s (%s.%s >> 24) & 16777215 = ?1", joiner, alias, column);
}

/* "LEFT JOIN StringIds <alias> ON <alias>.id = <col>" and "<alias>.value", when possible. */
static void string_join(const nsys_import *ni, const char *col, const char *alias, char *join, size_t jcap,
                        char *value, size_t vcap) {
  if (ni->has_strings && strcmp(col, "NULL") != 0) {
    snprintf(join, jcap, "LEFT JOIN StringIds %s ON %s.id = %s", alias, alias, col);
    snprintf(value, vcap, "%s.value", alias);
  } else {
    snprintf(join, jcap, "%s", "");
    snprintf(value, vcap, "%s", "NULL");
  }
}

/* ---------------------------------------------------------------------------------- */
/* GPU work and API calls                                                              */
/* ---------------------------------------------------------------------------------- */

static int on_kernel(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  int64_t pid = pid_of(col_int(st, 5));
  ovl_kernel_row row = {col_int(st, 0), col_int(st, 1), col_int(st, 2), col_int(st, 3), col_int(st, 4), OVL_NONE,
                        {col_int(st, 7), col_int(st, 8), col_int(st, 9)},
                        {col_int(st, 10), col_int(st, 11), col_int(st, 12)}};
  const char *name = col_text(st, 6);
  int rc = name ? ovl_tw_intern(ni->w, name, &row.name, err) : OVL_OK;
  if (!rc) rc = ovl_tw_kernel(ni->w, &row, err);
  if (rc) return rc;
  ni->st->events++;
  ni->st->kernels++;
  if (ni->first_pid == OVL_NONE) ni->first_pid = ni->pid != OVL_NONE ? ni->pid : pid;
  if (!ovl_is_comm_kernel_name(name)) return OVL_OK;
  ni->st->nccl_kernels++;
  if (row.correlation == OVL_NONE) return OVL_OK;
  nccl_kernel_ref k = {row.start, row.device, row.stream};
  if (OVL_VEC_PUSH(&ni->kernels, k) ||
      ovl_i64map_put(&ni->kernel_by_correlation, row.correlation, (int64_t)(ni->kernels.len - 1)))
    return ovl_oom(err, "NCCL kernels");
  return OVL_OK;
}

static int import_kernels(nsys_import *ni, ovl_err *err) {
  const char *t = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!has_table(ni, t)) return OVL_OK;
  char name_col[64], pid[64], dims[6][64], join[160], value[32], where[96], sql[2048];
  const char *name = column_or_null(ni, t, "k", "demangledName", name_col, sizeof name_col);
  if (strcmp(name, "NULL") == 0) name = column_or_null(ni, t, "k", "shortName", name_col, sizeof name_col);
  string_join(ni, name, "s", join, sizeof join, value, sizeof value);
  static const char *const dim_cols[6] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"};
  const char *d[6];
  for (int i = 0; i < 6; i++) d[i] = column_or_null(ni, t, "k", dim_cols[i], dims[i], sizeof dims[i]);
  process_filter(ni, t, "k", "globalPid", "WHERE", where, sizeof where);
  snprintf(sql, sizeof sql,
           "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, %s, %s, %s, %s, %s, %s, %s, %s"
           " FROM %s k %s%s ORDER BY k.start",
           column_or_null(ni, t, "k", "globalPid", pid, sizeof pid), value, d[0], d[1], d[2], d[3], d[4], d[5], t,
           join, where);
  return query(ni, sql, on_kernel, err);
}

static int write_memop(nsys_import *ni, sqlite3_stmt *st, const char *kind, ovl_err *err) {
  ovl_memop_row row = {col_int(st, 0), col_int(st, 1), col_int(st, 2), col_int(st, 3), col_int(st, 4), kind,
                       col_int(st, 6)};
  int rc = ovl_tw_memop(ni->w, &row, err);
  if (!rc) {
    ni->st->events++;
    ni->st->memops++;
  }
  return rc;
}

static int on_memcpy(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  return write_memop(ni, st, ovl_memcpy_kind_from_cupti(col_int(st, 7)), err);
}

static int on_memset(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  return write_memop(ni, st, "memset", err);
}

static int import_memops(nsys_import *ni, const char *t, int is_memset, ovl_err *err) {
  if (!has_table(ni, t)) return OVL_OK;
  char pid[64], bytes[64], kind[64], where[96], sql[1024];
  process_filter(ni, t, "m", "globalPid", "WHERE", where, sizeof where);
  snprintf(sql, sizeof sql,
           "SELECT m.start, m.end, m.deviceId, m.streamId, m.correlationId, %s, %s, %s FROM %s m%s ORDER BY m.start",
           column_or_null(ni, t, "m", "globalPid", pid, sizeof pid), column_or_null(ni, t, "m", "bytes", bytes, sizeof bytes),
           is_memset ? "NULL" : column_or_null(ni, t, "m", "copyKind", kind, sizeof kind), t, where);
  return query(ni, sql, is_memset ? on_memset : on_memcpy, err);
}

static int on_runtime(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  int64_t gtid = col_int(st, 2);
  ovl_api_row row = {col_int(st, 0), col_int(st, 1), tid_of(gtid), col_int(st, 3), OVL_NONE};
  const char *name = col_text(st, 4);
  int rc = name ? ovl_tw_intern(ni->w, name, &row.name, err) : OVL_OK;
  if (!rc) rc = ovl_tw_api(ni->w, &row, err);
  if (rc) return rc;
  ni->st->events++;
  ni->st->api++;
  int64_t k;
  if (row.correlation != OVL_NONE && ovl_i64map_get(&ni->kernel_by_correlation, row.correlation, &k) &&
      OVL_VEC_PUSH(&ni->launches, ((nccl_launch){row.tid, row.start, row.correlation})))
    return ovl_oom(err, "NCCL launches");
  return OVL_OK;
}

static int import_runtime(nsys_import *ni, ovl_err *err) {
  const char *t = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!has_table(ni, t)) return OVL_OK;
  char name_col[64], join[160], value[32], where[96], sql[1024];
  string_join(ni, column_or_null(ni, t, "r", "nameId", name_col, sizeof name_col), "s", join, sizeof join, value,
              sizeof value);
  process_filter(ni, t, "r", "globalTid", "WHERE", where, sizeof where);
  snprintf(sql, sizeof sql,
           "SELECT r.start, r.end, r.globalTid, r.correlationId, %s FROM %s r %s%s ORDER BY r.start", value, t, join,
           where);
  return query(ni, sql, on_runtime, err);
}

/* ---------------------------------------------------------------------------------- */
/* NVTX and NCCL calls                                                                 */
/* ---------------------------------------------------------------------------------- */

/* The integer after "key": in a JSON text (NCCL's payload as exported); 0 when found. */
static int payload_int(const char *json, const char *key, int64_t *v) {
  if (!json) return -1;
  size_t n = strlen(key);
  for (const char *p = strstr(json, key); p; p = strstr(p + 1, key)) {
    if (p == json || p[-1] != '"' || p[n] != '"') continue;
    const char *q = p + n + 1;
    while (*q == ' ' || *q == '\t' || *q == '\n') q++;
    if (*q++ != ':') continue;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '"') q++;
    char *end = NULL;
    if (*q == '-') *v = (int64_t)strtoll(q, &end, 10);
    else *v = (int64_t)strtoull(q, &end, 10);  /* communicator ids are unsigned 64-bit */
    return end == q ? -1 : 0;
  }
  return -1;
}

static const char *domain_name(const nsys_import *ni, int64_t id) {
  for (size_t i = 0; i < ni->domains.len; i++)
    if (ni->domains.items[i].id == id) return ni->domains.items[i].name;
  return NULL;
}

static int on_domain(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  const char *name = col_text(st, 1);
  if (!name || col_int(st, 0) == OVL_NONE) return OVL_OK;
  nvtx_domain d = {col_int(st, 0), strdup(name)};
  if (!d.name || OVL_VEC_PUSH(&ni->domains, d)) {
    free(d.name);
    return ovl_oom(err, "NVTX domains");
  }
  return OVL_OK;
}

/* An NCCL range: a collective call, or a communicator's creation (its rank and size). */
static int on_nccl_range(nsys_import *ni, const ovl_nvtx_row *row, const char *payload, ovl_err *err) {
  int64_t comm = OVL_NONE, v;
  if (!payload_int(payload, "NCCL communicator ID", &v)) comm = ovl_comm_id((uint64_t)v);
  if (strncmp(row->name, "ncclCommInitRank", 16) == 0 || strncmp(row->name, "ncclCommSplit", 13) == 0) {
    comm_info c = {comm, OVL_NONE, OVL_NONE};
    if (comm == OVL_NONE) return OVL_OK;
    if (!payload_int(payload, "Rank", &v)) c.rank = v;
    if (!payload_int(payload, "No. of ranks", &v)) c.nranks = v;
    return OVL_VEC_PUSH(&ni->comms, c) ? ovl_oom(err, "NCCL communicators") : OVL_OK;
  }
  const char *op = ovl_comm_op_from_call(row->name);
  if (!op || row->end == OVL_NONE) return OVL_OK;
  nccl_call call;
  memset(&call, 0, sizeof call);
  ovl_collective_row *r = &call.coll.row;
  r->id = r->rank = r->nranks = r->seq = r->count = r->bytes = r->peer = r->device = r->stream = OVL_NONE;
  r->group_id = OVL_NONE;
  r->comm = comm;
  r->op = op;
  if (!payload_int(payload, "Message size [bytes]", &v)) r->bytes = v;
  if (!payload_int(payload, "Root", &v) || !payload_int(payload, "Peer rank", &v)) r->peer = v;
  else if (strcmp(op, "Send") && strcmp(op, "Recv") && strcmp(op, "Broadcast") && strcmp(op, "Reduce")) r->peer = -1;
  r->host_start = row->start;
  r->host_end = row->end;
  r->tid = row->tid;
  call.tid = row->tid;
  call.coll.correlation = call.coll.gpu_start = OVL_NONE;
  return OVL_VEC_PUSH(&ni->calls, call) ? ovl_oom(err, "NCCL calls") : OVL_OK;
}

static int on_nvtx(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  int64_t type = col_int(st, 5);
  const char *name = col_text(st, 4);
  ovl_nvtx_row row = {col_int(st, 0), type == NVTX_MARK ? OVL_NONE : col_int(st, 1), tid_of(col_int(st, 2)),
                      NULL, name ? name : ""};
  int64_t domain_id = col_int(st, 3);
  if (domain_id != OVL_NONE && domain_id != 0) row.domain = domain_name(ni, domain_id);
  if (type != NVTX_MARK && row.end == OVL_NONE) {  /* a range that never ended */
    ni->st->skipped++;
    return OVL_OK;
  }
  int rc = ovl_tw_nvtx(ni->w, &row, err);
  if (rc) return rc;
  ni->st->events++;
  ni->st->nvtx++;
  if (row.domain && strcmp(row.domain, "NCCL") == 0 && name) return on_nccl_range(ni, &row, col_text(st, 6), err);
  return OVL_OK;
}

static int import_nvtx(nsys_import *ni, ovl_err *err) {
  const char *t = "NVTX_EVENTS";
  if (!has_table(ni, t)) return OVL_OK;
  char text_id[64], domain[64], json[64], text[64], join[160], value[32], where[96], sql[2048], name[200];
  const char *tid_col = column_or_null(ni, t, "n", "textId", text_id, sizeof text_id);
  string_join(ni, tid_col, "s", join, sizeof join, value, sizeof value);
  const char *text_col = column_or_null(ni, t, "n", "text", text, sizeof text);
  snprintf(name, sizeof name, "COALESCE(%s, %s)", text_col, value);
  const char *domain_col = column_or_null(ni, t, "n", "domainId", domain, sizeof domain);
  snprintf(sql, sizeof sql, "SELECT %s, %s FROM %s n %s WHERE n.eventType = %d", domain_col, name, t, join,
           NVTX_DOMAIN_CREATE);
  int rc = query(ni, sql, on_domain, err);
  if (rc) return rc;
  process_filter(ni, t, "n", "globalTid", "AND", where, sizeof where);
  snprintf(sql, sizeof sql,
           "SELECT n.start, n.end, n.globalTid, %s, %s, n.eventType, %s FROM %s n %s"
           " WHERE n.eventType IN (%d, %d, %d)%s ORDER BY n.start",
           domain_col, name, column_or_null(ni, t, "n", "jsonText", json, sizeof json), t, join, NVTX_MARK,
           NVTX_PUSHPOP_RANGE, NVTX_STARTEND_RANGE, where);
  return query(ni, sql, on_nvtx, err);
}

static int cmp_launch(const void *pa, const void *pb) {
  const nccl_launch *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return (a->start > b->start) - (a->start < b->start);
}

static int cmp_call(const void *pa, const void *pb) {
  const nccl_call *a = pa, *b = pb;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  int64_t sa = a->coll.row.host_start, sb = b->coll.row.host_start;
  return (sa > sb) - (sa < sb);
}

/* Links calls to the NCCL kernels launched on their thread, fills rank/size from the
** communicators, and writes them. */
static int write_calls(nsys_import *ni, ovl_err *err) {
  nccl_launch *l = ni->launches.items;
  nccl_call *c = ni->calls.items;
  size_t nl = ni->launches.len, nc = ni->calls.len;
  ovl_qsort(l, nl, sizeof *l, cmp_launch);
  ovl_qsort(c, nc, sizeof *c, cmp_call);
  size_t ci = 0;
  for (size_t li = 0; li < nl; li++) {
    while (ci < nc && c[ci].tid < l[li].tid) ci++;
    int64_t k;
    ovl_i64map_get(&ni->kernel_by_correlation, l[li].correlation, &k);
    const nccl_kernel_ref *kernel = &ni->kernels.items[k];
    for (; ci < nc && c[ci].tid == l[li].tid && c[ci].coll.row.host_start <= l[li].start; ci++) {
      c[ci].coll.correlation = l[li].correlation;
      c[ci].coll.gpu_start = kernel->start;
      c[ci].coll.row.device = kernel->device;
      c[ci].coll.row.stream = kernel->stream;
    }
  }
  ovl_found_colls fc = {0};
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < nc; i++) {
    ovl_collective_row *r = &c[i].coll.row;
    for (size_t m = 0; m < ni->comms.len; m++) {
      if (ni->comms.items[m].comm != r->comm) continue;
      r->rank = ni->comms.items[m].rank;
      r->nranks = ni->comms.items[m].nranks;
    }
    rc = ovl_found_colls_add(&fc, &c[i].coll, err);
  }
  if (!rc) rc = ovl_found_colls_write(&fc, ni->w, &ni->st->collectives, err);
  ovl_found_colls_free(&fc);
  return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Meta and entry point                                                                */
/* ---------------------------------------------------------------------------------- */

static int64_t single_int(const nsys_import *ni, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = OVL_NONE;
  if (sqlite3_prepare_v2(ni->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) v = col_int(st, 0);
  sqlite3_finalize(st);
  return v;
}

static int write_meta(nsys_import *ni, ovl_err *err) {
  const char *t = "TARGET_INFO_SESSION_START_TIME";
  int64_t utc = has_table(ni, t) && has_column(ni, t, "utcEpochNs")
                    ? single_int(ni, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")
                    : OVL_NONE;
  ovl_import_meta m = {OVL_NONE, OVL_NONE, ni->first_pid, utc, NULL, "nsys (session time)", "nsys", ni->path,
                       NULL, NULL, NULL, ni->st->skipped};
  return ovl_import_write_meta(ni->w, &m, err);
}

static int open_export(nsys_import *ni, const char *path, ovl_err *err) {
  ni->path = path;
  if (sqlite3_open_v2(path, &ni->db, SQLITE_OPEN_READONLY, ovl_scan_vfs_name()) != SQLITE_OK)
    return ovl_fail(err, OVL_EUSER, "%s: cannot open SQLite database: %s", path,
                    ni->db ? sqlite3_errmsg(ni->db) : "out of memory");
  ni->has_strings = has_table(ni, "StringIds");
  return OVL_OK;
}

static int on_process(nsys_import *ni, sqlite3_stmt *st, ovl_err *err) {
  return OVL_VEC_PUSH(&ni->pids, col_int(st, 0)) ? ovl_oom(err, "processes") : OVL_OK;
}

int ovl_nsys_processes(const char *path, int64_t **pids, size_t *n, ovl_err *err) {
  *pids = NULL;
  *n = 0;
  nsys_import ni;
  memset(&ni, 0, sizeof ni);
  int rc = open_export(&ni, path, err);
  static const char *const tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                       "CUPTI_ACTIVITY_KIND_MEMSET"};
  char sql[1024] = "";
  size_t used = 0;
  for (size_t i = 0; !rc && i < sizeof tables / sizeof tables[0]; i++) {
    if (!has_table(&ni, tables[i]) || !has_column(&ni, tables[i], "globalPid")) continue;
    used += (size_t)snprintf(sql + used, sizeof sql - used, "%sSELECT (globalPid >> 24) & 16777215 FROM %s",
                             used ? " UNION " : "", tables[i]);
  }
  if (!rc && used) {
    snprintf(sql + used, sizeof sql - used, " ORDER BY 1");
    rc = query(&ni, sql, on_process, err);
  }
  if (!rc) {
    *pids = ni.pids.items;
    *n = ni.pids.len;
  } else {
    OVL_VEC_FREE(&ni.pids);
  }
  sqlite3_close(ni.db);
  return rc;
}

int ovl_nsys_import(const char *path, int64_t pid, ovl_trace_writer *w, ovl_import_stats *stats, ovl_err *err) {
  nsys_import ni;
  memset(&ni, 0, sizeof ni);
  ni.w = w;
  ni.st = stats;
  ni.pid = pid;
  ni.first_pid = OVL_NONE;
  stats->rank = stats->world_size = OVL_NONE;
  int rc = open_export(&ni, path, err);
  ni.progress = "converting (1 of 5: kernels)";
  if (!rc) rc = import_kernels(&ni, err);
  ni.progress = "converting (2 of 5: memory copies)";
  if (!rc) rc = import_memops(&ni, "CUPTI_ACTIVITY_KIND_MEMCPY", 0, err);
  ni.progress = "converting (3 of 5: memsets)";
  if (!rc) rc = import_memops(&ni, "CUPTI_ACTIVITY_KIND_MEMSET", 1, err);
  ni.progress = "converting (4 of 5: CUDA calls)";
  if (!rc) rc = import_runtime(&ni, err);
  ni.progress = "converting (5 of 5: NVTX ranges)";
  if (!rc) rc = import_nvtx(&ni, err);
  ni.progress = NULL;
  if (!rc) rc = write_calls(&ni, err);
  if (!rc) rc = write_meta(&ni, err);
  for (size_t i = 0; i < ni.domains.len; i++) free(ni.domains.items[i].name);
  OVL_VEC_FREE(&ni.domains);
  OVL_VEC_FREE(&ni.kernels);
  OVL_VEC_FREE(&ni.launches);
  OVL_VEC_FREE(&ni.calls);
  OVL_VEC_FREE(&ni.comms);
  ovl_i64map_free(&ni.kernel_by_correlation);
  sqlite3_close(ni.db);
  return rc;
}
