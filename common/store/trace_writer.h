/*
** Writes an ovl trace file (schema/ovl.sql). Rows are buffered in an open transaction
** that is committed by ovl_tw_commit(), automatically every OVL_TW_AUTOCOMMIT_ROWS rows,
** and by ovl_tw_close(). Kernel, memop, api, launch, collective and channel rows (and nvtx
** ones with write-behind) may wait in the writer in small batches until the next commit (or
** a later call) writes them, so an insert error can be reported by a later call. A writer is
** not thread-safe: use it from one thread.
** Every function returns OVL_OK or an error code with *err set ("<path>: <problem>").
*/
#ifndef OVL_TRACE_WRITER_H
#define OVL_TRACE_WRITER_H

#include "../base/status.h"
#include "trace_rows.h"

#define OVL_TW_AUTOCOMMIT_ROWS 1000000
/* How long a writer waits for a reader's lock on the file while creating it before it gives
** up; bounded, so libovl never hangs the traced program. */
#define OVL_TW_BUSY_TIMEOUT_MS 1000

typedef struct ovl_trace_writer ovl_trace_writer;

/* Creates `path`, replacing an existing file, with the schema and meta.schema_version. */
int ovl_tw_open(ovl_trace_writer **out, const char *path, ovl_err *err);
/* The same on an empty file the caller has just created (base/safe_output.h's temporary
** file, libovl's trace made O_EXCL): nothing is removed first. */
int ovl_tw_open_created(ovl_trace_writer **out, const char *path, ovl_err *err);
/* The same for a scratch file: one that is renamed into place only once written in full and
** removed on any failure (base/safe_output.h's temporary file, an import's output). Pages
** go straight into the file, the rollback journal is kept in memory and the page cache is
** small, so a commit costs one write of each changed page; but a crash in the middle of a
** commit leaves the file corrupt: never for a file that must survive its writer's crash
** (libovl's live capture). Collectives written without an id are batched too, with the id
** SQLite would give them (the largest so far + 1). */
int ovl_tw_open_scratch(ovl_trace_writer **out, const char *path, ovl_err *err);
/* From now on full batches of rows (nvtx ones included) are inserted by a thread of the
** writer while the caller goes on: an import's parse and its inserts overlap. The writer is
** still used from one thread; the rows of each table keep the order of the calls. An insert
** error is reported by a later call (at the latest ovl_tw_commit or ovl_tw_close); the rows
** handed over after it are dropped. The thread is woken once a few batches wait, and on a
** scratch file it starts the disk writes of what it inserted as it goes (sync_file_range),
** so that the import's closing fsync waits for less. Does nothing with one CPU, with commit
** hooks installed (they must not be installed later), or when the thread cannot start. */
int ovl_tw_write_behind(ovl_trace_writer *w, ovl_err *err);
/* 1 when rows are inserted by the writer's thread (ovl_tw_write_behind started it). */
int ovl_tw_writes_behind(const ovl_trace_writer *w);

int ovl_tw_meta(ovl_trace_writer *w, const char *key, const char *value, ovl_err *err);
int ovl_tw_meta_int(ovl_trace_writer *w, const char *key, int64_t value, ovl_err *err);
/* Returns in *id the strings.id of `text`, inserting it the first time it is seen. */
int ovl_tw_intern(ovl_trace_writer *w, const char *text, int64_t *id, ovl_err *err);
int ovl_tw_kernel(ovl_trace_writer *w, const ovl_kernel_row *r, ovl_err *err);
int ovl_tw_memop(ovl_trace_writer *w, const ovl_memop_row *r, ovl_err *err);
/* *id (may be NULL) receives the collective's id. */
int ovl_tw_collective(ovl_trace_writer *w, const ovl_collective_row *r, int64_t *id, ovl_err *err);
/* The same with NCCL's own account of the call (nccl may be NULL: ovl_tw_collective). */
int ovl_tw_collective_nccl(ovl_trace_writer *w, const ovl_collective_row *r, const ovl_collective_nccl *nccl,
                           int64_t *id, ovl_err *err);
int ovl_tw_channel(ovl_trace_writer *w, const ovl_channel_row *r, ovl_err *err);
int ovl_tw_proxy_op(ovl_trace_writer *w, const ovl_proxy_op_row *r, ovl_err *err);
int ovl_tw_proxy_step(ovl_trace_writer *w, const ovl_proxy_step_row *r, ovl_err *err);
/* Sets (replaces) the GPU-timer offset of a device (-1: devices not told apart). */
int ovl_tw_gpu_timer_offset(ovl_trace_writer *w, int64_t device, int64_t offset, int64_t error, int64_t stamps,
                            ovl_err *err);
int ovl_tw_launch(ovl_trace_writer *w, int64_t collective, int64_t correlation, ovl_err *err);
int ovl_tw_nvtx(ovl_trace_writer *w, const ovl_nvtx_row *r, ovl_err *err);
int ovl_tw_api(ovl_trace_writer *w, const ovl_api_row *r, ovl_err *err);

/* What a writer's owner adds to every commit (ovl_tw_commit, the automatic ones, close), with
** the transaction open: `before` may write rows (libovl keeps meta in step with the rows
** this way); then `reserve` is told the size in bytes the database will have once this
** transaction commits, and returns nonzero (with *err set) to refuse it: the commit then
** fails and the transaction is rolled back. `after` hears of each commit that succeeded.
** Any of them may be NULL. */
typedef struct ovl_tw_commit_hooks {
  void *ctx;
  int (*before)(void *ctx, ovl_trace_writer *w, ovl_err *err);
  int (*reserve)(void *ctx, int64_t db_bytes, ovl_err *err);
  void (*after)(void *ctx);
} ovl_tw_commit_hooks;
/* Installs hooks (copied), or none with NULL. */
void ovl_tw_set_commit_hooks(ovl_trace_writer *w, const ovl_tw_commit_hooks *hooks);

/* On error the transaction is rolled back: the file keeps what earlier commits wrote. */
int ovl_tw_commit(ovl_trace_writer *w, ovl_err *err);
/* Abandons the open transaction and the rows waiting in batches. */
void ovl_tw_rollback(ovl_trace_writer *w);
/* Moves what the write-ahead log holds into the database, as far as readers allow, so that
** the next transactions reuse the log from its start instead of growing it. Call it with
** no transaction open. */
int ovl_tw_checkpoint(ovl_trace_writer *w, ovl_err *err);
/* After a write failure (a full disk): abandons the open transaction, moves the write-ahead
** log into the database and empties it (this needs no new disk space once every committed
** page has its place in the database file), then writes later transactions in place with
** no journal at all, so that updating existing rows needs no new space either. A crash
** during such a write may corrupt the file. On error: the journal is left as it was. */
int ovl_tw_unjournaled(ovl_trace_writer *w, ovl_err *err);
/* Commits, leaves the file as a single self-contained database and frees w (even on error). */
int ovl_tw_close(ovl_trace_writer *w, ovl_err *err);

#endif
