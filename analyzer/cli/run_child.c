/* `ovl run`'s child: see run_child.h. */
#define _GNU_SOURCE
#include "run_child.h"

#include "base/die_of.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

/* A signal sent to ovl run by a process (kill, a scheduler) goes on to the command; one the
** terminal sent (Ctrl-C, Ctrl-\, a hangup) reached the command's process group already, so
** it is not sent twice. */
static void forward(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  int saved = errno;
  if (child_pid > 0 && info && info->si_code != SI_KERNEL) kill((pid_t)child_pid, sig);
  errno = saved;
}

static const int forwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

/* The child: exec command, or send errno up the pipe (closed by a successful exec). */
static void exec_child(char **command, int report_fd) {
  execvp(command[0], command);
  int e = errno;
  ssize_t w = write(report_fd, &e, sizeof e);
  (void)w;
  _exit(127);
}

int ovl_run_child(char **command, int *wstatus) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    fprintf(stderr, "ovl: run: cannot start %s: %s\n", command[0], strerror(errno));
    return 1;
  }
  struct sigaction fwd, old[NFORWARDED];
  memset(&fwd, 0, sizeof fwd);
  fwd.sa_sigaction = forward;
  fwd.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&fwd.sa_mask);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "ovl: run: cannot start %s: %s\n", command[0], strerror(errno));
    close(pipefd[0]);
    close(pipefd[1]);
    return 1;
  }
  if (pid == 0) {
    close(pipefd[0]);
    exec_child(command, pipefd[1]);
  }
  close(pipefd[1]);
  child_pid = pid;
  for (size_t i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &fwd, &old[i]);
  int exec_errno = 0;
  ssize_t got;
  while ((got = read(pipefd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child_pid = 0;
  for (size_t i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &old[i], NULL);
  if (got == (ssize_t)sizeof exec_errno) {
    /* as a shell says it: 127 not found, 126 found but not runnable */
    fprintf(stderr, "ovl: run: %s: %s\n", command[0], strerror(exec_errno));
    return exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
  }
  *wstatus = status;
  return 0;
}

int ovl_run_exit_as(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  int sig = WTERMSIG(wstatus);
  /* Die of the same signal, so that the caller sees what the command's caller would have. */
  fflush(NULL);
  ovl_die_of(sig);
  return 128 + sig;
}
