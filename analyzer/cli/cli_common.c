/* Shared command-line helpers: see cli.h. */
#include "cli.h"

#include "../job/job.h"
#include "base/text_clean.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Messages name files, and names from directories or traces may hold escape sequences or
** malformed UTF-8: what reaches the terminal is cleaned. */
static void print_line(const char *msg) {
  char clean[3 * sizeof ((ovl_err *)0)->msg];
  ovl_text_clean_into(msg, clean, sizeof clean);
  fprintf(stderr, "ovl: %s\n", clean);
}

int ovl_cli_fail(const ovl_err *err) {
  print_line(err->msg[0] ? err->msg : "internal error");
  return err->code ? err->code : OVL_EINTERNAL;
}

int ovl_cli_usage(const char *verb, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "ovl: %s: %s (see 'ovl %s --help')\n", verb, msg, verb);
  return OVL_EUSER;
}

int ovl_cli_bad_option(const char *verb, char **argv) {
  const char *arg = optind > 0 ? argv[optind - 1] : "?";
  if (optopt && optopt != '?') return ovl_cli_usage(verb, "option '-%c' is unknown or lacks its value", optopt);
  return ovl_cli_usage(verb, "option '%s' is unknown or lacks its value", arg);
}

int ovl_cli_int(const char *verb, const char *flag, const char *text, long min, long max, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end || errno == ERANGE || v < min || v > max)
    return ovl_cli_usage(verb, "%s '%s': expected an integer from %ld to %ld", flag, text, min, max);
  *out = v;
  return 0;
}

void ovl_cli_progress(void *ctx, size_t done, size_t total, const char *path) {
  (void)ctx;
  (void)path;
  if (total < 2 || !isatty(STDERR_FILENO)) return;
  fprintf(stderr, "\rovl: analysed %zu/%zu traces", done, total);
  if (done == total) fputc('\n', stderr);
}

void ovl_cli_print_warnings(const struct ovl_job *job) {
  for (size_t i = 0; i < job->nwarnings; i++) print_line(job->warnings[i]);
}
