/*
 * env.c - the library's one reading of the environment variables that
 * more than one subsystem obeys: SWGPU_BACKEND, the backend an "auto" call
 * runs on (the search's engine, the long aligner's), and SWGPU_CUDA_PAIRS,
 * whether the searches' hit ends and the iterated search's stretch scores
 * may go to the GPU; tests and benchmarks force them without new options.
 * SWGPU_DB_MAX_SEQS lowers the sequences a database may hold (the readers,
 * the engines and the search check it), for the tests.
 * SWGPU_CUDA_DEVICES maps the CUDA engine's GPUs onto devices (parsed here,
 * read by src/cuda/engine.cu).
 * (SWGPU_CPU_ISA is read by src/simd/isa.c, the rest each where it acts.)
 */
#include "base/base.h"

#include <inttypes.h>
#include <stdlib.h>
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

int swgpu__env_gpu_pairs(void)
{
    const char *pe = getenv("SWGPU_CUDA_PAIRS");
    return !(pe && !strcmp(pe, "0"));
}

uint64_t swgpu__db_max_seqs(void)
{
    const char *env = getenv("SWGPU_DB_MAX_SEQS");
    if (env && *env >= '1' && *env <= '9') {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (!*end && v < UINT32_MAX) return v;
    }
    return UINT32_MAX;
}

int swgpu__check_db_seqs(uint64_t n, const char *kind, const char *name)
{
    uint64_t max = swgpu__db_max_seqs();
    if (n <= max) return SWGPU_OK;
    return swgpu__fail(SWGPU_ERANGE, "%s%s%s: %" PRIu64 " sequences, more than the %" PRIu64
                       " a database may hold (32-bit sequence indices)", kind, name ? " " : "",
                       name ? name : "", n, max);
}

int swgpu__gpu_map(const char *s, int phys, int *map, int max)
{
    int n = 0;
    const char *p = s;
    if (!s || !*s) {
        for (; n < phys && n < max; n++)
            map[n] = n;
        return n;
    }
    for (;;) {
        long v = 0;
        const char *d = p;
        if (*p < '0' || *p > '9')
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_DEVICES=%s: expected CUDA device numbers "
                               "separated by commas, e.g. 0,0,0", s);
        for (; *p >= '0' && *p <= '9'; p++)
            if (v <= phys)
                v = v * 10 + (*p - '0');
        if (v >= phys)
            return swgpu__fail(SWGPU_ENODEV, "SWGPU_CUDA_DEVICES=%s: device %.*s, but %d CUDA "
                               "device(s) found", s, (int)(p - d), d, phys);
        if (n == max)
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_DEVICES=%s: more than %d GPUs", s, max);
        map[n++] = (int)v;
        if (!*p)
            return n;
        if (*p++ != ',')
            return swgpu__fail(SWGPU_EINVAL, "SWGPU_CUDA_DEVICES=%s: expected CUDA device numbers "
                               "separated by commas, e.g. 0,0,0", s);
    }
}
