/* What tests/gpu/gpu_workload.c does, shared with the check of its trace (test_gpu_capture.c). */
#ifndef OVL_TEST_GPU_WORKLOAD_H
#define OVL_TEST_GPU_WORKLOAD_H

#define GPU_STEPS 3              /* NVTX "step" ranges in domain "ovl" */
#define GPU_GEMMS_PER_STEP 12    /* cuBLAS SGEMMs on the compute stream per step */
#define GPU_GEMM_N 2048          /* square matrices */
#define GPU_ALLREDUCE_COUNT (16 << 20)  /* floats all-reduced (ncclAvg) per step on the second stream */
#define GPU_COPY_BYTES (8 << 20)        /* one host-to-device copy per step */
#define GPU_SENDRECV_COUNT (4 << 20)    /* floats sent to itself per step with --self-sendrecv */

#endif
