/* NCCL names and sizes: see nccl_names.h. */
#include "nccl_names.h"

#include "store/trace_rows.h"

static const char *const call_names[OVL_NCCL_NCALLS] = {
  "AllReduce", "ReduceScatter", "AllGather", "Broadcast", "Reduce",
  "AlltoAll", "Gather", "Scatter", "Send", "Recv",
};

/* Indexed by ncclDataType_t (nccl.h: ncclInt8 = 0 ... ncclFloat8e5m2 = 11). */
static const struct { const char *name; int size; } dtypes[] = {
  {"Int8", 1}, {"Uint8", 1}, {"Int32", 4}, {"Uint32", 4}, {"Int64", 8}, {"Uint64", 8},
  {"Float16", 2}, {"Float32", 4}, {"Float64", 8}, {"Bfloat16", 2}, {"Float8e4m3", 1}, {"Float8e5m2", 1},
};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

/* Indexed by ncclRedOp_t (ncclSum = 0 ... ncclAvg = 4); ncclNumOps = 5 starts user operators. */
static const char *const redops[] = {"Sum", "Prod", "Max", "Min", "Avg"};
#define NREDOPS ((int)(sizeof redops / sizeof redops[0]))

const char *ovl_nccl_call_name(int call) {
  return call >= 0 && call < OVL_NCCL_NCALLS ? call_names[call] : 0;
}

const char *ovl_nccl_dtype_name(int dtype) { return dtype >= 0 && dtype < NDTYPES ? dtypes[dtype].name : 0; }

int ovl_nccl_dtype_size(int dtype) { return dtype >= 0 && dtype < NDTYPES ? dtypes[dtype].size : 0; }

const char *ovl_nccl_redop_name(int redop) {
  if (redop < 0) return 0;
  return redop < NREDOPS ? redops[redop] : "PreMulSum";
}

int64_t ovl_nccl_send_bytes(int call, int64_t count, int dtype, int64_t nranks) {
  int size = ovl_nccl_dtype_size(dtype);
  if (!size || count < 0) return OVL_NONE;
  int64_t bytes = count * size;
  if (call == OVL_NCCL_REDUCESCATTER) return nranks > 0 ? bytes * nranks : OVL_NONE;
  return bytes;
}
