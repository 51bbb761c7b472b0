/*
** A small Nsight Systems export built here in the shape of the documented
** `nsys export --type sqlite` schema (no nsys on this machine): kernels with registered
** names, copies, a memset, runtime calls, NVTX ranges and a mark in named domains, NCCL NVTX
** ranges with NCCL's payload (a single all-reduce, a grouped send/recv, a communicator
** creation), and a second process (device 1, one kernel) whose rows go to a trace of their own.
*/
#ifndef OVL_TEST_NSYS_BUILDER_H
#define OVL_TEST_NSYS_BUILDER_H

#define PID 4242LL
#define OTHER_PID 4343LL
#define GPID(pid) ((pid) << 24)
#define GTID(pid, tid) (((pid) << 24) | (tid))
#define COMM_ID "12345678901234567890"

/* Writes the export to path (replacing it); exits with status 2 when it cannot. */
void nsys_build_two_process_export(const char *path);

#endif
