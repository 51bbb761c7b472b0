/*
** Fake NCCL core (TEST DOUBLE): a stand-in for the part of NCCL 2.28 that loads and drives a
** profiler plugin, so that libovl.so as that plugin is tested without a GPU or NCCL. It has
** the API of nccl.h for a handful of calls and, like NCCL:
**   * loads the plugin named by NCCL_PROFILER_PLUGIN (a path, else libnccl-profiler-<name>.so)
**     with dlopen(RTLD_NOW | RTLD_LOCAL), takes ncclProfiler_v5, else ncclProfiler_v4
**     (FAKE_NCCL_PROFILER_VERSION=4 takes v4 only), and calls init per communicator; closes it
**     (dlclose) once the last communicator is finalized, and loads it again for the next one;
**   * v5: GroupApi (the outermost group's, at its first call: depth 1 for the implicit group
**     around a call, 2 inside the user's), CollApi/P2pApi in the call, then at the group's end
**     per communicator KernelLaunch around the "launch" and, once launched (hostStreamPlanTask),
**     the plan: Group, Coll (sequence number per operation kind, algorithm, protocol, channels)
**     or P2p tasks, their stops; v4: the plan part only, a task's parent being the Group;
**   * a proxy thread per communicator that reports each channel of a launched kernel once the
**     fake GPU got there: KernelCh start with the channel's GPU-timer start, recordEventState
**     (KernelChStop) with its stop, stopEvent; with proxy events in the mask, ProxyOp and
**     ProxyStep events (send: GPU wait, send wait; receive: receive wait, flush, GPU wait).
** The descriptors are written at the byte offsets NCCL 2.28.9 uses (its debugging
** information: gdb "ptype /o ncclProfilerEventDescr_v5_t"), not through libovl's header, so
** a layout mistake there shows here.
**
** The fake GPU: a kernel starts 20 us after its launch or when the communicator's previous
** kernel ends, lasts 20 us + 0.1 ns per byte; channel c starts c x 200 ns after the kernel and
** ends (nchannels - 1 - c) x 100 ns before its end, channel FAKE_NCCL_SLOW_CHANNEL (if set)
** 30 us after. Its global timer reads CLOCK_MONOTONIC + FAKE_GPU_TIMER_OFFSET (default
** 1600000000000000000). FAKE_NCCL_FAST=1 (benchmarks): a kernel starts at its launch and
** lasts 1 us, so the proxy reports at once. FAKE_NCCL_LEAK_CHANNELS=1: a faulty NCCL that
** never stops its kernel channel events (the plugin's handles for them run out). FAKE_NCCL_TRUTH=<file> appends one line per task with the truth in
** host time: "coll|p2p <rank> <nranks> <func> <seq or -1> <kernel start> <kernel end>
** <first channel start> <last channel end>".
**
** Built twice: linked into a program (no dynamic NCCL symbol: what the NCCL hooks cannot see)
** and as a shared library (what they see). It also answers the one CUDA driver question the
** plugin asks, cuCtxGetDevice, with the device fake_cuda_set_device() set on the thread.
*/
#define _GNU_SOURCE
#include <nccl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_API __attribute__((visibility("default")))

/* Event types and states (NCCL's values). */
enum {
  T_GROUP = 1, T_COLL = 2, T_P2P = 4, T_PROXY_OP = 8, T_PROXY_STEP = 16, T_KERNEL_CH = 64,
  T_GROUP_API = 256, T_COLL_API = 512, T_P2P_API = 1024, T_KERNEL_LAUNCH = 2048,
};
enum { S_SEND_GPU_WAIT = 8, S_SEND_WAIT = 9, S_RECV_WAIT = 10, S_RECV_FLUSH_WAIT = 11, S_RECV_GPU_WAIT = 12,
       S_KERNEL_CH_STOP = 22 };

/* ---------------------------------------------------------------------------------- */
/* The plugin, as NCCL sees it: a table of five functions after a name                */
/* ---------------------------------------------------------------------------------- */

typedef int (*init5_fn)(void **, uint64_t, int *, const char *, int, int, int, void *);
typedef int (*init4_fn)(void **, int *, const char *, uint64_t, int, int, int, void *);
typedef int (*start_fn)(void *, void **, void *);
typedef int (*stop_fn)(void *);
typedef int (*record_fn)(void *, int, void *);
typedef int (*finalize_fn)(void *);

static struct {
  int version;  /* 0: none */
  void *init;
  start_fn start;
  stop_fn stop;
  record_fn record;
  finalize_fn finalize;
} plugin;
static int event_mask;  /* NCCL keeps one, written by every init (atomically) */
static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static int plugin_looked;  /* load_plugin ran since the last unload */
static int plugin_users;   /* communicators since then (NCCL's profilerPluginRefCount) */
static void *plugin_lib;

static int mask(void) { return __atomic_load_n(&event_mask, __ATOMIC_RELAXED); }

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...) {
  (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

/* Function pointer i of the table at `table` (a name, then init, start, stop, record, finalize). */
static void *table_fn(void *table, int i) {
  void *f;
  memcpy(&f, (char *)table + 8 * i, sizeof f);
  return f;
}

/* Once per communicator, before its init (NCCL: ncclProfilerPluginLoad). */
static void load_plugin(void) {
  pthread_mutex_lock(&plugin_lock);
  plugin_users++;
  if (plugin_looked++) {
    pthread_mutex_unlock(&plugin_lock);
    return;
  }
  const char *name = getenv("NCCL_PROFILER_PLUGIN");
  void *lib = NULL;
  if (name && *name && strcmp(name, "none") != 0) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib && !strchr(name, '/')) {
      char alt[512];
      snprintf(alt, sizeof alt, "libnccl-profiler-%s.so", name);
      lib = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) fprintf(stderr, "fake nccl: cannot load profiler plugin %s: %s\n", name, dlerror());
  }
  const char *only = getenv("FAKE_NCCL_PROFILER_VERSION");
  void *table = NULL;
  if (lib && (!only || strcmp(only, "5") == 0) && (table = dlsym(lib, "ncclProfiler_v5"))) plugin.version = 5;
  if (lib && !table && (!only || strcmp(only, "4") == 0) && (table = dlsym(lib, "ncclProfiler_v4"))) plugin.version = 4;
  if (table) {
    plugin.init = table_fn(table, 1);
    plugin.start = (start_fn)table_fn(table, 2);
    plugin.stop = (stop_fn)table_fn(table, 3);
    plugin.record = (record_fn)table_fn(table, 4);
    plugin.finalize = (finalize_fn)table_fn(table, 5);
  }
  plugin_lib = lib;
  pthread_mutex_unlock(&plugin_lock);
}

/* Once per communicator, after its finalize (NCCL: ncclProfilerPluginUnload): the last one
** closes the library, and the next communicator loads it anew. */
static void unload_plugin(void) {
  pthread_mutex_lock(&plugin_lock);
  if (--plugin_users == 0) {
    if (plugin_lib) dlclose(plugin_lib);
    plugin_lib = NULL;
    memset(&plugin, 0, sizeof plugin);
    plugin_looked = 0;
  }
  pthread_mutex_unlock(&plugin_lock);
}

/* A descriptor at NCCL 2.28.9's offsets: type (8 bytes in v5, 1 in v4) at 0, parent at 8,
** rank at 16, the union from 24. */
typedef struct descr {
  unsigned char b[112];
} descr;

#define PUT(d, off, val)                    \
  do {                                      \
    __typeof__(val) put_v_ = (val);         \
    memcpy((d)->b + (off), &put_v_, sizeof put_v_); \
  } while (0)

static descr new_descr(uint64_t type, void *parent, int rank) {
  descr d;
  memset(&d, 0, sizeof d);
  if (plugin.version >= 5) PUT(&d, 0, type);
  else PUT(&d, 0, (uint8_t)type);
  PUT(&d, 8, parent);
  PUT(&d, 16, rank);
  return d;
}

static unsigned long plugin_calls, proxy_plugin_calls;  /* start, stop and record calls made (benchmarks) */
static __thread int on_proxy_thread;

static void *start_event(void *ctx, descr *d) {
  void *h = NULL;
  if (plugin.start && ctx) {
    plugin.start(ctx, &h, d);
    __atomic_add_fetch(on_proxy_thread ? &proxy_plugin_calls : &plugin_calls, 1, __ATOMIC_RELAXED);
  }
  return h;
}

static void stop_event(void *h) {
  if (plugin.stop && h) {
    plugin.stop(h);
    __atomic_add_fetch(on_proxy_thread ? &proxy_plugin_calls : &plugin_calls, 1, __ATOMIC_RELAXED);
  }
}

static void record_state(void *h, int state, uint64_t arg) {
  if (plugin.record && h) {
    plugin.record(h, state, &arg);
    __atomic_add_fetch(on_proxy_thread ? &proxy_plugin_calls : &plugin_calls, 1, __ATOMIC_RELAXED);
  }
}

/* The plugin calls made so far (startEvent, stopEvent, recordEventState): on the threads that
** call NCCL, and on the proxy threads. */
FAKE_API unsigned long fake_nccl_profiler_calls(int proxy) {
  return __atomic_load_n(proxy ? &proxy_plugin_calls : &plugin_calls, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------- */
/* Time                                                                               */
/* ---------------------------------------------------------------------------------- */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps, then spins the last 150 us: NCCL's proxy thread polls, it hears of a stamp within
** microseconds (a sleep alone overshoots by the timer slack, 50 us and more). */
static void sleep_until(int64_t t) {
  int64_t wake = t - 150000;
  struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
  if (wake > now_ns())
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
  while (now_ns() < t) {
  }
}

/* The environment, read once (getenv per event would weigh on the benchmarks). */
static int64_t gpu_offset = INT64_C(1600000000000000000);
static int fast_mode, leak_channels, slow = -1;
static const char *truth_path;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void) {
  const char *v = getenv("FAKE_GPU_TIMER_OFFSET");
  if (v && *v) gpu_offset = strtoll(v, NULL, 10);
  v = getenv("FAKE_NCCL_FAST");
  fast_mode = v && atoi(v) > 0;
  v = getenv("FAKE_NCCL_LEAK_CHANNELS");
  leak_channels = v && atoi(v) > 0;
  v = getenv("FAKE_NCCL_SLOW_CHANNEL");
  if (v && *v) slow = atoi(v);
  truth_path = getenv("FAKE_NCCL_TRUTH");
}

static int64_t gpu_timer_offset(void) { return gpu_offset; }

static __thread int current_device;
FAKE_API void fake_cuda_set_device(int device) { current_device = device; }
FAKE_API int cuCtxGetDevice(int *device) {
  *device = current_device;
  return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Communicators, tasks and the proxy thread                                          */
/* ---------------------------------------------------------------------------------- */

#define MAX_TASKS 64
#define QUEUE 256

enum { F_ALLREDUCE, F_ALLGATHER, F_REDUCESCATTER, F_BROADCAST, F_SEND, F_RECV, F_COUNT };
static const char *const func_names[F_COUNT] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Send", "Recv"};
static const char *const dtype_names[] = {"ncclInt8", "ncclUint8", "ncclInt32", "ncclUint32", "ncclInt64",
                                          "ncclUint64", "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16"};
static const int dtype_sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};

typedef struct kernel_work {  /* one task of a launched kernel, for the proxy thread */
  void *task;
  int nchannels, is_send_recv, peer;
  int64_t start, end, bytes;  /* host time */
} kernel_work;

struct ncclComm {
  int rank, nranks, device;
  uint64_t hash;
  void *ctx;
  uint64_t seq[F_COUNT];
  int64_t gpu_free_at;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  kernel_work queue[QUEUE];
  int head, count, stopping;
  pthread_t proxy;
};

typedef struct task {
  ncclComm_t comm;
  int func, peer;
  size_t count;
  int dtype;
  void *api;                 /* v5: its API event */
} task;

/* The thread's group (NCCL keeps it per thread too). */
static __thread struct {
  int depth;
  void *group_api;
  task tasks[MAX_TASKS];
  int ntasks;
} grp;

static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t channel_start(const kernel_work *k, int c);
static int64_t channel_end(const kernel_work *k, int c);

/* The task's truth: its kernel and the span of its channels, in host time. */
static void write_truth(ncclComm_t c, const task *t, int64_t seq, const kernel_work *k) {
  if (!truth_path || !*truth_path) return;
  const char *path = truth_path;
  int64_t first = channel_start(k, 0), last = 0;
  for (int ch = 0; ch < k->nchannels; ch++)
    if (channel_end(k, ch) > last) last = channel_end(k, ch);
  pthread_mutex_lock(&truth_lock);
  FILE *f = fopen(path, "a");
  if (f) {
    fprintf(f, "%s %d %d %s %lld %lld %lld %lld %lld\n", t->func >= F_SEND ? "p2p" : "coll", c->rank, c->nranks,
            func_names[t->func], (long long)seq, (long long)k->start, (long long)k->end, (long long)first,
            (long long)last);
    fclose(f);
  }
  pthread_mutex_unlock(&truth_lock);
}

static int fast(void) { return fast_mode; }
static int slow_channel(void) { return slow; }

static int64_t channel_start(const kernel_work *k, int c) { return k->start + 200 * c; }
static int64_t channel_end(const kernel_work *k, int c) {
  return k->end - 100 * (k->nchannels - 1 - c) + (c == slow_channel() ? 30000 : 0);
}

/* The proxy's network side of one channel: a send and a receive operation of two steps. */
static void proxy_ops(ncclComm_t c, const kernel_work *k, int ch) {
  if (!(mask() & (T_PROXY_OP | T_PROXY_STEP))) return;
  for (int is_send = 1; is_send >= 0; is_send--) {
    descr d = new_descr(T_PROXY_OP, k->task, c->rank);
    PUT(&d, 24, (int32_t)getpid());
    PUT(&d, 28, (uint8_t)ch);
    PUT(&d, 32, (int32_t)((c->rank + 1) % c->nranks));
    PUT(&d, 36, (int32_t)2);
    PUT(&d, 40, (int32_t)(k->bytes / k->nchannels / 2 + 1));
    PUT(&d, 44, (int32_t)is_send);
    void *op = start_event(c->ctx, &d);
    for (int s = 0; s < 2 && op; s++) {
      descr sd = new_descr(T_PROXY_STEP, op, c->rank);
      PUT(&sd, 24, (int32_t)s);
      void *step = start_event(c->ctx, &sd);
      uint64_t size = (uint64_t)(k->bytes / k->nchannels / 2 + 1);
      const int *states = is_send ? (const int[]){S_SEND_GPU_WAIT, S_SEND_WAIT, 0}
                                  : (const int[]){S_RECV_WAIT, S_RECV_FLUSH_WAIT, S_RECV_GPU_WAIT, 0};
      for (int i = 0; states[i]; i++) record_state(step, states[i], size);
      stop_event(step);
    }
    stop_event(op);
  }
}

/* Reports one launched task's channels the way NCCL's proxy does: each stamp once the GPU
** has passed it. */
static void report_kernel(ncclComm_t c, const kernel_work *k) {
  int64_t offset = gpu_timer_offset();
  void *h[64] = {0};
  int n = k->nchannels < 64 ? k->nchannels : 64;
  sleep_until(channel_start(k, n - 1));
  for (int ch = 0; ch < n; ch++) {
    proxy_ops(c, k, ch);
    if (!(mask() & T_KERNEL_CH)) continue;
    descr d = new_descr(T_KERNEL_CH, k->task, c->rank);
    PUT(&d, 24, (uint8_t)ch);
    PUT(&d, 32, (uint64_t)(channel_start(k, ch) + offset));
    h[ch] = start_event(c->ctx, &d);
  }
  for (int ch = 0; ch < n; ch++) {
    sleep_until(channel_end(k, ch));
    record_state(h[ch], S_KERNEL_CH_STOP, (uint64_t)(channel_end(k, ch) + offset));
    if (!leak_channels) stop_event(h[ch]);
  }
}

static void *proxy_main(void *arg) {
  ncclComm_t c = arg;
  on_proxy_thread = 1;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    while (!c->count && !c->stopping) pthread_cond_wait(&c->cv, &c->lock);
    if (!c->count) break;
    kernel_work k = c->queue[c->head];
    c->head = (c->head + 1) % QUEUE;
    c->count--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->lock);
    report_kernel(c, &k);
    pthread_mutex_lock(&c->lock);
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

static void enqueue_kernel(ncclComm_t c, const kernel_work *k) {
  pthread_mutex_lock(&c->lock);
  while (c->count == QUEUE) pthread_cond_wait(&c->cv, &c->lock);
  c->queue[(c->head + c->count) % QUEUE] = *k;
  c->count++;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->lock);
}

static int64_t task_bytes(const task *t) {
  int size = t->dtype >= 0 && t->dtype < (int)(sizeof dtype_sizes / sizeof *dtype_sizes) ? dtype_sizes[t->dtype] : 1;
  int64_t b = (int64_t)t->count * size;
  return t->func == F_REDUCESCATTER ? b * t->comm->nranks : b;
}

/* One communicator's part of a group's end: its plan, launched as one kernel. As NCCL: the
** KernelLaunch event around the launch, then (hostStreamPlanTask) the plan's Group and its
** tasks (largest first: NCCL sorts them, not in the calls' order), started and stopped once the
** kernel is on its way, before the proxy reports its channels. */
static void launch_plan(ncclComm_t c, task **tasks, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && task_bytes(tasks[j]) > task_bytes(tasks[j - 1]); j--) {
      task *x = tasks[j];
      tasks[j] = tasks[j - 1];
      tasks[j - 1] = x;
    }
  void *launch = NULL;
  if (plugin.version >= 5 && (mask() & T_KERNEL_LAUNCH)) {
    descr ld = new_descr(T_KERNEL_LAUNCH, grp.group_api, c->rank);
    PUT(&ld, 24, (void *)NULL);
    launch = start_event(c->ctx, &ld);
  }
  int64_t start = now_ns() + (fast() ? 0 : 20000);  /* the kernel starts 20 us after its launch at the earliest */
  if (start < c->gpu_free_at) start = c->gpu_free_at;
  stop_event(launch);
  descr gd = new_descr(T_GROUP, NULL, c->rank);
  void *group = (mask() & (T_GROUP | T_COLL | T_P2P | T_KERNEL_CH)) ? start_event(c->ctx, &gd) : NULL;
  void *handles[MAX_TASKS] = {0};
  kernel_work work[MAX_TASKS];
  for (int i = 0; i < n; i++) {
    task *t = tasks[i];
    int is_p2p = t->func >= F_SEND;
    kernel_work *k = &work[i];
    *k = (kernel_work){NULL, is_p2p ? 1 : 4, is_p2p, t->peer, start, 0, task_bytes(t)};
    k->end = start + (fast() ? 1000 : 20000 + k->bytes / 10);
    start = k->end;
    c->gpu_free_at = k->end + (slow_channel() >= 0 ? 30000 : 0);
    int64_t seq = is_p2p ? -1 : (int64_t)c->seq[t->func];
    if (mask() & ((is_p2p ? T_P2P : T_COLL) | T_KERNEL_CH)) {
      descr d = new_descr(is_p2p ? T_P2P : T_COLL, plugin.version >= 5 ? t->api : group, c->rank);
      if (!is_p2p) {
        PUT(&d, 24, (uint64_t)seq);
        PUT(&d, 32, func_names[t->func]);
        PUT(&d, 56, t->count);
        PUT(&d, 64, (int32_t)t->peer);
        PUT(&d, 72, dtype_names[t->dtype]);
        PUT(&d, 80, (uint8_t)k->nchannels);
        PUT(&d, 81, (uint8_t)16);
        PUT(&d, 88, t->func == F_ALLREDUCE ? "RING" : "PAT");
        PUT(&d, 96, k->bytes < 65536 ? "LL" : "SIMPLE");
        if (plugin.version >= 5) PUT(&d, 104, group);
      } else {
        PUT(&d, 24, func_names[t->func]);
        PUT(&d, 40, dtype_names[t->dtype]);
        PUT(&d, 48, t->count);
        PUT(&d, 56, (int32_t)t->peer);
        PUT(&d, 60, (uint8_t)k->nchannels);
        if (plugin.version >= 5) PUT(&d, 64, group);
      }
      handles[i] = k->task = start_event(c->ctx, &d);
    }
    if (!is_p2p) c->seq[t->func]++;
    write_truth(c, t, seq, k);
    if (k->task && (mask() & (T_KERNEL_CH | T_PROXY_OP | T_PROXY_STEP))) enqueue_kernel(c, k);
  }
  for (int i = 0; i < n; i++) stop_event(handles[i]);  /* enqueued: before the kernel ran */
  stop_event(group);
}

static void group_start_internal(void) {
  if (grp.depth++ == 0) {
    grp.ntasks = 0;
    grp.group_api = NULL;
  }
}

/* NCCL starts the outermost group's API event at its first call, with the group depth then:
** 1 for its implicit group around a lone call, 2 inside the user's ncclGroupStart/End. */
static void group_api_event(ncclComm_t c) {
  if (grp.group_api || plugin.version < 5 || !(__atomic_load_n(&event_mask, __ATOMIC_RELAXED) & T_GROUP_API)) return;
  descr d = new_descr(T_GROUP_API, NULL, 0);
  PUT(&d, 24, (uint8_t)0);
  PUT(&d, 28, (int32_t)grp.depth);
  grp.group_api = start_event(c->ctx, &d);
}

static ncclResult_t group_end_internal(void) {
  if (grp.depth == 0) return ncclInvalidUsage;
  if (--grp.depth > 0) return ncclSuccess;
  int done[MAX_TASKS] = {0};
  for (int i = 0; i < grp.ntasks; i++) {  /* one plan per communicator */
    if (done[i]) continue;
    task *mine[MAX_TASKS];
    int n = 0;
    for (int j = i; j < grp.ntasks; j++)
      if (!done[j] && grp.tasks[j].comm == grp.tasks[i].comm) {
        mine[n++] = &grp.tasks[j];
        done[j] = 1;
      }
    launch_plan(grp.tasks[i].comm, mine, n);
  }
  stop_event(grp.group_api);
  grp.group_api = NULL;
  grp.ntasks = 0;
  return ncclSuccess;
}

static ncclResult_t enqueue(ncclComm_t c, int func, size_t count, ncclDataType_t dtype, int peer, cudaStream_t stream) {
  if (!c || (int)dtype < 0 || (int)dtype >= (int)(sizeof dtype_names / sizeof *dtype_names)) return ncclInvalidArgument;
  group_start_internal();
  group_api_event(c);
  if (grp.ntasks == MAX_TASKS) {
    group_end_internal();
    return ncclInvalidUsage;
  }
  task *t = &grp.tasks[grp.ntasks++];
  *t = (task){c, func, peer, count, (int)dtype, NULL};
  int is_p2p = func >= F_SEND;
  if (plugin.version >= 5 && (mask() & (is_p2p ? T_P2P_API : T_COLL_API))) {
    descr d = new_descr(is_p2p ? T_P2P_API : T_COLL_API, grp.group_api, 0);
    PUT(&d, 24, func_names[func]);
    PUT(&d, 32, count);
    PUT(&d, 40, dtype_names[dtype]);
    if (is_p2p) {
      PUT(&d, 48, (void *)stream);
    } else {
      PUT(&d, 48, (int32_t)peer);
      PUT(&d, 56, (void *)stream);
    }
    t->api = start_event(c->ctx, &d);
    stop_event(t->api);  /* the task keeps the handle as its parent, as NCCL does */
  }
  return group_end_internal();
}

/* ---------------------------------------------------------------------------------- */
/* nccl.h                                                                             */
/* ---------------------------------------------------------------------------------- */

FAKE_API ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

FAKE_API const char *ncclGetErrorString(ncclResult_t result) { return result == ncclSuccess ? "no error" : "fake error"; }

FAKE_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  static unsigned long counter;
  memset(id, 0, sizeof *id);
  snprintf(id->internal, sizeof id->internal, "fake-nccl-%d-%lu", (int)getpid(),
           __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
  return ncclSuccess;
}

static uint64_t hash_id(const ncclUniqueId *id) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < sizeof id->internal; i++) h = (h ^ (unsigned char)id->internal[i]) * 1099511628211ull;
  return h;
}

FAKE_API ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank) {
  if (!out || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  pthread_once(&env_once, read_env);
  struct ncclComm *c = calloc(1, sizeof *c);
  if (!c) return ncclSystemError;
  load_plugin();
  c->rank = rank;
  c->nranks = nranks;
  c->device = current_device;
  c->hash = hash_id(&id);
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cv, NULL);
  if (plugin.version == 5)
    ((init5_fn)plugin.init)(&c->ctx, c->hash, &event_mask, "fake", 1, nranks, rank, (void *)logger);
  else if (plugin.version == 4)
    ((init4_fn)plugin.init)(&c->ctx, &event_mask, "fake", c->hash, 1, nranks, rank, (void *)logger);
  if (pthread_create(&c->proxy, NULL, proxy_main, c) != 0) {
    if (plugin.finalize && c->ctx) plugin.finalize(c->ctx);
    unload_plugin();
    free(c);
    return ncclSystemError;
  }
  *out = c;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                             ncclConfig_t *config) {
  (void)config;
  return ncclCommInitRank(comm, nranks, id, rank);
}

/* The proxy reports what is left, then the plugin's context is finalized (NCCL's order). */
FAKE_API ncclResult_t ncclCommDestroy(ncclComm_t c) {
  if (!c) return ncclInvalidArgument;
  pthread_mutex_lock(&c->lock);
  c->stopping = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->lock);
  pthread_join(c->proxy, NULL);
  if (plugin.finalize && c->ctx) plugin.finalize(c->ctx);
  unload_plugin();
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->cv);
  free(c);
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommCount(const ncclComm_t c, int *count) {
  if (!c) return ncclInvalidArgument;
  *count = c->nranks;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommUserRank(const ncclComm_t c, int *rank) {
  if (!c) return ncclInvalidArgument;
  *rank = c->rank;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *device) {
  if (!c) return ncclInvalidArgument;
  *device = c->device;
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupStart(void) {
  group_start_internal();
  return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupEnd(void) { return group_end_internal(); }

FAKE_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)op;
  return enqueue(comm, F_ALLREDUCE, count, datatype, 0, stream);
}

FAKE_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                                    ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff;
  return enqueue(comm, F_ALLGATHER, sendcount, datatype, 0, stream);
}

FAKE_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)op;
  return enqueue(comm, F_REDUCESCATTER, recvcount, datatype, 0, stream);
}

FAKE_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff;
  return enqueue(comm, F_BROADCAST, count, datatype, root, stream);
}

FAKE_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                               cudaStream_t stream) {
  (void)sendbuff;
  return enqueue(comm, F_SEND, count, datatype, peer, stream);
}

FAKE_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                               cudaStream_t stream) {
  (void)recvbuff;
  return enqueue(comm, F_RECV, count, datatype, peer, stream);
}
