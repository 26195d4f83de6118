/*
 * isa.c - the CPU's instruction sets: which this CPU supports, the one
 * SWGPU_CPU_ISA names (its only reader), the kernel tables of each set
 * (database scan, pair, strip: sw_*.c; alignment rows: aln_*.c), and one
 * scratch buffer per thread for the alignment kernels.
 */
#include "simd/simd.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ instruction sets */

int swgpu__cpu_isa_supported(swgpu__isa_t isa)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    switch (isa) {
    case SWGPU__ISA_SCALAR: return 1;
    case SWGPU__ISA_SSE41: return __builtin_cpu_supports("sse4.1") != 0;
    case SWGPU__ISA_AVX2: return __builtin_cpu_supports("avx2") != 0;
    case SWGPU__ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    }
    return 0;
#else
    return isa == SWGPU__ISA_SCALAR;
#endif
}

swgpu__isa_t swgpu__cpu_isa_best(void)
{
    if (swgpu__cpu_isa_supported(SWGPU__ISA_AVX512)) return SWGPU__ISA_AVX512;
    if (swgpu__cpu_isa_supported(SWGPU__ISA_AVX2)) return SWGPU__ISA_AVX2;
    if (swgpu__cpu_isa_supported(SWGPU__ISA_SSE41)) return SWGPU__ISA_SSE41;
    return SWGPU__ISA_SCALAR;
}

const char *swgpu__cpu_isa_name(swgpu__isa_t isa)
{
    switch (isa) {
    case SWGPU__ISA_SSE41: return "sse41";
    case SWGPU__ISA_AVX2: return "avx2";
    case SWGPU__ISA_AVX512: return "avx512";
    default: return "scalar";
    }
}

const swgpu__sw_kernels_t *swgpu__cpu_kernels(swgpu__isa_t isa)
{
    switch (isa) {
    case SWGPU__ISA_SSE41: return &swgpu__sw_sse41;
    case SWGPU__ISA_AVX2: return &swgpu__sw_avx2;
    case SWGPU__ISA_AVX512: return &swgpu__sw_avx512;
    default: return NULL;
    }
}

/* The one reading of SWGPU_CPU_ISA: unset or empty, the best this CPU has;
 * else the named set, which this CPU must support. */
int swgpu__cpu_isa_env(swgpu__isa_t *isa)
{
    static const char *const names[] = {"scalar", "sse41", "avx2", "avx512"};
    static const swgpu__isa_t sets[] = {SWGPU__ISA_SCALAR, SWGPU__ISA_SSE41, SWGPU__ISA_AVX2,
                                        SWGPU__ISA_AVX512};
    const char *env = getenv("SWGPU_CPU_ISA");
    *isa = swgpu__cpu_isa_best();
    if (!env || !*env)
        return SWGPU_OK;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(env, names[k])) {
            if (!swgpu__cpu_isa_supported(sets[k]))
                return swgpu__fail(SWGPU_ENODEV, "SWGPU_CPU_ISA=%s: this CPU lacks %s", env, env);
            *isa = sets[k];
            return SWGPU_OK;
        }
    return swgpu__fail(SWGPU_EINVAL, "SWGPU_CPU_ISA=%s: expected scalar, sse41, avx2 or avx512", env);
}

/* ------------------------------------------------ alignment kernels */

static const swgpu__aln_kernels_t *kernels_of(int isa)
{
    switch (isa) {
    case SWGPU__ISA_SSE41: return &swgpu__aln_sse41;
    case SWGPU__ISA_AVX2:
    case SWGPU__ISA_AVX512: return &swgpu__aln_avx2;
    default: return NULL;
    }
}

/* the default, decided once: -1 not yet, else a swgpu__isa_t */
static atomic_int default_isa = -1;

const swgpu__aln_kernels_t *swgpu__aln_kernels(int isa)
{
    if (isa >= 0)
        return swgpu__cpu_isa_supported((swgpu__isa_t)isa) ? kernels_of(isa) : NULL;
    isa = atomic_load(&default_isa);
    if (isa < 0) {
        swgpu__isa_t e;
        /* a bad SWGPU_CPU_ISA: the best (every caller that can fail has
         * refused it already: the engines, the search, the long aligner) */
        isa = swgpu__cpu_isa_env(&e) == SWGPU_OK ? (int)e : (int)swgpu__cpu_isa_best();
        atomic_store(&default_isa, isa);
    }
    return kernels_of(isa);
}

/* ------------------------------------------------- per-thread scratch */

typedef struct {
    void *p;
    size_t cap;
} tls_buf_t;

/* buffers up to this size stay with the thread; larger ones are freed
 * after each use */
#define THREAD_KEEP_MAX SWGPU__ALN_THREAD_KEEP

static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static int buf_key_ok;

static void buf_free(void *arg)
{
    tls_buf_t *b = arg;
    if (b) {
        free(b->p);
        free(b);
    }
}

static void buf_init(void)
{
    buf_key_ok = pthread_key_create(&buf_key, buf_free) == 0;
}

void *swgpu__aln_thread_work(size_t bytes)
{
    tls_buf_t *b;
    void *p = NULL;
    if (bytes > THREAD_KEEP_MAX) /* too large to keep: the caller's own */
        return posix_memalign(&p, 64, (bytes + 63) & ~(size_t)63) == 0 ? p : NULL;
    pthread_once(&buf_once, buf_init);
    if (!buf_key_ok)
        return NULL;
    b = pthread_getspecific(buf_key);
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            return NULL;
        if (pthread_setspecific(buf_key, b) != 0) {
            free(b);
            return NULL;
        }
    }
    if (b->cap < bytes) {
        size_t cap = bytes + bytes / 4 + 4096;
        cap = (cap + 63) & ~(size_t)63;
        if (posix_memalign(&p, 64, cap) != 0)
            return NULL;
        free(b->p);
        b->p = p;
        b->cap = cap;
    }
    return b->p;
}

void swgpu__aln_thread_work_done(void *work, size_t bytes)
{
    if (work && bytes > THREAD_KEEP_MAX)
        free(work);
}

