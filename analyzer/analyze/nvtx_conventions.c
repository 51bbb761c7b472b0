/* NVTX conventions: see nvtx_conventions.h. */
#include "nvtx_conventions.h"

#include "parallel_dim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The convention text of a row, or NULL when the row is not addressed to ovl. */
static const char *convention_body(const char *domain, const char *name) {
  if (domain && strcmp(domain, "ovl") == 0) return name;
  if ((!domain || !*domain) && strncmp(name, "ovl:", 4) == 0) return name + 4;
  return NULL;
}

static int is_profiler_step(const char *name) {
  static const char prefix[] = "ProfilerStep#";
  if (strncmp(name, prefix, sizeof prefix - 1) != 0) return 0;
  const char *p = name + sizeof prefix - 1;
  if (!isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  return *p == 0;
}

/* Parses a non-negative decimal integer that ends at a space or the end; -1 if none. */
static int64_t parse_count(const char *p) {
  if (!isdigit((unsigned char)*p)) return -1;
  char *end = NULL;
  long long v = strtoll(p, &end, 10);
  return (*end == 0 || *end == ' ') ? (int64_t)v : -1;
}

/* A bucket index: parse_count's, -1 above INT32_MAX (a collective keeps its bucket in 32 bits:
** ovl_coll_result; no model has 2^31 buckets), so that such a mark or range names no bucket. */
static long parse_bucket(const char *p) {
  int64_t k = parse_count(p);
  return k <= INT32_MAX ? (long)k : -1;
}

static void parse_grad_ready(const char *args, ovl_nvtx_meaning *out) {
  const char *p = args;
  while (*p) {
    while (*p == ' ') p++;
    if (strncmp(p, "bucket=", 7) == 0) out->bucket = parse_bucket(p + 7);
    else if (strncmp(p, "bytes=", 6) == 0) out->bytes = parse_count(p + 6);
    else if (strncmp(p, "param=", 6) == 0) {
      size_t n = strcspn(p + 6, " ");
      if (n >= sizeof out->param) n = sizeof out->param - 1;
      memcpy(out->param, p + 6, n);
      out->param[n] = 0;
    }
    p += strcspn(p, " ");
  }
}

void ovl_nvtx_interpret(const char *domain, const char *name, int is_range, const regex_t *step_pattern,
                        ovl_nvtx_meaning *out) {
  out->kind = OVL_NVTX_OTHER;
  out->bucket = -1;
  out->bytes = -1;
  out->param[0] = 0;
  out->step_number = -1;
  if (!name) return;
  const char *body = convention_body(domain, name);
  if (body) {
    if (is_range && strcmp(body, "step") == 0) {
      out->kind = OVL_NVTX_STEP;
      return;
    }
    if (strncmp(body, "grad_ready", 10) == 0 && (body[10] == 0 || body[10] == ' ')) {
      out->kind = OVL_NVTX_GRAD_READY;
      parse_grad_ready(body + 10, out);
      return;
    }
    ovl_pdim d;
    if (is_range && strncmp(body, "dim ", 4) == 0 && ovl_pdim_parse(body + 4, &d) == 0) {
      out->kind = OVL_NVTX_DIM;
      out->bucket = (long)d;
      return;
    }
    if (is_range && strncmp(body, "bucket ", 7) == 0) {
      long k = parse_bucket(body + 7);
      if (k >= 0) {
        out->kind = OVL_NVTX_BUCKET;
        out->bucket = k;
        return;
      }
    }
  }
  int profiler_step = is_profiler_step(name);
  if (is_range && (profiler_step || (step_pattern && regexec(step_pattern, name, 0, NULL, 0) == 0))) {
    out->kind = OVL_NVTX_STEP;
    if (profiler_step) out->step_number = strtol(name + 13, NULL, 10);  /* after "ProfilerStep#" */
  }
}
