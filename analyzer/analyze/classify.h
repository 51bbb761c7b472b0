/*
** Classification of GPU work (contract section 2):
**   communication: kernels of a known communication family (load/comm_names.h: NCCL/RCCL,
**     MSCCL, NVSHMEM, DeepEP, SymmetricMemory, custom all-reduces, the reference workloads'
**     emulated collectives), names matching the user's --comm-pattern, and any kernel or memop
**     linked to a collectives row;
**   memory: every other memop (never compute);
**   compute: every other kernel.
** Linking is decided by the work stream (work_stream.h); this module judges names, with the
** one name rule of comm_names.h (ovl_is_comm_kernel_name) plus the user's pattern.
*/
#ifndef OVL_CLASSIFY_H
#define OVL_CLASSIFY_H

#include "base/status.h"

#include <regex.h>

typedef enum ovl_work_class {
  OVL_CLASS_COMPUTE = 0,
  OVL_CLASS_COMM = 1,
  OVL_CLASS_MEMORY = 2
} ovl_work_class;

typedef struct ovl_classifier {
  int has_pattern;
  regex_t pattern;
} ovl_classifier;

/* comm_pattern may be NULL. A bad pattern is a user error naming it. */
int ovl_classifier_init(ovl_classifier *c, const char *comm_pattern, ovl_err *err);
void ovl_classifier_free(ovl_classifier *c);
/* Judges a kernel by its name alone (NULL name: compute). */
ovl_work_class ovl_classify_kernel_name(const ovl_classifier *c, const char *name);
/* 1 when a kernel's name says it does mixture-of-experts work ("moe", "expert", "gating",
** "grouped_gemm", DeepEP's "deep_ep", any case): the evidence that a job's all-to-alls are
** expert parallelism rather than, say, an embedding exchange. */
int ovl_moe_kernel_name(const char *name);

#endif
