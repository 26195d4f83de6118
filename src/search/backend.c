/*
 * backend.c - the one dispatch point: picks the scan engine for a search.
 *
 *   auto -> cuda (when built with CUDA and a device is present) -> cpu
 *   ref  -> the scalar reference (src/ref/), the oracle of every test
 *
 * The environment variable SWGPU_BACKEND (ref|cpu|cuda) overrides "auto",
 * so tests and benchmarks can force one engine without new options.
 */
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

/* The kernels of the cuda backend (opts->kernel; src/cuda/engine.cu picks
 * them); the cpu and ref backends have none to choose. */
static const char *const gpu_kernels[] = {"default", "dpx", "simt", "intra", "vector", "scan"};

/* The backend o asks for, SWGPU_BACKEND applied to "auto"; -1 after an
 * error (an unknown value of SWGPU_BACKEND). */
static int requested_backend(const swgpu_opts_t *o)
{
    swgpu_backend_t b = o->backend;
    int rc = swgpu__env_backend(&b);
    return rc < 0 ? rc : (int)b;
}

/* o->kernel against backend b: an unknown name is an error whatever the
 * backend, and so is a kernel asked of the cpu or ref backend ("default"
 * apart); "auto" without a GPU runs the cpu backend and lets it pass. */
static int check_kernel(const swgpu_opts_t *o, int b)
{
    const char *k = o->kernel;
    size_t i, n = sizeof gpu_kernels / sizeof *gpu_kernels;
    if (!k)
        return SWGPU_OK;
    for (i = 0; i < n && strcmp(k, gpu_kernels[i]); i++)
        ;
    if (i == n)
        return swgpu__fail(SWGPU_EINVAL, "kernel '%s': unknown (the cuda backend's kernels: "
                                         "default, dpx, simt, intra, vector, scan; the cpu and "
                                         "ref backends have none)", k);
    if ((b == SWGPU_BACKEND_CPU || b == SWGPU_BACKEND_REF) && strcmp(k, "default"))
        return swgpu__fail(SWGPU_EINVAL, "kernel '%s': backend %s has no kernels to choose (a "
                                         "kernel is chosen for the cuda backend only)",
                           k, b == SWGPU_BACKEND_CPU ? "cpu" : "ref");
    return SWGPU_OK;
}

int swgpu__engine_select(const swgpu_opts_t *o, const swgpu_engine_ops_t **ops)
{
    int b = requested_backend(o), rc;
    if (b < 0)
        return b;
    if ((rc = check_kernel(o, b)) < 0)
        return rc;
    switch (b) {
    case SWGPU_BACKEND_REF:
        *ops = &swgpu__engine_ref;
        return SWGPU_OK;
    case SWGPU_BACKEND_CUDA:
#if SWGPU_HAVE_CUDA
        if ((rc = swgpu__cuda_device_count()) < 0)
            return rc;
        if (rc == 0)
            return swgpu__fail(SWGPU_ENODEV, "backend cuda: no CUDA device available");
        *ops = &swgpu__engine_cuda;
        return SWGPU_OK;
#else
        return swgpu__fail(SWGPU_ENODEV, "backend cuda: this build has no CUDA support");
#endif
    case SWGPU_BACKEND_AUTO:
#if SWGPU_HAVE_CUDA
        if ((rc = swgpu__cuda_device_count()) < 0)
            return rc;
        if (rc > 0) {
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
    int b = requested_backend(o), rc;
    if (b < 0)
        return b;
    if ((rc = check_kernel(o, b)) < 0)
        return rc;
#if SWGPU_HAVE_CUDA
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
