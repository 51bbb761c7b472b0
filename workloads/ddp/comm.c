/* NCCL or emulated collectives, and the NCCL id exchange: see comm.h. */
#include "comm.h"

#include "gpu_status.h"
#include "kernel_ref.h"
#include "kernels.h"
#include "rendezvous.h"

#include <stdlib.h>
#include <string.h>

#ifdef OVL_DDP_WITH_MPI
#include <mpi.h>
static int mpi_started;
#endif

static int under_mpi(const ovl_launch *l) {
  return l->launcher == OVL_LAUNCH_OPENMPI || l->launcher == OVL_LAUNCH_MPICH;
}

int ovl_comm_mpi_begin(const ovl_launch *l) {
#ifdef OVL_DDP_WITH_MPI
  if (under_mpi(l) && l->world_size > 1) {
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) return -1;
    mpi_started = 1;
  }
#else
  (void)l;
#endif
  return 0;
}

void ovl_comm_mpi_end(void) {
#ifdef OVL_DDP_WITH_MPI
  if (mpi_started) MPI_Finalize();
  mpi_started = 0;
#endif
}

/* Gives every rank rank 0's NCCL id. */
static int share_id(ovl_comm *c, const ovl_ddp_options *o, const ovl_launch *l, ncclUniqueId *id, ovl_err *err) {
  if (l->world_size == 1) {
    c->id_source = "local";
    NCCL_TRY(ncclGetUniqueId(id));
    return OVL_OK;
  }
#ifdef OVL_DDP_WITH_MPI
  if (mpi_started) {
    c->id_source = "MPI_Bcast";
    if (l->rank == 0) NCCL_TRY(ncclGetUniqueId(id));
    if (MPI_Bcast(id, (int)sizeof *id, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
      return ovl_fail(err, OVL_EINTERNAL, "MPI_Bcast of the NCCL id failed");
    return OVL_OK;
  }
#endif
  if (getenv("NCCL_COMM_ID")) {
    /* Every rank derives the same id from the variable; rank 0 opens NCCL's root there. */
    c->id_source = "NCCL_COMM_ID";
    NCCL_TRY(ncclGetUniqueId(id));
    return OVL_OK;
  }
  if (under_mpi(l) && (!l->master_addr[0] || !l->master_port) && !getenv("OVL_DDP_PORT"))
    return ovl_fail(err, OVL_EUSER,
                    "launched by mpirun without MPI support in this build: set NCCL_COMM_ID=host:port, or "
                    "MASTER_ADDR and MASTER_PORT, for the NCCL id exchange");
  c->id_source = "TCP rendezvous";
  if (l->rank == 0) NCCL_TRY(ncclGetUniqueId(id));
  return ovl_rdv_exchange(l, id, sizeof *id, o->timeout_s * 1000, err);
}

int ovl_comm_init(ovl_comm *c, const ovl_ddp_options *o, const ovl_launch *l, cudaStream_t stream, ovl_err *err) {
  memset(c, 0, sizeof *c);
  c->stream = stream;
  c->emulated = o->emulated;
  c->alpha_ns = o->alpha_ns;
  c->beta_bytes_per_s = o->beta_bytes_per_s;
  c->emulate_ranks = o->emulate_ranks;
  c->nranks = l->world_size;
  c->rank = l->world_size > 1 ? l->rank : 0;
  if (c->emulated) {
    c->id_source = "none (emulated)";
    return OVL_OK;
  }
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  int rc = share_id(c, o, l, &id, err);
  if (rc) return rc;
  NCCL_TRY(ncclCommInitRank(&c->nccl, l->world_size, id, l->rank));
  return OVL_OK;
}

int ovl_comm_allreduce_f32(ovl_comm *c, float *buf, int64_t n, ovl_err *err) {
  if (c->emulated) {
    double ns = ovl_emulated_allreduce_ns(c->alpha_ns, c->beta_bytes_per_s, c->emulate_ranks, (double)n * sizeof(float));
    CUDA_TRY(ovl_k_emulated_allreduce(buf, n, (int64_t)ns, c->stream));
    return OVL_OK;
  }
  NCCL_TRY(ncclAllReduce(buf, buf, (size_t)n, ncclFloat32, ncclSum, c->nccl, c->stream));
  return OVL_OK;
}

int ovl_comm_allgather_f32(ovl_comm *c, const float *send, float *recv, int64_t count, ovl_err *err) {
  if (c->emulated) {
    double ns = ovl_emulated_allgather_ns(c->alpha_ns, c->beta_bytes_per_s, c->emulate_ranks, (double)count * sizeof(float));
    if (send != recv)
      CUDA_TRY(cudaMemcpyAsync(recv, send, (size_t)count * sizeof(float), cudaMemcpyDeviceToDevice, c->stream));
    CUDA_TRY(ovl_k_emulated_allgather(recv, count, (int64_t)ns, c->stream));
    return OVL_OK;
  }
  NCCL_TRY(ncclAllGather(send, recv, (size_t)count, ncclFloat32, c->nccl, c->stream));
  return OVL_OK;
}

int ovl_comm_reduce_scatter_f32(ovl_comm *c, const float *send, float *recv, int64_t count, ovl_err *err) {
  if (c->emulated) {
    /* one real rank: its part is the whole buffer, "reduced" over itself */
    double ns = ovl_emulated_allgather_ns(c->alpha_ns, c->beta_bytes_per_s, c->emulate_ranks, (double)count * sizeof(float));
    if (send != recv)
      CUDA_TRY(cudaMemcpyAsync(recv, send, (size_t)count * sizeof(float), cudaMemcpyDeviceToDevice, c->stream));
    CUDA_TRY(ovl_k_emulated_reducescatter(recv, count, (int64_t)ns, c->stream));
    return OVL_OK;
  }
  NCCL_TRY(ncclReduceScatter(send, recv, (size_t)count, ncclFloat32, ncclSum, c->nccl, c->stream));
  return OVL_OK;
}

int ovl_comm_allreduce_i32(ovl_comm *c, const int32_t *send, int32_t *recv, int64_t n, ovl_err *err) {
  if (c->emulated) {
    /* ovl_emulated_allreduce_i32: its name tells ovl the map's element type (no NCCL call does) */
    double ns = ovl_emulated_allreduce_ns(c->alpha_ns, c->beta_bytes_per_s, c->emulate_ranks, (double)n * sizeof(int32_t));
    CUDA_TRY(cudaMemcpyAsync(recv, send, (size_t)n * sizeof(int32_t), cudaMemcpyDeviceToDevice, c->stream));
    CUDA_TRY(ovl_k_emulated_allreduce_i32(recv, n, (int64_t)ns, c->stream));
    return OVL_OK;
  }
  NCCL_TRY(ncclAllReduce(send, recv, (size_t)n, ncclInt32, ncclSum, c->nccl, c->stream));
  return OVL_OK;
}

void ovl_comm_destroy(ovl_comm *c) {
  if (c->nccl) ncclCommDestroy(c->nccl);
  c->nccl = NULL;
}
