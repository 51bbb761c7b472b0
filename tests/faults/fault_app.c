/*
** A test double of a traced program for the capture fault suite (test_inject_faults.c): NCCL
** calls (the stub NCCL, or a real libnccl.so.2 loaded at run time) around the events libovl
** must survive. Modes:
**   vfork          vfork + exec of /bin/echo, then NCCL calls
**   thread-exit    a second thread makes NCCL calls and calls exit(5) while main waits
**   loop           prints "ready", then NCCL calls until killed
**   dlopen PATH    dlopen(PATH) RTLD_LOCAL as PyTorch loads its CUDA parts, PATH being a
**                  library linked against NCCL (real_nccl_user.c), and runs it
*/
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void calls(int n) {
  ncclUniqueId id;
  ncclComm_t comm;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 2, id, 0) != ncclSuccess) exit(3);
  for (int i = 0; i < n; i++)
    if (ncclAllReduce(NULL, NULL, 1024, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess) exit(3);
  ncclCommDestroy(comm);
}

static void *exiting_thread(void *arg) {
  (void)arg;
  calls(50);
  printf("thread: exit 5\n");
  fflush(stdout);
  exit(5);
}

static int from_dlopen(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  int (*run)(void) = lib ? (int (*)(void))dlsym(lib, "real_nccl_user_run") : NULL;
  if (!run) {
    printf("dlopen failed\n");
    return 4;
  }
  return run();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "vfork") == 0) {
    fflush(stdout);
    pid_t pid = vfork();
    if (pid == 0) {
      execl("/bin/echo", "echo", "child: exec'd", (char *)NULL);
      _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 3;
    calls(20);
    printf("parent: done\n");
    return 0;
  }
  if (strcmp(mode, "thread-exit") == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, exiting_thread, NULL) != 0) return 3;
    pthread_join(t, NULL);
    return 6;  /* not reached: the thread exits the process */
  }
  if (strcmp(mode, "loop") == 0) {
    ncclUniqueId id;
    ncclComm_t comm;
    if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 2, id, 0) != ncclSuccess) return 3;
    printf("ready\n");
    fflush(stdout);
    for (;;) {
      ncclAllReduce(NULL, NULL, 1024, ncclFloat32, ncclSum, comm, NULL);
      usleep(1000);
    }
  }
  if (strcmp(mode, "dlopen") == 0 && argc > 2) return from_dlopen(argv[2]);
  fprintf(stderr, "usage: fault_app vfork | thread-exit | dlopen PATH\n");
  return 2;
}
