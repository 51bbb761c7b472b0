/*
** A minimal TCP rendezvous that gives every rank the same small blob (the NCCL unique id)
** when there is no MPI to broadcast it: rank 0 listens, the other ranks connect, say who
** they are, and receive the blob.
**
** Under torchrun the agent already listens on MASTER_PORT, so the rendezvous uses
** OVL_DDP_PORT when set, else MASTER_PORT + 1 (ovl_rdv_port). Every wait is bounded by
** a deadline: a missing peer is an error after timeout_ms, never a hang.
**
** Wire format (all integers little-endian uint32):
**   rank r -> rank 0   "OVLR" version rank world
**   rank 0 -> rank r   "OVLI" version length blob[length]
** Rank 0 answers each peer as it arrives and returns once all world-1 peers were served.
*/
#ifndef OVL_WL_RENDEZVOUS_H
#define OVL_WL_RENDEZVOUS_H

#include "base/status.h"
#include "launch_env.h"

#include <stddef.h>

#define OVL_RDV_MAX_BLOB 4096

/* The rendezvous port for this job: OVL_DDP_PORT, else MASTER_PORT + 1; OVL_EUSER when
** neither is known or the value is out of range. */
int ovl_rdv_port(const ovl_launch *l, int *port, ovl_err *err);

/* Rank 0: listen on `port` (all interfaces) and send `blob` to world-1 peers. */
int ovl_rdv_serve(int port, int world, const void *blob, size_t len, int timeout_ms, ovl_err *err);

/* Rank r > 0: connect to host:port (retrying until the deadline, rank 0 may start later),
** and receive exactly `len` bytes into blob. */
int ovl_rdv_fetch(const char *host, int port, int rank, int world, void *blob, size_t len, int timeout_ms,
                  ovl_err *err);

/* The whole exchange for this process: rank 0 serves the blob it holds, the others fetch it
** from MASTER_ADDR. A world of 1 returns at once. */
int ovl_rdv_exchange(const ovl_launch *l, void *blob, size_t len, int timeout_ms, ovl_err *err);

#endif
