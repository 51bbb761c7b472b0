/*
** The capture's life in one process (session.c), as the hooks see it.
**
**   IDLE    loaded (LD_PRELOAD or CUDA injection), nothing written yet; NVTX events are
**           buffered (a little) in case the process turns out to use CUDA or NCCL.
**   ACTIVE  the process used CUDA or NCCL: the writer thread records into the trace file.
**   COUNTING the writer could not write any more (a full disk, a write error): the trace
**           keeps what it committed; hooks pass calls straight through and count them as
**           dropped, and the writer keeps meta's counts up to date until it closes the trace.
**   CLOSING the final flush was asked for (exit, fatal signal): hooks pass straight through,
**           counting each call as dropped; the writer writes what it has and closes the trace.
**   OFF     OVL_DISABLE=1, a fork() child, the trace could not be created, or the final
**           flush is done. Hooks pass straight through.
*/
#ifndef OVL_INJECT_CAPTURE_H
#define OVL_INJECT_CAPTURE_H

#include "config.h"

#include <stdint.h>

enum { OVL_CAPTURE_OFF, OVL_CAPTURE_IDLE, OVL_CAPTURE_ACTIVE, OVL_CAPTURE_CLOSING, OVL_CAPTURE_COUNTING };

int ovl_capture_state(void);
/* Starts the capture on the first use of CUDA or NCCL (once). Returns 1 while capturing. */
int ovl_capture_activate(void);
/* ACTIVE or COUNTING -> CLOSING: no new events once the final flush is asked for.
** Async-signal-safe. */
void ovl_capture_begin_close(void);
/* ACTIVE -> COUNTING: the writer cannot write rows any more. */
void ovl_capture_stop_writing(void);
/* Whether a call the hooks let through unrecorded must be counted as dropped (CLOSING or
** COUNTING): they then call ovl_hostbuf_count_unrecorded(). */
int ovl_capture_counts_unrecorded(void);
/* Whether the trace is still open for the final flush (ACTIVE or COUNTING). */
int ovl_capture_needs_close(void);
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
