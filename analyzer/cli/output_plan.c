/* Every output of a command checked before any input is read: see output_plan.h. */
#include "output_plan.h"

#include "cli.h"

#include "../load/trace_detect.h"
#include "../load/trace_files.h"
#include "base/safe_output.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* realpath(dirname) + "/" + basename; the path itself when its directory does not exist yet. */
static char *output_key(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
  char *real = dir ? realpath(dir, NULL) : NULL;
  free(dir);
  if (!real) return strdup(path);
  size_t n = strlen(real) + strlen(base) + 2;
  char *key = malloc(n);
  if (key) snprintf(key, n, "%s/%s", real, base);
  free(real);
  return key;
}

static int replace_traces;

void ovl_output_plan_force(int on) { replace_traces = on; }

/* An existing trace is never replaced unasked: an output name given by mistake (the first of
** the inputs, say) must not destroy it. Other existing files are replaced, as outputs are. */
static int check_not_a_trace(const char *path, ovl_err *err) {
  struct stat sb;
  if (replace_traces || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return OVL_OK;
  ovl_trace_format format;
  ovl_err perr;
  ovl_err_clear(&perr);
  if (ovl_probe_trace(path, &format, NULL, 0, &perr) != 1) return OVL_OK;
  return ovl_fail(err, OVL_EUSER, "%s: exists and is a trace (%s): not replaced; name another output, or give --force "
                                  "to replace it", path, ovl_trace_format_name(format));
}

int ovl_output_plan_add(ovl_output_plan *p, const char *path, const char *from, ovl_err *err) {
  int rc = ovl_output_check(path, err);
  if (rc) return rc;
  char *key = output_key(path);
  if (!key) return ovl_oom(err, "output plan");
  for (size_t i = 0; i < p->n; i++) {
    if (strcmp(p->keys[i], key) == 0 || ovl_same_file(p->paths[i], path)) {
      if (from && p->froms[i])
        rc = ovl_fail(err, OVL_EUSER, "%s: both %s and %s would be written to this file", path, p->froms[i], from);
      else if (strcmp(p->paths[i], path) == 0)
        rc = ovl_fail(err, OVL_EUSER, "%s: named as two outputs", path);
      else rc = ovl_fail(err, OVL_EUSER, "%s: the same file as the output %s", path, p->paths[i]);
      free(key);
      return rc;
    }
  }
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 8;
    char **paths = realloc(p->paths, cap * sizeof *paths);
    if (paths) p->paths = paths;
    char **keys = paths ? realloc(p->keys, cap * sizeof *keys) : NULL;
    if (keys) p->keys = keys;
    char **froms = keys ? realloc(p->froms, cap * sizeof *froms) : NULL;
    if (froms) p->froms = froms;
    if (!paths || !keys || !froms) {
      free(key);
      return ovl_oom(err, "output plan");
    }
    p->cap = cap;
  }
  p->froms[p->n] = from ? strdup(from) : NULL;
  if (!(p->paths[p->n] = strdup(path)) || (from && !p->froms[p->n])) {
    free(p->paths[p->n]);
    free(p->froms[p->n]);
    free(key);
    return ovl_oom(err, "output plan");
  }
  p->keys[p->n++] = key;
  return OVL_OK;
}

int ovl_output_plan_check_inputs(const ovl_output_plan *p, char *const *inputs, size_t ninputs, ovl_err *err) {
  for (size_t o = 0; o < p->n; o++)
    for (size_t i = 0; i < ninputs; i++)
      if (ovl_same_file(p->paths[o], inputs[i]))
        return ovl_fail(err, OVL_EUSER, "%s: is also an input (%s): refusing to overwrite it", p->paths[o],
                        inputs[i]);
  return OVL_OK;
}

int ovl_output_plan_check_traces(const ovl_output_plan *p, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t o = 0; !rc && o < p->n; o++) rc = check_not_a_trace(p->paths[o], err);
  return rc;
}

void ovl_output_plan_free(ovl_output_plan *p) {
  for (size_t i = 0; i < p->n; i++) {
    free(p->paths[i]);
    free(p->keys[i]);
    free(p->froms[i]);
  }
  free(p->paths);
  free(p->keys);
  free(p->froms);
  memset(p, 0, sizeof *p);
}

int ovl_cli_plan_outputs(const char *const *outputs, size_t n, char *const *args, size_t nargs) {
  ovl_err err;
  ovl_err_clear(&err);
  ovl_output_plan plan = {0};
  ovl_file_list files = {0};
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < n; i++)
    if (outputs[i]) rc = ovl_output_plan_add(&plan, outputs[i], NULL, &err);
  if (!rc && plan.n) rc = ovl_expand_trace_args(args, nargs, &files, &err);
  if (!rc) rc = ovl_output_plan_check_inputs(&plan, files.paths, files.len, &err);
  if (!rc) rc = ovl_output_plan_check_traces(&plan, &err);
  ovl_file_list_free(&files);
  ovl_output_plan_free(&plan);
  return rc ? ovl_cli_fail(&err) : 0;
}
