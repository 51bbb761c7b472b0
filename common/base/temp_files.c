/* Registry of temporary files, removed at exit and on signals: see temp_files.h. */
#include "temp_files.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fixed table the signal handler can walk without locks or allocation: slots hold
** strdup'd paths published with atomic stores. */
#define MAX_TEMPS 256
static char *volatile slots[MAX_TEMPS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const side_suffixes[] = {"", "-wal", "-shm", "-journal"};

/* Async-signal-safe: builds path+suffix in a stack buffer and unlinks it when it is a
** regular file (never a link, device or directory someone put there). */
static void remove_one(const char *path) {
  char buf[4096];
  size_t n = 0;
  while (path[n] && n < sizeof buf - 16) {
    buf[n] = path[n];
    n++;
  }
  if (path[n]) return; /* longer than we can name safely: leave it */
  for (size_t s = 0; s < sizeof side_suffixes / sizeof side_suffixes[0]; s++) {
    size_t m = 0;
    for (const char *p = side_suffixes[s]; *p; p++) buf[n + m++] = *p;
    buf[n + m] = 0;
    struct stat sb;
    if (lstat(buf, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(buf);
  }
}

static void at_exit(void);
static void add_exit_hook(void) { atexit(at_exit); }

int ovl_temp_register(const char *path) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, add_exit_hook);
  char *copy = strdup(path);
  if (!copy) return -1;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < MAX_TEMPS; i++) {
    if (!slots[i]) {
      __atomic_store_n(&slots[i], copy, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&lock);
      return 0;
    }
  }
  pthread_mutex_unlock(&lock);
  free(copy);
  return -1;
}

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

int ovl_temp_mkstemp(char *templ) {
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) sigaddset(&block, cleanup_signals[i]);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int fd = mkstemp(templ);
  int e = errno;
  if (fd >= 0) ovl_temp_register(templ);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return fd;
}

void ovl_temp_release(const char *path, int remove_it) {
  char *found = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < MAX_TEMPS && !found; i++) {
    char *p = slots[i];
    if (p && strcmp(p, path) == 0) {
      __atomic_store_n(&slots[i], NULL, __ATOMIC_SEQ_CST);
      found = p;
    }
  }
  pthread_mutex_unlock(&lock);
  if (remove_it) remove_one(path);
  free(found);
}

void ovl_temp_remove_all(void) {
  for (size_t i = 0; i < MAX_TEMPS; i++) {
    char *p = __atomic_load_n(&slots[i], __ATOMIC_SEQ_CST);
    if (p) remove_one(p);
  }
}

static void on_signal(int sig) {
  ovl_temp_remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void at_exit(void) {
  ovl_temp_remove_all();
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < MAX_TEMPS; i++) {
    free(slots[i]);
    slots[i] = NULL;
  }
  pthread_mutex_unlock(&lock);
}

void ovl_temp_install_cleanup(void) {
  static int installed;
  if (installed) return;
  installed = 1;
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A signal ignored by our parent (nohup) stays ignored. */
    struct sigaction old;
    if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(cleanup_signals[i], &sa, NULL);
  }
}
