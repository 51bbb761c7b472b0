/*
** Events that hooks on application threads hand to the writer thread (NCCL calls, NVTX
** ranges and marks): each is one call of the program, and becomes one row. Each is a self-contained record: the writer turns
** it into rows without looking anything up, so events of different threads may be drained
** in any order. Sizes are multiples of 8; ovl_event_header.size counts the whole record.
*/
#ifndef OVL_INJECT_HOST_EVENTS_H
#define OVL_INJECT_HOST_EVENTS_H

#include <stdint.h>

typedef enum ovl_event_kind {
  OVL_EV_COLLECTIVE = 1,  /* one NCCL call: a collectives row */
  OVL_EV_NVTX = 3,        /* a finished NVTX range or a mark: an nvtx row */
} ovl_event_kind;

typedef struct ovl_event_header {
  uint16_t kind;
  uint16_t size;
  uint32_t reserved;
} ovl_event_header;

/* One NCCL call, 128 bytes. The per-rank byte count is the writer's to work out (from op,
** count, dtype and nranks): the calling thread does no more than it must. */
typedef struct ovl_coll_event {
  ovl_event_header h;
  int64_t id, comm, rank, nranks, seq, count, peer, device, stream;
  int64_t host_start, host_end, tid, group_id;  /* OVL_NONE when unknown / not grouped */
  int32_t op;     /* ovl_nccl_call (nccl_names.h) */
  int32_t dtype;  /* ncclDataType_t as passed */
  int32_t redop;  /* ncclRedOp_t as passed, -1 for operations without one */
  int32_t reserved;
} ovl_coll_event;
_Static_assert(sizeof(ovl_coll_event) == 128, "two cache lines per call");

/* The longest NVTX message kept; longer ones are cut (at a UTF-8 character boundary). */
#define OVL_NVTX_NAME_MAX 4095

typedef struct ovl_nvtx_event {
  ovl_event_header h;
  int64_t start, end;      /* end = OVL_NONE for a mark */
  int64_t tid;
  const char *domain;      /* NULL: default domain; else a name libovl never frees */
  uint32_t name_len;
  char name[];             /* name_len bytes, not NUL-terminated */
} ovl_nvtx_event;

#endif
