/* NCCL operation names and bandwidth factors: see nccl_ops.h. */
#include "nccl_ops.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const char *const names[OVL_OP_COUNT] = {
  "Unknown", "AllReduce", "ReduceScatter", "AllGather", "Broadcast", "Reduce",
  "AlltoAll", "Send", "Recv", "SendRecv", "Gather", "Scatter",
};

const char *ovl_op_name(ovl_op op) {
  return (op > OVL_OP_UNKNOWN && op < OVL_OP_COUNT) ? names[op] : names[0];
}

ovl_op ovl_op_from_name(const char *name) {
  if (!name) return OVL_OP_UNKNOWN;
  if (strncasecmp(name, "nccl", 4) == 0) name += 4;
  if (strcasecmp(name, "Bcast") == 0) return OVL_OP_BROADCAST;
  if (strcasecmp(name, "AllToAll") == 0) return OVL_OP_ALLTOALL;
  for (int op = 1; op < OVL_OP_COUNT; op++)
    if (strcasecmp(name, names[op]) == 0) return (ovl_op)op;
  return OVL_OP_UNKNOWN;
}

/* Case-insensitive search for `needle` in `hay`. */
static const char *find_ci(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (strncasecmp(hay, needle, n) == 0) return hay;
  return NULL;
}

ovl_op ovl_op_from_kernel_name(const char *kernel) {
  /* Longer names first: "ReduceScatter" contains "Reduce", "AllReduce" contains "Reduce". */
  static const struct { const char *token; ovl_op op; } tokens[] = {
    {"ReduceScatter", OVL_OP_REDUCESCATTER}, {"Reduce_Scatter", OVL_OP_REDUCESCATTER},
    {"AllReduce", OVL_OP_ALLREDUCE}, {"All_Reduce", OVL_OP_ALLREDUCE},
    {"AllGather", OVL_OP_ALLGATHER}, {"All_Gather", OVL_OP_ALLGATHER},
    {"AllToAll", OVL_OP_ALLTOALL}, {"All_To_All", OVL_OP_ALLTOALL},
    {"SendRecv", OVL_OP_SENDRECV}, {"Broadcast", OVL_OP_BROADCAST},
    {"Reduce", OVL_OP_REDUCE}, {"Gather", OVL_OP_GATHER}, {"Scatter", OVL_OP_SCATTER},
    {"Send", OVL_OP_SEND}, {"Recv", OVL_OP_RECV},
  };
  if (!kernel) return OVL_OP_UNKNOWN;
  for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++)
    if (find_ci(kernel, tokens[i].token)) return tokens[i].op;
  return OVL_OP_UNKNOWN;
}

/* Indexed by ncclDataType_t (nccl.h: ncclInt8 = 0 ... ncclFloat8e5m2 = 11). */
static const struct { const char *name; int size; } dtypes[] = {
  {"Int8", 1}, {"Uint8", 1}, {"Int32", 4}, {"Uint32", 4}, {"Int64", 8}, {"Uint64", 8},
  {"Float16", 2}, {"Float32", 4}, {"Float64", 8}, {"Bfloat16", 2}, {"Float8e4m3", 1}, {"Float8e5m2", 1},
};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

/* Indexed by ncclRedOp_t (ncclSum = 0 ... ncclAvg = 4); ncclNumOps = 5 starts user operators. */
static const char *const redops[] = {"Sum", "Prod", "Max", "Min", "Avg"};
#define NREDOPS ((int)(sizeof redops / sizeof redops[0]))

const char *ovl_nccl_dtype_name(int dtype) { return dtype >= 0 && dtype < NDTYPES ? dtypes[dtype].name : NULL; }

int ovl_nccl_dtype_size(int dtype) { return dtype >= 0 && dtype < NDTYPES ? dtypes[dtype].size : 0; }

const char *ovl_nccl_redop_name(int redop) {
  if (redop < 0) return NULL;
  return redop < NREDOPS ? redops[redop] : "PreMulSum";
}

int64_t ovl_op_send_bytes(ovl_op op, int64_t count, int dtype, int64_t nranks) {
  int size = ovl_nccl_dtype_size(dtype);
  if (!size || count < 0) return OVL_NONE;
  int64_t bytes = count * size;
  if (op == OVL_OP_REDUCESCATTER) return nranks > 0 ? bytes * nranks : OVL_NONE;
  return bytes;
}

double ovl_busbw_factor(ovl_op op, int64_t nranks) {
  double n = nranks > 0 ? (double)nranks : 1.0;
  switch (op) {
    case OVL_OP_ALLREDUCE: return 2.0 * (n - 1.0) / n;
    case OVL_OP_REDUCESCATTER:
    case OVL_OP_ALLGATHER:
    case OVL_OP_ALLTOALL: return (n - 1.0) / n;
    default: return 1.0;
  }
}

double ovl_algbw_bytes(ovl_op op, int64_t send_bytes, int64_t nranks) {
  double b = (double)send_bytes;
  if ((op == OVL_OP_ALLGATHER || op == OVL_OP_GATHER) && nranks > 0) return b * (double)nranks;
  return b;
}
