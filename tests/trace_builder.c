/* Test trace builder: see trace_builder.h. */
#include "trace_builder.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void ok(int rc, const ovl_err *err) {
  if (rc) {
    fprintf(stderr, "trace builder: %s\n", err->msg);
    exit(2);
  }
}

void tb_open_rank(tb *b, const char *path, int rank, int world_size, const char *host, int pid) {
  ovl_err err = {0};
  char r[16], w[16], p[16];
  snprintf(r, sizeof r, "%d", rank);
  snprintf(w, sizeof w, "%d", world_size);
  snprintf(p, sizeof p, "%d", pid);
  b->next_correlation = 1;
  ok(ovl_tw_open(&b->w, path, &err), &err);
  ok(ovl_tw_meta(b->w, "rank", r, &err), &err);
  ok(ovl_tw_meta(b->w, "world_size", w, &err), &err);
  ok(ovl_tw_meta(b->w, "hostname", host, &err), &err);
  ok(ovl_tw_meta(b->w, "pid", p, &err), &err);
  ok(ovl_tw_meta(b->w, "clock", "test", &err), &err);
}

void tb_open(tb *b, const char *path) { tb_open_rank(b, path, 0, 1, "testhost", 42); }

void tb_meta(tb *b, const char *key, const char *value) {
  ovl_err err = {0};
  ok(ovl_tw_meta(b->w, key, value, &err), &err);
}

void tb_close(tb *b) {
  ovl_err err = {0};
  ok(ovl_tw_close(b->w, &err), &err);
  b->w = NULL;
}

int64_t tb_kernel(tb *b, const char *name, int64_t start, int64_t end, int64_t device, int64_t stream) {
  ovl_err err = {0};
  int64_t id;
  ok(ovl_tw_intern(b->w, name, &id, &err), &err);
  ovl_kernel_row k = {start, end, device, stream, b->next_correlation++, id,
                      {OVL_NONE, OVL_NONE, OVL_NONE}, {OVL_NONE, OVL_NONE, OVL_NONE}};
  ok(ovl_tw_kernel(b->w, &k, &err), &err);
  return k.correlation;
}

int64_t tb_kernel_dims(tb *b, const char *name, int64_t start, int64_t end, int64_t device, int64_t stream,
                       const int64_t grid[3], const int64_t block[3]) {
  ovl_err err = {0};
  int64_t id;
  ok(ovl_tw_intern(b->w, name, &id, &err), &err);
  ovl_kernel_row k = {start, end, device, stream, b->next_correlation++, id,
                      {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}};
  ok(ovl_tw_kernel(b->w, &k, &err), &err);
  return k.correlation;
}

int64_t tb_memop(tb *b, const char *kind, int64_t start, int64_t end, int64_t device, int64_t stream, int64_t bytes) {
  ovl_err err = {0};
  ovl_memop_row m = {start, end, device, stream, b->next_correlation++, kind, bytes};
  ok(ovl_tw_memop(b->w, &m, &err), &err);
  return m.correlation;
}

int64_t tb_collective(tb *b, const char *op, int64_t bytes, int64_t nranks, int64_t host_start, int64_t correlation) {
  ovl_err err = {0};
  static int64_t seq;
  ovl_collective_row c = {OVL_NONE, 7, 0, nranks, seq++, op, bytes / 4, "Float32", bytes, "Sum", -1, 0, OVL_NONE,
                          host_start, host_start == OVL_NONE ? OVL_NONE : host_start + 10, 1, OVL_NONE};
  int64_t id;
  ok(ovl_tw_collective(b->w, &c, &id, &err), &err);
  if (correlation != OVL_NONE) ok(ovl_tw_launch(b->w, id, correlation, &err), &err);
  return id;
}

int64_t tb_collective_in(tb *b, int64_t comm, int64_t rank, int64_t nranks, int64_t seq, const char *op, int64_t bytes,
                         int64_t host_start, int64_t correlation) {
  ovl_err err = {0};
  ovl_collective_row c = {OVL_NONE, comm, rank, nranks, seq, op, bytes / 4, "Float32", bytes, "Sum", -1, 0, OVL_NONE,
                          host_start, host_start == OVL_NONE ? OVL_NONE : host_start + 10, 1, OVL_NONE};
  int64_t id;
  ok(ovl_tw_collective(b->w, &c, &id, &err), &err);
  if (correlation != OVL_NONE) ok(ovl_tw_launch(b->w, id, correlation, &err), &err);
  return id;
}

void tb_nvtx(tb *b, const char *domain, const char *name, int64_t start, int64_t end) {
  ovl_err err = {0};
  ovl_nvtx_row r = {start, end, 1, domain, name};
  ok(ovl_tw_nvtx(b->w, &r, &err), &err);
}

void tb_api(tb *b, int64_t start, int64_t end, int64_t correlation) {
  ovl_err err = {0};
  int64_t id;
  ok(ovl_tw_intern(b->w, "cudaLaunchKernel", &id, &err), &err);
  ovl_api_row r = {start, end, 1, correlation, id};
  ok(ovl_tw_api(b->w, &r, &err), &err);
}

/* Every temporary path handed out, removed (with what it holds) when the process that
** asked for them exits: tests need not track their files, and none is left behind. */
static char **temp_paths;
static size_t ntemp_paths;
static pid_t temp_owner;

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char child[4096];
      snprintf(child, sizeof child, "%s/%s", path, e->d_name);
      remove_tree(child);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void remove_temp_paths(void) {
  if (getpid() != temp_owner) return;  /* a fork()ed child exiting leaves its parent's files */
  for (size_t i = 0; i < ntemp_paths; i++) {
    remove_tree(temp_paths[i]);
    /* A database left in WAL mode (a test's reader still connected) keeps its companions. */
    char side[600];
    snprintf(side, sizeof side, "%s-wal", temp_paths[i]);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", temp_paths[i]);
    remove(side);
    free(temp_paths[i]);
  }
  free(temp_paths);
  temp_paths = NULL;
  ntemp_paths = 0;
}

const char *tb_temp_path(const char *tag) {
  char path[512];
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/ovl-test-%d-%s", dir && *dir ? dir : "/tmp", (int)getpid(), tag);
  for (size_t i = 0; i < ntemp_paths; i++)
    if (strcmp(temp_paths[i], path) == 0) return temp_paths[i];
  if (temp_owner != getpid()) {  /* first use in this process */
    temp_owner = getpid();
    ntemp_paths = 0;  /* a fork()ed child's inherited list is its parent's to remove */
    temp_paths = NULL;
    atexit(remove_temp_paths);
  }
  char **grown = realloc(temp_paths, (ntemp_paths + 1) * sizeof *grown);
  char *copy = strdup(path);
  if (!grown || !copy) {
    fprintf(stderr, "trace builder: out of memory\n");
    exit(2);
  }
  temp_paths = grown;
  temp_paths[ntemp_paths] = copy;
  return temp_paths[ntemp_paths++];
}
