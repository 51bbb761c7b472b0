/*
** libovl's only output: one line on stderr per message, prefixed "ovl: ", written with a
** single write(2) so it never interleaves inside the program's own lines. Problems are
** reported once each (the caller passes a flag), never repeated per call.
*/
#ifndef OVL_INJECT_LOG_H
#define OVL_INJECT_LOG_H

#include "config.h"

void ovl_log_set_level(ovl_log_level level);
/* A problem, shown unless OVL_LOG=quiet. With `once` non-NULL, shown only the first time. */
void ovl_warn(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Progress, shown with OVL_LOG=debug. */
void ovl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
