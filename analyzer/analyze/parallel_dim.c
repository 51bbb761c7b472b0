/* The names of the parallelism dimensions and roles: see parallel_dim.h. */
#include "parallel_dim.h"

#include <math.h>
#include <string.h>

static const char *const dim_names[OVL_DIM_COUNT] = {"unknown", "dp", "tp", "pp", "ep"};
static const char *const role_names[OVL_PROLE_COUNT] = {
    "none",      "grad_allreduce", "param_allgather", "grad_reduce_scatter", "tp_allreduce", "tp_allgather",
    "tp_reduce_scatter", "pp_send", "pp_recv",          "ep_dispatch",         "ep_combine",   "other"};

const char *ovl_pdim_name(ovl_pdim d) {
  return (unsigned)d < OVL_DIM_COUNT ? dim_names[d] : "unknown";
}

int ovl_pdim_parse(const char *name, ovl_pdim *d) {
  for (int i = 1; i < OVL_DIM_COUNT; i++)
    if (strcmp(name, dim_names[i]) == 0) return *d = (ovl_pdim)i, 0;
  if (strcmp(name, "fsdp") == 0 || strcmp(name, "zero") == 0 || strcmp(name, "ddp") == 0) return *d = OVL_DIM_DP, 0;
  return -1;
}

const char *ovl_prole_name(ovl_prole r) {
  return (unsigned)r < OVL_PROLE_COUNT ? role_names[r] : "none";
}

double ovl_dim_efficiency(const ovl_dim_totals *t) {
  return t->comm > 0 ? 1.0 - (double)t->exposed / (double)t->comm : NAN;
}

