/*
** Inputs that can be read only once: a FIFO, the pipe of a shell's `<(command)`, a character
** device. Detection reads a file's head and the importer reads it again from the start, so
** such an input is copied once, through one buffered read, into a temporary file in $TMPDIR
** (removed at exit and on signals, base/temp_files.h); every later use of the same name in
** the process (the analysis, then the export's second pass) reads that copy.
*/
#ifndef OVL_INPUT_SPOOL_H
#define OVL_INPUT_SPOOL_H

#include "base/status.h"

/* *readable: path itself for a regular file (or anything stat cannot see: the opener will
** name the problem), else the copy of it. The string lives until exit. */
int ovl_input_resolve(const char *path, const char **readable, ovl_err *err);
/* Rewrites a message that names a copy so that it names the input the user gave instead. */
void ovl_input_explain(ovl_err *err);

#endif
