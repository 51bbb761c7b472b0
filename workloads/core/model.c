/* The reference models: see model.h. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ovl_model_names[] = {"small", "medium", "large", "xlarge", NULL};

/* The widths of the published benchmark's models. */
static const char *const named_widths[] = {
  "784-1024-512-256-10",
  "784-2048-2048-1024-512-10",
  "784-4096-4096-2048-2048-1024-512-10",
  "784-4096-4096-4096-2048-2048-1024-512-10",
};

static int parse_widths(const char *text, ovl_model *m) {
  int n = 0;
  const char *p = text;
  for (;;) {
    char *end = NULL;
    if (*p < '0' || *p > '9') return -1;
    long w = strtol(p, &end, 10);
    if (w < 1 || w > 65536 || n > OVL_MODEL_MAX_LAYERS) return -1;
    m->width[n++] = (int)w;
    if (*end == 0) break;
    if (*end != '-') return -1;
    p = end + 1;
  }
  if (n < 2) return -1;
  m->nlayers = n - 1;
  return 0;
}

int ovl_model_lookup(const char *text, ovl_model *m, ovl_err *err) {
  memset(m, 0, sizeof *m);
  const char *widths = text;
  for (int i = 0; ovl_model_names[i]; i++)
    if (strcmp(text, ovl_model_names[i]) == 0) widths = named_widths[i];
  if (strlen(text) >= sizeof m->name || parse_widths(widths, m))
    return ovl_fail(err, OVL_EUSER,
                    "model '%s': expected small, medium, large, xlarge or layer widths such as 784-256-10", text);
  snprintf(m->name, sizeof m->name, "%s", text);
  return OVL_OK;
}

int ovl_model_nparams(const ovl_model *m) { return 2 * m->nlayers; }

void ovl_model_params(const ovl_model *m, ovl_param *out) {
  int64_t offset = 0;
  for (int l = 0; l < m->nlayers; l++) {
    for (int b = 0; b < 2; b++) {
      ovl_param *p = &out[2 * l + b];
      snprintf(p->name, sizeof p->name, "fc%d.%s", l, b ? "bias" : "weight");
      p->layer = l;
      p->is_bias = b;
      p->count = b ? m->width[l + 1] : (int64_t)m->width[l + 1] * m->width[l];
      p->offset = offset;
      offset += p->count;
    }
  }
}

int64_t ovl_model_param_floats(const ovl_model *m) {
  int64_t n = 0;
  for (int l = 0; l < m->nlayers; l++) n += (int64_t)m->width[l + 1] * (m->width[l] + 1);
  return n;
}

int ovl_model_max_width(const ovl_model *m) {
  int w = 0;
  for (int l = 0; l <= m->nlayers; l++)
    if (m->width[l] > w) w = m->width[l];
  return w;
}
