/*
** Real Kineto traces recorded by other people (../shared/traces, see its README): every one
** imports without error, and its numbers of kernels, NCCL kernels and ranks (GPUs), its
** rank and world size match an independent count made here by plain text scanning of the
** decompressed file (zlib, substring search per event: no JSON parser), not by ovl's parser.
** The 8 files of kineto-param-dlrm8 load as 8 ranks of one job. The trace without GPU events
** is reported as such, naming the file. Skipped (exit 77) when the folder is absent.
** usage: test_import_real_traces OVL_BINARY TRACES_DIR
*/
#include "driver/job_driver.h"
#include "check.h"
#include "gz_text.h"
#include "load/trace_import.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define SKIP 77

typedef struct text_counts {
  long kernels, nccl_kernels, devices;
  long rank, world_size;
} text_counts;


/* The text of the string value after `"key":` within [p, end), copied into out; 0 if absent. */
static int value_after(const char *p, const char *end, const char *key, char *out, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *k = tb_find_in(p, end, pat);
  if (!k) return 0;
  k += strlen(pat);
  while (*k == ' ' || *k == ':') k++;
  size_t n = 0;
  if (*k == '"') {
    k++;
    while (k < end && *k != '"' && n + 1 < cap) out[n++] = *k++;
  } else {
    while (k < end && *k != ',' && *k != '}' && *k != ' ' && n + 1 < cap) out[n++] = *k++;
  }
  out[n] = 0;
  return 1;
}

static int contains_nccl(const char *s) {
  for (; *s; s++)
    if (strncasecmp(s, "nccl", 4) == 0) return 1;
  return 0;
}

/* Events are the spans between successive "ph" keys (Kineto puts no such key inside args). */
static text_counts count_by_text(const char *path) {
  size_t n;
  char *text = tb_inflate_file(path, &n);
  text_counts c = {0, 0, 0, -1, -1};
  long pids[64];
  const char *p = tb_find_in(text, text + n, "\"ph\"");
  while (p) {
    const char *next = tb_find_in(p + 4, text + n, "\"ph\"");
    const char *end = next ? next : text + n;
    char cat[32], name[256], pid[32];
    if (value_after(p, end, "cat", cat, sizeof cat) && (strcmp(cat, "kernel") == 0 || strcmp(cat, "Kernel") == 0)) {
      c.kernels++;
      if (value_after(p, end, "name", name, sizeof name) && contains_nccl(name)) c.nccl_kernels++;
      if (value_after(p, end, "pid", pid, sizeof pid)) {
        long v = atol(pid), k = 0;
        while (k < c.devices && pids[k] != v) k++;
        if (k == c.devices && c.devices < 64) pids[c.devices++] = v;
      }
    }
    p = next;
  }
  const char *di = tb_find_in(text, text + n, "\"distributedInfo\"");
  const char *di_end = di && text + n - di > 400 ? di + 400 : text + n;
  char v[32];
  if (di && value_after(di, di_end, "rank", v, sizeof v)) c.rank = atol(v);
  if (di && value_after(di, di_end, "world_size", v, sizeof v)) c.world_size = atol(v);
  free(text);
  return c;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void check_trace(const char *path) {
  text_counts want = count_by_text(path);
  const char *out = tb_temp_path("real.sqlite");
  ovl_import_stats st;
  ovl_err err = {0};
  int rc = ovl_import_trace(path, OVL_FORMAT_KINETO_JSON, OVL_NONE, out, NULL, &st, &err);
  fprintf(stderr, "%s: %ld kernels (%ld NCCL) on %ld GPU(s), rank %ld of %ld\n", path, want.kernels,
          want.nccl_kernels, want.devices, want.rank, want.world_size);
  CHECK_I64(rc, OVL_OK);
  if (rc) fprintf(stderr, "  import: %s\n", err.msg);
  CHECK_I64(st.kernels, want.kernels);
  CHECK_I64(st.nccl_kernels, want.nccl_kernels);
  CHECK_I64(st.rank, want.rank);
  CHECK_I64(st.world_size, want.world_size);
  remove(out);

  /* Analysed directly from the file, as every command does. */
  ovl_analysis_options aopt = {0};
  ovl_analysis_ctx ctx;
  CHECK(ovl_analysis_ctx_init(&ctx, &aopt, &err) == OVL_OK);
  char *args[] = {(char *)path};
  ovl_job job;
  rc = ovl_analyze_job(&ctx, args, 1, NULL, NULL, &job, &err);
  if (want.kernels == 0) {
    /* A trace without GPU events: the error says so and names the user's file. */
    CHECK_I64(rc, OVL_EUSER);
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    CHECK(strstr(err.msg, "no GPU activity") != NULL);
  } else {
    CHECK_I64(rc, OVL_OK);
    if (rc) fprintf(stderr, "  analyse: %s\n", err.msg);
    CHECK_I64(rc ? -1 : (long)job.nranks, want.devices);
    long kernels = 0, comm = 0;
    for (size_t i = 0; !rc && i < job.nranks; i++) {
      kernels += job.ranks[i].n_kernels;
      comm += job.ranks[i].n_comm_kernels;
      CHECK_I64(job.ranks[i].rank, want.rank);
      CHECK_I64(job.ranks[i].world_size, want.world_size);
    }
    CHECK_I64(kernels, want.kernels);
    CHECK_I64(comm, want.nccl_kernels);
    if (!rc) ovl_job_free(&job);
  }
  ovl_analysis_ctx_free(&ctx);
}

/* `ovl report --json DIR` on the 8 workers of one job: 8 ranks 0..7, world size 8. */
static void check_one_job(const char *ovl, const char *dir) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "'%s' report --json '%s'", ovl, dir);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  int seen[8] = {0}, ranks = 0, world8 = 0;
  const char *end = r.out + strlen(r.out);
  for (const char *line = r.out; line && line < end; line = tb_find_in(line, end, "\n") ? tb_find_in(line, end, "\n") + 1 : NULL) {
    int k;
    if (strncmp(line, "  \"ranks_without_gpu\"", 21) == 0) break;  /* the ranks array ends there */
    if (sscanf(line, "      \"rank\": %d,", &k) == 1 && strncmp(line, "      \"rank\"", 12) == 0) {
      ranks++;
      if (k >= 0 && k < 8) seen[k]++;
    }
    if (strncmp(line, "      \"world_size\": 8,", 22) == 0) world8++;
  }
  CHECK_I64(ranks, 8);
  CHECK_I64(world8, 8);
  for (int k = 0; k < 8; k++) CHECK_I64(seen[k], 1);
  cmd_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OVL_BINARY TRACES_DIR\n", argv[0]);
    return 2;
  }
  struct stat sb;
  if (stat(argv[2], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    printf("SKIP: %s is absent (real third-party traces are not part of a fresh clone)\n", argv[2]);
    return SKIP;
  }
  const char *folders[] = {"kineto-hta", "kineto-nonccl", "kineto-param-dlrm8"};
  long traces = 0;
  for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", argv[2], folders[f]);
    DIR *d = opendir(dir);
    if (!d) continue;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (!has_suffix(e->d_name, ".json.gz") && !has_suffix(e->d_name, ".json")) continue;
      char path[8192];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      check_trace(path);
      traces++;
    }
    closedir(d);
    if (strcmp(folders[f], "kineto-param-dlrm8") == 0) check_one_job(argv[1], dir);
  }
  CHECK(traces >= 10);
  return check_summary();
}
