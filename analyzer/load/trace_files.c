/* TRACE argument expansion: see trace_files.h. */
#include "trace_files.h"

#include "base/vec.h"

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

static int push_copy(path_vec *v, const char *dir, const char *name, ovl_err *err) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (!p) return ovl_oom(err, "file list");
  if (dir[0]) snprintf(p, n, "%s/%s", dir, name);
  else snprintf(p, n, "%s", name);
  if (OVL_VEC_PUSH(v, p)) {
    free(p);
    return ovl_oom(err, "file list");
  }
  return OVL_OK;
}

static int add_directory(path_vec *v, const char *dir, ovl_err *err) {
  DIR *d = opendir(dir);
  if (!d) return ovl_fail(err, OVL_EUSER, "%s: %s", dir, strerror(errno));
  size_t first = v->len;
  int rc = OVL_OK;
  struct dirent *e;
  while (!rc && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !is_trace_name(e->d_name)) continue;
    rc = push_copy(v, dir, e->d_name, err);
  }
  closedir(d);
  if (!rc && v->len == first)
    rc = ovl_fail(err, OVL_EUSER, "%s: directory holds no trace files (*.sqlite, *.db, *.json, *.json.gz)", dir);
  if (!rc) ovl_qsort(v->items + first, v->len - first, sizeof *v->items, cmp_str);
  return rc;
}

int ovl_expand_trace_args(char *const *args, size_t nargs, ovl_file_list *out, ovl_err *err) {
  path_vec v = {0};
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < nargs; i++) {
    struct stat sb;
    if (stat(args[i], &sb) != 0) rc = ovl_fail(err, OVL_EUSER, "%s: %s", args[i], strerror(errno));
    else if (S_ISDIR(sb.st_mode)) rc = add_directory(&v, args[i], err);
    else rc = push_copy(&v, "", args[i], err);
  }
  if (rc) {
    for (size_t i = 0; i < v.len; i++) free(v.items[i]);
    OVL_VEC_FREE(&v);
    return rc;
  }
  out->paths = v.items;
  out->len = v.len;
  return OVL_OK;
}

void ovl_file_list_free(ovl_file_list *list) {
  for (size_t i = 0; i < list->len; i++) free(list->paths[i]);
  free(list->paths);
  list->paths = NULL;
  list->len = 0;
}
