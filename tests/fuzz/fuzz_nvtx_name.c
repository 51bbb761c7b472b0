/*
** libFuzzer target: the NVTX name conventions (analyze/nvtx_conventions.c) over any domain
** and name. The input is "<flags byte><domain>\0<name>" (no NUL: the default domain). With
** flag bit 1 a --step-pattern is in use. Checks the meaning against the header: a kind of
** the enum, bucket and bytes -1 or not negative, the parameter name NUL-terminated.
*/
#include "fuzz_file.h"
#include "analyze/nvtx_conventions.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static regex_t pattern;
  static int compiled;
  if (!compiled) {
    if (regcomp(&pattern, "^(train|iteration)[ _#]?[0-9]+$", REG_EXTENDED | REG_NOSUB)) abort();
    compiled = 1;
  }
  if (size < 1) return 0;
  unsigned flags = data[0];
  char *buf = malloc(size);  /* domain and name, each NUL-terminated */
  if (!buf) return 0;
  memcpy(buf, data + 1, size - 1);
  buf[size - 1] = '\0';
  size_t domain_len = strlen(buf);
  const char *domain = NULL, *name = buf;
  if (domain_len < size - 1) {
    domain = buf;
    name = buf + domain_len + 1;
  }
  ovl_nvtx_meaning m;
  memset(&m, 0xa5, sizeof m);  /* every field must be set, whatever the name */
  ovl_nvtx_interpret(domain, name, flags & 1, flags & 2 ? &pattern : NULL, &m);
  OVL_FUZZ_CHECK(m.kind == OVL_NVTX_OTHER || m.kind == OVL_NVTX_STEP || m.kind == OVL_NVTX_GRAD_READY ||
        m.kind == OVL_NVTX_BUCKET || m.kind == OVL_NVTX_DIM);
  OVL_FUZZ_CHECK(m.bucket >= -1 && m.bucket <= INT32_MAX && m.bytes >= -1);  /* a collective keeps it in 32 bits */
  OVL_FUZZ_CHECK(m.kind != OVL_NVTX_DIM || m.bucket >= 0);  /* a dimension was named */
  OVL_FUZZ_CHECK(m.kind == OVL_NVTX_STEP || m.step_number == -1);
  OVL_FUZZ_CHECK(memchr(m.param, '\0', sizeof m.param) != NULL);
  if (!(flags & 1)) OVL_FUZZ_CHECK(m.kind != OVL_NVTX_STEP && m.kind != OVL_NVTX_BUCKET && m.kind != OVL_NVTX_DIM);
  free(buf);
  return 0;
}
