/*
** Runs a shell command for CLI tests and captures its exit status, stdout and stderr.
*/
#ifndef OVL_TEST_RUN_CMD_H
#define OVL_TEST_RUN_CMD_H

typedef struct cmd_result {
  int status;      /* exit status, or -1 when it did not exit normally (signal, hang) */
  char *out, *err; /* captured text, NUL-terminated; free with cmd_free */
} cmd_result;

/* Runs `command` with /bin/sh under a 60 s limit. */
cmd_result run_cmd(const char *command);
/* Runs `'binary' ARGS`, ARGS formatted like printf (at most 8 KiB), as run_cmd does. */
cmd_result run_tool(const char *binary, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmd_free(cmd_result *r);
/* Number of lines in s (a final line without newline counts). */
int count_lines(const char *s);

#endif
