/*
** The binary interface between NCCL's core and a profiler plugin, versions 5 and 4: what
** NCCL looks up in the library named by NCCL_PROFILER_PLUGIN (a struct of five functions
** exported as `ncclProfiler_v5`, else `ncclProfiler_v4`) and what it passes to them.
**
** Written for ovl from the facts of NVIDIA's published interface (NVIDIA/nccl,
** src/include/plugin/profiler/profiler_v4.h and profiler_v5.h, Apache-2.0), not copied.
** The layouts are those of NCCL 2.28.3 (the release that added v5) through 2.29, and were
** checked field by field against the debugging information of the installed NCCL 2.28.9
** (gdb "ptype /o" of ncclProfilerEventDescr_v5_t and _v4_t; tests/test_inject_nccl_profiler_abi.sh
** repeats that check wherever a NCCL with debugging information is installed). Later
** repository heads add members to the state-argument union (a stop timer for kernel steps)
** that keep its size (8 bytes) and offsets: nothing here depends on them. v6 (NCCL 2.30)
** adds copy-engine events that ovl does not take; NCCL 2.30 still loads v5.
**
** Things the interface leaves implicit, as NCCL uses them:
**  * `type` is one bit of OVL_NCCLP_* below; v4 stores it in one byte, v5 in eight.
**  * `parentObj` is the handle the plugin returned for the parent event (an API event for a
**    collective, the collective for a kernel channel or proxy operation, ...), or NULL.
**  * Strings (function, data type, algorithm, protocol) belong to NCCL: copy what is kept.
**  * A proxy operation whose `pid` is not this process's comes from another process (PXN):
**    its parentObj is not ours to read.
*/
#ifndef OVL_INJECT_NCCL_PROFILER_ABI_H
#define OVL_INJECT_NCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* NCCL's result codes: 0 is success (the plugin never returns anything else but from init). */
typedef int ovl_ncclp_result;
#define OVL_NCCLP_SUCCESS 0
#define OVL_NCCLP_INTERNAL_ERROR 3

/* Event types (bits, also the activation mask the plugin hands back from init). */
enum {
  OVL_NCCLP_GROUP = 1 << 0,          /* a kernel plan's group (launch side) */
  OVL_NCCLP_COLL = 1 << 1,           /* a collective task: sequence number, algorithm, protocol */
  OVL_NCCLP_P2P = 1 << 2,            /* a send or receive task */
  OVL_NCCLP_PROXY_OP = 1 << 3,       /* a proxy operation on one channel (network side) */
  OVL_NCCLP_PROXY_STEP = 1 << 4,     /* one network transfer of a proxy operation */
  OVL_NCCLP_PROXY_CTRL = 1 << 5,     /* the proxy thread's own states */
  OVL_NCCLP_KERNEL_CH = 1 << 6,      /* one channel of the kernel, with GPU global-timer stamps */
  OVL_NCCLP_NET_PLUGIN = 1 << 7,     /* events defined by a network plugin */
  OVL_NCCLP_GROUP_API = 1 << 8,      /* v5: an ncclGroupStart/End span (also NCCL's implicit one) */
  OVL_NCCLP_COLL_API = 1 << 9,       /* v5: the collective API call */
  OVL_NCCLP_P2P_API = 1 << 10,       /* v5: the send/receive API call */
  OVL_NCCLP_KERNEL_LAUNCH = 1 << 11, /* v5: the CUDA launch of a plan's kernel */
};

/* States passed to recordEventState (values of NCCL's ncclProfilerEventState_t). */
enum {
  OVL_NCCLP_STEP_SEND_GPU_WAIT = 8,   /* a send step waits for the GPU to produce the data */
  OVL_NCCLP_STEP_SEND_WAIT = 9,       /* a send step is on the network */
  OVL_NCCLP_STEP_RECV_WAIT = 10,      /* a receive step waits for the network */
  OVL_NCCLP_STEP_RECV_FLUSH_WAIT = 11,/* a receive step waits for its flush to the GPU */
  OVL_NCCLP_STEP_RECV_GPU_WAIT = 12,  /* a receive step waits for the GPU to consume it */
  OVL_NCCLP_PROXY_OP_IN_PROGRESS = 19,
  OVL_NCCLP_STEP_SEND_PEER_WAIT = 20, /* a send step waits for the receiver's credit */
  OVL_NCCLP_KERNEL_CH_STOP = 22,      /* a channel's stop stamp (in the state arguments) */
  OVL_NCCLP_GROUP_START_API_STOP = 23,
  OVL_NCCLP_GROUP_END_API_START = 24,
};

/* NCCL's logger (ncclDebugLogger_t): level, subsystem flags, file, line, format. */
typedef void (*ovl_ncclp_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

/* Per-type fields of an event descriptor, common to v4 and v5 but for the v5-only kinds and
** the trailing `parent_group` pointers of v5 collectives and point-to-point tasks. */
typedef struct ovl_ncclp_coll_fields {
  uint64_t seq;               /* NCCL's sequence number of this operation in the communicator
                              ** (counted per operation kind: AllReduce, AllGather, ...) */
  const char *func;           /* "AllReduce", "AllGather", ... */
  const void *send_buf;
  void *recv_buf;
  size_t count;               /* elements (AllGather and Broadcast: bytes, with "ncclInt8") */
  int root;
  const char *dtype;          /* "ncclFloat32", ... */
  uint8_t nchannels;
  uint8_t nwarps;
  const char *algorithm;      /* "RING", "TREE", "NVLS", "PAT", ... */
  const char *protocol;       /* "LL", "LL128", "SIMPLE" */
} ovl_ncclp_coll_fields;

typedef struct ovl_ncclp_p2p_fields {
  const char *func;           /* "Send", "Recv" */
  void *buf;
  const char *dtype;
  size_t count;
  int peer;
  uint8_t nchannels;
} ovl_ncclp_p2p_fields;

typedef struct ovl_ncclp_proxy_op_fields {
  pid_t pid;                  /* the process that made the operation (PXN: another one) */
  uint8_t channel;
  int peer;
  int nsteps;                 /* network transfers */
  int chunk_size;             /* bytes per transfer */
  int is_send;
} ovl_ncclp_proxy_op_fields;

typedef struct ovl_ncclp_kernel_ch_fields {
  uint8_t channel;
  uint64_t gpu_timer;         /* the channel's start, GPU global timer (ns) */
} ovl_ncclp_kernel_ch_fields;

typedef struct ovl_ncclp_proxy_step_fields {
  int step;
} ovl_ncclp_proxy_step_fields;

typedef struct ovl_ncclp_net_plugin_fields {
  int64_t id;                 /* the network plugin's event version and type */
  void *data;
} ovl_ncclp_net_plugin_fields;

/* ncclProfilerEventDescr_v5_t: 112 bytes. */
typedef struct ovl_ncclp_descr_v5 {
  uint64_t type;
  void *parent;
  int rank;                   /* NCCL 2.28 leaves 0 in API events: use the communicator's */
  union {
    struct {
      bool graph_captured;
      int depth;              /* 1: NCCL's implicit group around one call */
    } group_api;
    struct {
      const char *func;
      size_t count;
      const char *dtype;
      int root;
      void *stream;           /* the call's cudaStream_t */
      bool graph_captured;
    } coll_api;
    struct {
      const char *func;
      size_t count;
      const char *dtype;
      void *stream;
      bool graph_captured;
    } p2p_api;
    struct {
      void *stream;
    } kernel_launch;
    struct {
      ovl_ncclp_coll_fields f;
      void *parent_group;     /* the plan's group event (v4's parent) */
    } coll;
    struct {
      ovl_ncclp_p2p_fields f;
      void *parent_group;
    } p2p;
    ovl_ncclp_proxy_op_fields proxy_op;
    ovl_ncclp_proxy_step_fields proxy_step;
    ovl_ncclp_kernel_ch_fields kernel_ch;
    ovl_ncclp_net_plugin_fields net_plugin;
  } u;
} ovl_ncclp_descr_v5;

/* ncclProfilerEventDescr_v4_t: 104 bytes. */
typedef struct ovl_ncclp_descr_v4 {
  uint8_t type;
  void *parent;
  int rank;
  union {
    ovl_ncclp_coll_fields coll;
    ovl_ncclp_p2p_fields p2p;
    ovl_ncclp_proxy_op_fields proxy_op;
    ovl_ncclp_proxy_step_fields proxy_step;
    ovl_ncclp_kernel_ch_fields kernel_ch;
    ovl_ncclp_net_plugin_fields net_plugin;
  } u;
} ovl_ncclp_descr_v4;

/* ncclProfilerEventStateArgs_v4_t / _v5_t: one 8-byte union. */
typedef union ovl_ncclp_state_args {
  struct {
    size_t bytes;             /* a proxy step's transfer size */
  } proxy_step;
  struct {
    int appended_ops;
  } proxy_ctrl;
  struct {
    void *data;
  } net_plugin;
  struct {
    uint64_t gpu_timer;       /* with OVL_NCCLP_KERNEL_CH_STOP: the channel's stop */
  } kernel_ch;
} ovl_ncclp_state_args;

/* ncclProfiler_v5_t and ncclProfiler_v4_t: 48 bytes each; only init differs (argument order,
** and v5 names the communicator id `commId`, v4 `commHash`: the same 64-bit value). */
typedef struct ovl_ncclp_v5 {
  const char *name;
  ovl_ncclp_result (*init)(void **context, uint64_t comm_hash, int *activation_mask, const char *comm_name,
                           int nnodes, int nranks, int rank, ovl_ncclp_logger log);
  ovl_ncclp_result (*start_event)(void *context, void **handle, ovl_ncclp_descr_v5 *descr);
  ovl_ncclp_result (*stop_event)(void *handle);
  ovl_ncclp_result (*record_event_state)(void *handle, int state, ovl_ncclp_state_args *args);
  ovl_ncclp_result (*finalize)(void *context);
} ovl_ncclp_v5;

typedef struct ovl_ncclp_v4 {
  const char *name;
  ovl_ncclp_result (*init)(void **context, int *activation_mask, const char *comm_name, uint64_t comm_hash,
                           int nnodes, int nranks, int rank, ovl_ncclp_logger log);
  ovl_ncclp_result (*start_event)(void *context, void **handle, ovl_ncclp_descr_v4 *descr);
  ovl_ncclp_result (*stop_event)(void *handle);
  ovl_ncclp_result (*record_event_state)(void *handle, int state, ovl_ncclp_state_args *args);
  ovl_ncclp_result (*finalize)(void *context);
} ovl_ncclp_v4;

/* The offsets NCCL 2.28.9 uses (its debugging information), as compile-time checks. */
_Static_assert(sizeof(ovl_ncclp_descr_v5) == 112, "v5 descriptor size");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u) == 24, "v5 union offset");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.coll_api.stream) == 56, "v5 collApi.stream");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.p2p_api.stream) == 48, "v5 p2pApi.stream");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.coll.f.nchannels) == 80, "v5 coll.nChannels");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.coll.f.protocol) == 96, "v5 coll.proto");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.coll.parent_group) == 104, "v5 coll.parentGroup");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.p2p.f.peer) == 56, "v5 p2p.peer");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.p2p.parent_group) == 64, "v5 p2p.parentGroup");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.proxy_op.is_send) == 44, "v5 proxyOp.isSend");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.kernel_ch.gpu_timer) == 32, "v5 kernelCh.pTimer");
_Static_assert(sizeof(ovl_ncclp_descr_v4) == 104, "v4 descriptor size");
_Static_assert(offsetof(ovl_ncclp_descr_v4, u) == 24, "v4 union offset");
_Static_assert(offsetof(ovl_ncclp_descr_v4, u.coll.protocol) == 96, "v4 coll.proto");
_Static_assert(offsetof(ovl_ncclp_descr_v4, u.kernel_ch.gpu_timer) == 32, "v4 kernelCh.pTimer");
_Static_assert(sizeof(ovl_ncclp_state_args) == 8, "state arguments");
_Static_assert(sizeof(ovl_ncclp_v5) == 48 && sizeof(ovl_ncclp_v4) == 48, "plugin tables");

#endif
