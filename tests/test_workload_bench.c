/*
** workloads/bench.sh with a test double of ovl-ddp (fake_ovl_ddp.sh): the table's rows,
** formatting and speedups, how multi-GPU jobs are launched (one process per GPU,
** torchrun-style environment), failed runs, the emulated rows and usage errors.
**   test_workload_bench BENCH_SH FAKE_OVL_DDP
*/
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return strdup(buf);
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_workload_bench BENCH_SH FAKE_OVL_DDP\n");
    return 2;
  }
  const char *bench = argv[1], *fake = argv[2];
  char log[512], table[512], cmd[2048];
  snprintf(log, sizeof log, "%s", tb_temp_path("fake_ddp.log"));
  snprintf(table, sizeof table, "%s", tb_temp_path("bench_table.md"));
  remove(log);
  int port = 30000 + (int)(getpid() % 10000);

  snprintf(cmd, sizeof cmd,
           "env FAKE_DDP_LOG='%s' OVL_DDP='%s' sh '%s' --models small,xlarge --gpus 1,2 --epochs 1 --port %d "
           "--output '%s'",
           log, fake, bench, port, table);
  cmd_result r = run_cmd(cmd);
  CHECK_I64(r.status, 1);  /* xlarge fails */
  const char *out = r.out;
  CHECK(strstr(out, "| Model | Mode | GPUs | Params | Avg Epoch | Comm Time | Throughput | Speedup |\n") == out);
  /* Epoch = 2 s x factor x 2 / GPUs (the double's formula); speedup = 2 s / epoch. */
  CHECK(strstr(out, "| small | single | 1 | 1,462,538 | 2.000 s | 0.500 s | 16,384 samples/s | 1.00x |\n"));
  CHECK(strstr(out, "| small | bucketed | 2 | 1,462,538 | 0.800 s | 0.200 s | 40,960 samples/s | 2.50x |\n"));
  CHECK(strstr(out, "| small | misordered | 2 | 1,462,538 | 1.800 s | 0.450 s | 18,204 samples/s | 1.11x |\n"));
  CHECK(strstr(out, "| small | interleaved | 1 | 1,462,538 | 2.000 s | 0.500 s | 16,384 samples/s | 1.00x |\n"));
  CHECK(!strstr(out, "| small | single | 2 |"));  /* single runs on one GPU only */
  CHECK(strstr(out, "| xlarge | bucketed | 2 | | failed (exit 2) | | | |\n"));
  CHECK_I64(count_of(out, "| small |"), 9);
  CHECK_I64(count_of(out, "| xlarge |"), 9);
  CHECK_I64(count_of(out, "failed"), 9);
  CHECK(strstr(r.err, "xlarge single on 1 GPU(s) failed (exit 2)") != NULL);
  CHECK(strstr(r.err, "fake ovl-ddp: out of memory") != NULL);
  char *saved = slurp(table);
  CHECK_STR(saved, out);
  free(saved);

  /* Launch: alone for one GPU; one process per GPU with torchrun's variables for two. */
  char *launches = slurp(log);
  CHECK(strstr(launches, "model=small mode=single rank=0 world=1 local= addr= port=\n") != NULL);
  char rank0[256], rank1[256];
  snprintf(rank0, sizeof rank0, "model=small mode=naive rank=0 world=2 local=0 addr=127.0.0.1 port=");
  snprintf(rank1, sizeof rank1, "model=small mode=naive rank=1 world=2 local=1 addr=127.0.0.1 port=");
  const char *a = strstr(launches, rank0), *b = strstr(launches, rank1);
  CHECK(a && b);
  if (a && b) CHECK_I64(atoi(a + strlen(rank0)), atoi(b + strlen(rank1)));  /* one job, one port */
  CHECK_I64(count_of(launches, "world=2"), 16);  /* 8 two-GPU jobs of 2 ranks */
  free(launches);
  cmd_free(&r);

  /* Emulated rows: one real GPU, the emulated size shown. */
  snprintf(cmd, sizeof cmd, "env FAKE_DDP_LOG='%s' OVL_DDP='%s' sh '%s' --emulated --models small --modes single,bucketed",
           log, fake, bench);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 0);
  CHECK(strstr(r.out, "| small | bucketed | 1 (8 emulated) | 1,462,538 | 1.600 s |") != NULL);
  CHECK_I64(count_lines(r.out), 4);
  cmd_free(&r);

  static const char *bad[] = {"--launcher ssh", "--epochs x", "--frobnicate"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(cmd, sizeof cmd, "env OVL_DDP='%s' sh '%s' %s", fake, bench, bad[i]);
    r = run_cmd(cmd);
    CHECK_I64(r.status, 1);
    CHECK_I64(count_lines(r.err), 1);
    CHECK(strncmp(r.err, "bench.sh: ", 10) == 0);
    cmd_free(&r);
  }
  snprintf(cmd, sizeof cmd, "env OVL_DDP=/nonexistent sh '%s'", bench);
  r = run_cmd(cmd);
  CHECK_I64(r.status, 1);
  CHECK(strstr(r.err, "/nonexistent not found") != NULL);
  cmd_free(&r);
  remove(log);
  remove(table);
  return check_summary();
}
