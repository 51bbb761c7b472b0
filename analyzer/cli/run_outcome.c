/* What `ovl run` says once COMMAND has ended: see run_outcome.h. */
#define _GNU_SOURCE
#include "run_outcome.h"

#include "cli.h"
#include "cli_job.h"

#include "base/text_clean.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMED_TRACES 4

static int is_trace_name(const char *name) {
  size_t n = strlen(name);
  return n > 7 && strcmp(name + n - 7, ".sqlite") == 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **ovl_run_list_traces(const char *dir) {
  size_t n = 0;
  char **names = calloc(1, sizeof *names);
  DIR *d = names ? opendir(dir) : NULL;
  if (!d) return names;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!is_trace_name(e->d_name)) continue;
    char **grown = realloc(names, (n + 2) * sizeof *names);
    char *name = grown ? strdup(e->d_name) : NULL;
    if (grown) names = grown;
    if (!name) {
      closedir(d);
      ovl_run_free_names(names);
      return NULL;
    }
    names[n++] = name;
    names[n] = NULL;
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_name);
  return names;
}

void ovl_run_free_names(char **names) {
  for (size_t i = 0; names && names[i]; i++) free(names[i]);
  free(names);
}

static int listed(char **names, const char *name) {
  for (size_t i = 0; names && names[i]; i++)
    if (strcmp(names[i], name) == 0) return 1;
  return 0;
}

static void say_written(const char *dir, char **fresh, size_t n) {
  char line[4096], clean[3 * sizeof line];
  size_t used = (size_t)snprintf(line, sizeof line, "wrote %zu trace%s in %s:", n, n == 1 ? "" : "s", dir);
  for (size_t i = 0; i < n && i < NAMED_TRACES && used < sizeof line; i++)
    used += (size_t)snprintf(line + used, sizeof line - used, "%s %s", i ? "," : "", fresh[i]);
  if (n > NAMED_TRACES && used < sizeof line) snprintf(line + used, sizeof line - used, " and %zu more", n - NAMED_TRACES);
  ovl_text_clean_into(line, clean, sizeof clean);
  fprintf(stderr, "ovl: run: %s\n", clean);
}

static void say_none(const char *dir) {
  const char *disabled = getenv("OVL_DISABLE");
  if (disabled && *disabled && strcmp(disabled, "0") != 0)
    fprintf(stderr, "ovl: run: no trace written in %s: OVL_DISABLE is set\n", dir);
  else
    fprintf(stderr, "ovl: run: no trace written in %s: no process of the command used CUDA or NCCL (or none could "
                    "preload libovl.so: static or set-user-ID programs); OVL_LOG=debug makes each process say why it "
                    "wrote none\n", dir);
}

/* The page of the traces paths[0..n): returns the exit status. */
static int write_page(char **paths, size_t n, const char *dir, const char *html) {
  ovl_analysis_options opt;
  memset(&opt, 0, sizeof opt);
  ovl_cli_job j;
  const char *outputs[] = {html};  /* never one of the traces */
  int rc = ovl_cli_job_run(&opt, outputs, 1, paths, n, &j);
  if (!rc) {
    rc = ovl_cli_write_html(&j, html, dir, NAN, NAN);
    ovl_cli_job_free(&j);
  }
  return rc;
}

int ovl_run_outcome(const char *dir, char **before, const char *html, int quiet) {
  char **after = ovl_run_list_traces(dir);
  size_t total = 0, n = 0;
  for (size_t i = 0; after && after[i]; i++) total++;
  char **fresh = calloc(total + 1, sizeof *fresh), **paths = calloc(total + 1, sizeof *paths);
  int rc = 1;
  if (!after || !fresh || !paths) {
    fprintf(stderr, "ovl: run: out of memory listing %s\n", dir);
    goto done;
  }
  for (size_t i = 0; i < total; i++) {
    if (listed(before, after[i])) continue;
    if (asprintf(&paths[n], "%s/%s", dir, after[i]) < 0) {
      paths[n] = NULL;
      fprintf(stderr, "ovl: run: out of memory listing %s\n", dir);
      goto done;
    }
    fresh[n++] = after[i];
  }
  if (!quiet && n) say_written(dir, fresh, n);
  if (!quiet && !n) say_none(dir);
  rc = 0;
  if (html && !n) {
    fprintf(stderr, "ovl: run: %s: the command wrote no trace: no page written\n", html);
    rc = 1;
  } else if (html) {
    rc = write_page(paths, n, dir, html);
  }
done:
  for (size_t i = 0; paths && i < n; i++) free(paths[i]);
  free(paths);
  free(fresh);
  ovl_run_free_names(after);
  return rc;
}
