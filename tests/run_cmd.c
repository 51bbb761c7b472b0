/* Command runner for CLI tests: see run_cmd.h. */
#include "run_cmd.h"

#include "trace_builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!buf) return strdup("");
  buf[got] = 0;
  return buf;
}

cmd_result run_cmd(const char *command) {
  char out_path[512], err_path[512];
  snprintf(out_path, sizeof out_path, "%s", tb_temp_path("cmd.out"));
  snprintf(err_path, sizeof err_path, "%s", tb_temp_path("cmd.err"));
  size_t len = strlen(command) + 2 * sizeof out_path + 64;
  char *full = malloc(len);
  snprintf(full, len, "timeout 60 %s >'%s' 2>'%s'", command, out_path, err_path);
  int st = system(full);
  free(full);
  cmd_result r;
  r.status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  if (r.status == 124) r.status = -1;  /* timeout: a hang */
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  remove(out_path);
  remove(err_path);
  return r;
}

void cmd_free(cmd_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

int count_lines(const char *s) {
  int n = 0;
  for (const char *p = s; *p; p++) n += *p == '\n';
  if (*s && s[strlen(s) - 1] != '\n') n++;
  return n;
}

cmd_result run_tool(const char *binary, const char *fmt, ...) {
  char args[8192], cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s", binary, args);
  return run_cmd(cmd);
}
