/*
** A trace without GPU work (no valid kernel or memop): a CPU-only profile, or a capture whose
** GPU side is missing (CUPTI not attached, CUDA activities not recorded). The job reports the
** other ranks and lists such a trace with its host side (NCCL calls, CUDA API calls) and why
** it has no GPU data, as far as the trace tells (docs/report.md, "Ranks without GPU work").
** Read through the loader (load/trace_reader.h) like every other trace.
*/
#ifndef OVL_HOST_ONLY_H
#define OVL_HOST_ONLY_H

#include "base/status.h"

#include <stdint.h>

typedef struct ovl_host_only {
  char *trace_path;        /* the file the user named */
  int64_t rank, world_size; /* OVL_NONE when unknown */
  char *hostname;          /* NULL when unknown */
  char reason[384];        /* why there is no GPU data */
  char *cupti;             /* meta.cupti of a libovl capture, else NULL */
  long collectives, api_calls;
  int64_t collective_bytes; /* sum of known sizes */
  char ops[256];           /* "12 AllReduce, 3 Broadcast" */
} ovl_host_only;

/* Reads the ovl trace at ovl_path. *is_host_only = 1 (and *out filled, named user_path) when it
** holds no valid GPU work; 0 otherwise (out untouched). */
int ovl_host_only_read(const char *ovl_path, const char *user_path, ovl_host_only *out, int *is_host_only,
                       ovl_err *err);
/* One line: "<file>: no GPU activity ...: <reason>; host side: ...". */
void ovl_host_only_describe(const ovl_host_only *h, char *buf, size_t len);
void ovl_host_only_free(ovl_host_only *h);

#endif
