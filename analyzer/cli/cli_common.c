/* Shared command-line helpers: see cli.h. */
#include "cli.h"

#include "../job/job.h"
#include "base/text_clean.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Messages name files, and names from directories or traces may hold escape sequences or
** malformed UTF-8: what reaches the terminal is cleaned. */
static void print_line(const char *msg) {
  char clean[3 * sizeof ((ovl_err *)0)->msg];
  ovl_text_clean_into(msg, clean, sizeof clean);
  ovl_cli_progress_clear();
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
  ovl_cli_progress_clear();
  fprintf(stderr, "ovl: %s: %s (see 'ovl %s --help')\n", verb, msg, verb);
  return OVL_EUSER;
}

int ovl_cli_bad_option(const char *verb, int c, char **argv) {
  /* getopt_long has moved optind past a long option and past the last letter of a cluster of
  ** short ones; optopt holds a short option's letter, a long option's value, or 0 (unknown). */
  const char *arg = optind > 0 && argv[optind - 1] ? argv[optind - 1] : "";
  int is_long = strncmp(arg, "--", 2) == 0 && (c == ':' || optopt == 0 || optopt >= 256 || strchr(arg, '='));
  int name_len = (int)strcspn(arg, "=");
  if (is_long && c == ':') return ovl_cli_usage(verb, "option '%.*s' needs a value", name_len, arg);
  if (is_long && optopt) return ovl_cli_usage(verb, "option '%.*s' takes no value", name_len, arg);
  if (is_long) return ovl_cli_usage(verb, "option '%.*s' is unknown", name_len, arg);
  if (c == ':') return ovl_cli_usage(verb, "option '-%c' needs a value", optopt);
  return ovl_cli_usage(verb, "option '-%c' is unknown", optopt > 32 && optopt < 127 ? optopt : '?');
}

int ovl_cli_once(const char *verb, const char *flag, const char **slot, const char *value) {
  if (*slot) return ovl_cli_usage(verb, "%s given twice ('%s', then '%s'): give one", flag, *slot, value);
  *slot = value;
  return 0;
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

void ovl_cli_print_warnings(const struct ovl_job *job) {
  for (size_t i = 0; i < job->nwarnings; i++) print_line(job->warnings[i]);
}
