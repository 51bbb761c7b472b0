/*
** The waits of analyzer/mpi/ cost no CPU (mpi_internal.h: ovl_mpi_wait_idle, ovl_mpi_probe_idle).
** Run under mpirun with 2 processes: the root works (sleeps) for a second before each of two
** meetings, an agreement (ovl_mpi_agree, the wait after a process's share of the files) and a
** request (the wait through the root's serial part); the other process waits at each. A wait
** must last (it really waited for the root) and take at most a quarter of its time in CPU:
** MPI's blocking calls spin and would take all of it.
*/
#include "mpi/mpi_internal.h"

#include "check.h"

#include <stdio.h>
#include <time.h>

static double now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void work_a_second(void) {
  struct timespec t = {1, 0};
  nanosleep(&t, NULL);
}

/* Prints one wait of the other process and checks it: it lasted, and took little CPU. */
static void judge(const char *what, double wall, double cpu) {
  printf("%s: waited %.3f s, CPU %.3f s\n", what, wall, cpu);
  CHECK(wall >= 0.8);
  CHECK(cpu <= 0.25 * wall);
}

int main(void) {
  ovl_err err;
  ovl_err_clear(&err);
  int is_root = 0;
  if (ovl_mpi_begin(&is_root, &err)) {
    fprintf(stderr, "test_mpi_idle: %s\n", err.msg);
    return 1;
  }
  if (ovl_mpi_s.size != 2) {
    if (is_root) fprintf(stderr, "test_mpi_idle: run it with 2 processes (%d given)\n", ovl_mpi_s.size);
    MPI_Finalize();
    return 2;
  }
  char token = 'r';
  if (is_root) {
    work_a_second();
    CHECK_I64(ovl_mpi_agree(OVL_OK, &err), OVL_OK);
    work_a_second();
    MPI_Send(&token, 1, MPI_CHAR, 1, OVL_MPI_TAG_REQUEST, MPI_COMM_WORLD);
  } else {
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    CHECK_I64(ovl_mpi_agree(OVL_OK, &err), OVL_OK);
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    judge("an agreement the root reaches a second later", w1 - w0, c1 - c0);
    MPI_Status st;
    CHECK(ovl_mpi_probe_idle(0, OVL_MPI_TAG_REQUEST, &st) == MPI_SUCCESS);
    double w2 = now(CLOCK_MONOTONIC), c2 = now(CLOCK_PROCESS_CPUTIME_ID);
    judge("a request the root sends a second later", w2 - w1, c2 - c1);
    token = 0;
    CHECK(MPI_Recv(&token, 1, MPI_CHAR, 0, OVL_MPI_TAG_REQUEST, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(token == 'r');
  }
  /* everyone's verdict, so every process exits with the test's status */
  int all = 0;
  MPI_Allreduce(&check_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check_failures = all;
  MPI_Finalize();
  return check_summary();
}
