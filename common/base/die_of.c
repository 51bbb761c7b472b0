/* Ending by a signal: see die_of.h. */
#include "die_of.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

void ovl_die_of(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
}
