/*
** The Kineto (PyTorch profiler) importer: one Chrome-JSON trace (.json or .json.gz, one
** rank) streamed into an open ovl trace writer. docs/import.md gives the full mapping:
**   kernel / gpu_memcpy / gpu_memset events    -> kernels, memops (pid = device, tid = stream)
**   cuda_runtime / cuda_driver events          -> api (correlation links launches to GPU work)
**   user_annotation, ProfilerStep#N            -> nvtx (default domain: steps are recognised)
**   gpu_user_annotation                        -> nvtx, domain "gpu_user_annotation"
**   NCCL kernels (+ record_param_comms args)   -> collectives + collective_launches
**   distributedInfo, baseTimeNanoseconds, ...  -> meta
** Timestamps are integer ns relative to baseTimeNanoseconds when the trace has one (meta
** realtime_offset_ns holds it), else absolute (offset 0).
*/
#ifndef OVL_KINETO_IMPORT_H
#define OVL_KINETO_IMPORT_H

#include "base/status.h"
#include "store/trace_writer.h"
#include "import_options.h"

/* Reads `path` into w, which writes `out_path`. Fails with "<path>: <problem>". */
int ovl_kineto_import(const char *path, ovl_trace_writer *w, const char *out_path, const ovl_import_options *opt,
                      ovl_import_stats *stats, ovl_err *err);

#endif
