/*
 * engine_mem.cu - the CUDA engine's device and pinned host allocations:
 * out-of-memory messages that say what to do, growth of reused buffers,
 * pinned buffers outgrown while kernels run, and the failure injection of
 * SWGPU_CUDA_FAIL_ALLOC (tests).
 */
#include "engine.cuh"

#include <atomic>

namespace swgpu_cuda {

static std::atomic<int> alloc_fail_at(0), alloc_count(0);

void alloc_inject(int at)
{
    alloc_fail_at.store(at);
    alloc_count.store(0);
}

cudaError_t alloc_injected(void)
{
    int at = alloc_fail_at.load();
    return at > 0 && alloc_count.fetch_add(1) + 1 == at ? cudaErrorMemoryAllocation : cudaSuccess;
}

int alloc_fail(cudaError_t e, int pinned, size_t bytes, const char *what, const char *file,
               int line)
{
    if (e != cudaErrorMemoryAllocation)
        return swgpu__cu_fail(e, what, file, line);
    cudaGetLastError();
    if (pinned)
        return swgpu__fail(SWGPU_ENOMEM, "backend cuda: out of pinned host memory (%zu bytes)",
                           bytes);
    return swgpu__fail(SWGPU_ENOMEM, "backend cuda: out of GPU memory (%zu bytes more were "
                                     "needed); --max-memory SIZE, below the GPU's free memory, "
                                     "streams the database in smaller chunks", bytes);
}

/* grow a device allocation to at least n bytes */
int dgrow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SWGPU_OK;
    if (*p)
        CU_CHECK(cudaFree(*p));
    *p = NULL;
    *cap = 0;
    size_t want = n + n / 4;
    DEV_ALLOC(p, want);
    *cap = want;
    return SWGPU_OK;
}

/* grow a pinned host allocation */
int hgrow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SWGPU_OK;
    if (*p)
        CU_CHECK(cudaFreeHost(*p));
    *p = NULL;
    *cap = 0;
    size_t want = n + n / 4;
    HOST_ALLOC(p, want);
    *cap = want;
    return SWGPU_OK;
}

/*
 * Grow a pinned host allocation while kernels run: cudaFreeHost would wait
 * for the whole device, so an outgrown buffer is set aside in d->retired
 * (freed by retire_free once the device is idle; freed at once when the
 * list is full).  scan_many allocates each slot's score rows for its first
 * batch only and grows them here, so that the first kernels need not wait
 * for pinned memory the later batches need (a few hundred MB take 0.1 s).
 */
int hgrow_keep(gpu_t *d, void **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return SWGPU_OK;
    if (*p && d->nretired < (int)(sizeof d->retired / sizeof d->retired[0])) {
        d->retired[d->nretired++] = *p;
        *p = NULL;
        *cap = 0;
    }
    return hgrow(p, cap, n);
}

void retire_free(gpu_t *d)
{
    for (int i = 0; i < d->nretired; i++)
        cudaFreeHost(d->retired[i]);
    d->nretired = 0;
}

/* d's overflow index lists (device and pinned) for n subjects */
int idx_grow(gpu_t *d, uint32_t n)
{
    if (n <= d->cap_idx)
        return SWGPU_OK;
    if (d->d_idx)
        CU_CHECK(cudaFree(d->d_idx));
    if (d->h_idx)
        CU_CHECK(cudaFreeHost(d->h_idx));
    d->d_idx = NULL;
    d->h_idx = NULL;
    d->cap_idx = 0;
    DEV_ALLOC((void **)&d->d_idx, n * sizeof(uint32_t));
    HOST_ALLOC((void **)&d->h_idx, n * sizeof(uint32_t));
    d->cap_idx = n;
    return SWGPU_OK;
}

} /* namespace swgpu_cuda */
