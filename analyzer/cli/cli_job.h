/*
** What the verbs that analyse traces (report, export, fit, whatif) share: analysing the TRACE
** arguments into a job, and writing the result to standard output or -o FILE.
*/
#ifndef OVL_CLI_JOB_H
#define OVL_CLI_JOB_H

#include "../driver/job_driver.h"

#include <getopt.h>
#include <stdio.h>

/* The options every analysing verb takes: --json, --compact, -o/--output FILE, --force,
** --comm-pattern RE, --step-pattern RE, --hta-compat, --dim COMM=DIM,..., --mpi, --mpi-local
** (cli_mpi.h). Put OVL_CLI_JOB_LONGOPTS in the verb's option table and hand each option to
** ovl_cli_job_option first. */
enum { OVL_OPT_JSON = 200, OVL_OPT_COMPACT, OVL_OPT_COMM_PATTERN, OVL_OPT_STEP_PATTERN, OVL_OPT_HTA_COMPAT, OVL_OPT_DIM,
       OVL_OPT_FORCE };
enum { OVL_OPT_MPI = 220, OVL_OPT_MPI_LOCAL };
#define OVL_CLI_JOB_LONGOPTS                                                                            \
  {"json", no_argument, NULL, OVL_OPT_JSON}, {"compact", no_argument, NULL, OVL_OPT_COMPACT},          \
      {"output", required_argument, NULL, 'o'}, {"comm-pattern", required_argument, NULL, OVL_OPT_COMM_PATTERN}, \
      {"step-pattern", required_argument, NULL, OVL_OPT_STEP_PATTERN},                                 \
      {"hta-compat", no_argument, NULL, OVL_OPT_HTA_COMPAT}, {"dim", required_argument, NULL, OVL_OPT_DIM}, \
      {"force", no_argument, NULL, OVL_OPT_FORCE}, {"mpi", no_argument, NULL, OVL_OPT_MPI},                  \
      {"mpi-local", no_argument, NULL, OVL_OPT_MPI_LOCAL}

typedef struct ovl_cli_job_opts {
  const char *verb;            /* for messages; NULL: "ovl" */
  int json, pretty;
  const char *output;          /* NULL: standard output */
  ovl_analysis_options analysis;
} ovl_cli_job_opts;

/* Defaults: text, indented JSON, standard output. */
void ovl_cli_job_opts_init(ovl_cli_job_opts *o);
/* Takes option c (with its argument) when it is a shared one: returns 1, else 0; -1 after
** printing the error when it cannot (-o given twice: one output, never the last one silently). */
int ovl_cli_job_option(int c, const char *arg, ovl_cli_job_opts *o);

typedef struct ovl_cli_job {
  ovl_analysis_ctx ctx;
  ovl_job job;
} ovl_cli_job;

/* Plans the command's outputs[0..noutputs) (output_plan.h; NULL entries are standard output)
** before reading anything, then analyses args[0..nargs) with opt (kernel launch dimensions are
** always read: the diagnosis compares kernels by name and grid). Prints warnings; on failure
** prints the error and returns the exit status (nothing to free), else 0. With --mpi, on a
** process that is not the root: OVL_CLI_MPI_FOLLOWER (cli_mpi.h), which the verb returns. */
int ovl_cli_job_run(const ovl_analysis_options *opt, const char *const *outputs, size_t noutputs, char *const *args,
                    size_t nargs, ovl_cli_job *out);
void ovl_cli_job_free(ovl_cli_job *j);

/* Writes through write(out, o, ctx) to o->output (standard output when NULL; a file is
** written through base/safe_output.h: it appears, complete, only on success); write chooses
** text or JSON from o, and returns 0, or -1 when memory ran out before all was written (the
** output is then refused: no file, or a failing exit after standard output). Returns the exit
** status, having printed any error. */
typedef int (*ovl_cli_writer)(FILE *out, const ovl_cli_job_opts *o, void *ctx);
int ovl_cli_write_output(const ovl_cli_job_opts *o, ovl_cli_writer write, void *ctx);

/* Writes the file path through emit(out, ctx, err) (an ovl status) by the output rule of
** base/safe_output.h: a temporary file beside path, renamed over it only when emit and every
** write succeeded, then says so (ovl_cli_wrote). Returns the exit status, having printed any
** error. */
typedef int (*ovl_cli_emitter)(FILE *out, void *ctx, ovl_err *err);
int ovl_cli_write_file(const char *path, ovl_cli_emitter emit, void *ctx);

/* "ovl: wrote PATH (SIZE)[: WHAT]" on stderr (what may be NULL): every file a command writes
** is named once written. */
void ovl_cli_wrote(const char *path, const char *what);

/* Writes the job's HTML page (report_html.h) to path, titled title; alpha_ns and beta (bytes/s)
** are the valley's collective cost as `ovl whatif` takes them, NAN: fitted. Returns the exit status,
** having printed any error; no file is left on failure. */
int ovl_cli_write_html(ovl_cli_job *j, const char *path, const char *title, double alpha_ns, double beta);
/* The same with a section before the report's (report_html.h) and another heading (NULL: "ovl
** report"); j NULL: a page of the extra section alone. */
struct ovl_html_extra;
int ovl_cli_write_html_with(ovl_cli_job *j, const char *path, const char *title, double alpha_ns, double beta,
                            const struct ovl_html_extra *extra, const char *heading);

#endif
