-- ovl trace store (its version: PRAGMA user_version below).
--
-- One SQLite file per traced process. This file is the single source of truth for the
-- schema: the build embeds it into every binary that writes traces (libovl.so, `ovl
-- simulate`, `ovl import`). docs/schema.md documents every table and column.
--
-- Invariants:
--   * every timestamp is an integer number of nanoseconds on the clock named in meta.clock;
--   * end >= start for every interval row (readers skip and count rows that break this);
--   * repeated text (kernel and API names) is stored once in `strings`.
-- There are deliberately no indexes on the large tables: the capture library must insert
-- a million rows per second, and the analyzer streams rows in insertion order.
--
-- The build also generates a C header from this file (cmake/SchemaHeaderRun.cmake): the
-- version below (PRAGMA user_version) and each table's columns, one per line as
-- "  name TYPE"; readers require every column whose comment does not start with "optional".

PRAGMA user_version = 1;

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT
);

CREATE TABLE IF NOT EXISTS strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS kernels (
  start       INTEGER,
  end         INTEGER,
  device      INTEGER,
  stream      INTEGER,
  correlation INTEGER,
  name        INTEGER,          -- strings.id
  grid_x      INTEGER,          -- optional: launch dimensions
  grid_y      INTEGER,          -- optional
  grid_z      INTEGER,          -- optional
  block_x     INTEGER,          -- optional
  block_y     INTEGER,          -- optional
  block_z     INTEGER           -- optional
);

CREATE TABLE IF NOT EXISTS memops (
  start       INTEGER,
  end         INTEGER,
  device      INTEGER,
  stream      INTEGER,
  correlation INTEGER,
  kind        TEXT,             -- HtoD DtoH DtoD PtoP HtoH memset
  bytes       INTEGER
);

CREATE TABLE IF NOT EXISTS collectives (
  id          INTEGER PRIMARY KEY,
  comm        INTEGER,          -- same value on every rank of the communicator
  rank        INTEGER,
  nranks      INTEGER,
  seq         INTEGER,          -- per-communicator call counter, from 0
  op          TEXT,             -- AllReduce ReduceScatter AllGather Broadcast Reduce AlltoAll Send Recv Gather Scatter
  count       INTEGER,
  dtype       TEXT,
  bytes       INTEGER,          -- per-rank send size
  redop       TEXT,
  peer        INTEGER,          -- root or peer rank, -1 when none
  device      INTEGER,
  stream      INTEGER,          -- NULL when unknown
  host_start  INTEGER,
  host_end    INTEGER,
  tid         INTEGER,
  group_id    INTEGER,          -- optional: calls inside one ncclGroupStart/End share it; NULL otherwise
  algorithm   TEXT,             -- optional: NCCL's choice as its profiler reports it (RING TREE NVLS PAT ...)
  protocol    TEXT,             -- optional: LL LL128 SIMPLE
  nchannels   INTEGER,          -- optional: channels NCCL gave the operation
  nwarps      INTEGER,          -- optional: warps per channel
  nccl_seq    INTEGER           -- optional: NCCL's own sequence number (per communicator and operation)
);

CREATE TABLE IF NOT EXISTS collective_launches (
  collective  INTEGER,          -- collectives.id
  correlation INTEGER           -- kernels/memops.correlation of the GPU work it launched
);

CREATE TABLE IF NOT EXISTS nvtx (
  start       INTEGER,
  end         INTEGER,          -- NULL for a mark
  tid         INTEGER,
  domain      TEXT,             -- NULL for the default domain
  name        TEXT
);

CREATE TABLE IF NOT EXISTS api (
  start       INTEGER,
  end         INTEGER,
  tid         INTEGER,
  correlation INTEGER,
  name        INTEGER           -- strings.id
);

-- NCCL's own account of its GPU work and network transfers, from libovl.so as NCCL's profiler
-- plugin (docs/capture.md). Optional tables: readers that do not know them ignore them.

CREATE TABLE IF NOT EXISTS collective_channels (
  collective  INTEGER,          -- collectives.id
  channel     INTEGER,          -- NCCL channel
  device      INTEGER,          -- CUDA device ordinal (NULL when unknown)
  start       INTEGER,          -- the channel's work on the GPU, on the trace clock (placed with the
  end         INTEGER,          -- offset known when written; readers re-place with gpu_timer_offsets)
  timer_start INTEGER,          -- the same two instants as the GPU global timer gave them (ns)
  timer_end   INTEGER
);

CREATE TABLE IF NOT EXISTS gpu_timer_offsets (
  device      INTEGER PRIMARY KEY,  -- CUDA device ordinal; -1: stamps of devices not told apart
  offset      INTEGER,          -- add to a GPU global-timer stamp to place it on the trace clock
  error       INTEGER,          -- how far the offset may be off either way (NULL: bounded on one side only)
  stamps      INTEGER           -- stamps it was measured from (docs/capture.md, "One clock")
);

CREATE TABLE IF NOT EXISTS proxy_ops (
  collective  INTEGER,          -- collectives.id
  channel     INTEGER,
  peer        INTEGER,          -- remote rank
  is_send     INTEGER,          -- 1 send, 0 receive
  nsteps      INTEGER,          -- network transfers
  chunk_size  INTEGER,          -- bytes per transfer
  start       INTEGER,          -- host time the proxy thread took it up
  end         INTEGER           -- host time it finished
);

CREATE TABLE IF NOT EXISTS proxy_steps (
  collective  INTEGER,          -- collectives.id
  channel     INTEGER,
  is_send     INTEGER,
  step        INTEGER,          -- transfer number within its proxy operation
  bytes       INTEGER,          -- transfer size (NULL when NCCL did not say)
  start       INTEGER,          -- host time the step began
  end         INTEGER,          -- host time it completed
  gpu_wait    INTEGER,          -- optional: when it began waiting for the GPU (send: data to send; receive: buffer consumed)
  peer_wait   INTEGER,          -- optional: send: when it began waiting for the receiver's credit
  net_wait    INTEGER,          -- optional: when it went on the network (send) or began waiting for it (receive)
  flush_wait  INTEGER           -- optional: receive: when it began flushing to the GPU
);
