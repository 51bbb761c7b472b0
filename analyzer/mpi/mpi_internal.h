/*
** What the files of analyzer/mpi/ share: the process's MPI session (one per process: MPI itself
** is), the byte transport, and the plan of which files each process measures.
*/
#ifndef OVL_MPI_INTERNAL_H
#define OVL_MPI_INTERNAL_H

#include "mpi_job.h"

#include "job/pack_bytes.h"
#include "load/trace_files.h"

#include <mpi.h>

/* Message tags between the root and the others after the gather (mpi_serve.c). */
enum { OVL_MPI_TAG_REQUEST = 7101, OVL_MPI_TAG_REPLY = 7102 };

/* A rank the root received, and the process that measured its trace (the step work's reader). */
typedef struct ovl_mpi_owner {
  const char *ovl_path;    /* the rank's ovl_path string in the root's job (identity, not content) */
  int process;
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

/* ovl_mpi_agree_status (mpi_job.h). */
int ovl_mpi_agree(int rc, ovl_err *err);

#endif
