/* Test double of job/remote_pieces.h: see fake_remote_pieces.h. */
#include "fake_remote_pieces.h"

#include "job/kept_pieces.h"

#include <stdlib.h>
#include <string.h>

#define POISON ((int64_t)0x5555555555555555)

/* One rank's pieces (job/kept_pieces.h, as mpi/mpi_pieces.c keeps them). */
typedef struct fake_kept {
  const char *ovl_path;    /* the rank's identity (its results keep the pointer) */
  ovl_kept_pieces pieces;
} fake_kept;

typedef struct fake_question {
  const fake_kept *k;
  int dims_kind;           /* 1: per-step unions; 0: exposed after a cut */
  uint8_t *dims;           /* dims_kind: a copy */
  ovl_dim_exposed *x;
  uint32_t *index;         /* !dims_kind: copies */
  int64_t *cut, *end, *out;
  size_t n, stride;
} fake_question;

int fake_remote_take(fake_remote_pieces *f, ovl_measured_file *files, size_t n, size_t per_batch) {
  memset(f, 0, sizeof *f);
  f->per_batch = per_batch ? per_batch : 1;
  size_t all = 0;
  for (size_t i = 0; i < n; i++) all += files[i].nranks;
  f->kept = calloc(all + 1, sizeof *f->kept);
  if (!f->kept) return -1;
  for (size_t i = 0; i < n; i++)
    for (size_t r = 0; r < files[i].nranks; r++)
    {
      f->kept[f->nkept].ovl_path = files[i].ranks[r].ovl_path;
      if (ovl_kept_pieces_take(&files[i].ranks[r], &f->kept[f->nkept++].pieces)) return -1;
    }
  return 0;
}

static const fake_kept *find(const fake_remote_pieces *f, const ovl_rank_result *r) {
  for (size_t i = 0; i < f->nkept; i++)
    if (f->kept[i].ovl_path == r->ovl_path) return &f->kept[i];
  return NULL;
}

static int holds(void *self, const ovl_rank_result *r) { return find(self, r) != NULL; }

static fake_question *push(fake_remote_pieces *f) {
  if (OVL_VEC_PUSH(&f->q, (fake_question){0})) return NULL;
  f->asked++;
  return &f->q.items[f->q.len - 1];
}

static int ask_dim_exposed(void *self, const ovl_rank_result *r, const uint8_t *dims, ovl_dim_exposed *out,
                           ovl_err *err) {
  fake_remote_pieces *f = self;
  fake_question *q = push(f);
  const fake_kept *k = find(f, r);
  if (!q || !k) return ovl_fail(err, OVL_EINTERNAL, "fake remote: no memory or no such rank");
  size_t stepped = 0;  /* dims: every step's collectives */
  for (size_t s = 0; s < k->pieces.nsteps; s++) stepped += k->pieces.step_ncolls[s];
  *q = (fake_question){k, 1, malloc(stepped + 1), out, NULL, NULL, NULL, NULL, k->pieces.nsteps, 0};
  if (!q->dims) return ovl_oom(err, "fake remote");
  memcpy(q->dims, dims, stepped);
  for (size_t s = 0; s < k->pieces.nsteps; s++) memset(&out[s], 0x55, sizeof out[s]);
  return OVL_OK;
}

static int ask_exposed_after(void *self, const ovl_rank_result *r, const uint32_t *index, const int64_t *cut,
                             const int64_t *end, size_t n, int64_t *out, size_t stride, ovl_err *err) {
  fake_remote_pieces *f = self;
  fake_question *q = push(f);
  const fake_kept *k = find(f, r);
  if (!q || !k) return ovl_fail(err, OVL_EINTERNAL, "fake remote: no memory or no such rank");
  *q = (fake_question){k, 0, NULL, NULL, malloc((n + 1) * sizeof *index), malloc((n + 1) * sizeof *cut),
                       malloc((n + 1) * sizeof *end), out, n, stride};
  if (!q->index || !q->cut || !q->end) return ovl_oom(err, "fake remote");
  memcpy(q->index, index, n * sizeof *index);
  memcpy(q->cut, cut, n * sizeof *cut);
  memcpy(q->end, end, n * sizeof *end);
  for (size_t i = 0; i < n; i++) memcpy((char *)out + i * stride, &(int64_t){POISON}, sizeof(int64_t));
  return OVL_OK;
}

static int full(void *self) {
  const fake_remote_pieces *f = self;
  return f->q.len >= f->per_batch;
}

static void answer(const fake_question *q) {
  if (q->dims_kind) {
    if (ovl_kept_dim_exposed(&q->k->pieces, q->dims, q->x)) abort();  /* a test out of memory */
    return;
  }
  for (size_t i = 0; i < q->n; i++) {
    int64_t v = ovl_kept_exposed_within(&q->k->pieces, q->index[i], q->cut[i], q->end[i]);
    memcpy((char *)q->out + i * q->stride, &v, sizeof v);
  }
}

static void forget(void *self) {
  fake_remote_pieces *f = self;
  for (size_t i = 0; i < f->q.len; i++) {
    free(f->q.items[i].dims);
    free(f->q.items[i].index);
    free(f->q.items[i].cut);
    free(f->q.items[i].end);
  }
  f->q.len = 0;
}

static int flush(void *self, ovl_err *err) {
  fake_remote_pieces *f = self;
  (void)err;
  for (size_t i = 0; i < f->q.len; i++) answer(&f->q.items[i]);
  f->flushes += f->q.len > 0;
  forget(f);
  return OVL_OK;
}

ovl_remote_pieces fake_remote_interface(fake_remote_pieces *f) {
  return (ovl_remote_pieces){f, holds, ask_dim_exposed, ask_exposed_after, full, flush, forget};
}

void fake_remote_free(fake_remote_pieces *f) {
  forget(f);
  OVL_VEC_FREE(&f->q);
  for (size_t i = 0; i < f->nkept; i++) ovl_kept_pieces_free(&f->kept[i].pieces);
  free(f->kept);
  memset(f, 0, sizeof *f);
}
