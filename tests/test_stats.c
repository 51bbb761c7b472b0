/*
** `ovl stats` (issue 34) on a hand-built trace whose every row is known: kernels by name (a
** kernel named like compute but linked to a collective counts as communication, as in the
** report), NCCL by operation and size bucket with the bus bandwidth worked out from nccl-tests'
** factors, NVTX ranges and marks, memory operations by kind; per-step kernel times; two ranks
** merged; the CSV's quoting; one-line errors.
** usage: test_stats OVL
*/
#include "driver/job_driver.h"
#include "check.h"
#include "run_cmd.h"
#include "stats/stats.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define US 1000
#define MS 1000000
static const char *ovl;
static const char ODD_NAME[] = "k<a, \"b\">";  /* a comma and quotes: CSV must quote it */

/* The fixture; rank gives meta.rank. */
static void build(const char *path, int rank) {
  tb b;
  tb_open(&b, path);
  ovl_err err = {0};
  if (ovl_tw_meta_int(b.w, "rank", rank, &err) || ovl_tw_meta_int(b.w, "world_size", 2, &err)) exit(2);
  tb_nvtx(&b, "ovl", "step", 0, 10 * MS);
  tb_nvtx(&b, "ovl", "step", 10 * MS, 20 * MS);
  tb_nvtx(&b, NULL, "fwd", 0, 2 * MS);
  tb_nvtx(&b, NULL, "fwd", 10 * MS, 13 * MS);
  tb_nvtx(&b, "ovl", "grad_ready bucket=0 bytes=4", 1 * MS, OVL_NONE);
  tb_nvtx(&b, "ovl", "grad_ready bucket=0 bytes=4", 11 * MS, OVL_NONE);
  tb_kernel(&b, "gemm", 1 * MS, 1 * MS + 100 * US, 0, 7);
  tb_kernel(&b, "gemm", 2 * MS, 2 * MS + 300 * US, 0, 7);
  tb_kernel(&b, "gemm", 11 * MS, 11 * MS + 200 * US, 0, 7);
  tb_kernel(&b, "relu", 3 * MS, 3 * MS + 50 * US, 0, 7);
  tb_kernel(&b, "relu", 12 * MS, 12 * MS + 50 * US, 0, 7);
  tb_kernel(&b, ODD_NAME, 16 * MS, 16 * MS + 1 * US, 0, 7);
  int64_t c1 = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 4 * MS, 6 * MS, 0, 13);
  tb_collective(&b, "AllReduce", 8 << 20, 4, 3 * MS, c1);
  int64_t c2 = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 14 * MS, 15 * MS, 0, 13);
  tb_collective(&b, "AllReduce", 8 << 20, 4, 13 * MS, c2);
  int64_t c3 = tb_kernel(&b, "looks_like_compute", 7 * MS, 7 * MS + 10 * US, 0, 13);
  tb_collective(&b, "Broadcast", 512, 4, 6 * MS, c3);
  tb_memop(&b, "HtoD", 500 * US, 600 * US, 0, 7, 1000000);
  tb_memop(&b, "HtoD", 10 * MS + 500 * US, 10 * MS + 800 * US, 0, 7, 3000000);
  tb_memop(&b, "DtoH", 8 * MS, 8 * MS + 2 * US, 0, 7, 4096);
  tb_memop(&b, "memset", 9 * MS, 9 * MS + 1 * US, 0, 7, 1024);
  tb_close(&b);
}

/* Kernel time in all: 600 + 100 + 1 us of compute, 3000 + 10 us of communication. */
#define KERNEL_NS (701 * US + 3010 * US)

static void analyse(char **paths, size_t n, ovl_stats *s, ovl_job *job, ovl_analysis_ctx *ctx) {
  ovl_err err = {0};
  ovl_analysis_options opt;
  memset(&opt, 0, sizeof opt);
  if (ovl_analysis_ctx_init(ctx, &opt, &err) || ovl_analyze_job(ctx, paths, n, NULL, NULL, job, &err) ||
      ovl_stats_collect(ctx, job, OVL_STATS_KERNELS | OVL_STATS_MEMOPS | OVL_STATS_NCCL | OVL_STATS_NVTX |
                                      OVL_STATS_PER_STEP, s, &err)) {
    fprintf(stderr, "analysis: %s\n", err.msg);
    exit(2);
  }
}

static const ovl_kernel_stat *kernel(const ovl_rank_stats *r, const char *name) {
  for (size_t i = 0; i < r->nkernels; i++)
    if (strcmp(r->kernels[i].name, name) == 0) return &r->kernels[i];
  return NULL;
}

static const ovl_memop_stat *memop(const ovl_rank_stats *r, const char *kind) {
  for (size_t i = 0; i < r->nmemops; i++)
    if (strcmp(r->memops[i].kind, kind) == 0) return &r->memops[i];
  return NULL;
}

static const ovl_nvtx_stat *nvtx(const ovl_rank_stats *r, const char *name, int mark) {
  for (size_t i = 0; i < r->nnvtx; i++)
    if (strcmp(r->nvtx[i].name, name) == 0 && r->nvtx[i].is_mark == mark) return &r->nvtx[i];
  return NULL;
}

static void span(const ovl_stat_span *s, long count, int64_t total, int64_t min, int64_t max) {
  CHECK_I64(s->count, count);
  CHECK_I64(s->total, total);
  CHECK_I64(s->min, min);
  CHECK_I64(s->max, max);
}

static void check_tables(const char *path) {
  char *paths[] = {(char *)path};
  ovl_stats s;
  ovl_job job;
  ovl_analysis_ctx ctx;
  analyse(paths, 1, &s, &job, &ctx);
  CHECK_I64(s.nranks, 1);
  const ovl_rank_stats *r = &s.ranks[0];
  CHECK_I64(r->kernel_ns, KERNEL_NS);
  CHECK_I64(r->nkernels, 5);
  const ovl_kernel_stat *k = kernel(r, "gemm");
  CHECK(k && k->cls == OVL_CLASS_COMPUTE);
  if (k) {
    span(&k->t, 3, 600 * US, 100 * US, 300 * US);
    CHECK(k->step_ns && r->nsteps == 2);
    if (k->step_ns) {
      CHECK_I64(k->step_ns[0], 400 * US);
      CHECK_I64(k->step_ns[1], 200 * US);
    }
  }
  k = kernel(r, "relu");
  CHECK(k && k->cls == OVL_CLASS_COMPUTE);
  if (k) span(&k->t, 2, 100 * US, 50 * US, 50 * US);
  k = kernel(r, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(k && k->cls == OVL_CLASS_COMM);
  if (k) span(&k->t, 2, 3 * MS, 1 * MS, 2 * MS);
  k = kernel(r, "looks_like_compute");  /* linked to a collective: communication, as the report counts it */
  CHECK(k && k->cls == OVL_CLASS_COMM);
  CHECK(r->nkernels > 0 && strcmp(r->kernels[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL") == 0);  /* most time first */
  /* the report's counts and stream times are the tables' sums */
  const ovl_rank_result *rr = &job.ranks[0];
  long count = 0, comm = 0;
  int64_t compute_ns = 0, comm_ns = 0, memory_ns = 0;
  for (size_t i = 0; i < r->nkernels; i++) {
    count += r->kernels[i].t.count;
    if (r->kernels[i].cls == OVL_CLASS_COMM) comm += r->kernels[i].t.count, comm_ns += r->kernels[i].t.total;
    else compute_ns += r->kernels[i].t.total;
  }
  for (size_t i = 0; i < r->nmemops; i++) memory_ns += r->memops[i].t.total;
  int64_t st_compute = 0, st_comm = 0, st_memory = 0;
  for (size_t i = 0; i < rr->nstreams; i++) {
    st_compute += rr->streams[i].compute_ns;
    st_comm += rr->streams[i].comm_ns;
    st_memory += rr->streams[i].memory_ns;
  }
  CHECK_I64(count, rr->n_kernels);
  CHECK_I64(comm, rr->n_comm_kernels);
  CHECK_I64(compute_ns, st_compute);
  CHECK_I64(comm_ns, st_comm);
  CHECK_I64(memory_ns, st_memory);
  CHECK_I64(compute_ns, 701 * US);
  /* memcpy by kind */
  const ovl_memop_stat *m = memop(r, "HtoD");
  CHECK(m && m->cls == OVL_CLASS_MEMORY && m->bytes == 4000000);
  if (m) span(&m->t, 2, 400 * US, 100 * US, 300 * US);
  m = memop(r, "DtoH");
  CHECK(m && m->bytes == 4096 && m->t.count == 1 && m->t.total == 2 * US);
  m = memop(r, "memset");
  CHECK(m && m->bytes == 1024 && m->t.count == 1);
  CHECK_I64(r->nmemops, 3);
  /* NCCL by operation and size: bus bandwidth = sum(bytes x factor) / sum(time) */
  CHECK_I64(r->nnccl, 2);
  for (size_t i = 0; i < r->nnccl; i++) {
    const ovl_nccl_stat *c = &r->nccl[i];
    if (c->op == OVL_OP_ALLREDUCE) {
      CHECK_STR(ovl_stats_size_bucket_name(c->size_bucket), "1MiB-16MiB");
      span(&c->t, 2, 3 * MS, 1 * MS, 2 * MS);
      CHECK_I64(c->bytes, 16 << 20);
      CHECK_NEAR(ovl_nccl_stat_busbw(c), (16 << 20) * 2.0 * 3 / 4 / (3.0 * MS), 1e-6);  /* 2(n-1)/n, n = 4 */
    } else {
      CHECK(c->op == OVL_OP_BROADCAST);
      CHECK_STR(ovl_stats_size_bucket_name(c->size_bucket), "<1KiB");
      span(&c->t, 1, 10 * US, 10 * US, 10 * US);
      CHECK_NEAR(ovl_nccl_stat_busbw(c), 512.0 / (10.0 * US), 1e-9);  /* factor 1 */
    }
  }
  /* NVTX: ranges with their durations, marks counted */
  const ovl_nvtx_stat *v = nvtx(r, "step", 0);
  CHECK(v && strcmp(v->domain, "ovl") == 0);
  if (v) span(&v->t, 2, 20 * MS, 10 * MS, 10 * MS);
  v = nvtx(r, "fwd", 0);
  CHECK(v && v->domain[0] == 0);
  if (v) span(&v->t, 2, 5 * MS, 2 * MS, 3 * MS);
  v = nvtx(r, "grad_ready bucket=0 bytes=4", 1);
  CHECK(v && v->t.count == 2);
  CHECK_I64(r->nnvtx, 3);
  ovl_stats_free(&s);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

static void check_merge(const char *a, const char *b) {
  char *paths[] = {(char *)a, (char *)b};
  ovl_stats s, m;
  ovl_job job;
  ovl_analysis_ctx ctx;
  ovl_err err = {0};
  analyse(paths, 2, &s, &job, &ctx);
  CHECK_I64(s.nranks, 2);
  CHECK_I64(ovl_stats_merge(&s, &m, &err), 0);
  CHECK_I64(m.nranks, 1);
  const ovl_kernel_stat *k = kernel(&m.ranks[0], "gemm");
  CHECK(k != NULL);
  if (k) span(&k->t, 6, 1200 * US, 100 * US, 300 * US);
  CHECK_I64(m.ranks[0].kernel_ns, 2 * KERNEL_NS);
  const ovl_nvtx_stat *v = nvtx(&m.ranks[0], "step", 0);
  CHECK(v && v->t.count == 4);
  ovl_stats_free(&m);
  ovl_stats_free(&s);
  ovl_job_free(&job);
  ovl_analysis_ctx_free(&ctx);
}

static cmd_result run(const char *args, const char *a, const char *b) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' stats %s '%s'%s%s%s", ovl, args, a, b ? " '" : "", b ? b : "", b ? "'" : "");
  return run_cmd(cmd);
}

static void check_cli(const char *a, const char *b) {
  cmd_result r = run("--csv --report kernels", a, NULL);
  CHECK_I64(r.status, 0);
  char line[256];
  snprintf(line, sizeof line, "\n0,0,%.9g,600000,3,200000,100000,300000,compute,gemm\n", 600.0 * US / KERNEL_NS);
  CHECK(r.out && strncmp(r.out, "rank,device,share,total_ns,count,mean_ns,min_ns,max_ns,class,name\n", 66) == 0);
  CHECK(r.out && strstr(r.out, line));
  CHECK(r.out && strstr(r.out, ",compute,\"k<a, \"\"b\"\">\"\n"));  /* quoted, quotes doubled */
  CHECK(r.out && count_lines(r.out) == 6);  /* the header and five names: one table */
  cmd_free(&r);
  r = run("--csv --report nccl,memcpy", a, NULL);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "\n0,0,AllReduce,1MiB-16MiB,2,3000000,1500000,1000000,2000000,16777216,"));
  CHECK(r.out && strstr(r.out, "\n\nrank,device,kind,count,total_ns,"));  /* tables apart by one empty line */
  CHECK(r.out && strstr(r.out, "\n0,0,HtoD,2,400000,200000,100000,300000,4000000,10,memory\n"));
  cmd_free(&r);
  r = run("--json --compact --report summary", a, NULL);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "{\"ovl_stats_version\":1,\"summary\":[{\"rank\":0,\"device\":0,\"steps\":2,"));
  CHECK(r.out && strstr(r.out, "\"kernels\":9,\"comm_kernels\":3,\"memops\":4,"));  /* 3+2+1 compute, 2+1 linked */
  CHECK(r.out && strstr(r.out, "\"collectives\":3,"));
  cmd_free(&r);
  r = run("--merge --csv --report kernels", a, b);
  CHECK_I64(r.status, 0);
  snprintf(line, sizeof line, "\n%.9g,1200000,6,200000,100000,300000,compute,gemm\n", 1200.0 * US / (2 * KERNEL_NS));
  CHECK(r.out && strstr(r.out, line));  /* no rank columns */
  cmd_free(&r);
  r = run("--report nvtx", a, NULL);  /* text */
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "NVTX ranges by name") && strstr(r.out, "mark"));
  cmd_free(&r);
  r = run("--help", a, NULL);
  CHECK_I64(r.status, 0);
  CHECK(r.out && strstr(r.out, "usage: ovl stats") && strstr(r.out, "--report NAME"));
  cmd_free(&r);
  static const char *const bad[] = {"--report nope", "--csv --json", "--top 0", "--bogus", "--report ''"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    r = run(bad[i], a, NULL);
    if (r.status != 1) fprintf(stderr, "stats %s: status %d\n", bad[i], r.status);
    CHECK_I64(r.status, 1);
    CHECK(r.err && strncmp(r.err, "ovl: stats: ", 12) == 0 && count_lines(r.err) == 1);
    cmd_free(&r);
  }
  r = run("", "/nonexistent/trace.sqlite", NULL);
  CHECK_I64(r.status, 1);
  CHECK(r.err && strstr(r.err, "/nonexistent/trace.sqlite") && count_lines(r.err) == 1);
  cmd_free(&r);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_stats OVL\n");
    return 2;
  }
  ovl = argv[1];
  const char *a = tb_temp_path("rank0.sqlite"), *b = tb_temp_path("rank1.sqlite");
  build(a, 0);
  build(b, 1);
  check_tables(a);
  check_merge(a, b);
  check_cli(a, b);
  return check_summary();
}
