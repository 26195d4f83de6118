/*
 * gpu_rows.c - the CUDA engine's saved rows: rows kept in device memory
 * (read back a window at a time by the traceback, dropped), and the
 * wide-score rows moved from the kernel's bases (a base per 32 columns) to
 * the host's (a base per SWGPU__LONG_CHUNK columns, rows.h).
 */
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu.h"

#include <stdlib.h>
#include <string.h>

void swgpu__lg_drop(part_t *p)
{
    if (!p->kept)
        return;
    if (cudaSetDevice(p->dev) != cudaSuccess || cudaFree(p->kept) != cudaSuccess)
        (void)cudaGetLastError();
    p->kept = NULL;
    p->kept_cap = 0;
    p->kept_n = 0;
}

void swgpu__lgpu_saved_drop(swgpu__lgpu_t *g)
{
    for (int p = 0; g && p < g->P; p++)
        swgpu__lg_drop(&g->part[p]);
}

/* Wide scores: a window of a kept row, n pairs v from vertex column x0 on
 * relative to the kernel's bases (gb[q - q0]: group q; b0: column 0's),
 * into the host's format for a row of its own (long.h: base[0] for window
 * column 0, base[1 + c] for window columns 256c+1 .. 256c+256): each
 * chunk's base the largest of its columns' bases, values moved to it
 * (more than SWGPU__LONG_DROP below: minus infinity, a lower bound). */
static void window_bases(int32_t *v, int64_t n, int64_t x0, const int64_t *gb, int64_t q0, int64_t b0, int64_t *base)
{
#define GB(X) ((X) == 0 ? b0 : gb[((X) - 1) / SWGPU__LK_GROUP - q0])
    base[0] = GB(x0);
    for (int64_t c = 0; 1 + c * SWGPU__LONG_CHUNK < n; c++) {
        const int64_t lo = 1 + c * SWGPU__LONG_CHUNK, hi = lo + SWGPU__LONG_CHUNK - 1 < n - 1 ? lo + SWGPU__LONG_CHUNK - 1 : n - 1;
        int64_t B = GB(x0 + lo);
        for (int64_t x = lo + 1; x <= hi; x++)
            B = GB(x0 + x) > B ? GB(x0 + x) : B;
        base[1 + c] = B;
        for (int64_t x = lo; x <= hi; x++) {
            const int64_t d = GB(x0 + x) - B; /* <= 0 */
            for (int k = 0; k < 2; k++) {
                const int32_t u = v[2 * x + k];
                const int64_t y = (int64_t)u + d;
                v[2 * x + k] = u < SWGPU__LONG_INF32 || y < -SWGPU__LONG_DROP ? SWGPU__LONG_NEG : (int32_t)y;
            }
        }
    }
#undef GB
}

int swgpu__lgpu_saved_read(swgpu__lgpu_t *g, size_t reg, int64_t row, int64_t x0, int64_t n, int32_t *out,
                           int64_t *base)
{
    int rc = SWGPU_OK;
    int64_t *gb = NULL;
    for (int pi = 0; pi < g->P; pi++) {
        part_t *p = &g->part[pi];
        for (size_t k = 0; k < p->kept_n; k++) {
            const int64_t *in = p->kept_info + KEPT_INFO * k; /* begin, w, rows, index, bases */
            if ((size_t)in[3] != reg)
                continue;
            if (row < 0 || row >= in[2] || x0 < 0 || n < 1 || x0 + n > in[1] + 1 || (g->sc.wide && !base))
                return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: saved row %lld, columns "
                                   "%lld..%lld of region %zu's %lld x %lld kept", (long long)row, (long long)x0,
                                   (long long)(x0 + n - 1), reg, (long long)in[2], (long long)(in[1] + 1));
            CU(cudaSetDevice(p->dev));
            CU(cudaMemcpy(out, p->kept + in[0] + ((size_t)row * (size_t)(in[1] + 1) + (size_t)x0) * 2,
                          (size_t)n * 8, cudaMemcpyDeviceToHost));
            if (g->sc.wide) {
                /* the row's column-0 base and those of the groups the window covers */
                const int64_t *rb = (const int64_t *)(const void *)p->kept + in[4] + row * SWGPU__LK_SBASE(in[1]);
                const int64_t q0 = (x0 > 0 ? x0 - 1 : 0) / SWGPU__LK_GROUP, q1 = (x0 + n - 1 > 0 ? x0 + n - 2 : 0) / SWGPU__LK_GROUP;
                int64_t b0;
                if (!(gb = malloc((size_t)(q1 - q0 + 1) * sizeof *gb)))
                    return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
                CU(cudaMemcpy(&b0, rb, sizeof b0, cudaMemcpyDeviceToHost));
                CU(cudaMemcpy(gb, rb + 1 + q0, (size_t)(q1 - q0 + 1) * sizeof *gb, cudaMemcpyDeviceToHost));
                window_bases(out, n, x0, gb, q0, b0, base);
                free(gb);
            }
            return SWGPU_OK;
        }
    }
    return swgpu__fail(SWGPU_EINVAL, "long alignment: internal error: no saved rows of region %zu kept on the "
                       "device", reg);
fail:
    free(gb);
    return rc;
}

/* Wide scores: a row of w + 1 pairs {H, F} relative to the kernel's bases
 * (gb[q]: group q, SWGPU__LK_GROUP columns) moved to the host's format
 * (hb[c]: chunk c, SWGPU__LONG_CHUNK columns, long.h): each chunk's base
 * is the largest of its groups' (every group's base is its largest H), a
 * value more than SWGPU__LONG_DROP below it minus infinity (long.h: a lower
 * bound; exact values of a row's chunk lie far closer).  Column 0 stays. */
void swgpu__lg_wide_row(int32_t *v, int64_t w, const int64_t *gb, int64_t *hb)
{
    const int64_t per = SWGPU__LONG_CHUNK / SWGPU__LK_GROUP, ng = (w + SWGPU__LK_GROUP - 1) / SWGPU__LK_GROUP;
    for (int64_t c = 0; c * per < ng; c++) {
        const int64_t g0 = c * per, g1 = g0 + per < ng ? g0 + per : ng;
        int64_t B = gb[g0];
        for (int64_t x = g0 + 1; x < g1; x++)
            B = gb[x] > B ? gb[x] : B;
        hb[c] = B;
        for (int64_t x = g0; x < g1; x++) {
            const int64_t d0 = gb[x] - B; /* <= 0 */
            const int64_t j1 = (x + 1) * SWGPU__LK_GROUP < w ? (x + 1) * SWGPU__LK_GROUP : w;
            for (int64_t j = x * SWGPU__LK_GROUP + 1; j <= j1; j++)
                for (int k = 0; k < 2; k++) {
                    const int32_t u = v[2 * j + k];
                    const int64_t y = (int64_t)u + d0;
                    v[2 * j + k] = u < SWGPU__LONG_INF32 || y < -SWGPU__LONG_DROP ? SWGPU__LONG_NEG : (int32_t)y;
                }
        }
    }
}

/* Wide scores: saved rows rows0 .. of region r, copied to the host, in the
 * host's format (wide_row). */
int swgpu__lg_wide_rows(part_t *p, swgpu__lreg_t *r, const swgpu__lkreg_t *d, int64_t rows0, int64_t rows1)
{
    int rc = SWGPU_OK;
    const int64_t nk = SWGPU__LK_SBASE(r->w), nb = swgpu__lreg_nbase(r->w);
    int64_t *kb = malloc((size_t)nk * sizeof *kb);
    if (!kb || !r->saved_base) {
        free(kb);
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    }
    for (int64_t row = rows0; row < rows1; row++) {
        int64_t *hb = r->saved_base + (size_t)row * (size_t)nb;
        CU(cudaMemcpy(kb, p->dbuf + p->L.sbase + ((uint64_t)d->sbase_off + (uint64_t)row * (uint64_t)nk) * 8,
                      (size_t)nk * sizeof *kb, cudaMemcpyDeviceToHost));
        hb[0] = kb[0];
        swgpu__lg_wide_row(r->saved + (size_t)row * (size_t)(r->w + 1) * 2, r->w, kb + 1, hb + 1);
    }
fail:
    free(kb);
    return rc;
}

#else
typedef int swgpu__long_gpu_rows_unused; /* ISO C wants a declaration */
#endif
