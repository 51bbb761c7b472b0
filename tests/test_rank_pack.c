/*
** Measured files in bytes and back (job/rank_pack.h): what `ovl report --mpi` sends from the
** processes that measure traces to the one that assembles the job. For each job below, every
** file is measured twice: once assembled as it is, once packed, freed, unpacked and assembled;
** after the diagnosis both jobs give the same JSON report and the same text report (default and
** --all), byte for byte. Jobs: ZeRO-3 on 4 ranks and 2x2 TP x FSDP (`ovl simulate --strategy`:
** every dimension, pipeline stats off), pipeline parallel on 4 stages, DDP with every fault of
** `ovl simulate` (findings, marks, buckets), the real 8-rank DLRM Kineto job (conversions,
** cross-rank matching, a straggler's evidence), HTA's Kineto traces (several jobs, sampled
** traces), the H200 traces of ovl-ddp's modes and of PyTorch (tests/data/gpu-h100: api rows,
** grad_ready marks on the GPU's timeline, sizes from marks; NCCL's profiler plugin: algorithm
** and protocol), NCCL's channel timing (a built trace), a CPU-only trace beside a GPU one
** (a process without GPU work), and a file that is not a trace (the failure travels). Also: a packed rank packs again to the same bytes; a
** collective costs under 200 bytes packed (its cross-rank part and exposed pieces included); every prefix of a packed file and flipped bytes are
** refused or read without a crash (the sanitizer build checks the reads and frees). And each job
** once more with its exposed pieces kept apart, asked in batches of two questions (the job stages
** through job/remote_pieces.h, as under `--mpi`): the same reports.
** usage: test_rank_pack OVL_BINARY TRACES_DIR
*/
#include "check.h"
#include "diagnose/diagnose.h"
#include "fakes/fake_remote_pieces.h"
#include "job/rank_pack.h"
#include "load/trace_files.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *ovl_bin, *traces;
static size_t packed_bytes, packed_colls;
static size_t remote_batches;  /* batches the fake remote answered, every job */
static ovl_bytes sample;  /* one packed file, for the damage checks */

/* The reports of a job after its diagnosis: JSON, text, text --all, concatenated. */
static char *reports(ovl_job *job) {
  ovl_err err = {0};
  CHECK_I64(ovl_diagnose_job(job, &err), OVL_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK_I64(ovl_report_json(f, job, 1), 0);
  ovl_text_options topt = {10, 3, 40}, all = {OVL_TEXT_ALL, OVL_TEXT_ALL, OVL_TEXT_ALL};
  ovl_report_text(f, job, &topt);
  ovl_report_text(f, job, &all);
  for (size_t i = 0; i < job->nwarnings; i++) fprintf(f, "%s\n", job->warnings[i]);
  fclose(f);
  return text;
}

static size_t colls_of(const ovl_rank_result *r) {
  size_t n = r->nunstepped;
  for (size_t s = 0; s < r->nsteps; s++) n += r->steps[s].ncolls;
  return n;
}

/* Packed bytes of the rank's collectives: the rank packed, less the rank packed without them. */
static size_t coll_bytes(const ovl_rank_result *r, size_t whole) {
  ovl_rank_result bare = *r;
  ovl_step_result *steps = calloc(r->nsteps ? r->nsteps : 1, sizeof *steps);
  for (size_t s = 0; s < r->nsteps; s++) {
    steps[s] = r->steps[s];
    steps[s].ncolls = 0;
  }
  bare.steps = steps;
  bare.nunstepped = 0;
  bare.ncoll_cross = 0;
  ovl_bytes b = {0};
  ovl_rank_pack(&bare, &b);
  size_t n = whole - b.len;
  ovl_bytes_free(&b);
  free(steps);
  return n;
}

/* ovl_measure_files_then's calls: how many, and which files (each at most once). */
typedef struct measured_seen {
  unsigned char *once;
  size_t calls;
} measured_seen;

static void note_measured(void *ctx, size_t i, ovl_measured_file *f) {
  measured_seen *seen = ctx;
  CHECK_I64(f->rc, OVL_OK);
  CHECK_I64(seen->once[i], 0);
  seen->once[i] = 1;
  seen->calls++;
}

/* Measures the files of args; with `travel`, each goes through bytes first; with travel 2 its
** exposed pieces then stay with a fake remote (fakes/fake_remote_pieces.h, as `--mpi`'s other
** processes keep theirs) that answers the job stages in batches of two questions. Returns the
** job's status; *text the reports (NULL on failure), *msg the error. */
static int measure(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, int travel, char **text, char *msg) {
  ovl_err err = {0};
  ovl_file_list files = {0};
  *text = NULL;
  int rc = ovl_expand_trace_args(args, nargs, &files, &err);
  CHECK_I64(rc, OVL_OK);
  if (rc) return rc;
  ovl_measured_file *m = calloc(files.len, sizeof *m);
  measured_seen seen = {calloc(files.len ? files.len : 1, 1), 0};
  ovl_measure_files_then(ctx, files.paths, files.len, 1, NULL, NULL, m, note_measured, &seen);
  /* called once for each file measured well (as --mpi's other processes pack it then), never
  ** for a failed one */
  size_t well = 0;
  for (size_t i = 0; i < files.len; i++) {
    well += m[i].done && !m[i].rc;
    CHECK_I64(seen.once[i], m[i].done && !m[i].rc);
  }
  CHECK_I64(seen.calls, well);
  free(seen.once);
  for (size_t i = 0; travel && i < files.len; i++) {
    ovl_bytes b = {0};
    ovl_measured_file_pack(&m[i], &b);
    CHECK(!b.oom);
    for (size_t k = 0; k < m[i].nranks; k++) {
      /* a rank packs to the same bytes after a round trip */
      ovl_bytes one = {0}, again = {0};
      ovl_rank_pack(&m[i].ranks[k], &one);
      ovl_bytes_reader in = {one.data, one.data + one.len, 0};
      ovl_rank_result copy;
      CHECK_I64(ovl_rank_unpack(&in, &copy, &err), OVL_OK);
      CHECK(in.p == in.end);
      ovl_rank_pack(&copy, &again);
      CHECK(one.len == again.len && memcmp(one.data, again.data, one.len) == 0);
      packed_bytes += coll_bytes(&m[i].ranks[k], one.len);
      packed_colls += colls_of(&m[i].ranks[k]);
      ovl_rank_result_free(&copy);
      ovl_bytes_free(&one);
      ovl_bytes_free(&again);
    }
    if (!sample.len && m[i].nranks) {
      ovl_put_raw(&sample, b.data, b.len);
    }
    ovl_measured_file_free(&m[i]);
    ovl_bytes_reader in = {b.data, b.data + b.len, 0};
    CHECK_I64(ovl_measured_file_unpack(&in, &m[i], &err), OVL_OK);
    CHECK(in.p == in.end);
    ovl_bytes_free(&b);
  }
  char skipped[2048] = "";
  ovl_file_list_skipped_text(&files, skipped, sizeof skipped);
  ovl_job job;
  fake_remote_pieces fake;
  int far = travel == 2;
  if (far) CHECK(fake_remote_take(&fake, m, files.len, 2) == 0);
  ovl_remote_pieces remote = fake_remote_interface(&fake);
  rc = ovl_job_assemble_remote(ctx, m, files.len, skipped, far ? &remote : NULL, &job, &err);
  if (far && !rc && job.nranks > 1) {
    /* every rank asked about (its unions; its transfers when matched), in several batches */
    CHECK(fake.asked >= job.nranks && fake.flushes >= fake.asked / 2);
    remote_batches += fake.flushes;
  }
  if (far) fake_remote_free(&fake);
  if (!rc) {
    *text = reports(&job);
    ovl_job_free(&job);
  }
  snprintf(msg, 1024, "%s", err.msg);
  for (size_t i = 0; i < files.len; i++) ovl_measured_file_free(&m[i]);
  free(m);
  ovl_file_list_free(&files);
  return rc;
}

/* The job of args, assembled as measured and from the bytes: the same reports (or the same error). */
/* A trace of NCCL's profiler plugin without CUPTI: three all-reduces timed by their channels
** (one channel of the second late), a compute kernel beside them, and a malformed channel row
** (skipped and counted). Returns its path. */
static const char *channels_trace(void) {
  const char *path = tb_temp_path("pack-channels.sqlite");
  tb b;
  tb_open(&b, path);
  ovl_err err = {0};
  const int64_t us = 1000, t0 = 10000000;
  int rc = 0;
  for (int k = 0; k < 4; k++) {
    int64_t start = t0 + 200 * us * k, id = tb_collective(&b, "AllReduce", 1 << 20, 8, start - 50 * us, OVL_NONE);
    for (int c = 0; c < 4 && !rc; c++) {
      int64_t s0 = start + 100 * c, e0 = start + 100 * us - 100 * (3 - c) + (k == 1 && c == 1 ? 40 * us : 0);
      if (k == 3) e0 = s0 - 1;  /* malformed: ends before it starts */
      ovl_channel_row row = {id, c, 0, s0, e0, s0, e0};
      rc = ovl_tw_channel(b.w, &row, &err);
    }
  }
  tb_kernel(&b, "sgemm_kernel", t0 + 200 * us, t0 + 250 * us, 0, 7);
  tb_close(&b);
  CHECK(rc == 0);
  /* the fixture holds what is to travel: channel-timed collectives and a skipped channel row */
  cmd_result r = run_tool(ovl_bin, "report --json '%s'", path);
  CHECK(strstr(r.out, "\"gpu_time_from\": \"nccl_channels\"") != NULL);
  CHECK(strstr(r.out, "\"channel_spread_ns\": 40100") != NULL);
  CHECK(strstr(r.err, "collective_channels row") != NULL);
  cmd_free(&r);
  return path;
}

static void same_job(const char *what, char *const *args, size_t nargs, int expect_rc) {
  ovl_analysis_options opt;
  memset(&opt, 0, sizeof opt);
  opt.launch_dims = 1;
  ovl_analysis_ctx ctx;
  ovl_err err = {0};
  if (ovl_analysis_ctx_init(&ctx, &opt, &err)) {
    CHECK(!"analysis options");
    return;
  }
  char *direct = NULL, *travelled = NULL, *remote = NULL, msg_direct[1024], msg_travelled[1024], msg_remote[1024];
  int rc1 = measure(&ctx, args, nargs, 0, &direct, msg_direct);
  int rc2 = measure(&ctx, args, nargs, 1, &travelled, msg_travelled);
  int rc3 = measure(&ctx, args, nargs, 2, &remote, msg_remote);
  CHECK_I64(rc1, expect_rc);
  CHECK_I64(rc2, expect_rc);
  CHECK_I64(rc3, expect_rc);
  if (expect_rc) CHECK(strcmp(msg_direct, msg_remote) == 0);
  else if (direct && remote) CHECK(strcmp(direct, remote) == 0);
  else CHECK(!"the report with the pieces kept apart");
  printf("%s: pieces kept apart, %s\n", what, !expect_rc && direct && remote && !strcmp(direct, remote) ? "the same reports" : "see above");
  free(remote);
  if (expect_rc) {
    CHECK(strcmp(msg_direct, msg_travelled) == 0);
    printf("%s: the same error: %s\n", what, msg_travelled);
  } else if (direct && travelled) {
    int same = strcmp(direct, travelled) == 0;
    CHECK(same);
    printf("%s: %s reports (%zu bytes)\n", what, same ? "the same" : "DIFFERENT", strlen(direct));
    if (!same) {
      size_t i = 0;
      while (direct[i] && direct[i] == travelled[i]) i++;
      fprintf(stderr, "%s: first difference at byte %zu:\n--- measured\n%.300s\n--- travelled\n%.300s\n", what, i,
              direct + (i > 100 ? i - 100 : 0), travelled + (i > 100 ? i - 100 : 0));
    }
  } else {
    CHECK(!"both reports");
  }
  free(direct);
  free(travelled);
  ovl_analysis_ctx_free(&ctx);
}

static void simulate(const char *dir, const char *args) {
  cmd_result r = run_tool(ovl_bin, "simulate %s --emit-trace '%s'", args, dir);
  CHECK_I64(r.status, 0);
  cmd_free(&r);
}

/* Every prefix of a packed file is refused; flipped bytes are refused or read, never a crash. */
static void damaged(void) {
  CHECK(sample.len > 100);
  ovl_err err = {0};
  size_t refused = 0, tries = 0, stride = sample.len / 3000 + 1;
  for (size_t len = 0; len < sample.len; len += stride, tries++) {
    ovl_bytes_reader in = {sample.data, sample.data + len, 0};
    ovl_measured_file f;
    int rc = ovl_measured_file_unpack(&in, &f, &err);
    refused += rc != OVL_OK;
    if (!rc) ovl_measured_file_free(&f);
  }
  CHECK_I64(refused, tries);
  printf("damage: %zu of %zu prefixes refused\n", refused, tries);
  size_t read = 0;
  tries = 0;
  for (size_t at = 0; at < sample.len; at += stride, tries++) {
    unsigned char keep = sample.data[at];
    sample.data[at] ^= (unsigned char)(0x5a + at);
    ovl_bytes_reader in = {sample.data, sample.data + sample.len, 0};
    ovl_measured_file f;
    if (ovl_measured_file_unpack(&in, &f, &err) == OVL_OK) {
      read++;
      ovl_measured_file_free(&f);
    }
    sample.data[at] = keep;
  }
  printf("damage: %zu of %zu flipped bytes read anyway (values changed), none crashed\n", read, tries);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_rank_pack OVL_BINARY TRACES_DIR\n");
    return 2;
  }
  ovl_bin = argv[1];
  traces = argv[2];
  const char *dir = tb_temp_path("pack");
  mkdir(dir, 0700);
  char zero3[4300], tpf[4300], pp[4300], ddp[4300], mixed[4300], bad[4300];
  snprintf(zero3, sizeof zero3, "%s/zero3", dir);
  snprintf(tpf, sizeof tpf, "%s/tpfsdp", dir);
  snprintf(pp, sizeof pp, "%s/pp", dir);
  snprintf(ddp, sizeof ddp, "%s/ddp.sqlite", dir);
  simulate(zero3, "--strategy zero3 --dp 4");
  simulate(tpf, "--strategy zero3 --dp 2 --tp 2");
  simulate(pp, "--strategy pp --stages 4");
  simulate(ddp, "--bucket-layers 8 --steps 4 --misordered --find-unused --first-step-single-bucket "
                "--blocking-allreduce 4MB --overlap-slowdown 1.2");

  char *a_zero3[] = {zero3}, *a_tpf[] = {tpf}, *a_pp[] = {pp}, *a_ddp[] = {ddp};
  same_job("zero3 x4", a_zero3, 1, OVL_OK);
  same_job("tp x fsdp", a_tpf, 1, OVL_OK);
  same_job("pp x4", a_pp, 1, OVL_OK);
  same_job("ddp with faults", a_ddp, 1, OVL_OK);

  char dlrm[4300], hta[4300], cpu[4300], gpu1[4300];
  snprintf(dlrm, sizeof dlrm, "%s/kineto-param-dlrm8", traces);
  snprintf(hta, sizeof hta, "%s/kineto-hta", traces);
  snprintf(cpu, sizeof cpu, "%s/kineto-nonccl/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", traces);
  snprintf(gpu1, sizeof gpu1, "%s/kineto-param-dlrm8/worker0_step_12.json.gz", traces);
  char h200_ddp[4300], h200_torch[4300];
  snprintf(h200_ddp, sizeof h200_ddp, "%s/../gpu-h100/ddp", traces);
  snprintf(h200_torch, sizeof h200_torch, "%s/../gpu-h100/pytorch", traces);
  char *a_dlrm[] = {dlrm}, *a_hta[] = {hta}, *a_mixed[] = {cpu, gpu1}, *a_jobs[] = {zero3, tpf};
  char h200_plugin[4300];
  snprintf(h200_plugin, sizeof h200_plugin, "%s/../gpu-h100/plugin", traces);
  char *a_h200_ddp[] = {h200_ddp}, *a_h200_torch[] = {h200_torch}, *a_h200_plugin[] = {h200_plugin};
  same_job("dlrm8 (Kineto)", a_dlrm, 1, OVL_OK);
  same_job("hta (Kineto)", a_hta, 1, OVL_OK);
  same_job("cpu-only beside a GPU trace", a_mixed, 2, OVL_OK);
  same_job("two jobs together", a_jobs, 2, OVL_OK);
  same_job("H200 ovl-ddp traces (marks on the GPU's timeline)", a_h200_ddp, 1, OVL_OK);
  same_job("H200 PyTorch traces", a_h200_torch, 1, OVL_OK);
  same_job("H200 NCCL profiler plugin traces (NCCL's algorithm and protocol)", a_h200_plugin, 1, OVL_OK);
  char *a_channels[] = {(char *)channels_trace()};
  same_job("NCCL's channel timing (a built trace: timed collectives, a late channel, a bad row)", a_channels, 1, OVL_OK);

  snprintf(mixed, sizeof mixed, "%s/mixed", dir);
  snprintf(bad, sizeof bad, "%s/mixed/rank9.sqlite", dir);
  mkdir(mixed, 0700);
  FILE *f = fopen(bad, "w");
  if (f) {
    fputs("not a trace\n", f);
    fclose(f);
  }
  char *a_bad[] = {zero3, bad};  /* named: a folder's file that is not a trace is skipped instead */
  same_job("a file that is not a trace", a_bad, 2, OVL_EUSER);

  double per = packed_colls ? (double)packed_bytes / (double)packed_colls : 0;
  printf("packed: %zu bytes for %zu collectives (%.1f bytes per collective)\n", packed_bytes, packed_colls, per);
  CHECK(packed_colls > 1000);
  CHECK(per > 0 && per < 200);
  damaged();
  ovl_bytes_free(&sample);
  CHECK(remote_batches > 10);  /* the stages asked in many batches, flushing mid-loop */
  printf("the fake remote answered %zu batches\n", remote_batches);
  return check_summary();
}
