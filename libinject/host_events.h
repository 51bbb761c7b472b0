/*
** Events that hooks on application threads hand to the writer thread (NCCL calls, NVTX
** ranges and marks): each is one call of the program, and becomes one row. The writer turns
** an event into a row without looking anything up but the communicator the event points to
** (whose fields never change and which is never freed, nccl_comms.h), and the thread it
** came from (the drain tells), so events of different threads may be drained in any order.
** Sizes are multiples of 8; ovl_event_header.size counts the whole record.
*/
#ifndef OVL_INJECT_HOST_EVENTS_H
#define OVL_INJECT_HOST_EVENTS_H

#include <stdint.h>

typedef enum ovl_event_kind {
  OVL_EV_COLLECTIVE = 1,  /* one NCCL call: a collectives row */
  OVL_EV_NVTX = 3,        /* a finished NVTX range or a mark: an nvtx row */
} ovl_event_kind;

/* The first 8 bytes of every event. The last four belong to collectives (0 in others): their
** operation, type, operator and flags, so that a call fits one cache line. */
typedef struct ovl_event_header {
  uint16_t kind;
  uint16_t size;
  uint8_t op;      /* ovl_nccl_call (nccl_names.h) */
  uint8_t dtype;   /* ncclDataType_t as passed (a value above 255 kept as 255: no such type) */
  int8_t redop;    /* ncclRedOp_t as passed, -1 for operations without one (an operator made by
                   ** ncclRedOpCreatePreMulSum, 5 and above, kept as at most 127) */
  uint8_t flags;   /* OVL_EV_IN_GROUP */
} ovl_event_header;

#define OVL_EV_IN_GROUP 1  /* called between ncclGroupStart and ncclGroupEnd */

struct ovl_comm_info;

#define OVL_COLL_NO_STREAM UINT32_MAX

/* One NCCL call in one cache line: the calling thread writes 64 bytes and no more; the writer
** works out the rest (rank, size and device from the communicator, the group from a group
** member's id, the per-rank byte count, the thread's id). A call in a group beyond its
** first 2^20 - 1 calls has no member id: its group is not recorded. */
typedef struct ovl_coll_event {
  ovl_event_header h;
  uint32_t stream;  /* CUPTI stream id, OVL_COLL_NO_STREAM when unknown */
  int32_t peer;     /* root or peer, -1 when none */
  int64_t id;
  const struct ovl_comm_info *comm;  /* NULL when unknown */
  int64_t seq;      /* OVL_NONE when the communicator is unknown */
  int64_t count;
  int64_t host_start, host_end;
} ovl_coll_event;
_Static_assert(sizeof(ovl_coll_event) == 64, "one cache line per call");

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
