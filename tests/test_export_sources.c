/*
** One trace source per traced process, shared by the analysis and the export: over Kineto
** files (a two-rank job, and one file under --hta-compat), a two-process Nsight Systems
** export and ovl traces,
**   - the export draws, for every process, exactly the kernels the analysis (the report)
**     counts for that rank, and its exposed-communication counter is 1 for exactly the
**     rank's exposed time (t_exposed_ns);
**   - each input is imported once per command (`export --perfetto --chrome` included),
**     counted by the OVL_DEBUG_IMPORTS stat line of the CLI and by ovl_import_count().
**
** usage: test_export_sources OVL DATA_TRACES_DIR
*/
#include "driver/job_driver.h"
#include "check.h"
#include "load/trace_import.h"
#include "nsys_builder.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ovl, *data;

/* N of the CLI's "ovl: debug: N import(s)" line, or -1. */
static long imports_of(const char *err) {
  const char *p = strstr(err, "ovl: debug: ");
  return p ? atol(p + strlen("ovl: debug: ")) : -1;
}

/* Kernel slices (categories "kernel" and "nccl") per Chrome pid of an uncompressed export;
** pids at or beyond n count in *other. */
static void chrome_kernels(const char *path, long *per_pid, size_t n, long *other) {
  memset(per_pid, 0, n * sizeof *per_pid);
  *other = 0;
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  if (!f) return;
  static char line[1 << 16];
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "\"ph\":\"X\"") || (!strstr(line, "\"cat\":\"kernel\"") && !strstr(line, "\"cat\":\"nccl\"")))
      continue;
    const char *pid = strstr(line, "\"pid\":");
    long p = pid ? atol(pid + 6) : -1;
    if (p >= 0 && (size_t)p < n) per_pid[p]++;
    else (*other)++;
  }
  fclose(f);
}

/* A Chrome "ts" (µs with up to three decimals, written from integer ns) as ns, exactly. */
static int64_t ts_ns(const char *p) {
  int64_t us = 0, frac = 0;
  int neg = *p == '-', digits = 0;
  if (neg) p++;
  for (; *p >= '0' && *p <= '9'; p++) us = us * 10 + (*p - '0');
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9' && digits < 3; p++, digits++) frac = frac * 10 + (*p - '0');
  for (; digits < 3; digits++) frac *= 10;
  return (neg ? -1 : 1) * (us * 1000 + frac);
}

/* Time during which the "exposed communication" counter of each Chrome pid is 1 (ns). */
static void chrome_exposed(const char *path, int64_t *per_pid, size_t n) {
  int64_t last_ts[64], last_value[64];
  memset(per_pid, 0, n * sizeof *per_pid);
  memset(last_value, 0, sizeof last_value);
  FILE *f = fopen(path, "r");
  if (!f) return;
  static char line[1 << 16];
  while (fgets(line, sizeof line, f)) {
    const char *pid = strstr(line, "\"pid\":"), *ts = strstr(line, "\"ts\":"), *v = strstr(line, "\"value\":");
    if (!strstr(line, "\"ph\":\"C\"") || !strstr(line, "\"name\":\"exposed communication\"") || !pid || !ts || !v) continue;
    long p = atol(pid + 6);
    if (p < 0 || (size_t)p >= n || p >= 64) continue;
    int64_t t = ts_ns(ts + 5);
    if (last_value[p]) per_pid[p] += t - last_ts[p];
    last_ts[p] = t;
    last_value[p] = atol(v + 8);
  }
  fclose(f);
}

/* The Chrome pid of each rank: its rank when every rank is known and unique, else its index. */
static long pid_of(const ovl_job *job, size_t i) {
  for (size_t a = 0; a < job->nranks; a++) {
    if (job->ranks[a].rank == OVL_NONE || job->ranks[a].rank < 0) return (long)i;
    for (size_t b = 0; b < a; b++)
      if (job->ranks[b].rank == job->ranks[a].rank) return (long)i;
  }
  return (long)job->ranks[i].rank;
}

/* Analyses paths in-process (imports counted), then exports them through the CLI both ways at
** once, and compares kernels per process and imports per command. */
static void check_case(const char *label, char **paths, size_t npaths, int hta, long processes) {
  ovl_analysis_options aopt = {0};
  aopt.launch_dims = 1;
  aopt.import.hta_compat = hta;
  ovl_analysis_ctx ctx;
  ovl_err err;
  ovl_err_clear(&err);
  CHECK(ovl_analysis_ctx_init(&ctx, &aopt, &err) == OVL_OK);
  ovl_job job;
  unsigned long before = ovl_import_count();
  int rc = ovl_analyze_job(&ctx, paths, npaths, NULL, NULL, &job, &err);
  if (rc) fprintf(stderr, "%s: %s\n", label, err.msg);
  CHECK_I64(rc, OVL_OK);
  if (rc) {
    ovl_analysis_ctx_free(&ctx);
    return;
  }
  if ((long)(ovl_import_count() - before) != processes)
    fprintf(stderr, "%s: the analysis imported %lu times\n", label, ovl_import_count() - before);
  CHECK_I64((long)(ovl_import_count() - before), processes);

  char pf[512], js[512], cmd[8192];
  snprintf(pf, sizeof pf, "%s", tb_temp_path("src.pftrace"));
  snprintf(js, sizeof js, "%s", tb_temp_path("src.json"));
  int n = snprintf(cmd, sizeof cmd, "env OVL_DEBUG_IMPORTS=1 '%s' export -q %s --perfetto '%s' --chrome '%s'", ovl,
                   hta ? "--hta-compat" : "", pf, js);
  for (size_t i = 0; i < npaths; i++) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", paths[i]);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) fprintf(stderr, "%s: %s%s", label, r.out, r.err);
  CHECK_I64(r.status, 0);
  if (imports_of(r.err) != processes) fprintf(stderr, "%s: export: %s", label, r.err);
  CHECK_I64(imports_of(r.err), processes);
  cmd_free(&r);

  long per_pid[64], other;
  int64_t exposed[64];
  chrome_kernels(js, per_pid, 64, &other);
  chrome_exposed(js, exposed, 64);
  CHECK_I64(other, 0);
  CHECK(job.nranks == (size_t)processes || processes == 0);
  long total = 0;
  for (size_t i = 0; i < job.nranks; i++) {
    long pid = pid_of(&job, i);
    CHECK(pid >= 0 && pid < 64);
    if (pid < 0 || pid >= 64) continue;
    if (per_pid[pid] != job.ranks[i].n_kernels)
      fprintf(stderr, "%s: rank %zu (pid %ld): %ld kernel slices, the analysis counts %ld kernels\n", label, i, pid,
              per_pid[pid], job.ranks[i].n_kernels);
    CHECK_I64(per_pid[pid], job.ranks[i].n_kernels);
    /* the exposed-communication counter is the analysis's exposed time, to the ns */
    if (exposed[pid] != job.ranks[i].totals.exposed)
      fprintf(stderr, "%s: rank %zu: the exposed counter is 1 for %lld ns, the analysis has %lld ns exposed\n", label, i,
              (long long)exposed[pid], (long long)job.ranks[i].totals.exposed);
    CHECK_I64(exposed[pid], job.ranks[i].totals.exposed);
    CHECK(job.ranks[i].n_kernels > 0);
    total += job.ranks[i].n_kernels;
  }
  CHECK(total > 0);
  unlink(pf);
  unlink(js);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

/* Kernels a file's analysis counts, with or without --hta-compat. */
static long analysed_kernels(char *path, int hta) {
  ovl_analysis_options aopt = {0};
  aopt.import.hta_compat = hta;
  ovl_analysis_ctx ctx;
  ovl_err err;
  long n = -1;
  ovl_job job;
  if (ovl_analysis_ctx_init(&ctx, &aopt, &err) == OVL_OK) {
    if (ovl_analyze_job(&ctx, &path, 1, NULL, NULL, &job, &err) == OVL_OK) {
      n = 0;
      for (size_t i = 0; i < job.nranks; i++) n += job.ranks[i].n_kernels;
      ovl_job_free(&job);
    }
    ovl_analysis_ctx_free(&ctx);
  }
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_export_sources OVL DATA_TRACES_DIR\n");
    return 2;
  }
  ovl = argv[1];
  data = argv[2];

  /* Kineto: two ranks of one job, one file each. */
  char w0[1024], w1[1024];
  snprintf(w0, sizeof w0, "%s/kineto-param-dlrm8/worker0_step_12.json.gz", data);
  snprintf(w1, sizeof w1, "%s/kineto-param-dlrm8/worker1_step_12.json.gz", data);
  char *kineto[] = {w0, w1};
  check_case("kineto job", kineto, 2, 0, 2);

  /* --hta-compat: the steps and the slices come from the same (compat) import, which keeps
  ** fewer kernels than a default import of the same file. */
  char sampled[1024];
  snprintf(sampled, sizeof sampled, "%s/kineto-hta/trace_filter__sampled_rank-0.json.gz", data);
  char *hta[] = {sampled};
  CHECK(analysed_kernels(sampled, 1) < analysed_kernels(sampled, 0));
  check_case("kineto --hta-compat", hta, 1, 1, 1);

  /* Nsight Systems: two processes in one export, one trace source each. */
  char nsys[512];
  snprintf(nsys, sizeof nsys, "%s", tb_temp_path("two-process.sqlite"));
  nsys_build_two_process_export(nsys);
  char *nsys_args[] = {nsys};
  check_case("nsys two processes", nsys_args, 1, 0, 2);

  /* ovl traces (the same processes converted once by `ovl import`): nothing to import. */
  char dir[512], cmd[4096];
  snprintf(dir, sizeof dir, "%s", tb_temp_path("imported"));
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && '%s' import -o '%s/t.sqlite' '%s'", dir, dir, ovl, dir,
           nsys);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
  char *ovl_args[] = {dir};
  check_case("ovl traces", ovl_args, 1, 0, 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  r = run_cmd(cmd);
  cmd_free(&r);
  unlink(nsys);
  return check_summary();
}
