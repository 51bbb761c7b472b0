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

/* The members both versions have: COLL and P2P name where D holds a collective's and a
** point-to-point task's fields (v5 wraps them beside its parent_group pointers). */
#define SHARED(t, D, COLL, P2P)                                     \
  OFF(t, "coll.seqNumber", D, COLL.seq);                            \
  OFF(t, "coll.func", D, COLL.func);                                \
  OFF(t, "coll.sendBuff", D, COLL.send_buf);                        \
  OFF(t, "coll.recvBuff", D, COLL.recv_buf);                        \
  OFF(t, "coll.count", D, COLL.count);                              \
  OFF(t, "coll.root", D, COLL.root);                                \
  OFF(t, "coll.datatype", D, COLL.dtype);                           \
  OFF(t, "coll.nChannels", D, COLL.nchannels);                      \
  OFF(t, "coll.nWarps", D, COLL.nwarps);                            \
  OFF(t, "coll.algo", D, COLL.algorithm);                           \
  OFF(t, "coll.proto", D, COLL.protocol);                           \
  OFF(t, "p2p.func", D, P2P.func);                                  \
  OFF(t, "p2p.buff", D, P2P.buf);                                   \
  OFF(t, "p2p.datatype", D, P2P.dtype);                             \
  OFF(t, "p2p.count", D, P2P.count);                                \
  OFF(t, "p2p.peer", D, P2P.peer);                                  \
  OFF(t, "p2p.nChannels", D, P2P.nchannels);                        \
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

static void descr_v5(void) {
  const char *t = "ncclProfilerEventDescr_v5_t";
  SIZE(t, ovl_ncclp_descr_v5);
  descr_common(t, 1);
  SHARED(t, ovl_ncclp_descr_v5, u.coll.f, u.p2p.f);
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
  SHARED(t, ovl_ncclp_descr_v4, u.coll, u.p2p);
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
