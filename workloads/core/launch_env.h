/*
** Who am I in the job: rank, world size and local rank from the launcher's environment.
**   torchrun      RANK, WORLD_SIZE, LOCAL_RANK (+ MASTER_ADDR, MASTER_PORT)
**   Open MPI      OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
**   MPICH/Hydra   PMI_RANK, PMI_SIZE, MPI_LOCALRANKID (also Intel MPI)
**   alone         none of these: rank 0 of 1
** The first launcher whose rank variable is set wins, in this order. MASTER_ADDR and
** MASTER_PORT are read in every case (an mpirun job without the MPI build uses them for the
** NCCL id exchange).
*/
#ifndef OVL_WL_LAUNCH_ENV_H
#define OVL_WL_LAUNCH_ENV_H

#include "base/status.h"

typedef enum ovl_launcher { OVL_LAUNCH_ALONE, OVL_LAUNCH_TORCHRUN, OVL_LAUNCH_OPENMPI, OVL_LAUNCH_MPICH } ovl_launcher;

typedef struct ovl_launch {
  ovl_launcher launcher;
  int rank, world_size, local_rank;
  char master_addr[256];  /* "" when MASTER_ADDR is unset */
  int master_port;        /* 0 when MASTER_PORT is unset */
} ovl_launch;

/* "alone", "torchrun", "Open MPI", "MPICH". */
const char *ovl_launcher_name(ovl_launcher l);

/* Reads the environment. Fails with OVL_EUSER naming the variable when a value is not an
** integer, out of range (rank >= world size, port outside 1..65535), or half a set is
** given (RANK without WORLD_SIZE). */
int ovl_launch_detect(ovl_launch *out, ovl_err *err);

#endif
