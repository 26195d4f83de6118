/*
 * env.c - the library's one reading of SWGPU_BACKEND, the environment
 * variable that chooses the backend an "auto" call runs on (the search's
 * engine, the long aligner's), so that tests and benchmarks can force one
 * engine without new options.
 */
#include "base/base.h"

#include <string.h>

int swgpu__env_backend(swgpu_backend_t *b)
{
    const char *env;
    if (*b != SWGPU_BACKEND_AUTO)
        return SWGPU_OK;
    env = getenv("SWGPU_BACKEND");
    if (!env || !*env || !strcmp(env, "auto"))
        return SWGPU_OK;
    if (!strcmp(env, "ref"))
        *b = SWGPU_BACKEND_REF;
    else if (!strcmp(env, "cpu"))
        *b = SWGPU_BACKEND_CPU;
    else if (!strcmp(env, "cuda"))
        *b = SWGPU_BACKEND_CUDA;
    else
        return swgpu__fail(SWGPU_EINVAL, "SWGPU_BACKEND=%s: expected ref, cpu, cuda or auto", env);
    return SWGPU_OK;
}
