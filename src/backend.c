/*
 * backend.c - the one dispatch point: picks the scan engine for a search.
 *
 *   auto -> cuda (when built with CUDA and a device is present) -> cpu
 *   ref  -> the scalar reference (src/ref/), the oracle of every test
 *
 * The environment variable SWGPU_BACKEND (ref|cpu|cuda) overrides "auto",
 * so tests and benchmarks can force one engine without new options.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int swgpu__engine_select(const swgpu_opts_t *o, const swgpu_engine_ops_t **ops)
{
    swgpu_backend_t b = o->backend;
    const char *env = getenv("SWGPU_BACKEND");
    if (b == SWGPU_BACKEND_AUTO && env && *env) {
        if (!strcmp(env, "ref")) b = SWGPU_BACKEND_REF;
        else if (!strcmp(env, "cpu")) b = SWGPU_BACKEND_CPU;
        else if (!strcmp(env, "cuda")) b = SWGPU_BACKEND_CUDA;
        else if (strcmp(env, "auto"))
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_BACKEND=%s: expected ref, cpu, cuda or auto", env);
    }
    switch (b) {
    case SWGPU_BACKEND_REF:
        *ops = &swgpu__engine_ref;
        return SWGPU_OK;
    case SWGPU_BACKEND_CUDA:
#if SWGPU_HAVE_CUDA
        if (swgpu__cuda_device_count() <= 0)
            return swgpu__fail(SWGPU_ENODEV, "backend cuda: no CUDA device available");
        *ops = &swgpu__engine_cuda;
        return SWGPU_OK;
#else
        return swgpu__fail(SWGPU_ENODEV, "backend cuda: this build has no CUDA support");
#endif
    case SWGPU_BACKEND_AUTO:
#if SWGPU_HAVE_CUDA
        if (swgpu__cuda_device_count() > 0) {
            *ops = &swgpu__engine_cuda;
            return SWGPU_OK;
        }
#endif
        /* fall through */
    case SWGPU_BACKEND_CPU:
    default:
        *ops = &swgpu__engine_cpu;
        return SWGPU_OK;
    }
}

int swgpu_backend_prepare(const swgpu_opts_t *o)
{
    if (!o)
        return swgpu__fail(SWGPU_EINVAL, "backend prepare: NULL options");
#if SWGPU_HAVE_CUDA
    const char *env = getenv("SWGPU_BACKEND");
    int b = o->backend;
    if (b == SWGPU_BACKEND_AUTO && env && *env)
        b = !strcmp(env, "cuda") ? SWGPU_BACKEND_CUDA
            : !strcmp(env, "auto") ? SWGPU_BACKEND_AUTO : SWGPU_BACKEND_CPU;
    if (b == SWGPU_BACKEND_AUTO || b == SWGPU_BACKEND_CUDA)
        swgpu__cuda_prepare(o->gpus);
#endif
    return SWGPU_OK;
}

void swgpu_backend_wait(void)
{
#if SWGPU_HAVE_CUDA
    swgpu__cuda_prepare_wait();
#endif
}
