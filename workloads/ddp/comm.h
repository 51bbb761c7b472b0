/*
** The communication backend of ovl-ddp: NCCL all-reduces (sum), and for --mode zero3
** all-gathers and reduce-scatters, on the communication stream, or their emulation on one GPU (--comm emulated: one ovl_emulated_allreduce kernel
** per all-reduce that waits alpha + 2(n-1)/n * bytes / beta and leaves the data unchanged).
**
** NCCL id exchange, in order of preference: MPI_Bcast (MPI build, launched by mpirun);
** NCCL_COMM_ID (every rank derives the id from it); the TCP rendezvous of
** core/rendezvous.h (rank 0 listens on OVL_DDP_PORT or MASTER_PORT+1).
*/
#ifndef OVL_DDP_COMM_H
#define OVL_DDP_COMM_H

#include "ddp_options.h"
#include "launch_env.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

typedef struct ovl_comm {
  int emulated;
  int nranks;            /* ranks that really exist (1 when emulated) */
  int rank;              /* this process's rank among them */
  double alpha_ns, beta_bytes_per_s;
  int emulate_ranks;
  ncclComm_t nccl;       /* NULL when emulated */
  cudaStream_t stream;
  int mpi_initialized;
  const char *id_source; /* how the NCCL id was shared, for the log line */
} ovl_comm;

/* Sets up the backend for this process; collectives will run on `stream`. */
int ovl_comm_init(ovl_comm *c, const ovl_ddp_options *o, const ovl_launch *l, cudaStream_t stream, ovl_err *err);
/* In-place sum of n floats over the ranks. */
int ovl_comm_allreduce_f32(ovl_comm *c, float *buf, int64_t n, ovl_err *err);
/* --mode zero3: every rank's `count` floats of send gathered, rank after rank, into recv
** (count * nranks floats); and the sum over the ranks of send (count * nranks floats), rank
** r's `count` of them into recv. Emulated (one real rank): send is copied to recv, then an
** ovl_emulated_allgather / ovl_emulated_reducescatter kernel on recv lasts
** alpha + (n-1)/n * bytes / beta for the emulated n and the whole buffer's bytes. */
int ovl_comm_allgather_f32(ovl_comm *c, const float *send, float *recv, int64_t count, ovl_err *err);
int ovl_comm_reduce_scatter_f32(ovl_comm *c, const float *send, float *recv, int64_t count, ovl_err *err);
/* Out-of-place sum of n int32 (the used-parameter map of --find-unused). */
int ovl_comm_allreduce_i32(ovl_comm *c, const int32_t *send, int32_t *recv, int64_t n, ovl_err *err);
void ovl_comm_destroy(ovl_comm *c);

/* Under an MPI launcher in an MPI build: MPI_Init before anything else, MPI_Finalize last. */
int ovl_comm_mpi_begin(const ovl_launch *l);
void ovl_comm_mpi_end(void);

#endif
