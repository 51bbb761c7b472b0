/*
** What tests/inject_app.c does in its "basic" mode, shared with the test that checks the
** trace (tests/test_inject_nccl.c): the calls with their arguments, and what the trace must
** say about each (worked out by hand from NCCL's definitions, not read from a trace).
*/
#ifndef OVL_TEST_INJECT_APP_H
#define OVL_TEST_INJECT_APP_H

#include <stddef.h>

#define APP_NRANKS 4
#define APP_RANK 2
#define APP_STDOUT "app: start\napp: done\n"

typedef struct app_call {
  const char *op;     /* collectives.op */
  long count;         /* the count argument */
  int dtype;          /* ncclDataType_t */
  int redop;          /* ncclRedOp_t, -1 when the call has none */
  int peer;           /* root or peer, -1 when none */
  int group;          /* 0: alone; k > 0: inside the app's k-th ncclGroupStart/End */
  /* expected in the trace */
  const char *dtype_name, *redop_name;
  long bytes;
} app_call;

/* ncclFloat32 = 7, ncclBfloat16 = 9, ncclInt64 = 4, ncclUint8 = 1, ncclInt32 = 2, ncclFloat64 = 8,
** ncclFloat16 = 6; ncclSum = 0, ncclMax = 2, ncclAvg = 4. */
static const app_call app_calls[] = {
  {"AllReduce", 1000, 7, 0, -1, 0, "Float32", "Sum", 4000},
  {"ReduceScatter", 256, 9, 4, -1, 0, "Bfloat16", "Avg", 256 * 2 * APP_NRANKS},
  {"AllGather", 128, 4, -1, -1, 0, "Int64", NULL, 1024},
  {"Broadcast", 10, 1, -1, 1, 0, "Uint8", NULL, 10},
  {"Bcast", 20, 2, -1, 3, 0, "Int32", NULL, 80},      /* recorded as Broadcast */
  {"Reduce", 5, 8, 2, 0, 0, "Float64", "Max", 40},
  {"AlltoAll", 8, 6, -1, -1, 0, "Float16", NULL, 16},
  {"Gather", 3, 2, -1, 2, 0, "Int32", NULL, 12},
  {"Scatter", 3, 2, -1, 1, 0, "Int32", NULL, 12},
  {"Send", 7, 7, -1, 1, 0, "Float32", NULL, 28},
  {"Recv", 7, 7, -1, 3, 0, "Float32", NULL, 28},
  {"AllReduce", 64, 7, 0, -1, 1, "Float32", "Sum", 256},  /* group 1 ... */
  {"Send", 16, 1, -1, 0, 1, "Uint8", NULL, 16},
  {"Recv", 16, 1, -1, 3, 1, "Uint8", NULL, 16},           /* (inside a nested group) */
  {"AllGather", 2, 7, -1, -1, 2, "Float32", NULL, 8},     /* group 2 */
};
#define APP_NCALLS (sizeof app_calls / sizeof app_calls[0])
/* After these, the app splits the communicator and makes one AllReduce on the child. */

#endif
