/*
** Status codes and error messages shared by every ovl module.
**
** A function that can fail returns an int status and, on failure, fills an ovl_err with a
** one-line message of the form "<subject>: <what is wrong>" (the subject is usually a file
** name). The CLI prefixes "ovl: " and maps the code to the exit status, so the library never
** prints and never exits.
*/
#ifndef OVL_STATUS_H
#define OVL_STATUS_H

#include <stddef.h>

enum {
  OVL_OK = 0,
  OVL_EUSER = 1,      /* bad input or bad usage: exit status 1 */
  OVL_EINTERNAL = 2,  /* out of memory, bug, unexpected library failure: exit status 2 */
  /* A reader's rows are further out of start order than its reorder window allows: the
  ** caller redoes the pass with SQLite sorting (load/trace_reader.h). Never leaves the
  ** analyzer. */
  OVL_EUNSORTED = 3
};

typedef struct ovl_err {
  int code;
  char msg[1024];
} ovl_err;

/* Sets *err (when err is not NULL) and returns code. printf-style. */
int ovl_fail(ovl_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Returns OVL_EINTERNAL with an "out of memory" message naming what was being allocated. */
int ovl_oom(ovl_err *err, const char *what);

void ovl_err_clear(ovl_err *err);

#endif
