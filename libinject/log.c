/* libovl messages: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int current_level = OVL_LOG_INFO;

void ovl_log_set_level(ovl_log_level level) { atomic_store(&current_level, (int)level); }

static void emit(const char *fmt, va_list ap) {
  char line[12288] = "ovl: ";  /* room for two paths of PATH_MAX */
  size_t n = 5;
  int k = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  n = k < 0 ? n : (n + (size_t)k < sizeof line - 1 ? n + (size_t)k : sizeof line - 2);
  line[n++] = '\n';
  ssize_t w = write(STDERR_FILENO, line, n);
  (void)w;  /* nothing sensible to do when stderr is gone */
}

void ovl_warn(int *once, const char *fmt, ...) {
  if (atomic_load(&current_level) < OVL_LOG_INFO) return;
  if (once && __atomic_exchange_n(once, 1, __ATOMIC_RELAXED)) return;
  va_list ap;
  va_start(ap, fmt);
  emit(fmt, ap);
  va_end(ap);
}

void ovl_debug(const char *fmt, ...) {
  if (atomic_load(&current_level) < OVL_LOG_DEBUG) return;
  va_list ap;
  va_start(ap, fmt);
  emit(fmt, ap);
  va_end(ap);
}
