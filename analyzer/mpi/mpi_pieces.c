/*
** The exposed pieces of the ranks a process measured, kept there instead of sent to the root
** (job/remote_pieces.h): the root asks the process that measured a rank for the two answers
** the job stages read from pieces, while it assembles the job. A process keeps 64 bytes a
** collective or so (generated FSDP job) that the root, which holds every rank, no longer does.
*/
#include "mpi_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Where one collective's pieces lie in its rank's bounds (analysis.h's fields of the same names). */
typedef struct kept_coll {
  uint32_t at;
  uint8_t n, exact, has;
} kept_coll;

typedef struct ovl_mpi_kept {
  size_t file, k;          /* the job's file index and the rank's place in the file */
  int64_t *bounds;         /* the rank's coll_piece_bounds (owned) */
  kept_coll *colls;        /* in the stages' numbering: steps' collectives, then the unstepped */
  size_t ncolls;
  size_t *step_ncolls;     /* collectives of each step */
  size_t nsteps;
} ovl_mpi_kept;

static void kept_free(ovl_mpi_kept *k) {
  free(k->bounds);
  free(k->colls);
  free(k->step_ncolls);
}

void ovl_mpi_kept_free_all(void) {
  for (size_t i = 0; i < ovl_mpi_s.nkept; i++) kept_free(&ovl_mpi_s.kept[i]);
  free(ovl_mpi_s.kept);
  ovl_mpi_s.kept = NULL;
  ovl_mpi_s.nkept = 0;
}

static void keep_coll(ovl_coll_result *c, kept_coll *out) {
  *out = (kept_coll){c->pieces_at, c->npieces, (uint8_t)c->pieces_exact, (uint8_t)c->has_pieces};
  c->has_pieces = c->pieces_exact = 0;
  c->npieces = 0;
  c->pieces_at = 0;
}

/* Moves r's pieces into *k. -1: no memory (r unchanged). */
static int keep_rank(ovl_rank_result *r, ovl_mpi_kept *k) {
  size_t n = r->nunstepped;
  for (size_t s = 0; s < r->nsteps; s++) n += r->steps[s].ncolls;
  k->colls = malloc((n ? n : 1) * sizeof *k->colls);
  k->step_ncolls = malloc((r->nsteps ? r->nsteps : 1) * sizeof *k->step_ncolls);
  if (!k->colls || !k->step_ncolls) return -1;
  for (size_t s = 0; s < r->nsteps; s++) {
    k->step_ncolls[s] = r->steps[s].ncolls;
    for (size_t i = 0; i < r->steps[s].ncolls; i++) keep_coll(&r->steps[s].colls[i], &k->colls[k->ncolls++]);
  }
  for (size_t i = 0; i < r->nunstepped; i++) keep_coll(&r->unstepped[i], &k->colls[k->ncolls++]);
  k->nsteps = r->nsteps;
  k->bounds = r->coll_piece_bounds;
  r->coll_piece_bounds = NULL;
  return 0;
}

int ovl_mpi_keep_pieces(const ovl_mpi_plan *plan, ovl_measured_file *files, ovl_err *err) {
  size_t n = 0;
  for (size_t i = 0; i < plan->n; i++) n += files[i].nranks;
  ovl_mpi_s.kept = calloc(n ? n : 1, sizeof *ovl_mpi_s.kept);
  if (!ovl_mpi_s.kept) return ovl_oom(err, "exposed pieces");
  for (size_t i = 0; i < plan->n; i++)
    for (size_t k = 0; k < files[i].nranks; k++) {
      ovl_mpi_kept *kept = &ovl_mpi_s.kept[ovl_mpi_s.nkept];
      kept->file = plan->index[i];
      kept->k = k;
      if (keep_rank(&files[i].ranks[k], kept)) {
        kept_free(kept);
        memset(kept, 0, sizeof *kept);
        return ovl_oom(err, "exposed pieces");
      }
      ovl_mpi_s.nkept++;
    }
  return OVL_OK;
}

static const ovl_mpi_kept *find_kept(uint64_t file, uint64_t k) {
  for (size_t i = 0; i < ovl_mpi_s.nkept; i++)
    if (ovl_mpi_s.kept[i].file == file && ovl_mpi_s.kept[i].k == k) return &ovl_mpi_s.kept[i];
  return NULL;
}

/* A step's collectives as ovl_dim_exposed_of reads them. */
typedef struct kept_step {
  const ovl_mpi_kept *kept;
  size_t first;
} kept_step;

static const int64_t *kept_pieces(const void *ctx, size_t i, int *n, int *exact) {
  const kept_step *ks = ctx;
  const kept_coll *c = &ks->kept->colls[ks->first + i];
  *n = c->n;
  *exact = c->exact;
  return c->has && ks->kept->bounds ? ks->kept->bounds + 2 * (size_t)c->at : NULL;
}

/* REQ_DIM_EXPOSED: file, rank, steps and their collective counts, every collective's dimension. */
static int answer_dim_exposed(ovl_bytes_reader *in, const ovl_mpi_kept *kept, ovl_bytes *reply, ovl_err *err) {
  size_t nsteps = ovl_get_count(in, 1), all = 0, most = 0;
  if (in->bad || nsteps != kept->nsteps) return ovl_fail(err, OVL_EINTERNAL, "exposed pieces: steps differ (a fault of ovl)");
  for (size_t s = 0; s < nsteps; s++) {
    if (ovl_get_u64(in) != kept->step_ncolls[s]) in->bad = 1;
    all += kept->step_ncolls[s];
    if (kept->step_ncolls[s] > most) most = kept->step_ncolls[s];
  }
  uint8_t *dims = malloc(all ? all : 1);
  void *scratch = malloc((most ? most : 1) * OVL_EXPOSED_PIECES * 2 * sizeof(int64_t));
  int rc = dims && scratch ? OVL_OK : ovl_oom(err, "exposed pieces");
  if (!rc) ovl_get_raw(in, dims, all);
  if (!rc && in->bad) rc = ovl_fail(err, OVL_EINTERNAL, "exposed pieces: malformed request (a fault of ovl)");
  for (size_t s = 0, first = 0; !rc && s < nsteps; first += kept->step_ncolls[s++]) {
    ovl_dim_exposed x;
    kept_step ks = {kept, first};
    ovl_dim_exposed_of(kept_pieces, &ks, dims + first, kept->step_ncolls[s], scratch, &x);
    for (int d = 0; d < OVL_DIM_COUNT; d++) {
      ovl_put_u64(reply, x.exact[d]);
      ovl_put_i64(reply, x.unions[d]);
    }
  }
  free(dims);
  free(scratch);
  return rc;
}

/* REQ_EXPOSED_AFTER: file, rank, n, then n (index, cut, end). */
static int answer_exposed_after(ovl_bytes_reader *in, const ovl_mpi_kept *kept, ovl_bytes *reply, ovl_err *err) {
  size_t n = ovl_get_count(in, 3);
  for (size_t i = 0; i < n && !in->bad; i++) {
    uint64_t j = ovl_get_u64(in);
    int64_t cut = ovl_get_i64(in), end = ovl_get_i64(in);
    if (j >= kept->ncolls) {
      in->bad = 1;
      break;
    }
    const kept_coll *c = &kept->colls[j];
    const int64_t *p = c->has && kept->bounds ? kept->bounds + 2 * (size_t)c->at : NULL;
    ovl_put_i64(reply, p ? ovl_exposed_within(p, c->n, cut, end) : 0);
  }
  return in->bad ? ovl_fail(err, OVL_EINTERNAL, "exposed pieces: malformed request (a fault of ovl)") : OVL_OK;
}

void ovl_mpi_answer_pieces(uint64_t kind, ovl_bytes_reader *in, ovl_bytes *reply) {
  ovl_err err;
  ovl_err_clear(&err);
  uint64_t file = ovl_get_u64(in), k = ovl_get_u64(in);
  const ovl_mpi_kept *kept = find_kept(file, k);
  ovl_bytes answer = {0};
  int rc = !kept || in->bad ? ovl_fail(&err, OVL_EINTERNAL, "exposed pieces: no such rank here (a fault of ovl)")
           : kind == OVL_MPI_REQ_DIM_EXPOSED ? answer_dim_exposed(in, kept, &answer, &err)
                                              : answer_exposed_after(in, kept, &answer, &err);
  if (!rc && answer.oom) rc = ovl_oom(&err, "exposed pieces");
  ovl_put_i64(reply, rc);
  ovl_put_str(reply, err.msg);
  if (!rc) ovl_put_raw(reply, answer.data, answer.len);
  ovl_bytes_free(&answer);
}

/* ---------------------------------------------------------------------------------- */
/* The root's side: job/remote_pieces.h over the processes that measured the ranks      */
/* ---------------------------------------------------------------------------------- */

static const ovl_mpi_owner *owner_of(const ovl_rank_result *r) {
  for (size_t i = 0; i < ovl_mpi_s.nowners; i++)
    if (ovl_mpi_s.owners[i].ovl_path == r->ovl_path) return &ovl_mpi_s.owners[i];
  return NULL;
}

static int holds(void *self, const ovl_rank_result *r) {
  (void)self;
  return owner_of(r) != NULL;
}

/* Sends req to r's owner and reads the status and message of its reply; *in then reads the rest. */
static int ask(const ovl_rank_result *r, ovl_bytes *req, ovl_bytes *reply, ovl_bytes_reader *in, ovl_err *err) {
  const ovl_mpi_owner *o = owner_of(r);
  assert(o);
  if (req->oom) return ovl_oom(err, "exposed pieces");
  if (ovl_mpi_ask(o->process, req, reply))
    return ovl_fail(err, OVL_EINTERNAL, "%s: exposed pieces: no answer from process %d", r->trace_path, o->process);
  *in = (ovl_bytes_reader){reply->data, reply->data + reply->len, 0};
  int theirs = (int)ovl_get_i64(in);
  char msg[sizeof err->msg];
  ovl_get_str_into(in, msg, sizeof msg);
  return theirs ? ovl_fail(err, theirs, "%s", msg) : OVL_OK;
}

static void put_rank(ovl_bytes *req, uint64_t kind, const ovl_rank_result *r) {
  const ovl_mpi_owner *o = owner_of(r);
  ovl_put_u64(req, kind);
  ovl_put_u64(req, o->file);
  ovl_put_u64(req, o->k);
}

static int dim_exposed(void *self, const ovl_rank_result *r, const uint8_t *dims, ovl_dim_exposed *out, ovl_err *err) {
  (void)self;
  ovl_bytes req = {0}, reply = {0};
  put_rank(&req, OVL_MPI_REQ_DIM_EXPOSED, r);
  ovl_put_u64(&req, r->nsteps);
  size_t all = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    ovl_put_u64(&req, r->steps[s].ncolls);
    all += r->steps[s].ncolls;
  }
  ovl_put_raw(&req, dims, all);
  ovl_bytes_reader in;
  int rc = ask(r, &req, &reply, &in, err);
  for (size_t s = 0; !rc && s < r->nsteps; s++)
    for (int d = 0; d < OVL_DIM_COUNT; d++) {
      out[s].exact[d] = ovl_get_u64(&in) != 0;
      out[s].unions[d] = ovl_get_i64(&in);
    }
  if (!rc && (in.bad || in.p != in.end)) rc = ovl_fail(err, OVL_EINTERNAL, "%s: exposed pieces: malformed answer", r->trace_path);
  ovl_bytes_free(&req);
  ovl_bytes_free(&reply);
  return rc;
}

static int exposed_after(void *self, const ovl_rank_result *r, const uint32_t *index, const int64_t *cut,
                         const int64_t *end, size_t n, int64_t *out, ovl_err *err) {
  (void)self;
  ovl_bytes req = {0}, reply = {0};
  put_rank(&req, OVL_MPI_REQ_EXPOSED_AFTER, r);
  ovl_put_u64(&req, n);
  for (size_t i = 0; i < n; i++) {
    ovl_put_u64(&req, index[i]);
    ovl_put_i64(&req, cut[i]);
    ovl_put_i64(&req, end[i]);
  }
  ovl_bytes_reader in;
  int rc = ask(r, &req, &reply, &in, err);
  for (size_t i = 0; !rc && i < n; i++) out[i] = ovl_get_i64(&in);
  if (!rc && (in.bad || in.p != in.end)) rc = ovl_fail(err, OVL_EINTERNAL, "%s: exposed pieces: malformed answer", r->trace_path);
  ovl_bytes_free(&req);
  ovl_bytes_free(&reply);
  return rc;
}

const ovl_remote_pieces ovl_mpi_remote_pieces = {NULL, holds, dim_exposed, exposed_after};
