/*
** `ovl run --html FILE`: instead of becoming COMMAND, ovl run starts it, waits for it, then
** analyses the traces it wrote (the .sqlite files of DIR that were not there before) and
** writes their page (report_html.h). COMMAND's exit status is still ovl run's.
*/
#define _GNU_SOURCE
#include "cli.h"
#include "cli_job.h"
#include "run_html.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int is_trace_name(const char *name) {
  size_t n = strlen(name);
  return n > 7 && strcmp(name + n - 7, ".sqlite") == 0;
}

/* The trace names in dir, sorted; NULL-terminated (an empty list when dir is unreadable). */
static char **list_traces(const char *dir, size_t *n) {
  *n = 0;
  char **names = calloc(1, sizeof *names);
  DIR *d = opendir(dir);
  if (!d || !names) {
    if (d) closedir(d);
    return names;
  }
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!is_trace_name(e->d_name)) continue;
    char **grown = realloc(names, (*n + 2) * sizeof *names);
    if (!grown) break;
    names = grown;
    if (!(names[*n] = strdup(e->d_name))) break;
    names[++*n] = NULL;
  }
  closedir(d);
  return names;
}

static void free_list(char **names) {
  for (size_t i = 0; names && names[i]; i++) free(names[i]);
  free(names);
}

static int listed(char **names, const char *name) {
  for (size_t i = 0; names && names[i]; i++)
    if (strcmp(names[i], name) == 0) return 1;
  return 0;
}

/* Analyses the traces of dir not in `before` and writes the page; returns the exit status. */
static int write_page(const char *dir, char **before, const char *html) {
  size_t n = 0;
  char **after = list_traces(dir, &n);
  char **paths = calloc(n + 1, sizeof *paths);
  size_t np = 0;
  for (size_t i = 0; paths && i < n; i++) {
    if (listed(before, after[i])) continue;
    if (asprintf(&paths[np], "%s/%s", dir, after[i]) < 0) break;
    np++;
  }
  int rc = 1;
  if (np == 0) {
    fprintf(stderr, "ovl: run: %s: the command wrote no trace: no page written\n", dir);
  } else {
    ovl_analysis_options opt;
    memset(&opt, 0, sizeof opt);
    ovl_cli_job j;
    const char *outputs[] = {html};  /* never one of the traces */
    rc = ovl_cli_job_run(&opt, outputs, 1, paths, np, &j);
    if (!rc) {
      rc = ovl_cli_write_html(&j, html, dir, NAN, NAN);
      ovl_cli_job_free(&j);
    }
  }
  for (size_t i = 0; i < np; i++) free(paths[i]);
  free(paths);
  free_list(after);
  return rc;
}

int ovl_run_and_write_html(char **command, const char *dir, const char *html) {
  size_t n;
  char **before = list_traces(dir, &n);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "ovl: run: cannot start %s: %s\n", command[0], strerror(errno));
    free_list(before);
    return 1;
  }
  if (pid == 0) {
    execvp(command[0], command);
    fprintf(stderr, "ovl: run: %s: %s\n", command[0], strerror(errno));
    _exit(127);
  }
  /* Like system(): a Ctrl-C is the command's to handle; ovl run waits and writes the page. */
  struct sigaction ign, old_int, old_quit;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int page = write_page(dir, before, html);
  free_list(before);
  return rc ? rc : page;
}
