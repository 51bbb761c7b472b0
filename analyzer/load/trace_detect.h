/*
** Recognises a trace file by its content, never by its name.
*/
#ifndef OVL_TRACE_DETECT_H
#define OVL_TRACE_DETECT_H

#include "base/status.h"

typedef enum ovl_trace_format {
  OVL_FORMAT_OVL_SQLITE,   /* an ovl trace store (schema/ovl.sql) */
  OVL_FORMAT_NSYS_SQLITE,  /* an Nsight Systems `nsys export --type sqlite` database */
  OVL_FORMAT_KINETO_JSON,  /* a PyTorch profiler (Kineto) Chrome-JSON trace, maybe gzipped */
} ovl_trace_format;

/* Sets *format, or fails with "<path>: <why it is not a trace>". */
int ovl_detect_format(const char *path, ovl_trace_format *format, ovl_err *err);

#endif
