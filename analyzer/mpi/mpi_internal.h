/*
** What the files of analyzer/mpi/ share: the process's MPI session (one per process: MPI itself
** is), the byte transport, and the plan of which files each process measures.
*/
#ifndef OVL_MPI_INTERNAL_H
#define OVL_MPI_INTERNAL_H

#include "mpi_job.h"

#include "job/pack_bytes.h"
#include "job/remote_pieces.h"
#include "load/trace_files.h"

#include <mpi.h>

/* Message tags between the root and the others after the gather (mpi_serve.c). */
enum { OVL_MPI_TAG_REQUEST = 7101, OVL_MPI_TAG_REPLY = 7102 };

/* The root's requests (a request's first number). While the root assembles the job: batches of
** questions about exposed pieces (mpi_pieces.c) until ASSEMBLED; then step work until END. */
enum {
  OVL_MPI_REQ_END = 0,
  OVL_MPI_REQ_STEP_WORK = 1,
  OVL_MPI_REQ_PIECES = 2,
  OVL_MPI_REQ_ASSEMBLED = 4
};

/* The questions of an OVL_MPI_REQ_PIECES batch (job/remote_pieces.h's two). */
enum { OVL_MPI_Q_DIM_EXPOSED = 1, OVL_MPI_Q_EXPOSED_AFTER = 2 };

/* A rank the root received, and the process that measured its trace (the step work's reader). */
typedef struct ovl_mpi_owner {
  const char *ovl_path;    /* the rank's ovl_path string in the root's job (identity, not content) */
  int process;
  size_t file, k;          /* its file's index in the job and its place in the file: how its process names it */
} ovl_mpi_owner;

typedef struct ovl_mpi_session {
  int started;             /* MPI_Init called here */
  int rank, size;          /* in MPI_COMM_WORLD */
  int node_procs;          /* processes on this node */
  const ovl_analysis_ctx *ctx;
  ovl_measured_file *mine; /* this process's files (not the root's): sources kept open until the end */
  size_t nmine;
  ovl_mpi_owner *owners;   /* the root: ranks measured elsewhere */
  size_t nowners;
  struct ovl_mpi_kept *kept;  /* the others: their ranks' exposed pieces (mpi_pieces.c) */
  size_t nkept;
} ovl_mpi_session;

extern ovl_mpi_session ovl_mpi_s;

/* Broadcasts the root's bytes to every process (*b filled on the others). Status. */
int ovl_mpi_bcast_bytes(ovl_bytes *b, ovl_err *err);
/* Gathers every process's bytes on the root with MPI_Gatherv (in rounds, each under 1 GiB in
** all): on the root *all is an array of size buffers (caller frees each and the array); NULL
** elsewhere. mine is unchanged. Status (the same on every process). */
int ovl_mpi_gather_bytes(const ovl_bytes *mine, ovl_bytes **all, ovl_err *err);

/* The files this process measures, by their index in the job's file order. */
typedef struct ovl_mpi_plan {
  char **paths;            /* this process's files */
  size_t *index;           /* their index in the job's file order */
  size_t n;
  size_t nfiles;           /* files in the job */
  char skipped[2048];      /* the root: the warning about files that are not traces ("" none) */
  ovl_file_list list;      /* the list the paths point into */
} ovl_mpi_plan;

/* Plans the files: args expanded by the root, or by every process when local (mpi_job.h).
** Every process returns the same status; the root's *err says why. */
int ovl_mpi_plan_files(char *const *args, size_t nargs, int local, ovl_mpi_plan *plan, ovl_err *err);
void ovl_mpi_plan_free(ovl_mpi_plan *plan);

/* The others, before packing a file (the job's file index file): moves its ranks' exposed
** pieces out of the results into the session, to answer the root (the results then carry
** none). Safe to call for several files at once (measuring threads). Status; on failure what
** was kept stays kept (freed with the session). */
int ovl_mpi_keep_pieces(size_t file, ovl_measured_file *f, ovl_err *err);
void ovl_mpi_kept_free_all(void);
/* The answer to a batch of questions about exposed pieces (the request after its kind in in):
** the status, its message, then every question's answers in order. */
void ovl_mpi_answer_pieces(ovl_bytes_reader *in, ovl_bytes *reply);
/* The root: the pieces of the ranks it received, asked of their processes. */
extern const ovl_remote_pieces ovl_mpi_remote_pieces;

/* The root: sends a request to process to and receives its reply (*reply: caller frees). 0 or -1. */
int ovl_mpi_ask(int to, const ovl_bytes *req, ovl_bytes *reply);
/* The root: sends req[p] to every process p whose req[p].len > 0, all posted before the first
** reply is awaited, and receives each one's reply into reply[p] (caller frees; reply[] of size
** processes, zeroed; the others left empty). 0 or -1 (some replies then missing). */
int ovl_mpi_ask_all(const ovl_bytes *req, ovl_bytes *reply);
/* The others: answer the root's requests while it assembles the job, until it says it has.
** 0, or -1 when the root could not be heard. */
int ovl_mpi_serve_assembly(void);
/* The root: tells every other process the job is assembled (failed or not). */
void ovl_mpi_assembled(void);

/* ovl_mpi_agree_status (mpi_job.h). */
int ovl_mpi_agree(int rc, ovl_err *err);

/* Waits for *req to complete without keeping a CPU busy: tests it, sleeping between tests
** (from 20 us, doubling to 1 ms). MPI's blocking calls spin; a process that waits for the
** root spins on a CPU the root needs when processes share a node (mpirun -n 4 on 2 cores).
** MPI_Wait's status. */
int ovl_mpi_wait_idle(MPI_Request *req);
/* MPI_Probe without the spin: polls with MPI_Iprobe, sleeping as ovl_mpi_wait_idle does. */
int ovl_mpi_probe_idle(int from, int tag, MPI_Status *st);

#endif
