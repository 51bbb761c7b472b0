/* Where libovl looks for CUPTI: see cupti_locate.h. */
#include "cupti_locate.h"

#include <stdio.h>
#include <string.h>

typedef struct list {
  ovl_cupti_candidate *out;
  size_t n, max;
} list;

static void add(list *l, const char *path, const char *how, int only_if_loaded) {
  if (l->n >= l->max || !path[0]) return;
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->out[i].path, path) == 0 && l->out[i].only_if_loaded == only_if_loaded) return;
  ovl_cupti_candidate *c = &l->out[l->n];
  if ((size_t)snprintf(c->path, sizeof c->path, "%s", path) >= sizeof c->path) return;  /* too long to try */
  snprintf(c->how, sizeof c->how, "%s", how);
  c->only_if_loaded = only_if_loaded;
  l->n++;
}

/* Removes "x/.." pairs (lexically: the places are only tried, a wrong guess costs nothing). */
static void collapse_dotdot(char *path) {
  char *out = path;
  for (const char *p = path; *p;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *prev = out > path ? out - 1 : NULL;  /* out ends with '/' or is the start */
    if (n == 2 && p[0] == '.' && p[1] == '.' && prev) {
      char *cut = prev;
      while (cut > path && cut[-1] != '/') cut--;
      if (cut < prev && !(prev - cut == 2 && cut[0] == '.' && cut[1] == '.')) {
        out = cut;
        p += n + (end ? 1 : 0);
        continue;
      }
    }
    memmove(out, p, n);
    out += n;
    if (end) *out++ = '/';
    p += n + (end ? 1 : 0);
  }
  *out = 0;
}

static void add_in(list *l, const char *dir, const char *sub, const char *soname, const char *how) {
  char path[OVL_CUPTI_PATH_MAX];
  if ((size_t)snprintf(path, sizeof path, "%s%s/%s", dir, sub, soname) >= sizeof path) return;
  collapse_dotdot(path);
  add(l, path, how, 0);
}

static int ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The loaded objects whose directory may hold the matching CUPTI. */
static int is_cuda_library(const char *base) {
  static const char *const prefixes[] = {"libcudart.so", "libnccl", "libcublas", "libtorch_cuda"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

/* dir of a path, with dir's length; 0 when the path has no directory. */
static size_t dir_of(const char *path, char *dir, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash || (size_t)(slash - path) >= size) return 0;
  size_t n = (size_t)(slash - path);
  memcpy(dir, path, n);
  dir[n] = 0;
  return n;
}

static void beside(list *l, const char *lib, const char *soname) {
  char dir[OVL_CUPTI_PATH_MAX], how[160];
  const char *base = strrchr(lib, '/');
  size_t n;
  if (!base || !is_cuda_library(base + 1) || !(n = dir_of(lib, dir, sizeof dir))) return;
  snprintf(how, sizeof how, "beside %s", base + 1);
  add_in(l, dir, "", soname, how);
  /* A pip wheel (<site-packages>/nvidia/<package>/lib): CUDA 13's wheels share nvidia/cu13/lib,
  ** CUDA 12's CUPTI is nvidia/cuda_cupti/lib. PyTorch's torch/lib: the wheels beside torch. */
  if (strstr(dir, "/nvidia/") && ends_with(dir, n, "/lib")) {
    add_in(l, dir, "/../../cu13/lib", soname, how);
    add_in(l, dir, "/../../cuda_cupti/lib", soname, how);
  } else if (ends_with(dir, n, "/torch/lib")) {
    add_in(l, dir, "/../../nvidia/cu13/lib", soname, how);
    add_in(l, dir, "/../../nvidia/cuda_cupti/lib", soname, how);
  } else if (ends_with(dir, n, "/lib64") || ends_with(dir, n, "/lib")) {  /* a toolkit: extras/CUPTI/lib64 */
    add_in(l, dir, "/../extras/CUPTI/lib64", soname, how);
  }
}

static void toolkit(list *l, const char *root, const char *soname, const char *how) {
  if (!root || !root[0]) return;
  static const char *const subs[] = {"/extras/CUPTI/lib64", "/lib64", "/lib"};
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) add_in(l, root, subs[i], soname, how);
}

size_t ovl_cupti_candidates(const ovl_cupti_search *s, ovl_cupti_candidate *out, size_t max) {
  list l = {out, 0, max};
  if (s->explicit_path && s->explicit_path[0]) {
    add(&l, s->explicit_path, "OVL_CUPTI_LIBRARY", 0);
    return l.n;
  }
  add(&l, s->soname, "already loaded in the process", 1);
  for (size_t i = 0; i < s->nloaded; i++)
    if (s->loaded[i]) beside(&l, s->loaded[i], s->soname);
  add(&l, s->soname, "the loader's search path", 0);
  toolkit(&l, s->cuda_home, s->soname, "CUDA_HOME");
  toolkit(&l, s->cuda_path, s->soname, "CUDA_PATH");
  toolkit(&l, "/usr/local/cuda", s->soname, "the default toolkit");
  if (s->build_path && s->build_path[0]) add(&l, s->build_path, "the build's CUPTI", 0);
  return l.n;
}
