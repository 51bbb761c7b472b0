/*
** Plain structs for the rows of an ovl trace (schema/ovl.sql). Producers (the capture
** library, `ovl simulate`, importers) fill them; the trace writer stores them; the loader
** reads them back. OVL_NONE stands for SQL NULL in any integer field.
*/
#ifndef OVL_TRACE_ROWS_H
#define OVL_TRACE_ROWS_H

#include "base/none.h"
#include "store/schema_def.h"  /* OVL_SCHEMA_VERSION and the columns, generated from schema/ovl.sql */

#include <stdint.h>

typedef struct ovl_kernel_row {
  int64_t start, end;
  int64_t device, stream, correlation;
  int64_t name;                 /* strings.id, from ovl_tw_intern */
  int64_t grid[3], block[3];    /* OVL_NONE when unknown */
} ovl_kernel_row;

typedef struct ovl_memop_row {
  int64_t start, end;
  int64_t device, stream, correlation;
  const char *kind;             /* HtoD DtoH DtoD PtoP HtoH memset */
  int64_t bytes;
} ovl_memop_row;

typedef struct ovl_collective_row {
  int64_t id;                   /* OVL_NONE: let SQLite assign the next id */
  int64_t comm, rank, nranks, seq;
  const char *op;               /* AllReduce, ReduceScatter, ... (NCCL name without "nccl") */
  int64_t count;
  const char *dtype;            /* NCCL type name without "nccl": Float32, Int32, ... */
  int64_t bytes;
  const char *redop;            /* Sum, Prod, Max, Min, Avg, or NULL */
  int64_t peer;
  int64_t device, stream;
  int64_t host_start, host_end, tid;
  int64_t group_id;
} ovl_collective_row;

/* What NCCL's profiler plugin adds to a collectives row (the optional columns). */
typedef struct ovl_collective_nccl {
  const char *algorithm;        /* "RING", "TREE", ...; NULL when unknown */
  const char *protocol;         /* "LL", "LL128", "SIMPLE"; NULL when unknown */
  int64_t nchannels, nwarps;    /* OVL_NONE when unknown */
  int64_t nccl_seq;             /* NCCL's own sequence number; OVL_NONE when unknown */
} ovl_collective_nccl;

/* One channel of a collective's kernel (collective_channels). */
typedef struct ovl_channel_row {
  int64_t collective, channel, device;
  int64_t start, end;           /* trace clock */
  int64_t timer_start, timer_end;  /* GPU global timer */
} ovl_channel_row;

/* A proxy operation (proxy_ops) and one of its network transfers (proxy_steps). */
typedef struct ovl_proxy_op_row {
  int64_t collective, channel, peer, is_send, nsteps, chunk_size, start, end;
} ovl_proxy_op_row;

typedef struct ovl_proxy_step_row {
  int64_t collective, channel, is_send, step, bytes, start, end;
  int64_t gpu_wait, peer_wait, net_wait, flush_wait;  /* OVL_NONE when the state never came */
} ovl_proxy_step_row;

typedef struct ovl_nvtx_row {
  int64_t start, end;           /* end = OVL_NONE for a mark */
  int64_t tid;
  const char *domain;           /* NULL for the default domain */
  const char *name;
} ovl_nvtx_row;

typedef struct ovl_api_row {
  int64_t start, end, tid, correlation;
  int64_t name;                 /* strings.id */
} ovl_api_row;

#endif
