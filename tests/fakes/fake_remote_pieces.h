/*
** Test double of job/remote_pieces.h: keeps the exposed pieces of measured ranks (taken out of
** their results, as `--mpi`'s other processes keep theirs) and answers the job stages' questions
** in batches of `per_batch` questions (full() after that many), like analyzer/mpi/mpi_pieces.c
** without MPI. An ask fills its outputs with a poison value: a stage that reads an answer before
** the flush that writes it gives a different report.
*/
#ifndef OVL_FAKE_REMOTE_PIECES_H
#define OVL_FAKE_REMOTE_PIECES_H

#include "job/job.h"
#include "base/vec.h"
#include "job/remote_pieces.h"

typedef struct fake_remote_pieces {
  struct fake_kept *kept;
  size_t nkept;
  OVL_VEC(struct fake_question) q;  /* queued */
  size_t per_batch;        /* questions a batch holds */
  size_t flushes;          /* batches answered */
  size_t asked;            /* questions asked */
} fake_remote_pieces;

/* Takes the pieces of every rank of files[0..n) (their results then hold none). Returns 0, or -1
** when memory ran out. */
int fake_remote_take(fake_remote_pieces *f, ovl_measured_file *files, size_t n, size_t per_batch);
/* The interface over f (borrowed until f is freed). */
ovl_remote_pieces fake_remote_interface(fake_remote_pieces *f);
void fake_remote_free(fake_remote_pieces *f);

#endif
