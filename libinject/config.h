/*
** Capture settings from the environment (docs/capture.md):
**   OVL_OUTPUT     trace directory (default ./ovl-trace), relative to the directory the
**                  process started in
**   OVL_DISABLE    any value but "" or "0": capture nothing
**   OVL_FLUSH_MS   commit period in ms (default 1000, 10..600000)
**   OVL_LOG        quiet | info | debug (default info: problems only)
**   OVL_CLOCK      tsc (default: CLOCK_MONOTONIC read through a calibrated TSC where the CPU
**                  has an invariant one, clock.h) | monotonic (clock_gettime every time)
**   OVL_CUPTI_LIBRARY  the libcupti to load, instead of looking for one (cupti_locate.h)
**   OVL_CUPTI      "0": never attach CUPTI (no GPU kernels or copies: NCCL calls, NCCL's own
**                  channel timing as its profiler plugin, NVTX)
**   OVL_NCCL_PROXY any value but "" or "0": as NCCL's profiler plugin, also record proxy
**                  operations and their network steps (proxy_ops, proxy_steps)
** Parsing is a pure function of a getenv-like lookup so it can be tested in isolation.
*/
#ifndef OVL_INJECT_CONFIG_H
#define OVL_INJECT_CONFIG_H

#define OVL_DEFAULT_OUTPUT "ovl-trace"
#define OVL_DEFAULT_FLUSH_MS 1000

typedef enum ovl_log_level { OVL_LOG_QUIET, OVL_LOG_INFO, OVL_LOG_DEBUG } ovl_log_level;

typedef struct ovl_capture_config {
  int disabled;
  char output_dir[4096];  /* "" when OVL_OUTPUT is too long (see problem): capture nothing */
  long flush_ms;
  ovl_log_level log;
  int tsc_clock;          /* OVL_CLOCK: 1 = tsc (default), 0 = monotonic */
  char cupti_library[1024];  /* OVL_CUPTI_LIBRARY, or "" */
  int nccl_proxy;            /* OVL_NCCL_PROXY */
  int cupti_off;             /* OVL_CUPTI=0 */
  char problem[256];  /* a rejected value, reported once the capture starts; "" when none */
} ovl_capture_config;

typedef char *(*ovl_getenv_fn)(const char *name);

void ovl_config_read(ovl_capture_config *c, ovl_getenv_fn get);
/* Makes a relative output_dir absolute against cwd (an absolute path), so that a program's
** later chdir() does not move its trace. Returns 0, or -1 (output_dir unchanged) when the
** result would be too long. */
int ovl_config_absolute_output(ovl_capture_config *c, const char *cwd);

/* Rank and world size as the launcher exported them, from the first pair that has a valid
** rank: RANK/WORLD_SIZE (torchrun and most Python launchers: the variables closest to the
** trainer when launchers nest), OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/PMI_SIZE, PMIX_RANK,
** SLURM_PROCID/SLURM_NTASKS. Each is set to -1 when unknown. */
void ovl_launcher_rank(ovl_getenv_fn get, long *rank, long *world_size);

#endif
