/*
** The NVTX conventions of contract section 3. A range or mark speaks to ovl when it is in
** the domain "ovl", or in the default domain with the prefix "ovl:":
**   step                               a range around one training step
**   grad_ready bucket=<k> bytes=<n>    a mark when a gradient is ready (optional param=<name>)
**   bucket <k>                         a range around the collective call reducing bucket k
**   dim <d>                            a range around collective calls of parallelism
**                                      dimension d (dp, fsdp, tp, pp, ep: job_dims.h)
** Ranges named ProfilerStep#<n> (PyTorch profiler) and ranges matching the user's
** --step-pattern are steps too, in any domain.
*/
#ifndef OVL_NVTX_CONVENTIONS_H
#define OVL_NVTX_CONVENTIONS_H

#include <regex.h>
#include <stdint.h>

typedef enum ovl_nvtx_kind {
  OVL_NVTX_OTHER = 0,
  OVL_NVTX_STEP,
  OVL_NVTX_GRAD_READY,
  OVL_NVTX_BUCKET,
  OVL_NVTX_DIM
} ovl_nvtx_kind;

typedef struct ovl_nvtx_meaning {
  ovl_nvtx_kind kind;
  long bucket;        /* GRAD_READY, BUCKET: bucket index (0..INT32_MAX), -1 when absent; DIM: the ovl_pdim */
  int64_t bytes;      /* GRAD_READY: bytes, -1 when absent */
  char param[128];    /* GRAD_READY: parameter name, "" when absent */
  long step_number;   /* STEP: N of `ProfilerStep#N`, -1 otherwise */
} ovl_nvtx_meaning;

/* Interprets one NVTX row; is_range is 0 for a mark. step_pattern may be NULL. */
void ovl_nvtx_interpret(const char *domain, const char *name, int is_range, const regex_t *step_pattern,
                        ovl_nvtx_meaning *out);

#endif
