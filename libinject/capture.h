/*
** The capture's life in one process (session.c), as the hooks see it.
**
**   IDLE    loaded (LD_PRELOAD or CUDA injection), nothing written yet; NVTX events are
**           buffered (a little) in case the process turns out to use CUDA or NCCL.
**   ACTIVE  the process used CUDA or NCCL: the writer thread records into the trace file.
**   CLOSING the final flush was asked for (exit, fatal signal): hooks pass straight through,
**           the writer writes what it has and closes the trace.
**   OFF     OVL_DISABLE=1, a fork() child, the trace could not be written, or the final
**           flush is done. Hooks pass straight through.
*/
#ifndef OVL_INJECT_CAPTURE_H
#define OVL_INJECT_CAPTURE_H

#include "config.h"

#include <stdint.h>

enum { OVL_CAPTURE_OFF, OVL_CAPTURE_IDLE, OVL_CAPTURE_ACTIVE, OVL_CAPTURE_CLOSING };

int ovl_capture_state(void);
/* Starts the capture on the first use of CUDA or NCCL (once). Returns 1 while capturing. */
int ovl_capture_activate(void);
/* ACTIVE -> CLOSING: no new events once the final flush is asked for. Async-signal-safe. */
void ovl_capture_begin_close(void);
/* Hooks call it when they pass a call through because the capture is CLOSING: a thread
** still calling during the final flush, which keeps that flush bounded. Async-signal-safe. */
void ovl_capture_note_call_while_closing(void);
/* Whether any hook was called while CLOSING. */
int ovl_capture_called_while_closing(void);
/* Switches the capture off for good (writer failed or finished). */
void ovl_capture_stop(void);
/* Kernel thread id of the caller (what CUPTI reports with thread ids of type SYSTEM). */
int64_t ovl_capture_tid(void);
const ovl_capture_config *ovl_capture_settings(void);
/* Whether CUDA_INJECTION64_PATH names libovl (or is unset), i.e. CUPTI is ours to use. */
int ovl_capture_owns_cuda_injection(void);

#endif
