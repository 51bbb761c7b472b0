/*
** A job analysed where it ran: `mpirun -n P ovl report --mpi TRACE...` (docs/mpi.md). MPI is
** the engine: the processes of one MPI job share the trace files out, measure them, and send
** the measured ranks to the root (MPI rank 0) with MPI_Gatherv; the root relates them across
** ranks, diagnoses the job and writes the report, which is the one process's report of the same
** files byte for byte (the measured files travel exactly: job/rank_pack.h).
**
** Which files a process reads:
**   TRACE arguments (a filesystem every node sees): the root expands them (files, directories)
**   into one list and broadcasts it; process p measures files p, p + P, p + 2P, ...
**   --mpi-local (no shared filesystem: the TRACE arguments name each node's own folders): each
**   process expands them on its node; the processes of one node given the same arguments share
**   those files round-robin; the job's file order is the nodes' (in MPI rank order), each as
**   its expansion gives it. A file name found on two nodes is refused (a shared folder given as
**   local, or names that do not tell the nodes' traces apart).
** The root's traces are re-read for the HTML timeline by the process that measured them
** (ovl_mpi_step_work_read_many), so no process reads another node's files.
**
** Every process takes part until the root ends the command (ovl_mpi_end): the others wait in
** ovl_mpi_serve, answering the root's requests, and exit with the root's status. Only the root
** prints. Built without MPI (cmake/FindOvlMpi.cmake), every call fails saying why; in `ovl`
** (linked without it) the CLI hands a --mpi command to `ovl-mpi` (ovl_mpi_sibling).
*/
#ifndef OVL_MPI_JOB_H
#define OVL_MPI_JOB_H

#include "driver/job_driver.h"
#include "report/html_step_work.h"

/* NULL when this ovl was built with MPI; else one line saying why it was not. */
const char *ovl_mpi_missing(void);

/* In the program built without MPI beside one built with it (`ovl` beside `ovl-mpi`: libmpi and
** its dependencies would cost every other command ~10 ms at start): the file name of that
** program, in the same folder, to which the CLI hands a --mpi command. NULL in `ovl-mpi`, in
** tests linked with MPI and in a build without MPI. */
const char *ovl_mpi_sibling(void);

/* Starts MPI once per process (MPI_Init_thread, funneled: only the calling thread speaks MPI).
** *is_root: this is MPI rank 0. On failure *err says why (every process fails alike). */
int ovl_mpi_begin(int *is_root, ovl_err *err);

/* The same status on every process: the first failing process's (in MPI rank order) rc and
** *err, or OVL_OK. Every process must call it. */
int ovl_mpi_agree_status(int rc, ovl_err *err);

/* Analyses the job on every process of the MPI job (ovl_mpi_begin first): the files of
** args[0..nargs), expanded on every node when local is set (--mpi-local). On the root
** *is_root = 1 and *job is what ovl_analyze_job gives for the same files; on the others
** *is_root = 0 and *job is zeroed (call ovl_mpi_serve). ctx must outlive the command (until
** ovl_mpi_serve or ovl_mpi_end returns). progress is called on the root only (its own files).
** On failure every process returns the same status; the root's *err names the problem. */
int ovl_mpi_analyze_job(const ovl_analysis_ctx *ctx, char *const *args, size_t nargs, int local,
                        ovl_job_progress_fn progress, void *progress_ctx, ovl_job *job, int *is_root, ovl_err *err);

/* Not the root: answers the root's requests until it ends the command, then finalizes MPI and
** returns the root's exit status. */
int ovl_mpi_serve(void);

/* The root: ends the command for every process with exit status `status`, finalizes MPI and
** returns status. Does nothing (returns status) when MPI was not started here. */
int ovl_mpi_end(int status);

/* 1 when MPI was started by this process (a command given --mpi). */
int ovl_mpi_active(void);

/* ovl_step_work_read_many for a rank of the job the root analysed: read by the process that
** measured its trace (the root itself for its own), all steps in one request. Same contract as
** ovl_step_work_read_many. */
int ovl_mpi_step_work_read_many(const ovl_analysis_ctx *ctx, const ovl_rank_result *r,
                                const ovl_step_result *const *steps, const int64_t *merge_ns, size_t n,
                                ovl_step_work *out, ovl_err *err);

#endif
