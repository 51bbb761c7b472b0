/*
** Collective calls an importer has found (NCCL kernels with their PyTorch arguments, NCCL
** NVTX ranges), held until the whole input has been read, then completed and written as
** collectives + collective_launches rows:
**   * host_start / host_end / tid, when unknown, come from the first api row with the same
**     correlation id (read back from the trace being written, so no launch is kept in
**     memory while streaming; the Kineto importer catches them as it streams where it can
**     tell which row that is, kineto_import.c);
**   * seq, when the source did not give one, numbers the calls of each communicator from 0
**     in launch order (host launch, else GPU start);
**   * rows are written in that order, each one a row the reader accepts (an operation nothing
**     names is written "Unknown").
** Memory is proportional to the number of collective calls, not to the trace size.
*/
#ifndef OVL_IMPORT_COLLECTIVES_H
#define OVL_IMPORT_COLLECTIVES_H

#include "base/status.h"
#include "base/vec.h"
#include "store/trace_writer.h"

typedef struct ovl_found_coll {
  ovl_collective_row row;   /* text fields must be static strings; id is ignored */
  int64_t correlation;      /* GPU work that executed the call; OVL_NONE when unknown */
  int64_t gpu_start;        /* for ordering when host_start is unknown; OVL_NONE when unknown */
  size_t found;             /* position in the order found (set by ovl_found_colls_add) */
} ovl_found_coll;

typedef struct ovl_found_colls {
  OVL_VEC(ovl_found_coll) items;
} ovl_found_colls;

int ovl_found_colls_add(ovl_found_colls *fc, const ovl_found_coll *c, ovl_err *err);
/* Room for exactly n calls, to be placed with ovl_found_colls_set (then set items.len = n).
** Returns 0, or -1 when memory runs out. */
int ovl_found_colls_reserve(ovl_found_colls *fc, size_t n);
/* Places call c as the i-th found (i < the reserved n). */
void ovl_found_colls_set(ovl_found_colls *fc, size_t i, const ovl_found_coll *c);
/* Fills missing host times from the api rows of the trace at `trace_path`, which `w` is
** writing (its rows so far are committed first). */
int ovl_found_colls_resolve_launches(ovl_found_colls *fc, ovl_trace_writer *w, const char *trace_path,
                                     ovl_err *err);
/* Numbers calls without seq, writes every call and its launch link. Returns the row count in *written. */
int ovl_found_colls_write(ovl_found_colls *fc, ovl_trace_writer *w, long *written, ovl_err *err);
void ovl_found_colls_free(ovl_found_colls *fc);

#endif
