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

/* "ovl", "Kineto JSON", "Nsight Systems": the format's name in messages. */
const char *ovl_trace_format_name(ovl_trace_format f);

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

/* Whether path holds a trace ovl reads, judged more closely than ovl_detect_format: an ovl or
** Nsight Systems SQLite database, or JSON (maybe gzip-compressed) whose top-level object has a
** traceEvents array and is not ovl's own Chrome export (whose otherData, written before its
** traceEvents, holds time_origin_ns). JSON is read only up to the traceEvents key. Returns 1
** with *format set; 0 when it is something else, with why (may be NULL) saying what, e.g.
** "JSON without traceEvents"; -1 when it cannot be read (*err: "<path>: <reason>"). */
int ovl_probe_trace(const char *path, ovl_trace_format *format, char *why, size_t why_len, ovl_err *err);

#endif
