/*
** A program that uses NCCL (the stub, tests/stubs/stub_nccl.c) and NVTX the way a trainer
** does, run under LD_PRELOAD=libovl.so by the capture tests. It knows nothing of ovl.
**
**   inject_app basic EXIT      the calls of inject_app.h, then exit with status EXIT
**   inject_app threads T N     T threads, each with its own communicator, N AllReduce each
**   inject_app loop K          K AllReduce, print "ready", then more until killed
**   inject_app flood T S       T threads call AllReduce as fast as they can; "ready" once all
**                              run; main exits after S s (0: never) while they still call
**   inject_app flood-quiet T S the same, but after S s the threads stop calling and main
**                              prints "quiet N" (N: the calls made) and waits to be killed
** With INJECT_APP_COUNTS=FILE, flood threads keep their number of completed calls in FILE
** (shared memory: 64 slots of 64 bytes, a uint64 at the start of each), so that a test can
** read how many calls a killed flood had made.
**   inject_app exec            a few calls, then exec()s itself (same pid) in basic mode
**   inject_app chdir DIR       chdir(DIR), then basic mode
**   inject_app closed-stdio    closes 0, 1 and 2, makes calls, then checks that its next
**                              opens get 0, 1, 2 and that every other descriptor is CLOEXEC
**                              (exit status 0, or the number of the check that failed)
**   inject_app fork            calls in the parent and in a fork()ed child
**   inject_app nvtx            a communicator, then NVTX ranges, marks and domains
**   inject_app nvtx-only       NVTX ranges only: no CUDA or NCCL use
**   inject_app none            prints a line
*/
#include "inject_app.h"

#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
  fprintf(stderr, "inject_app: %s failed\n", what);
  exit(99);
}

#define OK(call)                             \
  do {                                       \
    if ((call) != ncclSuccess) die(#call);   \
  } while (0)

static ncclComm_t new_comm(int nranks, int rank, const char *tag) {
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  snprintf(id.internal, sizeof id.internal, "inject-app-%s", tag);
  ncclComm_t comm;
  OK(ncclCommInitRank(&comm, nranks, id, rank));
  return comm;
}

static void make_call(const app_call *c, ncclComm_t comm) {
  static char buf[1 << 16];
  ncclDataType_t t = (ncclDataType_t)c->dtype;
  ncclRedOp_t op = (ncclRedOp_t)c->redop;
  size_t n = (size_t)c->count;
  cudaStream_t s = NULL;
  if (!strcmp(c->op, "AllReduce")) OK(ncclAllReduce(buf, buf, n, t, op, comm, s));
  else if (!strcmp(c->op, "ReduceScatter")) OK(ncclReduceScatter(buf, buf, n, t, op, comm, s));
  else if (!strcmp(c->op, "AllGather")) OK(ncclAllGather(buf, buf, n, t, comm, s));
  else if (!strcmp(c->op, "Broadcast")) OK(ncclBroadcast(buf, buf, n, t, c->peer, comm, s));
  else if (!strcmp(c->op, "Bcast")) OK(ncclBcast(buf, n, t, c->peer, comm, s));
  else if (!strcmp(c->op, "Reduce")) OK(ncclReduce(buf, buf, n, t, op, c->peer, comm, s));
  else if (!strcmp(c->op, "AlltoAll")) OK(ncclAlltoAll(buf, buf, n, t, comm, s));
  else if (!strcmp(c->op, "Gather")) OK(ncclGather(buf, buf, n, t, c->peer, comm, s));
  else if (!strcmp(c->op, "Scatter")) OK(ncclScatter(buf, buf, n, t, c->peer, comm, s));
  else if (!strcmp(c->op, "Send")) OK(ncclSend(buf, n, t, c->peer, comm, s));
  else if (!strcmp(c->op, "Recv")) OK(ncclRecv(buf, n, t, c->peer, comm, s));
  else die(c->op);
}

static int basic(int status) {
  printf("app: start\n");
  ncclComm_t comm = new_comm(APP_NRANKS, APP_RANK, "basic");
  int group = 0;
  for (size_t i = 0; i < APP_NCALLS; i++) {
    const app_call *c = &app_calls[i];
    if (c->group != group) {
      if (group) OK(ncclGroupEnd());
      if (c->group) OK(ncclGroupStart());
      group = c->group;
    }
    /* The last call of group 1 sits in a nested group, which must not start a new one. */
    int nested = c->group == 1 && (i + 1 == APP_NCALLS || app_calls[i + 1].group != 1);
    if (nested) OK(ncclGroupStart());
    make_call(c, comm);
    if (nested) OK(ncclGroupEnd());
  }
  if (group) OK(ncclGroupEnd());
  ncclComm_t child;
  OK(ncclCommSplit(comm, 0, APP_RANK, &child, NULL));
  OK(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, child, NULL));
  OK(ncclCommDestroy(child));
  OK(ncclCommDestroy(comm));
  printf("app: done\n");
  return status;
}

typedef struct thread_arg {
  int index, nthreads;
  long calls;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  char tag[32];
  snprintf(tag, sizeof tag, "thread-%d", a->index);
  ncclComm_t comm = new_comm(a->nthreads, a->index, tag);
  for (long i = 0; i < a->calls; i++) OK(ncclAllReduce(NULL, NULL, (size_t)i, ncclFloat32, ncclSum, comm, NULL));
  OK(ncclCommDestroy(comm));
  return NULL;
}

static int threads(int n, long calls) {
  pthread_t tid[64];
  thread_arg args[64];
  if (n < 1 || n > 64) die("thread count");
  for (int i = 0; i < n; i++) {
    args[i] = (thread_arg){i, n, calls};
    if (pthread_create(&tid[i], NULL, thread_main, &args[i])) die("pthread_create");
  }
  for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
  printf("app: %ld calls\n", n * calls);
  return 0;
}

static _Noreturn void loop(long ready_after) {
  ncclComm_t comm = new_comm(1, 0, "loop");
  for (long i = 0;; i++) {
    OK(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, comm, NULL));
    if (i + 1 == ready_after) {
      printf("ready\n");
      fflush(stdout);
    }
    if (i + 1 >= ready_after) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
  }
}

static atomic_int flooding, flood_stop;
static ncclComm_t flood_comm;

/* Per-thread call counts, in shared memory when INJECT_APP_COUNTS names a file. */
#define COUNT_SLOTS 64
typedef struct count_slot {
  _Atomic uint64_t calls;
  char pad[56];
} count_slot;
static count_slot *counts;

static void map_counts(void) {
  static count_slot local[COUNT_SLOTS];
  counts = local;
  const char *path = getenv("INJECT_APP_COUNTS");
  if (!path || !*path) return;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, sizeof local) != 0) die("INJECT_APP_COUNTS");
  void *m = mmap(NULL, sizeof local, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) die("mmap");
  counts = m;
}

static uint64_t calls_made(void) {
  uint64_t n = 0;
  for (int i = 0; i < COUNT_SLOTS; i++) n += atomic_load(&counts[i].calls);
  return n;
}

static void *flood_main(void *p) {
  count_slot *mine = p;
  atomic_fetch_add(&flooding, 1);
  for (size_t i = 0; !atomic_load_explicit(&flood_stop, memory_order_relaxed); i++) {
    OK(ncclAllReduce(NULL, NULL, i, ncclFloat32, ncclSum, flood_comm, NULL));
    atomic_store_explicit(&mine->calls, i + 1, memory_order_relaxed);
  }
  atomic_fetch_sub(&flooding, 1);
  return NULL;
}

static void sleep_s(double seconds) {
  struct timespec wait = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  if (seconds <= 0) wait.tv_sec = 1 << 30;
  nanosleep(&wait, NULL);
}

static int flood(int n, double seconds, int quiet) {
  if (n < 1 || n > COUNT_SLOTS) die("thread count");
  map_counts();
  flood_comm = new_comm(1, 0, "flood");
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, flood_main, &counts[i])) die("pthread_create");
  }
  while (atomic_load(&flooding) < n) sched_yield();
  printf("ready\n");
  fflush(stdout);
  sleep_s(seconds);
  if (!quiet) return 0;  /* exit() with the threads still calling */
  atomic_store(&flood_stop, 1);
  while (atomic_load(&flooding) > 0) sched_yield();
  printf("quiet %llu\n", (unsigned long long)calls_made());
  fflush(stdout);
  for (;;) pause();  /* until killed */
}

static int exec_self(const char *self) {
  ncclComm_t comm = new_comm(1, 0, "before-exec");
  for (int i = 0; i < 5; i++) OK(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, comm, NULL));
  struct timespec wait = {0, 300000000};  /* exec drops what is not committed: run a while */
  nanosleep(&wait, NULL);
  fflush(stdout);
  execl(self, self, "basic", "0", (char *)NULL);
  die("execl");
  return 99;
}

/* Marks the open descriptors in `open_fds` (those from 3 to 1023). */
static int list_fds(unsigned char *open_fds) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] != '.' && fd >= 3 && fd < 1024 && fd != dirfd(d)) open_fds[fd] = 1;
  }
  closedir(d);
  return 0;
}

/* With stdio closed (a daemon), the program's own descriptor numbers must not move; the
** descriptors that appear meanwhile (libovl's) must not leak into exec'ed programs. */
static int closed_stdio(void) {
  unsigned char before[1024] = {0}, after[1024] = {0};
  if (list_fds(before)) return 4;
  close(STDIN_FILENO);
  close(STDOUT_FILENO);
  close(STDERR_FILENO);
  ncclComm_t comm = new_comm(1, 0, "closed-stdio");
  for (int i = 0; i < 100; i++) OK(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, comm, NULL));
  struct timespec wait = {0, 300000000};  /* the writer opens the trace and commits meanwhile */
  nanosleep(&wait, NULL);
  for (int want = 0; want < 3; want++)
    if (open("/dev/null", O_RDWR) != want) return 1 + want;
  if (list_fds(after)) return 4;
  int bad = 0;
  for (int fd = 3; fd < 1024; fd++)
    if (after[fd] && !before[fd] && !(fcntl(fd, F_GETFD) & FD_CLOEXEC)) bad = 5;
  OK(ncclCommDestroy(comm));
  return bad;
}

static int forked(void) {
  ncclComm_t comm = new_comm(2, 0, "fork");
  for (int i = 0; i < 10; i++) OK(ncclAllReduce(NULL, NULL, 1, ncclFloat32, ncclSum, comm, NULL));
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    for (int i = 0; i < 10; i++) OK(ncclAllReduce(NULL, NULL, 2, ncclFloat32, ncclSum, comm, NULL));
    nvtxRangePushA("child");
    nvtxRangePop();
    exit(0);  /* exit, not _exit: at-exit handlers run in the child too */
  }
  int st = 0;
  waitpid(pid, &st, 0);
  for (int i = 0; i < 10; i++) OK(ncclAllReduce(NULL, NULL, 3, ncclFloat32, ncclSum, comm, NULL));
  printf("app: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 0;
}

static void *end_elsewhere(void *p) {
  nvtxRangeEnd(*(nvtxRangeId_t *)p);
  return NULL;
}

static void nvtx_calls(void) {
  nvtxRangePushA("outer");
  nvtxRangePushA("inner");
  nvtxMarkA("ovl:grad_ready bucket=0 bytes=64");
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePushW(L"wide \u00e9t\u00e9");
  nvtxRangePop();

  nvtxDomainHandle_t ovl = nvtxDomainCreateA("ovl");
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "step";
  nvtxDomainRangePushEx(ovl, &a);
  a.message.ascii = "bucket 3";
  nvtxDomainRangePushEx(ovl, &a);
  nvtxRangePushA("default inside");  /* another domain's stack: popping it leaves ovl's alone */
  nvtxDomainRangePop(ovl);
  nvtxRangePop();
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtxDomainRegisterStringA(ovl, "registered mark");
  nvtxDomainMarkEx(ovl, &a);
  nvtxDomainRangePop(ovl);

  nvtxRangeId_t id = nvtxRangeStartA("across threads");
  pthread_t t;
  pthread_create(&t, NULL, end_elsewhere, &id);
  pthread_join(t, NULL);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "none";
  if (!strcmp(mode, "basic")) return basic(argc > 2 ? atoi(argv[2]) : 0);
  if (!strcmp(mode, "threads")) return threads(argc > 2 ? atoi(argv[2]) : 8, argc > 3 ? atol(argv[3]) : 10000);
  if (!strcmp(mode, "loop")) loop(argc > 2 ? atol(argv[2]) : 1000);
  if (!strcmp(mode, "flood")) return flood(argc > 2 ? atoi(argv[2]) : 16, argc > 3 ? atof(argv[3]) : 0, 0);
  if (!strcmp(mode, "flood-quiet")) return flood(argc > 2 ? atoi(argv[2]) : 16, argc > 3 ? atof(argv[3]) : 1, 1);
  if (!strcmp(mode, "exec")) return exec_self(argv[0]);
  if (!strcmp(mode, "chdir")) {
    if (argc < 3 || chdir(argv[2]) != 0) die("chdir");
    return basic(0);
  }
  if (!strcmp(mode, "closed-stdio")) return closed_stdio();
  if (!strcmp(mode, "fork")) return forked();
  if (!strcmp(mode, "nvtx")) {
    nvtxMarkA("before any NCCL call");  /* kept until the process proves it uses NCCL */
    ncclComm_t comm = new_comm(1, 0, "nvtx");
    nvtx_calls();
    OK(ncclCommDestroy(comm));
    return 0;
  }
  if (!strcmp(mode, "nvtx-only")) {
    nvtx_calls();
    return 0;
  }
  printf("app: nothing to do\n");
  return 0;
}
