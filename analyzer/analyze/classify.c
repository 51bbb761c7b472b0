/* Work classification by name: see classify.h. */
#include "classify.h"

#include "../load/comm_names.h"

#include <string.h>
#include <strings.h>

int ovl_classifier_init(ovl_classifier *c, const char *comm_pattern, ovl_err *err) {
  c->has_pattern = 0;
  if (!comm_pattern) return OVL_OK;
  int rc = regcomp(&c->pattern, comm_pattern, REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char why[256];
    regerror(rc, &c->pattern, why, sizeof why);
    return ovl_fail(err, OVL_EUSER, "--comm-pattern '%s': %s", comm_pattern, why);
  }
  c->has_pattern = 1;
  return OVL_OK;
}

void ovl_classifier_free(ovl_classifier *c) {
  if (c->has_pattern) regfree(&c->pattern);
  c->has_pattern = 0;
}

ovl_work_class ovl_classify_kernel_name(const ovl_classifier *c, const char *name) {
  if (!name) return OVL_CLASS_COMPUTE;
  if (ovl_is_comm_kernel_name(name)) return OVL_CLASS_COMM;
  if (c->has_pattern && regexec(&c->pattern, name, 0, NULL, 0) == 0) return OVL_CLASS_COMM;
  return OVL_CLASS_COMPUTE;
}

int ovl_moe_kernel_name(const char *name) {
  static const char *const words[] = {"moe", "expert", "gating", "grouped_gemm", "groupedgemm", "deep_ep"};
  if (!name) return 0;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    for (const char *p = name; *p; p++)
      if (strncasecmp(p, words[i], strlen(words[i])) == 0) return 1;
  return 0;
}
