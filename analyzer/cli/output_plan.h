/*
** The output rule, planned once per command before any input is read (docs/cli.md, "Output
** files"): every file a command will write is named up front and checked: not empty, not an
** existing non-regular file, not an existing trace (any format ovl reads: load/trace_detect.h's
** ovl_probe_trace) unless the command was given --force, not one of the inputs (same file,
** whatever the name), not the same file as another output. Only then are inputs read; each output is then written
** through base/safe_output.h (a temporary file renamed over it on success).
*/
#ifndef OVL_OUTPUT_PLAN_H
#define OVL_OUTPUT_PLAN_H

#include "base/status.h"

#include <stddef.h>

typedef struct ovl_output_plan {
  char **paths;  /* as given */
  char **keys;   /* the real directory + the file name: two names of one file compare equal */
  char **froms;  /* what each is written from (for messages), or NULL */
  size_t n, cap;
} ovl_output_plan;

/* --force: outputs may replace existing traces. Set while parsing options, before planning. */
void ovl_output_plan_force(int on);

/* Adds an output written from `from` (an input's name, or NULL); fails ("<path>: <why>") when
** it may not be written or is already planned. */
int ovl_output_plan_add(ovl_output_plan *p, const char *path, const char *from, ovl_err *err);
/* Fails when an output is one of the inputs: "<output>: is also an input (<input>): ...". */
int ovl_output_plan_check_inputs(const ovl_output_plan *p, char *const *inputs, size_t ninputs, ovl_err *err);
/* Fails when an output exists and is a trace, unless --force: "<output>: exists and is a trace
** (<format>): not replaced; ...". Checked after the inputs (an input's message says more). */
int ovl_output_plan_check_traces(const ovl_output_plan *p, ovl_err *err);
void ovl_output_plan_free(ovl_output_plan *p);

/* For the analysing verbs: plans outputs[0..n) (NULL entries are standard output) against the
** files the TRACE arguments stand for. Returns 0, or prints the error and returns the exit
** status. */
int ovl_cli_plan_outputs(const char *const *outputs, size_t n, char *const *args, size_t nargs);

#endif
