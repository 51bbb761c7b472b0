/* Progress of long work: see progress.h. */
#include "progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

static _Atomic(ovl_progress_sink) sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local const char *thread_file;

void ovl_progress_set_sink(ovl_progress_sink s) { atomic_store(&sink, s); }

void ovl_progress_file(const char *file) { thread_file = file; }

void ovl_progress(const char *what, double fraction) {
  ovl_progress_sink s = atomic_load_explicit(&sink, memory_order_relaxed);
  if (!s) return;
  pthread_mutex_lock(&lock);
  s(what, thread_file, fraction);
  pthread_mutex_unlock(&lock);
}
