/*
** Expands the TRACE arguments of a command into a list of files: a file stands for
** itself; a directory stands for the trace files directly inside it (ovl/Nsight SQLite:
** *.sqlite, *.db; Kineto: *.json, *.json.gz), in name order.
*/
#ifndef OVL_TRACE_FILES_H
#define OVL_TRACE_FILES_H

#include "base/status.h"

#include <stddef.h>

typedef struct ovl_file_list {
  char **paths;
  size_t len;
} ovl_file_list;

int ovl_expand_trace_args(char *const *args, size_t nargs, ovl_file_list *out, ovl_err *err);
void ovl_file_list_free(ovl_file_list *list);

#endif
