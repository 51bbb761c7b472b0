/*
** The writer thread: the only code that touches the trace file. It wakes every
** OVL_FLUSH_MS (or when buffers fill up, or on request), asks CUPTI for finished records,
** turns host events and CUPTI records into rows, and commits. Opening the file happens on
** this thread too, so no application thread ever waits for the disk.
*/
#ifndef OVL_INJECT_CAPTURE_WRITER_H
#define OVL_INJECT_CAPTURE_WRITER_H

#include "config.h"

/* Starts the thread (all signals blocked in it). Returns 0, or -1 when it cannot start. */
int ovl_writer_start(const ovl_capture_config *cfg);
/* Wakes the writer for an early drain. Async-signal-safe. */
void ovl_writer_wake(void);
/* Asks for a flush (final: then close the trace for good) and waits for it at most
** timeout_ms (elapsed, CLOCK_MONOTONIC). A final flush stops writing rows 0.5 s (or a third of the
** wait, if longer) before the end (what is left is counted as dropped) so that the file is
** closed within it. Returns 1 when
** done in time. Async-signal-safe; never call it on the writer thread. */
int ovl_writer_sync(int final, int timeout_ms);
/* The final flush at exit: as ovl_writer_sync(1, timeout_ms) while other threads keep
** calling hooks (a flood stays bounded); while none does, what is left is finite and is all
** written, however slow a loaded machine makes that: the wait then ends only when the
** writer is done, makes no progress for 2 s, or after 60 s. Returns 1 when done. */
int ovl_writer_finish(int timeout_ms);

#endif
