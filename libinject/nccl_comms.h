/*
** The NCCL communicators a process uses, by their ncclComm_t handle: the stable id shared
** by all ranks (collectives.comm), rank, size, device, and the per-communicator call counter
** (collectives.seq). Lookups are lock-free (hooks run on every NCCL call); additions take a
** lock. Entries are never freed: a thread may still hold one while another destroys the
** communicator, and there are few.
*/
#ifndef OVL_INJECT_NCCL_COMMS_H
#define OVL_INJECT_NCCL_COMMS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ovl_comm_info {
  _Atomic(const void *) handle; /* the ncclComm_t; NULL once destroyed */
  int64_t id;                  /* equal on every rank of the communicator */
  int64_t rank, nranks, device;  /* OVL_NONE when unknown */
  atomic_int_fast64_t next_seq;  /* collectives.seq of the next call */
  atomic_uint children;          /* communicators split or shrunk from this one so far */
  struct ovl_comm_info *retired; /* entries replaced in their slot, linked (never freed) */
} ovl_comm_info;

/* Records a communicator (replacing a destroyed one at the same address). NULL when out of
** memory or when the table is full (the calls on it are then recorded without a stable id). */
ovl_comm_info *ovl_comms_add(const void *handle, int64_t id, int64_t rank, int64_t nranks, int64_t device);
ovl_comm_info *ovl_comms_find(const void *handle);
/* Forgets a destroyed communicator. */
void ovl_comms_remove(const void *handle);

/* The process's place in the job, as meta.rank and meta.world_size give it: its rank in the
** largest communicator it joined (the first of that size), with rank and size known; both
** OVL_NONE before one. Any thread, lock-free: the writer reads it at every commit, so a
** trace knows its rank as soon as the communicator exists. */
void ovl_comms_world(int64_t *rank, int64_t *nranks);
/* The NCCL version (ncclGetVersion) the hooks found, 0 before; noted once by the hooks. */
void ovl_comms_set_nccl_version(int64_t version);
int64_t ovl_comms_nccl_version(void);

/* 62-bit id (non-negative in SQLite) hashed from bytes, e.g. an ncclUniqueId. */
int64_t ovl_comm_id_hash(const void *bytes, size_t n, uint64_t seed);

#endif
