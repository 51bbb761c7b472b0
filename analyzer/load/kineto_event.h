/*
** One event of a Kineto (PyTorch profiler) trace, read from the JSON stream into a plain
** struct: the fields ovl uses, whatever their order in the object; everything else is
** skipped without being kept.
**
** Times: `ts` and `dur` are microseconds, written as integers (older traces: absolute
** time) or with decimals (newer traces: relative to baseTimeNanoseconds). They are converted
** exactly into integer nanoseconds from their decimal text (no float rounding).
*/
#ifndef OVL_KINETO_EVENT_H
#define OVL_KINETO_EVENT_H

#include "base/status.h"
#include "json_stream.h"

#include <stddef.h>
#include <stdint.h>

typedef enum ovl_kineto_cat {
  OVL_KCAT_OTHER = 0,
  OVL_KCAT_KERNEL,              /* "kernel" (older traces: "Kernel") */
  OVL_KCAT_MEMCPY,              /* "gpu_memcpy" ("Memcpy") */
  OVL_KCAT_MEMSET,              /* "gpu_memset" ("Memset") */
  OVL_KCAT_RUNTIME,             /* "cuda_runtime" ("Runtime") and "cuda_driver" */
  OVL_KCAT_USER_ANNOTATION,     /* "user_annotation" */
  OVL_KCAT_GPU_USER_ANNOTATION, /* "gpu_user_annotation" */
  OVL_KCAT_CPU_OP               /* "cpu_op" ("Operator"): ProfilerStep#N and record_param_comms */
} ovl_kineto_cat;

/* The arguments PyTorch attaches to communication (record_param_comms and, in newer
** traces, the NCCL kernel itself). */
typedef struct ovl_kineto_comm_args {
  int present;                 /* at least one of them was seen */
  const char *op;              /* from `Collective name`; NULL when absent or no NCCL op */
  const char *dtype;           /* NCCL type name; NULL when absent or unknown */
  int64_t dtype_size;          /* bytes per element; 0 when unknown */
  int64_t in_nelems, out_nelems, group_size, seq;  /* OVL_NONE when absent */
  char group_name[128];        /* `Process Group Name` (or the ID as text); "" when absent */
  char group_desc[128];        /* `Process Group Description` (e.g. "default_pg"); "" when absent */
  char *group_ranks;           /* `Process Group Ranks` as "0,1,2"; NULL when absent (owned) */
  size_t group_ranks_cap;
} ovl_kineto_comm_args;

typedef struct ovl_kineto_event {
  char ph;                     /* 0 when absent */
  ovl_kineto_cat cat;
  const char *accelerator;     /* the device family a category of another accelerator names ("MTIA" for
                               ** mtia_*, ...: ovl_kineto_accelerator), else NULL; static */
  char *name;                  /* "" when absent; owned, reused between events */
  size_t name_cap;
  int64_t pid, tid;            /* OVL_NONE when absent or not numeric */
  int64_t ts_ns, dur_ns;       /* in the file's time base; OVL_NONE when absent or unreadable */
  double ts_us, dur_us;        /* the same in µs as a float64 reads them (--hta-compat); NAN when absent */
  /* args */
  int64_t external_id, correlation, device, stream, bytes;
  int64_t grid[3], block[3];
  ovl_kineto_comm_args comm;
  /* record_shapes: the first input's element count (`Input Dims`) and type (`Input type`) */
  int64_t input_numel;         /* OVL_NONE when absent */
  char input_type[32];         /* "" when absent */
} ovl_kineto_event;

/* Reads the members of an event object whose OBJECT_BEGIN was just returned, through its
** OBJECT_END. */
int ovl_kineto_read_event(ovl_json *j, ovl_kineto_event *ev, ovl_err *err);
void ovl_kineto_event_free(ovl_kineto_event *ev);

/* A JSON number of microseconds as nanoseconds (exact up to 3 decimals, rounded beyond).
** Returns 0 and sets *ns, or -1 when the text is not a finite number in range. */
int ovl_kineto_us_to_ns(const char *text, int64_t *ns);
/* The accelerator a Kineto event category belongs to when it is not a CUDA/ROCm GPU's (Kineto's
** activity types of other devices: mtia_*, hpu_*, xpu_*, mlu_*, gcu_*, privateuse1_*), or
** NULL. Static text. */
const char *ovl_kineto_accelerator(const char *cat);

/* A JSON number as an integer (decimals truncated). Returns 0 or -1. */
int ovl_kineto_int(const char *text, int64_t *v);

#endif
