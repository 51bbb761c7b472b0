/*
** How ovl-ddp ranks find each other without MPI: launcher detection from the environment
** (torchrun, Open MPI, MPICH, alone) and the TCP rendezvous that hands rank 0's NCCL id to
** every rank. Several processes on loopback run the torchrun path exactly as ovl-ddp does,
** while a stand-in for the torchrun agent holds MASTER_PORT; when mpirun (Open MPI or MPICH)
** is installed, ranks it starts detect it and exchange the id through MASTER_ADDR/MASTER_PORT
** (the path of an ovl-ddp built without MPI). Every wait has a deadline.
**   test_workload_bootstrap [WORKLOAD_LAUNCH_TOOL]
*/
#include "check.h"
#include "launch_env.h"
#include "rendezvous.h"
#include "run_cmd.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *all_vars[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                                 "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                                 "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "OVL_DDP_PORT", NULL};

static void clear_env(void) {
  for (int i = 0; all_vars[i]; i++) unsetenv(all_vars[i]);
}

/* Sets "NAME=value" pairs, NULL-terminated, after clearing every launcher variable. */
static void set_env(const char *const *pairs) {
  clear_env();
  for (int i = 0; pairs[i]; i++) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", pairs[i]);
    char *eq = strchr(buf, '=');
    *eq = 0;
    setenv(buf, eq + 1, 1);
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check_detection(void) {
  ovl_launch l;
  ovl_err err;
  static const struct {
    const char *env[6];
    ovl_launcher launcher;
    int rank, world, local;
    const char *addr;
    int port;
  } good[] = {
    {{NULL}, OVL_LAUNCH_ALONE, 0, 1, 0, "", 0},
    {{"RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=1", "MASTER_ADDR=node7", "MASTER_PORT=29500", NULL},
     OVL_LAUNCH_TORCHRUN, 3, 8, 1, "node7", 29500},
    {{"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=6", "OMPI_COMM_WORLD_LOCAL_RANK=2", NULL},
     OVL_LAUNCH_OPENMPI, 5, 6, 2, "", 0},
    {{"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MASTER_ADDR=10.0.0.1", "MASTER_PORT=1234", NULL},
     OVL_LAUNCH_MPICH, 1, 2, 1, "10.0.0.1", 1234},
    /* No local rank given: the rank itself (one node). */
    {{"PMI_RANK=1", "PMI_SIZE=2", NULL}, OVL_LAUNCH_MPICH, 1, 2, 1, "", 0},
    /* torchrun's variables win over MPI's (torchrun started under mpirun). */
    {{"RANK=0", "WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", NULL},
     OVL_LAUNCH_TORCHRUN, 0, 2, 0, "", 0},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    set_env(good[i].env);
    CHECK_I64(ovl_launch_detect(&l, &err), OVL_OK);
    CHECK_I64(l.launcher, good[i].launcher);
    CHECK_I64(l.rank, good[i].rank);
    CHECK_I64(l.world_size, good[i].world);
    CHECK_I64(l.local_rank, good[i].local);
    CHECK_STR(l.master_addr, good[i].addr);
    CHECK_I64(l.master_port, good[i].port);
  }
  CHECK_STR(ovl_launcher_name(OVL_LAUNCH_TORCHRUN), "torchrun");
  CHECK_STR(ovl_launcher_name(OVL_LAUNCH_ALONE), "alone");

  static const struct { const char *env[4]; const char *needle; } bad[] = {
    {{"RANK=1", NULL}, "WORLD_SIZE is not"},
    {{"RANK=x", "WORLD_SIZE=2", NULL}, "RANK='x'"},
    {{"RANK=2", "WORLD_SIZE=2", NULL}, "RANK=2 is not below WORLD_SIZE=2"},
    {{"RANK=0", "WORLD_SIZE=0", NULL}, "WORLD_SIZE='0'"},
    {{"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=-1", NULL}, "LOCAL_RANK='-1'"},
    {{"MASTER_PORT=70000", NULL}, "MASTER_PORT='70000'"},
    {{"MASTER_PORT=", NULL}, "MASTER_PORT=''"},
    {{"PMI_RANK=3", "PMI_SIZE=2", NULL}, "PMI_RANK=3"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set_env(bad[i].env);
    ovl_err_clear(&err);
    CHECK_I64(ovl_launch_detect(&l, &err), OVL_EUSER);
    if (!strstr(err.msg, bad[i].needle)) {
      fprintf(stderr, "got '%s', expected '%s'\n", err.msg, bad[i].needle);
      CHECK(0);
    }
  }

  /* The rendezvous port: never MASTER_PORT itself (torchrun's agent listens there). */
  int port = 0;
  set_env(good[1].env);
  CHECK_I64(ovl_launch_detect(&l, &err), OVL_OK);
  CHECK_I64(ovl_rdv_port(&l, &port, &err), OVL_OK);
  CHECK_I64(port, 29501);
  setenv("OVL_DDP_PORT", "40000", 1);
  CHECK_I64(ovl_rdv_port(&l, &port, &err), OVL_OK);
  CHECK_I64(port, 40000);
  setenv("OVL_DDP_PORT", "0", 1);
  CHECK_I64(ovl_rdv_port(&l, &port, &err), OVL_EUSER);
  clear_env();
  ovl_launch_detect(&l, &err);
  CHECK_I64(ovl_rdv_port(&l, &port, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "MASTER_PORT is not set") != NULL);
  l.master_port = 65535;
  CHECK_I64(ovl_rdv_port(&l, &port, &err), OVL_EUSER);
  clear_env();
}

/* A listening socket on `port` (0: any free port); returns the fd and the port. */
static int listen_on(int port, int *bound) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons((uint16_t)port);
  socklen_t len = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    close(fd);
    return -1;
  }
  *bound = ntohs(a.sin_port);
  return fd;
}

/* A free port p whose neighbour p+1 is free too; returns the agent's socket on p. */
static int agent_socket(int *port) {
  for (int tries = 0; tries < 50; tries++) {
    int p = 0, q = 0;
    int fd = listen_on(0, &p);
    if (fd < 0 || p >= 65535) {
      if (fd >= 0) close(fd);
      continue;
    }
    int probe = listen_on(p + 1, &q);
    if (probe >= 0) {
      close(probe);
      *port = p;
      return fd;
    }
    close(fd);
  }
  return -1;
}

enum { WORLD = 4, BLOB = 128 };

/* One rank of a torchrun-style job: environment -> detection -> rendezvous; the blob it
** ends with goes to `out_fd`. Exits 0 on success. */
static void run_rank(int rank, int master_port, int out_fd) {
  alarm(30);  /* a hang is a failure, never a stuck test */
  char r[16], w[16], p[16];
  snprintf(r, sizeof r, "%d", rank);
  snprintf(w, sizeof w, "%d", WORLD);
  snprintf(p, sizeof p, "%d", master_port);
  clear_env();
  setenv("RANK", r, 1);
  setenv("LOCAL_RANK", r, 1);
  setenv("WORLD_SIZE", w, 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", p, 1);
  ovl_launch l;
  ovl_err err;
  unsigned char blob[BLOB];
  memset(blob, 0, sizeof blob);
  if (ovl_launch_detect(&l, &err)) _exit(2);
  if (l.rank == 0) {
    /* Like ncclGetUniqueId: an id only rank 0 knows. */
    srand((unsigned)getpid() ^ (unsigned)time(NULL));
    for (int i = 0; i < BLOB; i++) blob[i] = (unsigned char)(rand() & 0xff);
  }
  int rc = ovl_rdv_exchange(&l, blob, sizeof blob, 20000, &err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err.msg);
  if (write(out_fd, blob, sizeof blob) != (ssize_t)sizeof blob) rc = 1;
  _exit(rc ? 1 : 0);
}

/* Waits for pid until the deadline; kills it past that. Returns its exit status or -1. */
static int wait_child(pid_t pid, double deadline) {
  int status = 0;
  while (now_s() < deadline) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    struct timespec pause = {0, 10 * 1000000L};
    nanosleep(&pause, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

static void check_exchange(void) {
  int port = 0;
  int agent = agent_socket(&port);
  CHECK(agent >= 0);
  if (agent < 0) return;
  int pipes[WORLD][2];
  pid_t pids[WORLD];
  /* Peers first: they must retry until rank 0 listens. */
  for (int rank = WORLD - 1; rank >= 0; rank--) {
    if (rank == 0) {
      struct timespec pause = {0, 300 * 1000000L};
      nanosleep(&pause, NULL);
    }
    CHECK_I64(pipe(pipes[rank]), 0);
    pids[rank] = fork();
    if (pids[rank] == 0) {
      close(agent);
      close(pipes[rank][0]);
      run_rank(rank, port, pipes[rank][1]);
    }
    close(pipes[rank][1]);
  }
  double deadline = now_s() + 40;
  unsigned char blobs[WORLD][BLOB];
  for (int rank = 0; rank < WORLD; rank++) {
    CHECK_I64(wait_child(pids[rank], deadline), 0);
    CHECK_I64(read(pipes[rank][0], blobs[rank], BLOB), BLOB);
    close(pipes[rank][0]);
  }
  close(agent);
  int nonzero = 0;
  for (int i = 0; i < BLOB; i++) nonzero |= blobs[0][i];
  CHECK(nonzero);
  for (int rank = 1; rank < WORLD; rank++) CHECK(memcmp(blobs[rank], blobs[0], BLOB) == 0);
}

/* Missing or wrong peers end in an error within the deadline. */
static void check_error_paths(void) {
  int port = 0;
  int agent = agent_socket(&port);  /* port+1 is free: nobody serves there */
  CHECK(agent >= 0);
  if (agent < 0) return;
  close(agent);
  unsigned char blob[BLOB] = {1};
  ovl_err err;

  double t0 = now_s();
  CHECK_I64(ovl_rdv_fetch("127.0.0.1", port + 1, 1, 2, blob, sizeof blob, 400, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "could not reach rank 0") != NULL);
  CHECK(now_s() - t0 < 5);

  t0 = now_s();
  CHECK_I64(ovl_rdv_serve(port + 1, 3, blob, sizeof blob, 400, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "only 1 of 3 ranks") != NULL);
  CHECK(now_s() - t0 < 5);

  CHECK_I64(ovl_rdv_fetch("no-such-host.invalid", port + 1, 1, 2, blob, sizeof blob, 400, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "no-such-host.invalid") != NULL);

  /* A peer that disagrees on the world size is a configuration error, reported by rank 0. */
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    ovl_err e;
    unsigned char b[BLOB];
    _exit(ovl_rdv_fetch("127.0.0.1", port + 1, 1, 3, b, sizeof b, 5000, &e) == OVL_OK ? 0 : 1);
  }
  CHECK_I64(ovl_rdv_serve(port + 1, 2, blob, sizeof blob, 5000, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "world size is 3, rank 0 has 2") != NULL);
  CHECK_I64(wait_child(pid, now_s() + 15), 1);

  /* Rank 0's port taken (by the "agent"): a clear message naming the way out. */
  int busy_port = 0;
  int busy = listen_on(0, &busy_port);
  CHECK_I64(ovl_rdv_serve(busy_port, 2, blob, sizeof blob, 200, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "OVL_DDP_PORT") != NULL);
  close(busy);

  /* A world of one needs no exchange and no address. */
  clear_env();
  ovl_launch l;
  ovl_launch_detect(&l, &err);
  CHECK_I64(ovl_rdv_exchange(&l, blob, sizeof blob, 100, &err), OVL_OK);
  l.world_size = 2;
  l.rank = 1;
  l.master_port = port;
  CHECK_I64(ovl_rdv_exchange(&l, blob, sizeof blob, 100, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "MASTER_ADDR is not set") != NULL);
}

/* Three ranks started by a real mpirun: detected as such, one id for all. */
static void check_mpirun(const char *tool) {
  cmd_result probe = run_cmd("mpirun --version");
  int openmpi = strstr(probe.out, "Open MPI") != NULL || strstr(probe.err, "Open MPI") != NULL;
  int found = probe.status == 0 || openmpi;
  cmd_free(&probe);
  if (!found) {
    fprintf(stderr, "mpirun not found: the launch by Open MPI or MPICH is not exercised\n");
    return;
  }
  int port = 0;
  int agent = agent_socket(&port);
  CHECK(agent >= 0);
  if (agent < 0) return;
  close(agent);  /* nobody listens on MASTER_PORT under mpirun; port+1 is free */
  char cmd[1024];
  if (openmpi)
    snprintf(cmd, sizeof cmd,
             "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 3 --oversubscribe "
             "-x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=%d '%s'", port, tool);
  else
    snprintf(cmd, sizeof cmd, "mpirun -np 3 -genv MASTER_ADDR 127.0.0.1 -genv MASTER_PORT %d '%s'", port, tool);
  cmd_result r = run_cmd(cmd);
  if (r.status != 0) fprintf(stderr, "%s\n%s", cmd, r.err);
  CHECK_I64(r.status, 0);
  const char *launcher = openmpi ? "launcher=Open MPI" : "launcher=MPICH";
  char first_id[64] = "";
  for (int rank = 0; rank < 3; rank++) {
    char line[128];
    snprintf(line, sizeof line, "%s rank=%d world=3 local=%d id=rank0-pid", launcher, rank, rank);
    const char *at = strstr(r.out, line);
    CHECK(at != NULL);
    if (!at) continue;
    char id[64];
    sscanf(at + strlen(line) - strlen("rank0-pid"), "%63s", id);
    if (!first_id[0]) snprintf(first_id, sizeof first_id, "%s", id);
    CHECK_STR(id, first_id);
  }
  CHECK_I64(count_lines(r.out), 3);
  cmd_free(&r);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  check_detection();
  check_exchange();
  check_error_paths();
  if (argc > 1) check_mpirun(argv[1]);
  return check_summary();
}
