/*
** libFuzzer inputs handed to ovl's path-based readers: the bytes are written to one file per
** fuzzing process under TMPDIR (or /tmp), rewritten for every input, removed at exit.
*/
#ifndef OVL_FUZZ_FILE_H
#define OVL_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Writes data to this process's input file (suffix e.g. ".json") and returns its path, or
** NULL when it cannot be written (the input is then skipped: the fuzzer runs on). */
const char *ovl_fuzz_write(const uint8_t *data, size_t size, const char *suffix);

/* Aborts the run (a finding) naming the promise that failed. */
#define OVL_FUZZ_CHECK(cond) ((cond) ? (void)0 : ovl_fuzz_fail(#cond, __FILE__, __LINE__))
_Noreturn void ovl_fuzz_fail(const char *what, const char *file, int line);

/* A stream that discards what is written (reports are formatted, not kept). */
#include <stdio.h>
FILE *ovl_fuzz_null_stream(void);

#endif
