/* Launcher detection from the environment: see launch_env.h. */
#include "launch_env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ovl_launcher_name(ovl_launcher l) {
  switch (l) {
    case OVL_LAUNCH_TORCHRUN: return "torchrun";
    case OVL_LAUNCH_OPENMPI: return "Open MPI";
    case OVL_LAUNCH_MPICH: return "MPICH";
    case OVL_LAUNCH_ALONE: break;
  }
  return "alone";
}

/* Reads integer variable `name` into *v when set. Returns 1 when set, 0 when unset, -1 (and
** fills err) when malformed or outside [min, max]. */
static int env_int(const char *name, long min, long max, int *v, ovl_err *err) {
  const char *s = getenv(name);
  if (!s) return 0;
  char *end = NULL;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (!*s || *end || errno || x < min || x > max) {
    ovl_fail(err, OVL_EUSER, "%s='%s': expected an integer in %ld..%ld", name, s, min, max);
    return -1;
  }
  *v = (int)x;
  return 1;
}

int ovl_launch_detect(ovl_launch *out, ovl_err *err) {
  static const struct {
    ovl_launcher launcher;
    const char *rank, *size, *local_rank;
  } launchers[] = {
    {OVL_LAUNCH_TORCHRUN, "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {OVL_LAUNCH_OPENMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {OVL_LAUNCH_MPICH, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
  };
  memset(out, 0, sizeof *out);
  out->world_size = 1;
  for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
    int rank = 0, size = 0, local = 0;
    int has_rank = env_int(launchers[i].rank, 0, INT_MAX - 1, &rank, err);
    if (has_rank < 0) return OVL_EUSER;
    if (!has_rank) continue;
    int has_size = env_int(launchers[i].size, 1, INT_MAX, &size, err);
    if (has_size < 0) return OVL_EUSER;
    if (!has_size)
      return ovl_fail(err, OVL_EUSER, "%s is set but %s is not", launchers[i].rank, launchers[i].size);
    if (rank >= size)
      return ovl_fail(err, OVL_EUSER, "%s=%d is not below %s=%d", launchers[i].rank, rank, launchers[i].size, size);
    int has_local = env_int(launchers[i].local_rank, 0, INT_MAX - 1, &local, err);
    if (has_local < 0) return OVL_EUSER;
    out->launcher = launchers[i].launcher;
    out->rank = rank;
    out->world_size = size;
    out->local_rank = has_local ? local : rank;
    break;
  }
  const char *addr = getenv("MASTER_ADDR");
  if (addr) {
    if (!*addr || strlen(addr) >= sizeof out->master_addr)
      return ovl_fail(err, OVL_EUSER, "MASTER_ADDR='%s': expected a host name or address", addr);
    snprintf(out->master_addr, sizeof out->master_addr, "%s", addr);
  }
  if (env_int("MASTER_PORT", 1, 65535, &out->master_port, err) < 0) return OVL_EUSER;
  return OVL_OK;
}
