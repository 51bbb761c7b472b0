/*
** The CUDA API rows of the traces an export analyses, read on a thread of their own while
** the analysis runs: the analysis does not need them all (it reads launches only, for step
** projection), the export's host pass does, and on a machine with a second CPU that read
** then costs no wall time. The rows are kept as varint records (varbuf.h, ~8 B a row: the
** changes from the row before) and the host pass draws from them (ovl_api_capture_replay)
** instead of reading the table after the analysis.
**
** The correlations of the rows are kept too (corrs): the launches whose flows the GPU pass
** ends when the host pass draws beside it (export_file.c). OVL_EXPORT_THREADS=0 forbids the
** thread (the host pass reads the table itself, after the analysis, and draws before the GPU
** pass: the bytes of a one-thread export), =1 forces it; by default it runs where two CPUs or more
** are online. Only traces named as files that open as ovl traces are read; each is matched
** to the ovl trace the analysis read by device and inode, so a trace the job converted
** (Kineto, Nsight Systems) is read by the host pass as before. The records of all files
** stop at OVL_API_CAPTURE_BUDGET bytes: past that a file is not kept (read again after).
*/
#ifndef OVL_API_CAPTURE_H
#define OVL_API_CAPTURE_H

#include "../load/trace_reader.h"
#include "idset.h"
#include "varbuf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OVL_API_CAPTURE_BUDGET ((size_t)256 << 20)

typedef struct ovl_api_capture {
  dev_t dev;
  ino_t ino;
  ovl_varbuf records;
  size_t nrows;
  size_t charged;          /* chunk bytes taken from the reader's budget */
  int complete;            /* every valid row is held */
  ovl_idset corrs;         /* the rows' correlation ids (>= 0): the launches a flow can start at */
  int64_t prev_start, prev_tid, prev_corr;  /* the encoder's row before */
  struct ovl_api_capture *next;
} ovl_api_capture;

typedef struct ovl_api_reader {
  pthread_t thread;
  int running;             /* started and not joined */
  char **paths;
  size_t npaths;
  size_t budget_left;
  atomic_int stop;         /* the analysis is done: start no other file */
  ovl_api_capture *files;  /* the thread's until joined */
} ovl_api_reader;

/* Whether the reader thread should run (OVL_EXPORT_THREADS, the online CPUs). */
int ovl_api_reader_wanted(void);
/* Starts reading the api rows of the files among paths on a thread. Best effort: when the
** thread or memory is missing nothing is read (the host pass reads the tables itself). */
void ovl_api_reader_start(ovl_api_reader *r, char *const *paths, size_t npaths);
/* Waits for the thread (no-op when none runs) to finish the file it reads, if any: files it
** has not started are left to the host pass (a job of many files analysed on many CPUs must
** not wait for one thread to read them all). Call before ovl_api_reader_find. */
void ovl_api_reader_join(ovl_api_reader *r);
/* The complete capture of the ovl trace at path, or NULL. */
const ovl_api_capture *ovl_api_reader_find(const ovl_api_reader *r, const char *path);
/* Calls fn for every row held, in the table's order, as ovl_trace_scan_api(t, 0, ...)
** would. A non-zero return from fn stops and is returned. */
int ovl_api_capture_replay(const ovl_api_capture *c, ovl_api_fn fn, void *ctx);
/* Joins the thread and frees what it read. */
void ovl_api_reader_free(ovl_api_reader *r);

#endif
