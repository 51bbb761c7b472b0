/* Traces without GPU work: see host_only.h. */
#include "host_only.h"

#include "store/trace_rows.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t query_int(sqlite3 *db, const char *sql, int64_t fallback) {
  sqlite3_stmt *st = NULL;
  int64_t v = fallback;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
      sqlite3_column_type(st, 0) != SQLITE_NULL)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* A meta value (empty strings as NULL), malloc'd. */
static char *meta(sqlite3 *db, const char *key) {
  sqlite3_stmt *st = NULL;
  char *v = NULL;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) && sqlite3_column_text(st, 0)[0])
      v = strdup((const char *)sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  return v;
}

static int64_t meta_int(sqlite3 *db, const char *key) {
  char *v = meta(db, key), *end = NULL;
  int64_t n = OVL_NONE;
  if (v) {
    long long x = strtoll(v, &end, 10);
    if (end && *end == 0) n = x;
  }
  free(v);
  return n;
}

static void ops_of(sqlite3 *db, ovl_host_only *h) {
  sqlite3_stmt *st = NULL;
  size_t used = 0;
  h->ops[0] = 0;
  if (sqlite3_prepare_v2(db, "SELECT op, count(*) FROM collectives GROUP BY op ORDER BY count(*) DESC, op", -1, &st,
                         NULL) != SQLITE_OK)
    return;
  while (sqlite3_step(st) == SQLITE_ROW && used + 1 < sizeof h->ops) {
    const unsigned char *op = sqlite3_column_text(st, 0);
    snprintf(h->ops + used, sizeof h->ops - used, "%s%lld %s", used ? ", " : "", (long long)sqlite3_column_int64(st, 1),
             op ? (const char *)op : "?");
    used = strlen(h->ops);
  }
  sqlite3_finalize(st);
}

static void explain(sqlite3 *db, ovl_host_only *h) {
  char *format = meta(db, "import_format");
  if (h->cupti && strncmp(h->cupti, "attached", 8) != 0)
    snprintf(h->reason, sizeof h->reason, "CUPTI was %s, so no GPU activity was recorded", h->cupti);
  else if (h->cupti)
    snprintf(h->reason, sizeof h->reason, "CUPTI was %s but delivered no GPU activity (the process ran no GPU work "
                                          "while traced, or it exited before CUPTI flushed)", h->cupti);
  else if (format && strcmp(format, "kineto") == 0)
    snprintf(h->reason, sizeof h->reason, "the PyTorch profiler recorded no GPU events (kernels, memcpy, memset): "
                                          "CUDA activities were not enabled (ProfilerActivity.CUDA), or no GPU work ran "
                                          "in the window");
  else if (format && strcmp(format, "nsys") == 0)
    snprintf(h->reason, sizeof h->reason, "the Nsight Systems export holds no CUDA activity for this process");
  else
    snprintf(h->reason, sizeof h->reason, "the trace holds no kernels or memory operations");
  free(format);
}

int ovl_host_only_read(const char *ovl_path, const char *user_path, ovl_host_only *out, int *is_host_only,
                       ovl_err *err) {
  *is_host_only = 0;
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(ovl_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return ovl_fail(err, OVL_EUSER, "%s: cannot open: %s", user_path, db ? sqlite3_errmsg(db) : "out of memory");
  }
  /* The reader's rule for a valid row: start and end known, end >= start. */
  int64_t gpu = query_int(db,
                          "SELECT (SELECT count(*) FROM kernels WHERE start IS NOT NULL AND end IS NOT NULL AND end >= "
                          "start) + (SELECT count(*) FROM memops WHERE start IS NOT NULL AND end IS NOT NULL AND end >= "
                          "start)",
                          -1);
  if (gpu != 0) {
    sqlite3_close(db);
    return OVL_OK;
  }
  memset(out, 0, sizeof *out);
  out->trace_path = strdup(user_path);
  out->hostname = meta(db, "hostname");
  out->cupti = meta(db, "cupti");
  out->rank = meta_int(db, "rank");
  out->world_size = meta_int(db, "world_size");
  out->collectives = (long)query_int(db, "SELECT count(*) FROM collectives", 0);
  out->api_calls = (long)query_int(db, "SELECT count(*) FROM api", 0);
  out->collective_bytes = query_int(db, "SELECT sum(bytes) FROM collectives WHERE bytes >= 0", 0);
  if (out->rank == OVL_NONE) out->rank = query_int(db, "SELECT rank FROM collectives WHERE rank >= 0 LIMIT 1",
                                                        OVL_NONE);
  ops_of(db, out);
  explain(db, out);
  sqlite3_close(db);
  if (!out->trace_path) {
    ovl_host_only_free(out);
    return ovl_oom(err, "results");
  }
  *is_host_only = 1;
  return OVL_OK;
}

void ovl_host_only_describe(const ovl_host_only *h, char *buf, size_t len) {
  snprintf(buf, len, "%s: trace has no GPU activity (no valid kernels or memops): %s; host side: %ld NCCL call%s%s%s%s, "
                     "%ld CUDA API call%s",
           h->trace_path, h->reason, h->collectives, h->collectives == 1 ? "" : "s", h->ops[0] ? " (" : "", h->ops,
           h->ops[0] ? ")" : "", h->api_calls, h->api_calls == 1 ? "" : "s");
}

void ovl_host_only_free(ovl_host_only *h) {
  free(h->trace_path);
  free(h->hostname);
  free(h->cupti);
  memset(h, 0, sizeof *h);
}
