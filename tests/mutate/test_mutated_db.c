/*
** The mutated-database suite: a trace written by `ovl simulate` is damaged in one way at a
** time (values of the wrong type, NULLs, negative or huge timestamps, end < start, duplicate
** and dangling ids, missing and extra tables, a newer schema, truncation at many offsets,
** flipped bytes in every page), and every verb reads it: report (text and JSON), export
** (Chrome JSON and Perfetto), fit, whatif, import, stats (JSON) and diff (the undamaged trace
** against it). Each must either fail cleanly (exit 1, one line "ovl: ...") or succeed with a
** sane result: no crash, no hang (60 s), no NaN or infinity, no negative duration, no
** efficiency outside 0..1 (JSON) or 0..100% (report text).
**
** usage: test_mutated_db OVL
*/
#include "check.h"
#include "load/byte_input.h"
#include "load/json_stream.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *ovl;
static const char *base;    /* the undamaged trace */
static const char *mutant;  /* the damaged copy every verb reads */
static const char *outdir;  /* what verbs write */
static long runs, clean_failures;

/* Damage written in SQL, applied to a copy of the base trace. */
typedef struct sql_mutation {
  const char *name, *sql;
} sql_mutation;

static const sql_mutation sql_mutations[] = {
  {"text-in-int-start", "UPDATE kernels SET start='abc' WHERE rowid % 3 = 0"},
  {"text-in-int-end", "UPDATE kernels SET end='12x' WHERE rowid % 5 = 0"},
  {"text-in-collectives", "UPDATE collectives SET bytes='many', nranks='eight', seq='s'"},
  {"text-in-nvtx", "UPDATE nvtx SET start='early', tid='t'"},
  {"text-in-api", "UPDATE api SET correlation='c', start='s' WHERE rowid % 2 = 0"},
  {"real-in-int", "UPDATE kernels SET start=start+0.5, end=end+0.25"},
  {"blob-in-int", "UPDATE kernels SET device=x'00ff', stream=x'' WHERE rowid % 4 = 0"},
  {"null-kernel-end", "UPDATE kernels SET end=NULL WHERE rowid % 2 = 0"},
  {"null-kernels", "UPDATE kernels SET start=NULL, end=NULL, device=NULL, stream=NULL, correlation=NULL, name=NULL"},
  {"null-collectives", "UPDATE collectives SET op=NULL, comm=NULL, bytes=NULL, host_start=NULL, nranks=NULL"},
  {"null-nvtx", "UPDATE nvtx SET name=NULL, start=NULL WHERE rowid % 2 = 0"},
  {"null-launches", "UPDATE collective_launches SET collective=NULL WHERE rowid % 2 = 0"},
  {"null-meta", "UPDATE meta SET value=NULL WHERE key <> 'schema_version'"},
  {"negative-times", "UPDATE kernels SET start=start-4000000000, end=end-4000000000"},
  {"negative-everything", "UPDATE kernels SET start=-end, end=-start; UPDATE nvtx SET start=-start, end=-end"},
  {"huge-kernel-end", "UPDATE kernels SET end=9223372036854775807 WHERE rowid = 1"},
  {"min-kernel-start", "UPDATE kernels SET start=-9223372036854775808 WHERE rowid = 2"},
  {"huge-nvtx-end", "UPDATE nvtx SET end=9223372036854775807 WHERE end IS NOT NULL AND name = 'step'"},
  {"end-before-start", "UPDATE kernels SET end=start-1000 WHERE rowid % 2 = 1"},
  {"end-before-start-nvtx", "UPDATE nvtx SET end=start-5 WHERE end IS NOT NULL"},
  {"end-before-start-coll", "UPDATE collectives SET host_end=host_start-7"},
  {"end-before-start-api", "UPDATE api SET end=start-1"},
  {"shuffled-order", "UPDATE kernels SET start=start+((rowid*7919)%97)*1000000, end=end+((rowid*7919)%97)*1000000"},
  {"duplicate-kernels", "INSERT INTO kernels SELECT * FROM kernels"},
  {"duplicate-launches", "INSERT INTO collective_launches SELECT * FROM collective_launches"},
  {"duplicate-correlation", "UPDATE kernels SET correlation=1; UPDATE api SET correlation=1"},
  {"duplicate-nvtx-steps", "INSERT INTO nvtx SELECT * FROM nvtx WHERE name = 'step'"},
  {"dangling-launch", "UPDATE collective_launches SET collective=collective+100000"},
  {"dangling-correlation", "UPDATE collective_launches SET correlation=correlation+100000"},
  {"dangling-name", "UPDATE kernels SET name=name+100000"},
  {"negative-string-id", "UPDATE strings SET id=-id"},
  {"missing-kernels", "DROP TABLE kernels"},
  {"missing-memops", "DROP TABLE memops"},
  {"missing-collectives", "DROP TABLE collectives"},
  {"missing-launches", "DROP TABLE collective_launches"},
  {"missing-nvtx", "DROP TABLE nvtx"},
  {"missing-api", "DROP TABLE api"},
  {"missing-strings", "DROP TABLE strings"},
  {"missing-meta", "DROP TABLE meta"},
  {"missing-column", "ALTER TABLE kernels DROP COLUMN stream"},
  {"table-is-view", "DROP TABLE api; CREATE VIEW api AS SELECT 1 AS start, 2 AS end, 3 AS tid, 4 AS correlation, 5 AS name"},
  {"extra-table", "CREATE TABLE extra(a, b); INSERT INTO extra VALUES (1, 'x')"},
  {"extra-column", "ALTER TABLE kernels ADD COLUMN extra_col TEXT DEFAULT 'x'"},
  {"newer-schema", "UPDATE meta SET value='999' WHERE key='schema_version'"},
  {"schema-version-text", "UPDATE meta SET value='one' WHERE key='schema_version'"},
  {"no-schema-version", "DELETE FROM meta WHERE key='schema_version'"},
  {"newer-user-version", "PRAGMA user_version=999"},
  {"empty-tables", "DELETE FROM kernels; DELETE FROM memops; DELETE FROM collectives; "
                   "DELETE FROM collective_launches; DELETE FROM nvtx; DELETE FROM api"},
  {"world-size-zero", "UPDATE meta SET value='0' WHERE key='world_size'"},
  {"rank-out-of-range", "UPDATE meta SET value='99999999999999999999' WHERE key IN ('rank', 'world_size')"},
  {"nranks-zero", "UPDATE collectives SET nranks=0"},
  {"nranks-negative", "UPDATE collectives SET nranks=-3, bytes=-5, count=-1"},
  {"unknown-op", "UPDATE collectives SET op='AllReduceButNot', dtype='Float512'"},
  {"step-names-garbage", "UPDATE nvtx SET name='grad_ready bucket=99999999999999999999 bytes=-1' WHERE end IS NULL"},
};

static void copy_file(const char *from, const char *to, long truncate_at) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  if (!in || !out) {
    fprintf(stderr, "cannot copy %s to %s\n", from, to);
    exit(2);
  }
  char buf[65536];
  long left = truncate_at < 0 ? -1 : truncate_at;
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0 && left != 0) {
    if (left > 0 && (long)n > left) n = (size_t)left;
    if (fwrite(buf, 1, n, out) != n) exit(2);
    if (left > 0) left -= (long)n;
  }
  fclose(in);
  if (fclose(out) != 0) exit(2);
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* --- checks of what a verb printed ------------------------------------------------------ */

static int is_duration_key(const char *k) {
  static const char *const keys[] = {"t_compute_ns", "t_comm_ns", "t_exposed_ns", "t_memory_ns", "compute_ns",
                                     "comm_ns",      "memory_ns", "exposed_ns",   NULL};
  for (size_t i = 0; keys[i]; i++)
    if (strcmp(k, keys[i]) == 0) return 1;
  return 0;
}

/* Checks a JSON report: every number finite, durations >= 0, efficiencies in 0..1,
** end_ns >= start_ns within one object. Returns NULL or what is wrong. */
static const char *check_report_json(const char *path, char *why, size_t cap) {
  ovl_err err = {0};
  ovl_byte_input *in = NULL;
  ovl_json *j = NULL;
  if (ovl_input_open(path, &in, &err) || ovl_json_open(in, NULL, &j, &err)) {
    ovl_input_close(in);
    snprintf(why, cap, "report unreadable: %.200s", err.msg);
    return why;
  }
  char key[64] = "";
  double start[256], gpu_start[256];  /* per depth; NAN when not seen */
  for (size_t i = 0; i < 256; i++) start[i] = gpu_start[i] = NAN;
  const char *bad = NULL;
  for (;;) {
    ovl_json_token tok;
    if (ovl_json_next(j, &tok, &err)) {
      snprintf(why, cap, "report is not JSON: %.200s", err.msg);
      bad = why;
      break;
    }
    if (tok == OVL_JSON_EOF) break;
    size_t d = ovl_json_depth(j) % 256;
    if (tok == OVL_JSON_OBJECT_BEGIN) start[d] = gpu_start[d] = NAN;
    if (tok == OVL_JSON_KEY) {
      snprintf(key, sizeof key, "%s", ovl_json_text(j, NULL));
      continue;
    }
    if (tok != OVL_JSON_NUMBER) continue;
    const char *text = ovl_json_text(j, NULL);
    char *end = NULL;
    double v = strtod(text, &end);
    if (!isdigit((unsigned char)text[text[0] == '-']) || !isfinite(v)) {
      snprintf(why, cap, "%s is %s", key, text);
      bad = why;
    } else if (is_duration_key(key) && v < 0) {
      snprintf(why, cap, "negative duration %s = %s", key, text);
      bad = why;
    } else if (strstr(key, "efficiency") && (v < 0 || v > 1)) {
      snprintf(why, cap, "%s = %s outside 0..1", key, text);
      bad = why;
    } else if (strcmp(key, "start_ns") == 0) {
      start[d] = v;
    } else if (strcmp(key, "gpu_start_ns") == 0) {
      gpu_start[d] = v;
    } else if ((strcmp(key, "end_ns") == 0 && v < start[d]) || (strcmp(key, "gpu_end_ns") == 0 && v < gpu_start[d])) {
      snprintf(why, cap, "%s = %s before its start", key, text);
      bad = why;
    }
    if (bad) break;
  }
  ovl_json_close(j);
  ovl_input_close(in);
  return bad;
}

/* Checks text output: no nan/inf; with percentages_bounded (the report's efficiencies), every
** percentage in 0..100; with times_positive (whatif's step times), no negative time. */
static const char *check_text(const char *out, int percentages_bounded, int times_positive, char *why, size_t cap) {
  for (const char *p = out; *p; p++) {
    int word_start = p == out || !isalnum((unsigned char)p[-1]);
    if (word_start && (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0) && !isalpha((unsigned char)p[3])) {
      snprintf(why, cap, "text report shows '%.12s'", p);
      return why;
    }
    if (times_positive && *p == '-' && p > out && p[-1] == ' ' && isdigit((unsigned char)p[1])) {
      char *unit = NULL;
      strtod(p + 1, &unit);
      if (unit[0] == ' ' && (unit[1] == 'n' || unit[1] == 'u' || unit[1] == 'm' || unit[1] == 's')) {
        snprintf(why, cap, "negative time '%.16s'", p);
        return why;
      }
    }
    if (percentages_bounded && *p == '%' && p > out) {
      const char *q = p;
      while (q > out && (isdigit((unsigned char)q[-1]) || q[-1] == '.' || q[-1] == '-')) q--;
      if (q < p) {
        double v = strtod(q, NULL);
        if (v < 0 || v > 100) {
          snprintf(why, cap, "text report shows %.*s%%", (int)(p - q), q);
          return why;
        }
      }
    }
  }
  return NULL;
}

/* --- one verb on one mutant --------------------------------------------------------------- */

typedef enum { V_REPORT, V_JSON, V_CHROME, V_PERFETTO, V_FIT, V_WHATIF, V_IMPORT, V_STATS, V_DIFF, V_COUNT } verb;
static const char *const verb_names[V_COUNT] = {"report", "report --json", "export --chrome", "export --perfetto",
                                                "fit", "whatif", "import", "stats --json", "diff"};

static void remove_outputs(void) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'-journal '%s'-wal '%s'-shm", outdir, mutant, mutant, mutant);
  cmd_result r = run_cmd(cmd);
  cmd_free(&r);
}

/* A refusal: one line "ovl: <problem>", after any number of "ovl: <file>: warning: ..." lines. */
static int one_error_line(const char *err) {
  int errors = 0;
  for (const char *line = err; *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char text[2048];
    snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), line);
    if (strncmp(text, "ovl: ", 5) != 0) return 0;
    if (!strstr(text, ": warning: ")) errors++;
    line += len + (nl != NULL);
  }
  return errors == 1;
}

/* Returns NULL when the outcome is acceptable, else what is wrong (in why). */
static const char *run_verb(verb v, char *why, size_t cap) {
  char cmd[8192], json[4200];
  snprintf(json, sizeof json, "%s/report.json", outdir);
  switch (v) {
    case V_REPORT: snprintf(cmd, sizeof cmd, "'%s' report --all '%s'", ovl, mutant); break;
    case V_JSON: snprintf(cmd, sizeof cmd, "'%s' report --json -o '%s' '%s'", ovl, json, mutant); break;
    case V_CHROME: snprintf(cmd, sizeof cmd, "'%s' export --chrome '%s/t.json' '%s'", ovl, outdir, mutant); break;
    case V_PERFETTO: snprintf(cmd, sizeof cmd, "'%s' export --perfetto '%s/t.pftrace' '%s'", ovl, outdir, mutant); break;
    case V_FIT: snprintf(cmd, sizeof cmd, "'%s' fit '%s'", ovl, mutant); break;
    case V_WHATIF: snprintf(cmd, sizeof cmd, "'%s' whatif --bucket-mb 25,100 --alpha 50us --beta 12GB/s '%s'", ovl, mutant); break;
    case V_STATS: snprintf(cmd, sizeof cmd, "'%s' stats --json -o '%s' '%s'", ovl, json, mutant); break;
    case V_DIFF: snprintf(cmd, sizeof cmd, "'%s' diff --all '%s' '%s'", ovl, base, mutant); break;
    default: snprintf(cmd, sizeof cmd, "'%s' import -o '%s/i.sqlite' '%s'", ovl, outdir, mutant); break;
  }
  cmd_result r = run_cmd(cmd);
  runs++;
  const char *bad = NULL;
  if (r.status == 1) {
    clean_failures++;
    if (!one_error_line(r.err)) {
      snprintf(why, cap, "exit 1 without one 'ovl: ' error line (after warnings): %.300s", r.err);
      bad = why;
    }
  } else if (r.status != 0) {
    snprintf(why, cap, "exit %d (%s): %.600s", r.status, r.status < 0 ? "crash or hang" : "not 0 or 1", r.err);
    bad = why;
  } else if (v == V_JSON || v == V_STATS) {
    bad = check_report_json(json, why, cap);
  } else if (v == V_REPORT || v == V_FIT || v == V_WHATIF || v == V_DIFF) {
    bad = check_text(r.out, v == V_REPORT, v == V_WHATIF, why, cap);
  }
  cmd_free(&r);
  return bad;
}

static void run_every_verb(const char *what) {
  for (verb v = 0; v < V_COUNT; v++) {
    char why[1024];
    const char *bad = run_verb(v, why, sizeof why);
    remove_outputs();
    if (!bad) continue;
    fprintf(stderr, "%s: ovl %s: %s\n", what, verb_names[v], bad);
    CHECK(!"a verb mishandled a damaged trace");
  }
}

/* --- the mutants -------------------------------------------------------------------------- */

static void apply_sql(const char *name, const char *sql) {
  copy_file(base, mutant, -1);
  sqlite3 *db = NULL;
  char *msg = NULL;
  if (sqlite3_open(mutant, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "%s: cannot apply '%s': %s\n", name, sql, msg ? msg : sqlite3_errmsg(db));
    exit(2);
  }
  sqlite3_close(db);
}

static void flip_byte(long offset) {
  FILE *f = fopen(mutant, "r+b");
  if (!f || fseek(f, offset, SEEK_SET) != 0) exit(2);
  int c = fgetc(f);
  if (c == EOF || fseek(f, offset, SEEK_SET) != 0 || fputc(c ^ 0xff, f) == EOF) exit(2);
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_mutated_db OVL\n");
    return 2;
  }
  ovl = argv[1];
  base = tb_temp_path("base.sqlite");
  mutant = tb_temp_path("mutant.sqlite");
  outdir = tb_temp_path("out");
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' simulate --bucket-layers 8 --steps 2 --emit-trace '%s'", outdir,
           ovl, base);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) {
    fprintf(stderr, "cannot build the base trace: %s\n", r.err);
    return 2;
  }
  cmd_free(&r);
  /* The undamaged trace passes every check: the checks can tell good from bad. */
  copy_file(base, mutant, -1);
  long before = runs;
  run_every_verb("undamaged");
  CHECK(runs == before + V_COUNT && clean_failures == 0);  /* every verb succeeds on it */
  clean_failures = 0;

  for (size_t i = 0; i < sizeof sql_mutations / sizeof sql_mutations[0]; i++) {
    apply_sql(sql_mutations[i].name, sql_mutations[i].sql);
    run_every_verb(sql_mutations[i].name);
  }

  long size = file_size(base);
  CHECK(size > 8192);
  /* Truncation: inside the header, at and between page boundaries, one byte short. */
  long cuts[64];
  size_t ncuts = 0;
  long fixed[] = {0, 1, 15, 16, 99, 100, 101, 512, 1024, 2048, size - 1};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) cuts[ncuts++] = fixed[i];
  for (long off = 4096; off < size && ncuts + 2 < 64; off += 4096) {
    cuts[ncuts++] = off;
    cuts[ncuts++] = off + 1800;
  }
  for (size_t i = 0; i < ncuts; i++) {
    char name[64];
    snprintf(name, sizeof name, "truncated-at-%ld", cuts[i]);
    copy_file(base, mutant, cuts[i]);
    run_every_verb(name);
  }
  /* Flipped bytes: the fields of the database header, then each page's b-tree header, cell
  ** count, cell pointers and content. */
  long header_bytes[] = {16, 17, 18, 19, 21, 28, 31, 32, 36, 44, 52, 56, 60, 96};
  for (size_t i = 0; i < sizeof header_bytes / sizeof header_bytes[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "flipped-byte-%ld", header_bytes[i]);
    copy_file(base, mutant, -1);
    flip_byte(header_bytes[i]);
    run_every_verb(name);
  }
  long page_bytes[] = {0, 4, 9, 2000, 4000};
  for (long page = 0; page * 4096 < size; page++) {
    for (size_t i = 0; i < sizeof page_bytes / sizeof page_bytes[0]; i++) {
      long off = page * 4096 + page_bytes[i] + (page == 0 ? 100 : 0);
      if (off >= size) continue;
      char name[64];
      snprintf(name, sizeof name, "flipped-page-%ld-byte-%ld", page, page_bytes[i]);
      copy_file(base, mutant, -1);
      flip_byte(off);
      run_every_verb(name);
    }
  }
  printf("%ld runs of the verbs on damaged traces: %ld clean refusals (exit 1, one line), the rest sane "
         "results\n",
         runs, clean_failures);
  return check_summary();
}
