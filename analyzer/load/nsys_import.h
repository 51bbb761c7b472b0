/*
** The Nsight Systems importer: an `nsys export --type sqlite` database, recognised by its
** tables, read into an open ovl trace writer. docs/import.md gives the mapping:
**   CUPTI_ACTIVITY_KIND_KERNEL            -> kernels (name: demangledName, else shortName)
**   CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET  -> memops (copyKind -> HtoD, DtoH, ...; memset)
**   CUPTI_ACTIVITY_KIND_RUNTIME           -> api
**   NVTX_EVENTS ranges and marks          -> nvtx (domain names from the domain-create events)
**   NVTX ranges of the domain "NCCL"      -> collectives (op from the range name; size,
**                                            communicator, root/peer from NCCL's payload
**                                            when the export carries it as JSON text),
**                                            linked to the NCCL kernels they launched
** Timestamps stay in the export's nanoseconds; thread ids are the low 24 bits of globalTid.
** An export of several processes (e.g. every rank of `nsys profile torchrun ...`) is read one
** process at a time: each becomes its own ovl trace, as if captured separately.
*/
#ifndef OVL_NSYS_IMPORT_H
#define OVL_NSYS_IMPORT_H

#include "base/status.h"
#include "store/trace_writer.h"
#include "import_options.h"

/* The processes with GPU activity in the export, in pid order (*n = 0 when none). Caller frees. */
int ovl_nsys_processes(const char *path, int64_t **pids, size_t *n, ovl_err *err);
/* Reads the rows of process `pid` (OVL_NONE: every row) into w. */
int ovl_nsys_import(const char *path, int64_t pid, ovl_trace_writer *w, ovl_import_stats *stats, ovl_err *err);

#endif
