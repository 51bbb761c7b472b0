/*
** The one clock of a capture. Every timestamp libovl writes (NVTX, NCCL host times, and,
** through CUPTI's timestamp callback, CUDA API calls and GPU work) comes from
** ovl_clock_ns(), so host and GPU times in one trace compare directly.
*/
#ifndef OVL_INJECT_CLOCK_H
#define OVL_INJECT_CLOCK_H

#include <stdint.h>

#define OVL_CLOCK_NAME "CLOCK_MONOTONIC"

/* Nanoseconds on CLOCK_MONOTONIC: steady (never jumps), NTP-rate-corrected, served by the
** vDSO (no system call). */
int64_t ovl_clock_ns(void);
/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns: add it to a timestamp to get wall-clock time. */
int64_t ovl_clock_realtime_offset_ns(void);

#endif
