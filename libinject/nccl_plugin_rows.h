/*
** NCCL profiler plugin events (nccl_plugin_events.h) -> trace rows, on the writer thread:
** collectives rows with NCCL's account, collective_channels rows placed on the capture clock
** through the measured GPU-timer offset (gpu_timer.h, one per device), proxy_ops and
** proxy_steps rows; and the meta keys that say what the offset is.
*/
#ifndef OVL_INJECT_NCCL_PLUGIN_ROWS_H
#define OVL_INJECT_NCCL_PLUGIN_ROWS_H

#include "gpu_timer.h"
#include "host_events.h"
#include "store/trace_writer.h"

#include <stdint.h>

/* Devices with their own offset; stamps of other (or unknown) devices share the last one. */
#define OVL_NCCL_ROWS_DEVICES 16

typedef struct ovl_nccl_rows {
  uint64_t collectives, channels, proxy_ops, proxy_steps;  /* rows added */
  ovl_gpu_timer timers[OVL_NCCL_ROWS_DEVICES + 1];
  uint64_t stamps_in_meta;  /* stamps noted when the meta keys were last written */
  uint64_t stamps_written[OVL_NCCL_ROWS_DEVICES + 1];  /* per device, in gpu_timer_offsets */
} ovl_nccl_rows;

void ovl_nccl_rows_init(ovl_nccl_rows *n);
/* Whether ev is one of the plugin's events (the kinds this module turns into rows). */
int ovl_nccl_rows_takes(const ovl_event_header *ev);
/* Writes the rows of one plugin event. Returns OVL_OK or the writer's error. */
int ovl_nccl_rows_add(ovl_nccl_rows *n, ovl_trace_writer *w, const ovl_event_header *ev, ovl_err *err);
/* meta.gpu_timer_offset_ns, gpu_timer_offset_error_ns (the first device's) and gpu_timer (all
** of them, in words), and the gpu_timer_offsets rows, rewritten when stamps were noted since
** the last call (nothing before the first stamp). */
int ovl_nccl_rows_meta(ovl_nccl_rows *n, ovl_trace_writer *w, ovl_err *err);

#endif
