/* TRACE argument expansion: see trace_files.h. */
#include "trace_files.h"

#include "base/vec.h"
#include "trace_detect.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_trace_name(const char *name) {
  return has_suffix(name, ".sqlite") || has_suffix(name, ".db") || has_suffix(name, ".json") ||
         has_suffix(name, ".json.gz");
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef OVL_VEC(char *) path_vec;

/* dir/name (dir's trailing slashes not doubled), then " (note)" when note is given. */
static int push_joined(path_vec *v, const char *dir, const char *name, const char *note, ovl_err *err) {
  size_t dn = strlen(dir);
  while (dn > 1 && dir[dn - 1] == '/') dn--;
  size_t n = dn + strlen(name) + (note ? strlen(note) + 3 : 0) + 2;
  char *p = malloc(n);
  if (!p) return ovl_oom(err, "file list");
  int slash = dn > 0 && dir[dn - 1] != '/';
  snprintf(p, n, "%.*s%s%s%s%s%s", (int)dn, dir, slash ? "/" : "", name, note ? " (" : "", note ? note : "",
           note ? ")" : "");
  if (OVL_VEC_PUSH(v, p)) {
    free(p);
    return ovl_oom(err, "file list");
  }
  return OVL_OK;
}

static int push_copy(path_vec *v, const char *dir, const char *name, ovl_err *err) {
  return push_joined(v, dir, name, NULL, err);
}

/* A file named like a trace: kept when its content is one (or cannot be read: opening it then
** says why), else listed with what it holds. */
static int add_by_content(path_vec *v, path_vec *not_traces, const char *dir, const char *name, ovl_err *err) {
  char path[4096], why[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ovl_trace_format format;
  ovl_err perr;
  ovl_err_clear(&perr);
  if (ovl_probe_trace(path, &format, why, sizeof why, &perr) != 0) return push_copy(v, dir, name, err);
  return push_joined(not_traces, dir, name, why, err);
}

/* 1 when dir/name is a regular file (following links), not a folder or a device. */
static int is_file(const char *dir, const char *name) {
  char path[4096];
  struct stat sb;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int add_directory(path_vec *v, path_vec *skipped, path_vec *not_traces, const char *dir, ovl_err *err) {
  DIR *d = opendir(dir);
  if (!d) return ovl_fail(err, OVL_EUSER, "%s: %s", dir, strerror(errno));
  size_t first = v->len, first_skipped = skipped->len, first_not = not_traces->len;
  int rc = OVL_OK;
  struct dirent *e;
  while (!rc && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (is_trace_name(e->d_name) && is_file(dir, e->d_name)) rc = add_by_content(v, not_traces, dir, e->d_name, err);
    else if (is_trace_name(e->d_name)) rc = push_copy(v, dir, e->d_name, err);
    else if (is_file(dir, e->d_name)) rc = push_copy(skipped, dir, e->d_name, err);
  }
  closedir(d);
  if (!rc) ovl_qsort(skipped->items + first_skipped, skipped->len - first_skipped, sizeof *skipped->items, cmp_str);
  if (!rc) ovl_qsort(not_traces->items + first_not, not_traces->len - first_not, sizeof *not_traces->items, cmp_str);
  if (!rc && v->len == first && not_traces->len > first_not) {
    size_t k = not_traces->len - first_not;
    rc = ovl_fail(err, OVL_EUSER, "%s: directory holds no traces: %zu file%s named like one hold%s something else, "
                                  "e.g. %s", dir, k, k == 1 ? "" : "s", k == 1 ? "s" : "", not_traces->items[first_not]);
  } else if (!rc && v->len == first) {
    size_t reports = 0;
    for (size_t i = first_skipped; i < skipped->len; i++) reports += ovl_is_nsys_report_name(skipped->items[i]);
    if (reports)
      rc = ovl_fail(err, OVL_EUSER, "%s: directory holds no trace files (*.sqlite, *.db, *.json, *.json.gz) but %zu "
                                    "Nsight Systems report%s, which ovl does not read: export each with `nsys export "
                                    "--type sqlite FILE.nsys-rep`", dir, reports, reports == 1 ? "" : "s");
    else
      rc = ovl_fail(err, OVL_EUSER, "%s: directory holds no trace files (*.sqlite, *.db, *.json, *.json.gz)", dir);
  }
  if (!rc) ovl_qsort(v->items + first, v->len - first, sizeof *v->items, cmp_str);
  return rc;
}

int ovl_expand_trace_args(char *const *args, size_t nargs, ovl_file_list *out, ovl_err *err) {
  path_vec v = {0}, skipped = {0}, not_traces = {0};
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < nargs; i++) {
    struct stat sb;
    if (stat(args[i], &sb) != 0) rc = ovl_fail(err, OVL_EUSER, "%s: %s", args[i], strerror(errno));
    else if (S_ISDIR(sb.st_mode)) rc = add_directory(&v, &skipped, &not_traces, args[i], err);
    else rc = push_copy(&v, "", args[i], err);
  }
  if (rc) {
    ovl_file_list tmp = {v.items, v.len, skipped.items, skipped.len, not_traces.items, not_traces.len};
    ovl_file_list_free(&tmp);
    return rc;
  }
  out->paths = v.items;
  out->len = v.len;
  out->skipped = skipped.items;
  out->nskipped = skipped.len;
  out->not_traces = not_traces.items;
  out->nnot_traces = not_traces.len;
  return OVL_OK;
}

/* "NAME, NAME, NAME, NAME and 3 more" into buf at *used. */
static void name_some(char *const *names, size_t n, char *buf, size_t len, size_t *used) {
  enum { NAMED = 4 };
  for (size_t i = 0; i < n && i < NAMED && *used < len; i++)
    *used += (size_t)snprintf(buf + *used, len - *used, "%s %s", i ? "," : "", names[i]);
  if (n > NAMED && *used < len) *used += (size_t)snprintf(buf + *used, len - *used, " and %zu more", n - NAMED);
}

void ovl_file_list_skipped_text(const ovl_file_list *list, char *buf, size_t len) {
  buf[0] = 0;
  if (list->nskipped == 0 && list->nnot_traces == 0) return;
  size_t reports = 0, used = (size_t)snprintf(buf, len, "warning:");
  for (size_t i = 0; i < list->nskipped; i++) reports += ovl_is_nsys_report_name(list->skipped[i]);
  if (list->nnot_traces && used < len) {
    size_t n = list->nnot_traces;
    used += (size_t)snprintf(buf + used, len - used, " skipped %zu file%s that %s not %s:", n, n == 1 ? "" : "s",
                             n == 1 ? "is" : "are", n == 1 ? "a trace" : "traces");
    name_some(list->not_traces, n, buf, len, &used);
  }
  if (list->nskipped && used < len) {
    size_t n = list->nskipped;
    used += (size_t)snprintf(buf + used, len - used, "%s skipped %zu file%s that %s not %s by name (*.sqlite, *.db, "
                             "*.json, *.json.gz):", list->nnot_traces ? ";" : "", n, n == 1 ? "" : "s",
                             n == 1 ? "is" : "are", n == 1 ? "a trace" : "traces");
    name_some(list->skipped, n, buf, len, &used);
  }
  if (reports && used < len)
    snprintf(buf + used, len - used, "; Nsight Systems reports (.nsys-rep) are read once exported: `nsys export --type "
                                     "sqlite FILE.nsys-rep`");
}

void ovl_file_list_free(ovl_file_list *list) {
  for (size_t i = 0; i < list->len; i++) free(list->paths[i]);
  free(list->paths);
  for (size_t i = 0; i < list->nskipped; i++) free(list->skipped[i]);
  free(list->skipped);
  for (size_t i = 0; i < list->nnot_traces; i++) free(list->not_traces[i]);
  free(list->not_traces);
  memset(list, 0, sizeof *list);
}
