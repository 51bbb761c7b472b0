/*
** Recognises a trace file by its content, never by its name.
*/
#ifndef OVL_TRACE_DETECT_H
#define OVL_TRACE_DETECT_H

#include "base/status.h"

#include <stddef.h>

typedef enum ovl_trace_format {
  OVL_FORMAT_OVL_SQLITE,   /* an ovl trace store (schema/ovl.sql) */
  OVL_FORMAT_NSYS_SQLITE,  /* an Nsight Systems `nsys export --type sqlite` database */
  OVL_FORMAT_KINETO_JSON,  /* a PyTorch profiler (Kineto) Chrome-JSON trace, maybe gzipped */
} ovl_trace_format;

/* What a file's first bytes say it is; OVL_HEAD_BYTES of them are enough. */
#define OVL_HEAD_BYTES 64
typedef enum ovl_head_kind {
  OVL_HEAD_NONE,     /* no trace starts like this */
  OVL_HEAD_SQLITE,   /* an SQLite database (ovl or Nsight Systems: its tables tell) */
  OVL_HEAD_GZIP,     /* gzip: Kineto JSON compressed */
  OVL_HEAD_JSON,     /* a JSON object (after an optional byte order mark and white space) */
} ovl_head_kind;
ovl_head_kind ovl_detect_head(const unsigned char *head, size_t n);

/* 1 when a file's name is an Nsight Systems report's (.nsys-rep, or .qdrep of older releases):
** a format ovl does not read, whose SQLite export (`nsys export --type sqlite`) it does. */
int ovl_is_nsys_report_name(const char *path);

/* Sets *format, or fails with "<path>: <why it is not a trace>" (for an Nsight Systems report:
** how to export it). */
int ovl_detect_format(const char *path, ovl_trace_format *format, ovl_err *err);

#endif
