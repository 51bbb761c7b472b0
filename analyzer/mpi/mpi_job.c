/*
** The job measured by every process of an MPI job and assembled on the root: see mpi_job.h.
** Each process measures its files (threads: its node's CPUs shared among the node's
** processes), packs them (job/rank_pack.h) with their index in the job's file order and sends
** them to the root in one MPI_Gatherv, keeping their exposed pieces (mpi_pieces.c); the root
** unpacks every file into its place and assembles the job exactly as one process does
** (ovl_job_assemble_remote: what it needs of the pieces it asks of their processes, which
** answer until it is done), then diagnoses it.
*/
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "mpi_internal.h"

#include "diagnose/diagnose.h"
#include "job/rank_pack.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *ovl_mpi_missing(void) { return NULL; }
const char *ovl_mpi_sibling(void) { return NULL; }

/* Threads per process: the node's CPUs among its processes, and no more than the CPUs this
** process may run on (mpirun binds a process to a core or a socket unless told --bind-to none:
** threads beyond them would only take turns), at least one. */
static size_t workers_per_process(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = cpus > 0 ? (size_t)cpus : 1, procs = ovl_mpi_s.node_procs > 0 ? (size_t)ovl_mpi_s.node_procs : 1;
  size_t share = n / procs ? n / procs : 1;
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof mine, &mine) == 0) {
    size_t allowed = (size_t)CPU_COUNT(&mine);
    if (allowed > 0 && allowed < share) share = allowed;
  }
  return share;
}

/* A file's results once packed: it keeps only its source. */
static void drop_results(ovl_measured_file *f) {
  for (size_t k = 0; k < f->nranks; k++) ovl_rank_result_free(&f->ranks[k]);
  free(f->ranks);
  f->ranks = NULL;
  f->nranks = 0;
  for (size_t k = 0; k < f->nno_gpu; k++) ovl_host_only_free(&f->no_gpu[k]);
  free(f->no_gpu);
  f->no_gpu = NULL;
  f->nno_gpu = 0;
}

/* A process other than the root reduces each file as soon as it is measured: its exposed
** pieces kept apart (to answer the root), its results packed into packed[i] and freed, so it
** never holds every file's full results at once (ovl_measure_files_then). */
typedef struct settling {
  const ovl_mpi_plan *plan;
  ovl_bytes *packed;       /* plan->n: each file's bytes, once settled */
  unsigned char *settled;  /* plan->n flags */
} settling;

static void settle_file(void *ctx, size_t i, ovl_measured_file *f) {
  settling *st = ctx;
  if ((f->rc = ovl_mpi_keep_pieces(st->plan->index[i], f, &f->err)) != OVL_OK) return;
  ovl_measured_file_pack(f, &st->packed[i]);
  if (st->packed[i].oom) {
    ovl_bytes_free(&st->packed[i]);
    f->rc = ovl_oom(&f->err, "results");
    return;
  }
  drop_results(f);
  st->settled[i] = 1;
}

/* This process's measured files, each after its index, into out: the files settled when they
** were measured as packed then, the others (failed, not started) packed now. */
static int pack_mine(const ovl_mpi_plan *plan, ovl_measured_file *files, settling *st, ovl_bytes *out, ovl_err *err) {
  size_t bytes = 10;
  for (size_t i = 0; i < plan->n; i++) bytes += 10 + st->packed[i].len;
  if ((out->data = malloc(bytes))) out->cap = bytes;  /* one buffer, not twice the bytes while it grows */
  ovl_put_u64(out, plan->n);
  int rc = OVL_OK;
  for (size_t i = 0; i < plan->n; i++) {
    ovl_put_u64(out, plan->index[i]);
    if (st->settled[i]) {
      ovl_put_raw(out, st->packed[i].data, st->packed[i].len);
      ovl_bytes_free(&st->packed[i]);
      continue;
    }
    if (!rc) rc = ovl_mpi_keep_pieces(plan->index[i], &files[i], err);
    ovl_measured_file_pack(&files[i], out);
    drop_results(&files[i]);
  }
  if (!rc && out->oom) rc = ovl_oom(err, "results");
  return rc;
}

static int note_owner(const ovl_measured_file *f, size_t file, int process, ovl_err *err) {
  ovl_mpi_owner *grown = realloc(ovl_mpi_s.owners, (ovl_mpi_s.nowners + f->nranks) * sizeof *grown);
  if (!grown && f->nranks) return ovl_oom(err, "results received");
  if (grown) ovl_mpi_s.owners = grown;
  for (size_t k = 0; k < f->nranks; k++) ovl_mpi_s.owners[ovl_mpi_s.nowners++] = (ovl_mpi_owner){f->ranks[k].ovl_path, process, file, k};
  return OVL_OK;
}

/* The root: every other process's files, unpacked into their places in files[]. */
static int unpack_all(ovl_bytes *all, ovl_measured_file *files, size_t nfiles, ovl_err *err) {
  int rc = OVL_OK;
  for (int p = 1; p < ovl_mpi_s.size; p++) {
    ovl_bytes_reader in = {all[p].data, all[p].data + all[p].len, 0};
    size_t n = rc ? 0 : ovl_get_count(&in, 2);
    for (size_t i = 0; !rc && i < n; i++) {
      uint64_t at = ovl_get_u64(&in);
      if (in.bad || at >= nfiles || files[at].done || files[at].opened) {
        rc = ovl_fail(err, OVL_EINTERNAL, "results received: malformed (a fault of ovl: please report it)");
        break;
      }
      rc = ovl_measured_file_unpack(&in, &files[at], err);
      if (!rc) rc = note_owner(&files[at], (size_t)at, p, err);
    }
    if (!rc && (in.bad || in.p != in.end))
      rc = ovl_fail(err, OVL_EINTERNAL, "results received: malformed (a fault of ovl: please report it)");
    ovl_bytes_free(&all[p]);  /* what was unpacked is not kept twice */
  }
  return rc;
}

/* The root: its own files, measured in place, join the others' and the job is assembled. */
static int assemble(const ovl_analysis_ctx *ctx, const ovl_mpi_plan *plan, ovl_measured_file *mine, ovl_bytes *all,
                    ovl_job *job, ovl_err *err) {
  ovl_measured_file *files = calloc(plan->nfiles ? plan->nfiles : 1, sizeof *files);
  int rc = files ? OVL_OK : ovl_oom(err, "results");
  for (size_t i = 0; !rc && i < plan->n; i++) {
    files[plan->index[i]] = mine[i];
    memset(&mine[i], 0, sizeof mine[i]);
  }
  if (!rc) rc = unpack_all(all, files, plan->nfiles, err);
  if (!rc) rc = ovl_job_assemble_remote(ctx, files, plan->nfiles, plan->skipped, &ovl_mpi_remote_pieces, job, err);
  if (!rc) {
    rc = ovl_diagnose_job(job, err);
    if (rc) ovl_job_free(job);
  }
  for (size_t i = 0; files && i < plan->nfiles; i++) ovl_measured_file_free(&files[i]);
  free(files);
  return rc;
}

int ovl_mpi_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, int local,
                        ovl_job_progress_fn progress, void *progress_ctx, ovl_job *job, int *is_root, ovl_err *err) {
  memset(job, 0, sizeof *job);
  int rc = ovl_mpi_begin(is_root, err);
  if (rc) return rc;
  ovl_mpi_s.ctx = ctx;
  ovl_mpi_plan plan;
  if ((rc = ovl_mpi_plan_files(args, nargs, local, &plan, err)) != OVL_OK) return rc;

  ovl_measured_file *mine = calloc(plan.n ? plan.n : 1, sizeof *mine);
  settling st = {&plan, calloc(plan.n ? plan.n : 1, sizeof *st.packed), calloc(plan.n ? plan.n : 1, 1)};
  rc = mine && st.packed && st.settled ? OVL_OK : ovl_oom(err, "results");
  if (!rc)
    ovl_measure_files_then(ctx, plan.paths, plan.n, workers_per_process(), *is_root ? progress : NULL, progress_ctx,
                           mine, *is_root ? NULL : settle_file, &st);
  ovl_bytes packed = {0}, *all = NULL;
  if (!rc && !*is_root) rc = pack_mine(&plan, mine, &st, &packed, err);
  for (size_t i = 0; st.packed && i < plan.n; i++) ovl_bytes_free(&st.packed[i]);
  free(st.packed);
  free(st.settled);
  if ((rc = ovl_mpi_agree(rc, err)) == OVL_OK) rc = ovl_mpi_gather_bytes(&packed, &all, err);
  ovl_bytes_free(&packed);
  /* The others answer the root's questions about the pieces they kept while it assembles. */
  if (!rc && *is_root) {
    rc = assemble(ctx, &plan, mine, all, job, err);
    ovl_mpi_assembled();
  } else if (!rc && ovl_mpi_serve_assembly()) {
    rc = ovl_fail(err, OVL_EINTERNAL, "process %d: no word from the root while it assembled the job", ovl_mpi_s.rank);
  }
  for (int p = 0; all && p < ovl_mpi_s.size; p++) ovl_bytes_free(&all[p]);
  free(all);
  if (*is_root || rc) {
    for (size_t i = 0; mine && i < plan.n; i++) ovl_measured_file_free(&mine[i]);
    free(mine);
  } else {
    ovl_mpi_s.mine = mine;  /* their sources stay open for the root's requests */
    ovl_mpi_s.nmine = plan.n;
  }
  ovl_mpi_plan_free(&plan);
  /* Every process learns whether the job was assembled (the root's failure is everyone's). */
  return ovl_mpi_agree(rc, err);
}
