/*
** `ovl run [-o DIR] -- COMMAND [ARGS...]`: runs COMMAND with the capture library preloaded.
** It sets the environment, starts COMMAND and waits for it (run_child.h: signals sent to ovl
** run go on to it), then says what was captured (run_outcome.h) and ends as COMMAND ended:
** its output is its own, its exit status (or the signal that killed it) ovl run's.
*/
#define _GNU_SOURCE
#include "cli.h"

#include "base/paths.h"
#include "output_plan.h"
#include "run_child.h"
#include "run_outcome.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char help[] =
    "usage: ovl run [options] [--] COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND with the capture library libovl.so preloaded (LD_PRELOAD). Every process\n"
    "it starts that uses CUDA or NCCL writes one trace, DIR/<host>-<pid>-<random>.sqlite\n"
    "(rank<R>-<host>-<pid>-<random>.sqlite when the launcher set RANK, OMPI_COMM_WORLD_RANK,\n"
    "PMI_RANK, PMIX_RANK or SLURM_PROCID): GPU kernels, memory copies and sets, the CUDA calls\n"
    "that launched them, NCCL calls linked to their GPU work, and NVTX ranges and marks.\n"
    "Processes that use neither (shells, launchers) write nothing. COMMAND's output is its\n"
    "own; once it has ended, ovl run says on standard error which traces it wrote (or why\n"
    "none) and exits with COMMAND's status (dies of the signal that killed it). Signals sent\n"
    "to ovl run go on to COMMAND.\n"
    "\n"
    "  ovl run -o traces -- torchrun --nproc-per-node 8 train.py\n"
    "  ovl report traces/\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR   trace directory, created if missing [$OVL_OUTPUT, else ./ovl-trace]\n"
    "      --flush-ms N   commit captured data every N ms [1000]\n"
    "      --lib PATH     the libovl.so to preload [found next to ovl, or in ../lib]\n"
    "      --nccl-profiler  also load libovl.so as NCCL's profiler plugin (NCCL_PROFILER_PLUGIN):\n"
    "                     NCCL's own account of each call (algorithm, channels and their GPU\n"
    "                     timing), also where NCCL is linked statically (docs/capture.md)\n"
    "      --html FILE    then write the HTML report of the traces it wrote in DIR to FILE (as\n"
    "                     'ovl report --html FILE'; docs/report.md)\n"
    "      --force        replace FILE even if it is a trace (never done otherwise)\n"
    "  -q, --quiet        do not say which traces were written\n"
    "  -h, --help         this help\n"
    "\n"
    "Environment given to COMMAND: LD_PRELOAD (libovl.so first, after sanitizer runtimes),\n"
    "OVL_OUTPUT (DIR, absolute), OVL_FLUSH_MS, NCCL_PROFILER_PLUGIN with --nccl-profiler,\n"
    "and CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH when unset. OVL_LOG (quiet|info|debug),\n"
    "OVL_DISABLE=1, OVL_CUPTI=0 and OVL_NCCL_PROXY=1 pass through. See docs/capture.md.\n"
    "\n"
    "Exit status: COMMAND's (killed by a signal: ovl run ends by the same one, which a shell\n"
    "shows as 128 + N); 127 when COMMAND is not found, 126 when it cannot be run; 1 for ovl\n"
    "run's own errors (bad option, no libovl.so, DIR not a usable directory), or with --html\n"
    "when COMMAND succeeded but no page could be written (no trace).\n";

enum { OPT_FLUSH = 256, OPT_LIB, OPT_HTML, OPT_FORCE, OPT_NCCL_PROFILER };

/* libovl.so beside the ovl binary (build tree), or in ../lib or ../lib64 (installed). */
static int find_library(char *out, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = 0;
  static const char *const rel[] = {"libovl.so", "../lib/libovl.so", "../lib64/libovl.so"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", exe, rel[i]);
    if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < size) return 0;
  }
  return -1;
}

/* Sanitizer runtimes must precede every library that needs them. */
static int is_sanitizer_runtime(const char *entry, size_t n) {
  static const char *const names[] = {"libasan", "libclang_rt.", "libtsan", "liblsan", "libubsan", "libhwasan"};
  const char *base = entry;
  for (size_t i = 0; i < n; i++)
    if (entry[i] == '/') base = entry + i + 1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strncmp(base, names[i], strlen(names[i])) == 0) return 1;
  return 0;
}

/* LD_PRELOAD with lib first, after any sanitizer runtime (unless lib is already listed). */
static int set_preload(const char *lib) {
  const char *old = getenv("LD_PRELOAD");
  if (!old) old = "";
  if (strstr(old, lib)) return 0;
  size_t len = strlen(lib) + strlen(old) + 2;
  char *first = calloc(1, len), *rest = calloc(1, len), *v = malloc(len + 1);
  int rc = -1;
  if (first && rest && v) {
    for (const char *p = old; *p;) {
      size_t n = strcspn(p, ": ");
      if (n) {
        char *to = is_sanitizer_runtime(p, n) ? first : rest;
        if (*to) strcat(to, ":");
        strncat(to, p, n);
      }
      p += n + (p[n] != 0);
    }
    snprintf(v, len + 1, "%s%s%s%s%s", first, *first ? ":" : "", lib, *rest ? ":" : "", rest);
    rc = setenv("LD_PRELOAD", v, 1);
  }
  free(first);
  free(rest);
  free(v);
  return rc;
}

int ovl_cmd_run(int argc, char **argv) {
  static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"flush-ms", required_argument, NULL, OPT_FLUSH},
    {"lib", required_argument, NULL, OPT_LIB},
    {"html", required_argument, NULL, OPT_HTML},
    {"force", no_argument, NULL, OPT_FORCE},
    {"quiet", no_argument, NULL, 'q'},
    {"nccl-profiler", no_argument, NULL, OPT_NCCL_PROFILER},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *dir = NULL, *lib_arg = NULL, *html = NULL;
  long flush_ms = 0;
  int quiet = 0;
  int nccl_profiler = 0;
  optind = 1;
  opterr = 0;
  int c;
  /* '+': options end at COMMAND, whose own options are its business. */
  while ((c = getopt_long(argc, argv, "+:o:qh", longopts, NULL)) != -1) {
    switch (c) {
      case 'o':
        if (ovl_cli_once("run", "-o", &dir, optarg)) return 1;
        break;
      case OPT_FLUSH:
        if (ovl_cli_int("run", "--flush-ms", optarg, 10, 600000, &flush_ms)) return 1;
        break;
      case OPT_LIB: lib_arg = optarg; break;
      case OPT_HTML:
        if (ovl_cli_once("run", "--html", &html, optarg)) return 1;
        break;
      case OPT_FORCE: ovl_output_plan_force(1); break;
      case 'q': quiet = 1; break;
      case OPT_NCCL_PROFILER: nccl_profiler = 1; break;
      case 'h': fputs(help, stdout); return 0;
      default: return ovl_cli_bad_option("run", c, argv);
    }
  }
  if (optind >= argc) return ovl_cli_usage("run", "no command to run");
  if (!dir) dir = getenv("OVL_OUTPUT");
  if (!dir || !*dir) dir = "ovl-trace";
  /* The page's name is checked before COMMAND runs: a mistake must not cost the run. */
  if (html && ovl_cli_plan_outputs((const char *const *)&html, 1, NULL, 0)) return 1;

  char lib[PATH_MAX];
  if (lib_arg) {
    if (access(lib_arg, R_OK) != 0 || !realpath(lib_arg, lib)) {
      fprintf(stderr, "ovl: run: %s: %s\n", lib_arg, strerror(errno));
      return 1;
    }
  } else if (find_library(lib, sizeof lib) != 0) {
    fprintf(stderr, "ovl: run: libovl.so not found beside the ovl binary or in ../lib (build with the CUDA "
                    "toolkit, or give --lib PATH)\n");
    return 1;
  }
  char out[PATH_MAX];
  struct stat sb;
  if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "ovl: run: %s: exists and is not a directory: give -o a directory for the traces\n", dir);
    return 1;
  }
  if (ovl_mkdirs(dir) != 0 || !realpath(dir, out) || access(out, W_OK) != 0) {
    fprintf(stderr, "ovl: run: %s: cannot use as the trace directory: %s\n", dir, strerror(errno));
    return 1;
  }
  char flush[32];
  snprintf(flush, sizeof flush, "%ld", flush_ms);
  if (set_preload(lib) || setenv("OVL_OUTPUT", out, 1) || (flush_ms && setenv("OVL_FLUSH_MS", flush, 1)) ||
      setenv("CUDA_INJECTION64_PATH", lib, 0) || setenv("NVTX_INJECTION64_PATH", lib, 0) ||
      (nccl_profiler && setenv("NCCL_PROFILER_PLUGIN", lib, 1))) {
    fprintf(stderr, "ovl: run: cannot set the environment: %s\n", strerror(errno));
    return 2;
  }
  char **before = ovl_run_list_traces(out);
  if (!before) {
    fprintf(stderr, "ovl: run: out of memory\n");
    return 2;
  }
  int wstatus = 0, rc = ovl_run_child(argv + optind, &wstatus);
  if (rc) {
    ovl_run_free_names(before);
    return rc;
  }
  int page = ovl_run_outcome(out, before, html, quiet);
  ovl_run_free_names(before);
  if (page && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return page;
  return ovl_run_exit_as(wstatus);
}
