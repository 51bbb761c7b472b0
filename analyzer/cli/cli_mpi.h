/*
** --mpi and --mpi-local of the analysing verbs (docs/mpi.md): under mpirun, the job is analysed
** by every process (mpi/mpi_job.h) and the root (MPI rank 0) alone prints and writes. The
** others return OVL_CLI_MPI_FOLLOWER from ovl_cli_job_run (a verb returns it at once: it has
** nothing to write) and end in ovl_cli_mpi_end, which main calls with every verb's status: the
** root tells the others its status there, and they exit with it.
*/
#ifndef OVL_CLI_MPI_H
#define OVL_CLI_MPI_H

#include "cli_job.h"

/* The options' lines of the analysing verbs' --help. */
#define OVL_CLI_MPI_HELP                                                                          \
  "  --mpi                under mpirun: every process measures a share of the TRACE files, the\n" \
  "                       root (rank 0) reports the job, as one process would (docs/mpi.md)\n"     \
  "  --mpi-local          --mpi with TRACE naming each node's own folders (no shared disk)\n"

/* ovl_cli_job_run's status on a process that is not the root: nothing to write. */
#define OVL_CLI_MPI_FOLLOWER 3

/* Keeps the command line (main calls it first): in `ovl`, a --mpi command is handed to
** `ovl-mpi` with it (ovl_mpi_sibling). */
void ovl_cli_mpi_keep_argv(int argc, char **argv);

/* Asks for the MPI analysis (ovl_cli_job_option calls it): local: the TRACE arguments name
** each node's own folders (--mpi-local), else every node sees them (--mpi). */
void ovl_cli_mpi_request(int local);
int ovl_cli_mpi_requested(void);

/* ovl_cli_job_run when MPI is requested: same contract on the root; OVL_CLI_MPI_FOLLOWER
** elsewhere (nothing printed; *out not to be freed). */
int ovl_cli_mpi_job_run(const ovl_analysis_options *opt, const char *const *outputs, size_t noutputs,
                        char *const *args, size_t nargs, ovl_cli_job *out);

/* Ends the command under MPI with the verb's exit status: the root's is every process's
** (returned); without MPI, status itself. */
int ovl_cli_mpi_end(int status);

#endif
