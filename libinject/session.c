/*
** The capture's life in one process: see capture.h.
**
** The constructor runs in every process that loads libovl (shells, launchers, trainers), so
** it only reads the environment, points CUDA and NVTX at libovl (when no other tool has)
** and registers the fork handler: no thread, no file, no CUPTI. Everything else waits for
** the first use of CUDA (InitializeInjection) or NCCL (a hook): ovl_capture_activate.
*/
#define _GNU_SOURCE
#include "capture.h"

#include "base/die_of.h"
#include "capture_writer.h"
#include "clock.h"
#include "cupti_session.h"
#include "host_buffer.h"
#include "log.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IDLE_BUFFER_BYTES (4u << 20)     /* NVTX kept before the process proves it uses CUDA/NCCL */
#define ACTIVE_BUFFER_BYTES (64u << 20)  /* host events in flight to the writer */
#define EXIT_FLUSH_MS 1500               /* at exit while threads keep calling: within 2 s (issue 20) */
#define SIGNAL_FLUSH_MS 800              /* on SIGTERM/SIGINT: the user wants out, within 1 s */

static atomic_int state = OVL_CAPTURE_OFF;
static ovl_capture_config config;
static int owns_cuda_injection;
static char *foreign_cuda, *foreign_nvtx;  /* injection paths another tool set */
static pthread_mutex_t activation_lock = PTHREAD_MUTEX_INITIALIZER;

int ovl_capture_state(void) { return atomic_load_explicit(&state, memory_order_acquire); }
const ovl_capture_config *ovl_capture_settings(void) { return &config; }
int ovl_capture_owns_cuda_injection(void) { return owns_cuda_injection; }

/* Set once, then only read: threads flooding through the hooks at exit share the line clean. */
static atomic_int closing_calls;
void ovl_capture_note_call_while_closing(void) {
  if (!atomic_load_explicit(&closing_calls, memory_order_relaxed)) atomic_store_explicit(&closing_calls, 1, memory_order_relaxed);
}
int ovl_capture_called_while_closing(void) { return atomic_load_explicit(&closing_calls, memory_order_relaxed); }

void ovl_capture_begin_close(void) {
  int s = OVL_CAPTURE_ACTIVE;
  if (!atomic_compare_exchange_strong(&state, &s, OVL_CAPTURE_CLOSING) && s == OVL_CAPTURE_COUNTING)
    atomic_compare_exchange_strong(&state, &s, OVL_CAPTURE_CLOSING);
}

void ovl_capture_stop_writing(void) {
  int active = OVL_CAPTURE_ACTIVE;
  atomic_compare_exchange_strong(&state, &active, OVL_CAPTURE_COUNTING);
}

int ovl_capture_counts_unrecorded(void) {
  int s = ovl_capture_state();
  return s == OVL_CAPTURE_CLOSING || s == OVL_CAPTURE_COUNTING;
}

int ovl_capture_needs_close(void) {
  int s = ovl_capture_state();
  return s == OVL_CAPTURE_ACTIVE || s == OVL_CAPTURE_COUNTING;
}

void ovl_capture_stop(void) { atomic_store_explicit(&state, OVL_CAPTURE_OFF, memory_order_release); }

int64_t ovl_capture_tid(void) {
  static __thread int64_t tid;
  if (!tid) tid = (int64_t)syscall(SYS_gettid);
  return tid;
}

/* ---------------------------------------------------------------------------------- */
/* Loading                                                                            */
/* ---------------------------------------------------------------------------------- */

static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether LD_PRELOAD names this library (entries are separated by ':' or spaces). */
static int preloaded(const char *self) {
  const char *v = getenv("LD_PRELOAD");
  char item[PATH_MAX];
  while (v && *v) {
    size_t n = strcspn(v, ": ");
    if (n && n < sizeof item) {
      memcpy(item, v, n);
      item[n] = 0;
      if (same_file(item, self)) return 1;
    }
    v += n + (v[n] != 0);
  }
  return 0;
}

/* Points `var` at libovl when unset. Returns 1 when libovl owns it, 0 when another tool does
** (its path is kept in *foreign for the warning). setenv only from a preload constructor:
** then the program has no threads yet that could be reading the environment. */
static int claim_injection(const char *var, const char *self, int may_setenv, char **foreign) {
  const char *v = getenv(var);
  if (!v || !*v) {
    if (may_setenv) setenv(var, self, 1);
    return 1;
  }
  if (same_file(v, self)) return 1;
  *foreign = strdup(v);
  return 0;
}

static void in_forked_child(void) { atomic_store(&state, OVL_CAPTURE_OFF); }

__attribute__((constructor)) static void ovl_load(void) {
  ovl_config_read(&config, getenv);
  ovl_log_set_level(config.log);
  if (config.disabled) return;
  ovl_clock_start();
  char cwd[PATH_MAX];
  if (config.output_dir[0] && config.output_dir[0] != '/' && (!getcwd(cwd, sizeof cwd) || ovl_config_absolute_output(&config, cwd) != 0))
    ovl_debug("%s: cannot resolve against the working directory; it is resolved when the trace is opened",
              config.output_dir);
  Dl_info info;
  char self[PATH_MAX];
  if (!dladdr((void *)ovl_load, &info) || !info.dli_fname || !realpath(info.dli_fname, self)) return;
  int may_setenv = preloaded(self);
  owns_cuda_injection = claim_injection("CUDA_INJECTION64_PATH", self, may_setenv, &foreign_cuda);
  claim_injection("NVTX_INJECTION64_PATH", self, may_setenv, &foreign_nvtx);
  ovl_hostbuf_set_limit(IDLE_BUFFER_BYTES);
  pthread_atfork(NULL, NULL, in_forked_child);
  atomic_store(&state, OVL_CAPTURE_IDLE);
}

/* A process that ends with nothing captured says why, for OVL_LOG=debug: e.g. a CUDA
** program on a machine without a GPU or driver, where the driver never calls the injection. */
__attribute__((destructor)) static void ovl_unload(void) {
  if (ovl_capture_state() == OVL_CAPTURE_IDLE)
    ovl_debug("nothing captured: this process made no NCCL call and CUDA never started the injection");
}

/* ---------------------------------------------------------------------------------- */
/* Exit and signals                                                                   */
/* ---------------------------------------------------------------------------------- */

static void at_exit(void) {
  if (!ovl_capture_needs_close()) return;
  if (!ovl_cupti_was_attached()) {  /* NCCL calls were captured, GPU work not: say why (OVL_LOG=debug) */
    char why[256];
    ovl_cupti_status(why, sizeof why);
    ovl_debug("no GPU work captured: CUPTI %s", why);
  }
  if (!ovl_writer_finish(EXIT_FLUSH_MS)) ovl_warn(NULL, "the trace writer did not finish in time; the trace keeps what it committed");
  ovl_capture_stop();
}

static const int flush_signals[] = {SIGTERM, SIGINT};
#define NSIGNALS (sizeof flush_signals / sizeof flush_signals[0])
static struct sigaction previous[NSIGNALS];

/* Flushes (closing the trace when the signal is about to kill the process), then does what
** the program had asked for: its handler, or the default action. */
static void on_signal(int sig, siginfo_t *info, void *uctx) {
  int saved_errno = errno;
  size_t i = 0;
  while (i < NSIGNALS && flush_signals[i] != sig) i++;
  if (i == NSIGNALS) return;
  const struct sigaction *old = &previous[i];
  int fatal = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
  if (ovl_capture_needs_close()) ovl_writer_sync(fatal, SIGNAL_FLUSH_MS);
  errno = saved_errno;
  if (old->sa_flags & SA_SIGINFO) {
    old->sa_sigaction(sig, info, uctx);
  } else if (fatal) {
    ovl_die_of(sig);
  } else if (old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
  }
}

/* Installs the flush handler where the program has not chosen to ignore the signal. The
** program's flags (SA_RESTART above all) are kept so its system calls behave as before. */
static void install_signal_handlers(void) {
  for (size_t i = 0; i < NSIGNALS; i++) {
    if (sigaction(flush_signals[i], NULL, &previous[i]) != 0) continue;
    if (!(previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_handler == SIG_IGN) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_mask = previous[i].sa_mask;
    sa.sa_flags = SA_SIGINFO | (previous[i].sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER | SA_RESETHAND));
    sigaction(flush_signals[i], &sa, NULL);
  }
}

/* ---------------------------------------------------------------------------------- */
/* Activation                                                                         */
/* ---------------------------------------------------------------------------------- */

int ovl_capture_activate(void) {
  int s = ovl_capture_state();
  if (s == OVL_CAPTURE_CLOSING) ovl_capture_note_call_while_closing();
  if (s != OVL_CAPTURE_IDLE) return s == OVL_CAPTURE_ACTIVE;
  pthread_mutex_lock(&activation_lock);
  if (ovl_capture_state() == OVL_CAPTURE_IDLE) {
    if (config.problem[0]) ovl_warn(NULL, "%s", config.problem);
    if (foreign_cuda)
      ovl_warn(NULL, "CUDA_INJECTION64_PATH is set by another tool (%s): GPU kernels and memory operations are "
               "not captured", foreign_cuda);
    if (foreign_nvtx)
      ovl_warn(NULL, "NVTX_INJECTION64_PATH is set by another tool (%s): NVTX ranges are not captured", foreign_nvtx);
    if (!config.output_dir[0]) {  /* unusable OVL_OUTPUT: said above */
      ovl_capture_stop();
      pthread_mutex_unlock(&activation_lock);
      return 0;
    }
    ovl_hostbuf_set_limit(ACTIVE_BUFFER_BYTES);
    ovl_hostbuf_set_pressure_fn(ovl_writer_wake);
    atomic_store(&state, OVL_CAPTURE_ACTIVE);  /* before the writer starts: it may stop us */
    if (ovl_writer_start(&config) == 0) {
      install_signal_handlers();
      atexit(at_exit);
    } else {
      ovl_warn(NULL, "cannot start the trace writer thread: nothing is captured");
      ovl_capture_stop();
    }
  }
  pthread_mutex_unlock(&activation_lock);
  return ovl_capture_state() == OVL_CAPTURE_ACTIVE;
}
