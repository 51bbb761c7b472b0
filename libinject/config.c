/* Capture settings from the environment: see config.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ovl_config_read(ovl_capture_config *c, ovl_getenv_fn get) {
  memset(c, 0, sizeof *c);
  c->flush_ms = OVL_DEFAULT_FLUSH_MS;
  c->log = OVL_LOG_INFO;
  c->tsc_clock = 1;

  const char *v = get("OVL_DISABLE");
  c->disabled = v && *v && strcmp(v, "0") != 0;

  v = get("OVL_CUPTI");
  c->cupti_off = v && strcmp(v, "0") == 0;

  v = get("OVL_NCCL_PROXY");
  c->nccl_proxy = v && *v && strcmp(v, "0") != 0;

  v = get("OVL_OUTPUT");
  if (snprintf(c->output_dir, sizeof c->output_dir, "%s", v && *v ? v : OVL_DEFAULT_OUTPUT) >=
      (int)sizeof c->output_dir) {
    snprintf(c->problem, sizeof c->problem, "OVL_OUTPUT is longer than %d characters: nothing is captured",
             (int)sizeof c->output_dir - 1);
    c->output_dir[0] = 0;  /* the capture does not start */
  }

  v = get("OVL_CUPTI_LIBRARY");
  if (v && *v && snprintf(c->cupti_library, sizeof c->cupti_library, "%s", v) >= (int)sizeof c->cupti_library) {
    snprintf(c->problem, sizeof c->problem, "OVL_CUPTI_LIBRARY is longer than %d characters: ignored",
             (int)sizeof c->cupti_library - 1);
    c->cupti_library[0] = 0;
  }

  v = get("OVL_LOG");
  if (v && *v) {
    if (strcmp(v, "quiet") == 0) c->log = OVL_LOG_QUIET;
    else if (strcmp(v, "info") == 0) c->log = OVL_LOG_INFO;
    else if (strcmp(v, "debug") == 0) c->log = OVL_LOG_DEBUG;
    else snprintf(c->problem, sizeof c->problem, "OVL_LOG='%.64s' is not quiet, info or debug: using info", v);
  }

  v = get("OVL_CLOCK");
  if (v && *v) {
    if (strcmp(v, "monotonic") == 0) c->tsc_clock = 0;
    else if (strcmp(v, "tsc") != 0)
      snprintf(c->problem, sizeof c->problem, "OVL_CLOCK='%.64s' is not tsc or monotonic: using tsc", v);
  }

  v = get("OVL_FLUSH_MS");
  if (v && *v) {
    char *end = NULL;
    long ms = strtol(v, &end, 10);
    if (*end || ms < 10 || ms > 600000)
      snprintf(c->problem, sizeof c->problem, "OVL_FLUSH_MS='%.64s' is not a number of ms in [10, 600000]: using %d",
               v, OVL_DEFAULT_FLUSH_MS);
    else
      c->flush_ms = ms;
  }
}

int ovl_config_absolute_output(ovl_capture_config *c, const char *cwd) {
  if (c->output_dir[0] == '/') return 0;
  char rel[sizeof c->output_dir];
  memcpy(rel, c->output_dir, sizeof rel);
  const char *r = strncmp(rel, "./", 2) == 0 ? rel + 2 : rel;
  if (snprintf(c->output_dir, sizeof c->output_dir, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", r) <
      (int)sizeof c->output_dir)
    return 0;
  memcpy(c->output_dir, rel, sizeof rel);
  return -1;
}

static long env_int(ovl_getenv_fn get, const char *name) {
  const char *v = name ? get(name) : NULL;
  if (!v || !*v) return -1;
  char *end = NULL;
  long x = strtol(v, &end, 10);
  return (*end || x < 0) ? -1 : x;
}

void ovl_launcher_rank(ovl_getenv_fn get, long *rank, long *world_size) {
  static const char *const pairs[][2] = {
    {"RANK", "WORLD_SIZE"}, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"},
    {"PMIX_RANK", NULL}, {"SLURM_PROCID", "SLURM_NTASKS"},
  };
  *rank = *world_size = -1;
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    long r = env_int(get, pairs[i][0]);
    if (r < 0) continue;
    *rank = r;
    *world_size = env_int(get, pairs[i][1]);
    return;
  }
}
