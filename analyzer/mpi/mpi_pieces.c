/*
** The exposed pieces of the ranks a process measured, kept there instead of sent to the root
** (job/remote_pieces.h): the root asks the process that measured a rank for the two answers
** the job stages read from pieces, while it assembles the job. A process keeps 64 bytes a
** collective or so (generated FSDP job) that the root, which holds every rank, no longer does.
**
** Questions travel in batches: the root queues every question about the ranks a process
** measured into one request to that process (up to PIECES_BATCH_BYTES of questions across
** processes: a bounded addition to the root's memory), posts every process's request before it
** waits for the first answer, and each process answers all its questions in one message. A
** rank's (file, place) names it; times travel as differences from the previous one.
*/
#include "mpi_internal.h"

#include "job/kept_pieces.h"

#include "base/vec.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A rank's kept pieces and how its process names it. */
typedef struct ovl_mpi_kept {
  size_t file, k;          /* the job's file index and the rank's place in the file */
  ovl_kept_pieces pieces;
} ovl_mpi_kept;

void ovl_mpi_kept_free_all(void) {
  for (size_t i = 0; i < ovl_mpi_s.nkept; i++) ovl_kept_pieces_free(&ovl_mpi_s.kept[i].pieces);
  free(ovl_mpi_s.kept);
  ovl_mpi_s.kept = NULL;
  ovl_mpi_s.nkept = 0;
}

/* ovl_mpi_s.kept grows as the measuring threads keep their files' pieces. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

int ovl_mpi_keep_pieces(size_t file, ovl_measured_file *f, ovl_err *err) {
  pthread_mutex_lock(&kept_lock);
  int rc = OVL_OK;
  ovl_mpi_kept *grown = f->nranks ? realloc(ovl_mpi_s.kept, (ovl_mpi_s.nkept + f->nranks) * sizeof *grown) : NULL;
  if (f->nranks && !grown) rc = ovl_oom(err, "exposed pieces");
  if (grown) ovl_mpi_s.kept = grown;
  for (size_t k = 0; !rc && k < f->nranks; k++) {
    ovl_mpi_kept *kept = &ovl_mpi_s.kept[ovl_mpi_s.nkept];
    kept->file = file;
    kept->k = k;
    if (ovl_kept_pieces_take(&f->ranks[k], &kept->pieces)) rc = ovl_oom(err, "exposed pieces");
    else ovl_mpi_s.nkept++;
  }
  pthread_mutex_unlock(&kept_lock);
  return rc;
}

static const ovl_kept_pieces *find_kept(uint64_t file, uint64_t k) {
  for (size_t i = 0; i < ovl_mpi_s.nkept; i++)
    if (ovl_mpi_s.kept[i].file == file && ovl_mpi_s.kept[i].k == k) return &ovl_mpi_s.kept[i].pieces;
  return NULL;
}

/* DIM_EXPOSED: steps and their collective counts, every collective's dimension. */
static int answer_dim_exposed(ovl_bytes_reader *in, const ovl_kept_pieces *kept, ovl_bytes *reply, ovl_err *err) {
  size_t nsteps = ovl_get_count(in, 1), all = 0;
  if (in->bad || nsteps != kept->nsteps) return ovl_fail(err, OVL_EINTERNAL, "exposed pieces: steps differ (a fault of ovl)");
  for (size_t s = 0; s < nsteps; s++) {
    if (ovl_get_u64(in) != kept->step_ncolls[s]) in->bad = 1;
    all += kept->step_ncolls[s];
  }
  if (in->bad || (size_t)(in->end - in->p) < all)
    return ovl_fail(err, OVL_EINTERNAL, "exposed pieces: malformed request (a fault of ovl)");
  const uint8_t *dims = in->p;  /* read in place: the request outlives the answer */
  in->p += all;
  ovl_dim_exposed *x = malloc((nsteps ? nsteps : 1) * sizeof *x);
  if (!x || ovl_kept_dim_exposed(kept, dims, x)) {
    free(x);
    return ovl_oom(err, "exposed pieces");
  }
  for (size_t s = 0; s < nsteps; s++)
    for (int d = 0; d < OVL_DIM_COUNT; d++) {
      ovl_put_u64(reply, x[s].exact[d]);
      ovl_put_i64(reply, x[s].unions[d]);
    }
  free(x);
  return OVL_OK;
}

/* EXPOSED_AFTER: n, then n (index, cut, end), each near the one before. */
static int answer_exposed_after(ovl_bytes_reader *in, const ovl_kept_pieces *kept, ovl_bytes *reply, ovl_err *err) {
  size_t n = ovl_get_count(in, 3);
  int64_t j = 0, cut = 0;
  for (size_t i = 0; i < n && !in->bad; i++) {
    j = ovl_get_i64_near(in, j);
    cut = ovl_get_i64_near(in, cut);
    int64_t end = ovl_get_i64_near(in, cut);
    if (j < 0 || (uint64_t)j >= kept->ncolls) {
      in->bad = 1;
      break;
    }
    ovl_put_i64(reply, ovl_kept_exposed_within(kept, (size_t)j, cut, end));
  }
  return in->bad ? ovl_fail(err, OVL_EINTERNAL, "exposed pieces: malformed request (a fault of ovl)") : OVL_OK;
}

/* One question of a batch: its kind, the rank's (file, place), then the kind's own part. */
static int answer_one(ovl_bytes_reader *in, ovl_bytes *answers, ovl_err *err) {
  uint64_t kind = ovl_get_u64(in), file = ovl_get_u64(in), k = ovl_get_u64(in);
  const ovl_kept_pieces *kept = in->bad ? NULL : find_kept(file, k);
  if (!kept) return ovl_fail(err, OVL_EINTERNAL, "exposed pieces: no such rank here (a fault of ovl)");
  if (kind == OVL_MPI_Q_DIM_EXPOSED) return answer_dim_exposed(in, kept, answers, err);
  if (kind == OVL_MPI_Q_EXPOSED_AFTER) return answer_exposed_after(in, kept, answers, err);
  return ovl_fail(err, OVL_EINTERNAL, "exposed pieces: unknown question (a fault of ovl)");
}

void ovl_mpi_answer_pieces(ovl_bytes_reader *in, ovl_bytes *reply) {
  ovl_err err;
  ovl_err_clear(&err);
  ovl_bytes answers = {0};
  int rc = OVL_OK;
  while (!rc && in->p < in->end) rc = answer_one(in, &answers, &err);
  if (!rc && answers.oom) rc = ovl_oom(&err, "exposed pieces");
  ovl_put_i64(reply, rc);
  ovl_put_str(reply, err.msg);
  if (!rc) ovl_put_raw(reply, answers.data, answers.len);
  ovl_bytes_free(&answers);
}

/* ---------------------------------------------------------------------------------- */
/* The root's side: job/remote_pieces.h over the processes that measured the ranks      */
/* ---------------------------------------------------------------------------------- */

/* The questions queued in one batch: every process's request, and where each question's
** answers go (in the order asked). */
#define PIECES_BATCH_BYTES ((size_t)8 << 20)  /* ~1 M matched calls' questions: one or a few batches a job */

typedef struct asked {
  uint64_t kind;           /* OVL_MPI_Q_* */
  const char *trace_path;  /* for messages */
  void *out;               /* ovl_dim_exposed[n] or int64_t answers out_stride bytes apart */
  size_t n, out_stride;
} asked;

typedef struct process_batch {
  ovl_bytes req;           /* OVL_MPI_REQ_PIECES, then the questions */
  OVL_VEC(asked) q;
} process_batch;

static process_batch *batch;   /* one per process (the root's unused); NULL when nothing is queued */
static size_t batch_bytes;     /* questions queued, all processes */

static const ovl_mpi_owner *owner_of(const ovl_rank_result *r) {
  for (size_t i = 0; i < ovl_mpi_s.nowners; i++)
    if (ovl_mpi_s.owners[i].ovl_path == r->ovl_path) return &ovl_mpi_s.owners[i];
  return NULL;
}

static int holds(void *self, const ovl_rank_result *r) {
  (void)self;
  return owner_of(r) != NULL;
}

static void forget(void *self) {
  (void)self;
  for (int p = 0; batch && p < ovl_mpi_s.size; p++) {
    ovl_bytes_free(&batch[p].req);
    OVL_VEC_FREE(&batch[p].q);
  }
  free(batch);
  batch = NULL;
  batch_bytes = 0;
}

/* Starts a question of that kind about r in its process's request; NULL when out of memory. */
static process_batch *begin_question(uint64_t kind, const ovl_rank_result *r, void *out, size_t n, size_t stride) {
  const ovl_mpi_owner *o = owner_of(r);
  assert(o && o->process > 0 && o->process < ovl_mpi_s.size);
  if (!batch && !(batch = calloc((size_t)ovl_mpi_s.size, sizeof *batch))) return NULL;
  process_batch *b = &batch[o->process];
  if (OVL_VEC_PUSH(&b->q, ((asked){kind, r->trace_path, out, n, stride}))) return NULL;
  if (b->req.len == 0) ovl_put_u64(&b->req, OVL_MPI_REQ_PIECES);
  ovl_put_u64(&b->req, kind);
  ovl_put_u64(&b->req, o->file);
  ovl_put_u64(&b->req, o->k);
  return b;
}

/* Counts what a question added to the batch; out of memory when its request could not grow. */
static int end_question(process_batch *b, size_t len_before, ovl_err *err) {
  if (b->req.oom) return ovl_oom(err, "exposed pieces");
  batch_bytes += b->req.len - len_before;
  return OVL_OK;
}

static int ask_dim_exposed(void *self, const ovl_rank_result *r, const uint8_t *dims, ovl_dim_exposed *out,
                           ovl_err *err) {
  (void)self;
  size_t before = batch ? batch[owner_of(r)->process].req.len : 0;
  process_batch *b = begin_question(OVL_MPI_Q_DIM_EXPOSED, r, out, r->nsteps, sizeof *out);
  if (!b) return ovl_oom(err, "exposed pieces");
  ovl_put_u64(&b->req, r->nsteps);
  size_t all = 0;
  for (size_t s = 0; s < r->nsteps; s++) {
    ovl_put_u64(&b->req, r->steps[s].ncolls);
    all += r->steps[s].ncolls;
  }
  ovl_put_raw(&b->req, dims, all);
  return end_question(b, before, err);
}

static int ask_exposed_after(void *self, const ovl_rank_result *r, const uint32_t *index, const int64_t *cut,
                             const int64_t *end, size_t n, int64_t *out, size_t out_stride, ovl_err *err) {
  (void)self;
  size_t before = batch ? batch[owner_of(r)->process].req.len : 0;
  process_batch *b = begin_question(OVL_MPI_Q_EXPOSED_AFTER, r, out, n, out_stride);
  if (!b) return ovl_oom(err, "exposed pieces");
  ovl_put_u64(&b->req, n);
  int64_t j = 0, c = 0;
  for (size_t i = 0; i < n; i++) {
    assert(i == 0 || index[i] > index[i - 1]);
    ovl_put_i64_near(&b->req, index[i], j);
    ovl_put_i64_near(&b->req, cut[i], c);
    ovl_put_i64_near(&b->req, end[i], cut[i]);
    j = index[i];
    c = cut[i];
  }
  return end_question(b, before, err);
}

static int full(void *self) {
  (void)self;
  return batch_bytes >= PIECES_BATCH_BYTES;
}

/* Writes the answers to a's question from in. */
static void read_answers(ovl_bytes_reader *in, const asked *a) {
  if (a->kind == OVL_MPI_Q_DIM_EXPOSED) {
    ovl_dim_exposed *x = a->out;
    for (size_t s = 0; s < a->n; s++)
      for (int d = 0; d < OVL_DIM_COUNT; d++) {
        x[s].exact[d] = ovl_get_u64(in) != 0;
        x[s].unions[d] = ovl_get_i64(in);
      }
    return;
  }
  for (size_t i = 0; i < a->n; i++) {
    int64_t v = ovl_get_i64(in);
    memcpy((char *)a->out + i * a->out_stride, &v, sizeof v);
  }
}

/* Process p's answer to its batch, written where its questions said. Status. */
static int take_reply(int p, const process_batch *b, ovl_bytes *reply, ovl_err *err) {
  ovl_bytes_reader in = {reply->data, reply->data + reply->len, 0};
  int theirs = (int)ovl_get_i64(&in);
  char msg[sizeof err->msg];
  ovl_get_str_into(&in, msg, sizeof msg);
  if (theirs) return ovl_fail(err, theirs, "%s", msg);
  for (size_t i = 0; i < b->q.len && !in.bad; i++) read_answers(&in, &b->q.items[i]);
  if (in.bad || in.p != in.end)
    return ovl_fail(err, OVL_EINTERNAL, "%s: exposed pieces: malformed answer from process %d", b->q.items[0].trace_path, p);
  return OVL_OK;
}

static int flush(void *self, ovl_err *err) {
  (void)self;
  if (!batch) return OVL_OK;
  int n = ovl_mpi_s.size, rc = OVL_OK;
  ovl_bytes *req = calloc((size_t)n, sizeof *req), *reply = calloc((size_t)n, sizeof *reply);
  if (!req || !reply) rc = ovl_oom(err, "exposed pieces");
  for (int p = 1; !rc && p < n; p++) req[p] = batch[p].req;  /* borrowed: freed with the batch */
  int sent = rc ? 0 : ovl_mpi_ask_all(req, reply);
  for (int p = 1; !rc && p < n; p++) {
    if (!batch[p].q.len) continue;
    if (sent || !reply[p].data)
      rc = ovl_fail(err, OVL_EINTERNAL, "%s: exposed pieces: no answer from process %d", batch[p].q.items[0].trace_path, p);
    else
      rc = take_reply(p, &batch[p], &reply[p], err);
  }
  for (int p = 0; reply && p < n; p++) ovl_bytes_free(&reply[p]);
  free(req);
  free(reply);
  forget(self);
  return rc;
}

const ovl_remote_pieces ovl_mpi_remote_pieces = {NULL, holds, ask_dim_exposed, ask_exposed_after, full, flush, forget};
