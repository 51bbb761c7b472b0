/*
** Cost of starting a process: spawns COMMAND N times, one after the other, with this
** process's environment (bench_inject.sh sets LD_PRELOAD=libovl.so, or not), and prints the
** CPU time the children used per start (user + system, from RUSAGE_CHILDREN: what loading
** costs, unaffected by other processes competing for the cores) and the wall time per start,
** both in microseconds.
** usage: ovl_bench_inject_start N COMMAND [ARGS...]   prints "CPU_US_PER_START WALL_US_PER_START"
*/
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec * 1e-6; }

int main(int argc, char **argv) {
  long n = argc > 2 ? atol(argv[1]) : 0;
  if (n < 1) {
    fprintf(stderr, "usage: ovl_bench_inject_start N COMMAND [ARGS...]\n");
    return 64;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++) {
    pid_t pid;
    int st;
    if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0 || waitpid(pid, &st, 0) != pid ||
        !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "ovl_bench_inject_start: %s failed\n", argv[2]);
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  double cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime);
  double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  printf("%.1f %.1f\n", cpu * 1e6 / (double)n, wall * 1e6 / (double)n);
  return 0;
}
