/*
 * aln_dispatch.c - picks the alignment kernels (aln_simd.h) for this CPU,
 * and keeps one scratch buffer per thread for them.
 */
#include "simd/aln_simd.h"
#include "simd/simd.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
        const char *env = getenv("SWGPU_CPU_ISA");
        isa = swgpu__cpu_isa_best();
        if (env && *env) {
            int want = -1;
            if (!strcmp(env, "scalar")) want = SWGPU__ISA_SCALAR;
            else if (!strcmp(env, "sse41")) want = SWGPU__ISA_SSE41;
            else if (!strcmp(env, "avx2")) want = SWGPU__ISA_AVX2;
            else if (!strcmp(env, "avx512")) want = SWGPU__ISA_AVX512;
            if (want >= 0 && swgpu__cpu_isa_supported((swgpu__isa_t)want))
                isa = want;
        }
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
#define THREAD_KEEP_MAX ((size_t)8 << 20)

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

/* ------------------------------------------------ local score and end */

int swgpu__aln_local_score(const swgpu__query_t *q, const uint8_t *t, size_t tlen,
                           const swgpu_matrix_t *m, int gap_open, int gap_extend, int isa,
                           int32_t *score, int64_t *qend, int64_t *tend)
{
    const swgpu__aln_kernels_t *k = swgpu__aln_kernels(isa);
    swgpu__aln_job_t jb = {0};
    int32_t st[SWGPU_NCODES * SWGPU_NCODES], smin, smax;
    const size_t qlen = q->len;
    size_t bytes;
    swgpu__query_range(q, m, &smin, &smax);
    if (!k || qlen == 0 || tlen == 0 ||
        !swgpu__aln_local_fits16(qlen, tlen, gap_open, gap_extend, smax))
        return 1;
    bytes = (5 + 32) * ((qlen + k->lanes16 - 1) / k->lanes16) * k->lanes16 * sizeof(int16_t) +
            qlen + k->lanes16 + 64;
    if (bytes > THREAD_KEEP_MAX || !(jb.work = swgpu__aln_thread_work(bytes)))
        return 1;
    if (!q->rows)
        for (int x = 0; x < SWGPU_NCODES; x++)
            for (int y = 0; y < SWGPU_NCODES; y++)
                st[y * SWGPU_NCODES + x] = m->s[x][y];
    jb.x = q->res;
    jb.w = qlen;
    jb.y = t;
    jb.h = tlen;
    jb.st = st;
    jb.xrows = q->rows;
    jb.go = gap_open;
    jb.ge = gap_extend;
    jb.mode = SWGPU__ALN_LOCAL;
    k->run16(&jb);
    swgpu__aln_thread_work_done(jb.work, bytes);
    *score = jb.best;
    if (qend)
        *qend = jb.best ? jb.found_i : 0;
    if (tend)
        *tend = jb.best ? jb.found_r : 0;
    return SWGPU_OK;
}
