/*
 * common.cuh - host-side helpers of the CUDA sources: the library's
 * internal header with C linkage, and the checks that turn CUDA errors
 * into SWGPU_EDEVICE with file:line (never exit()).
 */
#ifndef SWGPU_CUDA_COMMON_CUH
#define SWGPU_CUDA_COMMON_CUH

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

extern "C" {
#include "engine/engine.h"
}
#include "kernels.cuh"

/** Record a CUDA failure ("file:line: call: error") and return SWGPU_EDEVICE. */
static inline int swgpu__cu_fail(cudaError_t e, const char *what, const char *file, int line)
{
    return swgpu__fail(SWGPU_EDEVICE, "%s:%d: %s: %s (%s)", file, line, what,
                       cudaGetErrorString(e), cudaGetErrorName(e));
}

/* return on failure (functions without cleanup) */
#define CU_CHECK(call)                                                        \
    do {                                                                      \
        cudaError_t cu_e_ = (call);                                           \
        if (cu_e_ != cudaSuccess)                                             \
            return swgpu__cu_fail(cu_e_, #call, __FILE__, __LINE__);          \
    } while (0)

/* after every launch */
#define CU_LAUNCHED(name) CU_CHECK_NAMED(cudaPeekAtLastError(), "launch of " name)
#define CU_CHECK_NAMED(call, name)                                            \
    do {                                                                      \
        cudaError_t cu_e_ = (call);                                           \
        if (cu_e_ != cudaSuccess)                                             \
            return swgpu__cu_fail(cu_e_, name, __FILE__, __LINE__);           \
    } while (0)

/* set rc and jump to the function's fail label */
#define CU_GO(call)                                                           \
    do {                                                                      \
        cudaError_t cu_e_ = (call);                                           \
        if (cu_e_ != cudaSuccess) {                                           \
            rc = swgpu__cu_fail(cu_e_, #call, __FILE__, __LINE__);            \
            goto fail;                                                        \
        }                                                                     \
    } while (0)

#define FULL_MASK 0xffffffffu

#endif
