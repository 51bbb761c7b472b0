/*
** libovl's NCCL profiler interface (libinject/nccl_profiler_abi.h) under NCCL's own names: one
** line per fact, "offset <type> <member>", "size <type>" or "value <name>", each followed by
** libovl's number. test_inject_nccl_profiler_abi.sh asks gdb the same of an installed NCCL with
** debugging information and compares.
*/
#include "nccl_profiler_abi.h"

#include <stddef.h>
#include <stdio.h>

#define OFF(ncclt, member, ourt, ours) printf("offset %s %s %zu\n", ncclt, member, offsetof(ourt, ours))
#define SIZE(ncclt, ourt) printf("size %s %zu\n", ncclt, sizeof(ourt))
#define VALUE(name, ours) printf("value %s %d\n", name, (int)(ours))

static void descr_common(const char *t, int v5) {
  if (v5) {
    OFF(t, "type", ovl_ncclp_descr_v5, type);
    OFF(t, "parentObj", ovl_ncclp_descr_v5, parent);
    OFF(t, "rank", ovl_ncclp_descr_v5, rank);
  } else {
    OFF(t, "type", ovl_ncclp_descr_v4, type);
    OFF(t, "parentObj", ovl_ncclp_descr_v4, parent);
    OFF(t, "rank", ovl_ncclp_descr_v4, rank);
  }
}

/* The members both versions have, at the same place in their union (checked below for v4). */
#define SHARED(t, D, coll, p2p)                                     \
  OFF(t, "coll.seqNumber", D, u.coll.seq);                          \
  OFF(t, "coll.func", D, u.coll.func);                              \
  OFF(t, "coll.sendBuff", D, u.coll.send_buf);                      \
  OFF(t, "coll.recvBuff", D, u.coll.recv_buf);                      \
  OFF(t, "coll.count", D, u.coll.count);                            \
  OFF(t, "coll.root", D, u.coll.root);                              \
  OFF(t, "coll.datatype", D, u.coll.dtype);                         \
  OFF(t, "coll.nChannels", D, u.coll.nchannels);                    \
  OFF(t, "coll.nWarps", D, u.coll.nwarps);                          \
  OFF(t, "coll.algo", D, u.coll.algorithm);                         \
  OFF(t, "coll.proto", D, u.coll.protocol);                         \
  OFF(t, "p2p.func", D, u.p2p.func);                                \
  OFF(t, "p2p.buff", D, u.p2p.buf);                                 \
  OFF(t, "p2p.datatype", D, u.p2p.dtype);                           \
  OFF(t, "p2p.count", D, u.p2p.count);                              \
  OFF(t, "p2p.peer", D, u.p2p.peer);                                \
  OFF(t, "p2p.nChannels", D, u.p2p.nchannels);                      \
  OFF(t, "proxyOp.pid", D, u.proxy_op.pid);                         \
  OFF(t, "proxyOp.channelId", D, u.proxy_op.channel);               \
  OFF(t, "proxyOp.peer", D, u.proxy_op.peer);                       \
  OFF(t, "proxyOp.nSteps", D, u.proxy_op.nsteps);                   \
  OFF(t, "proxyOp.chunkSize", D, u.proxy_op.chunk_size);            \
  OFF(t, "proxyOp.isSend", D, u.proxy_op.is_send);                  \
  OFF(t, "proxyStep.step", D, u.proxy_step.step);                   \
  OFF(t, "kernelCh.channelId", D, u.kernel_ch.channel);             \
  OFF(t, "kernelCh.pTimer", D, u.kernel_ch.gpu_timer);              \
  OFF(t, "netPlugin.id", D, u.net_plugin.id);                       \
  OFF(t, "netPlugin.data", D, u.net_plugin.data)

/* v5's union holds the shared fields inside wrappers: give them v4's names. */
typedef struct v5_flat {
  uint64_t type;
  void *parent;
  int rank;
  union {
    ovl_ncclp_coll_fields coll;
    ovl_ncclp_p2p_fields p2p;
    ovl_ncclp_proxy_op_fields proxy_op;
    struct {
      int step;
    } proxy_step;
    ovl_ncclp_kernel_ch_fields kernel_ch;
    struct {
      int64_t id;
      void *data;
    } net_plugin;
  } u;
} v5_flat;
_Static_assert(offsetof(v5_flat, u) == offsetof(ovl_ncclp_descr_v5, u), "v5 union");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.coll.f) == offsetof(ovl_ncclp_descr_v5, u), "v5 coll fields first");
_Static_assert(offsetof(ovl_ncclp_descr_v5, u.p2p.f) == offsetof(ovl_ncclp_descr_v5, u), "v5 p2p fields first");

static void descr_v5(void) {
  const char *t = "ncclProfilerEventDescr_v5_t";
  SIZE(t, ovl_ncclp_descr_v5);
  descr_common(t, 1);
  SHARED(t, v5_flat, coll, p2p);
  OFF(t, "groupApi.graphCaptured", ovl_ncclp_descr_v5, u.group_api.graph_captured);
  OFF(t, "groupApi.groupDepth", ovl_ncclp_descr_v5, u.group_api.depth);
  OFF(t, "collApi.func", ovl_ncclp_descr_v5, u.coll_api.func);
  OFF(t, "collApi.count", ovl_ncclp_descr_v5, u.coll_api.count);
  OFF(t, "collApi.datatype", ovl_ncclp_descr_v5, u.coll_api.dtype);
  OFF(t, "collApi.root", ovl_ncclp_descr_v5, u.coll_api.root);
  OFF(t, "collApi.stream", ovl_ncclp_descr_v5, u.coll_api.stream);
  OFF(t, "collApi.graphCaptured", ovl_ncclp_descr_v5, u.coll_api.graph_captured);
  OFF(t, "p2pApi.func", ovl_ncclp_descr_v5, u.p2p_api.func);
  OFF(t, "p2pApi.count", ovl_ncclp_descr_v5, u.p2p_api.count);
  OFF(t, "p2pApi.datatype", ovl_ncclp_descr_v5, u.p2p_api.dtype);
  OFF(t, "p2pApi.stream", ovl_ncclp_descr_v5, u.p2p_api.stream);
  OFF(t, "p2pApi.graphCaptured", ovl_ncclp_descr_v5, u.p2p_api.graph_captured);
  OFF(t, "kernelLaunch.stream", ovl_ncclp_descr_v5, u.kernel_launch.stream);
  OFF(t, "coll.parentGroup", ovl_ncclp_descr_v5, u.coll.parent_group);
  OFF(t, "p2p.parentGroup", ovl_ncclp_descr_v5, u.p2p.parent_group);
}

static void descr_v4(void) {
  const char *t = "ncclProfilerEventDescr_v4_t";
  SIZE(t, ovl_ncclp_descr_v4);
  descr_common(t, 0);
  SHARED(t, ovl_ncclp_descr_v4, coll, p2p);
}

static void tables(void) {
  const char *s = "ncclProfilerEventStateArgs_v5_t";
  SIZE(s, ovl_ncclp_state_args);
  OFF(s, "proxyStep.transSize", ovl_ncclp_state_args, proxy_step.bytes);
  OFF(s, "proxyCtrl.appendedProxyOps", ovl_ncclp_state_args, proxy_ctrl.appended_ops);
  OFF(s, "netPlugin.data", ovl_ncclp_state_args, net_plugin.data);
  OFF(s, "kernelCh.pTimer", ovl_ncclp_state_args, kernel_ch.gpu_timer);
  SIZE("ncclProfilerEventStateArgs_v4_t", ovl_ncclp_state_args);
  const char *p5 = "ncclProfiler_v5_t", *p4 = "ncclProfiler_v4_t";
  SIZE(p5, ovl_ncclp_v5);
  SIZE(p4, ovl_ncclp_v4);
  OFF(p5, "name", ovl_ncclp_v5, name);
  OFF(p5, "init", ovl_ncclp_v5, init);
  OFF(p5, "startEvent", ovl_ncclp_v5, start_event);
  OFF(p5, "stopEvent", ovl_ncclp_v5, stop_event);
  OFF(p5, "recordEventState", ovl_ncclp_v5, record_event_state);
  OFF(p5, "finalize", ovl_ncclp_v5, finalize);
  OFF(p4, "init", ovl_ncclp_v4, init);
  OFF(p4, "finalize", ovl_ncclp_v4, finalize);
}

static void values(void) {
  VALUE("ncclProfileGroup", OVL_NCCLP_GROUP);
  VALUE("ncclProfileColl", OVL_NCCLP_COLL);
  VALUE("ncclProfileP2p", OVL_NCCLP_P2P);
  VALUE("ncclProfileProxyOp", OVL_NCCLP_PROXY_OP);
  VALUE("ncclProfileProxyStep", OVL_NCCLP_PROXY_STEP);
  VALUE("ncclProfileProxyCtrl", OVL_NCCLP_PROXY_CTRL);
  VALUE("ncclProfileKernelCh", OVL_NCCLP_KERNEL_CH);
  VALUE("ncclProfileNetPlugin", OVL_NCCLP_NET_PLUGIN);
  VALUE("ncclProfileGroupApi", OVL_NCCLP_GROUP_API);
  VALUE("ncclProfileCollApi", OVL_NCCLP_COLL_API);
  VALUE("ncclProfileP2pApi", OVL_NCCLP_P2P_API);
  VALUE("ncclProfileKernelLaunch", OVL_NCCLP_KERNEL_LAUNCH);
  VALUE("ncclProfilerProxyStepSendGPUWait", OVL_NCCLP_STEP_SEND_GPU_WAIT);
  VALUE("ncclProfilerProxyStepSendWait", OVL_NCCLP_STEP_SEND_WAIT);
  VALUE("ncclProfilerProxyStepRecvWait", OVL_NCCLP_STEP_RECV_WAIT);
  VALUE("ncclProfilerProxyStepRecvFlushWait", OVL_NCCLP_STEP_RECV_FLUSH_WAIT);
  VALUE("ncclProfilerProxyStepRecvGPUWait", OVL_NCCLP_STEP_RECV_GPU_WAIT);
  VALUE("ncclProfilerProxyOpInProgress_v4", OVL_NCCLP_PROXY_OP_IN_PROGRESS);
  VALUE("ncclProfilerProxyStepSendPeerWait_v4", OVL_NCCLP_STEP_SEND_PEER_WAIT);
  VALUE("ncclProfilerKernelChStop", OVL_NCCLP_KERNEL_CH_STOP);
  VALUE("ncclProfilerGroupStartApiStop", OVL_NCCLP_GROUP_START_API_STOP);
  VALUE("ncclProfilerGroupEndApiStart", OVL_NCCLP_GROUP_END_API_START);
}

int main(void) {
  descr_v5();
  descr_v4();
  tables();
  values();
  return 0;
}
