/* Error message helpers: see status.h. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

int ovl_fail(ovl_err *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

int ovl_oom(ovl_err *err, const char *what) {
  return ovl_fail(err, OVL_EINTERNAL, "out of memory (%s)", what);
}

void ovl_err_clear(ovl_err *err) {
  if (err) {
    err->code = OVL_OK;
    err->msg[0] = 0;
  }
}
