/*
** Helpers for tests that build small ovl traces by hand with the real trace writer.
** Every helper aborts the test (exit 2) on a writer error: a test that cannot build its
** input must not pass.
*/
#ifndef OVL_TEST_TRACE_BUILDER_H
#define OVL_TEST_TRACE_BUILDER_H

#include "store/trace_writer.h"

typedef struct tb {
  ovl_trace_writer *w;
  int64_t next_correlation;
} tb;

/* Creates a trace at path with the required meta keys (rank 0, world_size 1). */
void tb_open(tb *b, const char *path);
/* The same for one rank of a job: meta rank, world_size, hostname and pid as given. */
void tb_open_rank(tb *b, const char *path, int rank, int world_size, const char *host, int pid);
void tb_close(tb *b);
/* A kernel; returns its correlation id. */
int64_t tb_kernel(tb *b, const char *name, int64_t start, int64_t end, int64_t device, int64_t stream);
/* A kernel with its launch dimensions (grid and block: x, y, z); returns its correlation id. */
int64_t tb_kernel_dims(tb *b, const char *name, int64_t start, int64_t end, int64_t device, int64_t stream,
                       const int64_t grid[3], const int64_t block[3]);
int64_t tb_memop(tb *b, const char *kind, int64_t start, int64_t end, int64_t device, int64_t stream, int64_t bytes);
/* A collectives row linked to the GPU work with `correlation` (OVL_NONE: no link). Returns its id. */
int64_t tb_collective(tb *b, const char *op, int64_t bytes, int64_t nranks, int64_t host_start, int64_t correlation);
/* A collectives row of communicator comm (rank `rank` of nranks, call number seq) linked to the GPU
** work with `correlation` (OVL_NONE: no link). Returns its id. */
int64_t tb_collective_in(tb *b, int64_t comm, int64_t rank, int64_t nranks, int64_t seq, const char *op, int64_t bytes,
                         int64_t host_start, int64_t correlation);
void tb_nvtx(tb *b, const char *domain, const char *name, int64_t start, int64_t end);
void tb_api(tb *b, int64_t start, int64_t end, int64_t correlation);
/* A meta key (beyond the required ones tb_open writes). */
void tb_meta(tb *b, const char *key, const char *value);
/* A temporary file path under TMPDIR (or /tmp) unique to this process: "<dir>/ovl-test-<pid>-<tag>".
** The string stays valid until exit; whatever is at the path then (a file, or a folder and
** its contents, and a database's -wal and -shm files beside it) is removed when the process
** exits. */
const char *tb_temp_path(const char *tag);

#endif
