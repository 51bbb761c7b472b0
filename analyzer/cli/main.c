/* `ovl`: dispatches to the verb named by the first argument. */
#include "cli.h"
#include "cli_mpi.h"
#include "malloc_policy.h"

#include "../load/trace_import.h"
#include "base/temp_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
  fprintf(out,
          "usage: ovl <command> [options] [TRACE...]\n"
          "\n"
          "ovl analyses how well communication overlaps compute in distributed GPU training.\n"
          "\n"
          "Commands:\n");
  for (size_t i = 0; i < ovl_nverbs; i++) fprintf(out, "  %-10s %s\n", ovl_verbs[i].name, ovl_verbs[i].summary);
  fprintf(out,
          "  %-10s %s\n"
          "\n"
          "TRACE is an ovl SQLite trace, a PyTorch profiler (Kineto) JSON trace, an Nsight Systems\n"
          "SQLite export, or a directory of them.\n"
          "Run 'ovl <command> --help' (or 'ovl help <command>') for the options of a command.\n"
          "  -h, --help     this help\n"
          "  -V, --version  print the version\n"
          "\n"
          "Exit status: 0 ok, 1 bad input or usage, 2 internal error; ovl run: the command's.\n"
          "Files written are named on standard error; an existing trace is never replaced\n"
          "without --force (docs/cli.md).\n",
          "help", "the options of a command: ovl help COMMAND");
}

/* `ovl help [COMMAND]`: the command's --help, or the list of commands. */
static int help(int argc, char **argv) {
  if (argc < 3) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < ovl_nverbs; i++) {
    if (strcmp(argv[2], ovl_verbs[i].name) == 0) {
      char *args[] = {argv[2], "--help", NULL};
      return ovl_verbs[i].run(2, args);
    }
  }
  fprintf(stderr, "ovl: help: unknown command '%s' (see 'ovl --help')\n", argv[2]);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 1;
  }
  (void)ovl_malloc_policy_apply();
  /* Temporary files (conversions, outputs being written) go away on SIGINT/SIGTERM too. */
  ovl_temp_install_cleanup();
  ovl_cli_progress_install();
  ovl_cli_mpi_keep_argv(argc, argv);
  const char *verb = argv[1];
  if (strcmp(verb, "help") == 0) return help(argc, argv);
  if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(verb, "--version") == 0 || strcmp(verb, "-V") == 0) {
    printf("ovl %s (trace schema 1, report 1)\n", OVL_VERSION_STRING);
    return 0;
  }
  for (size_t i = 0; i < ovl_nverbs; i++) {
    if (strcmp(verb, ovl_verbs[i].name) != 0) continue;
    int status = ovl_cli_mpi_end(ovl_verbs[i].run(argc - 1, argv + 1));  /* under mpirun: the root's status */
    /* A diagnostic for tests and the curious: how many foreign traces (processes) were
    ** imported; a command imports each input once. */
    if (getenv("OVL_DEBUG_IMPORTS")) fprintf(stderr, "ovl: debug: %lu import(s)\n", ovl_import_count());
    return status;
  }
  fprintf(stderr, "ovl: unknown command '%s' (see 'ovl --help')\n", verb);
  return 1;
}
