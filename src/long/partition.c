/*
 * partition.c - the one partitioner of the long aligner's batches, shared
 * by the CUDA engine's devices (gpu_plan.c) and the parts of a split pass
 * (split.c): many regions are dealt out whole, largest first to the least
 * loaded partition; few are each cut by columns into slices of at least
 * SWGPU__LPART_MIN_COLS columns.  It depends only on the regions' sizes and
 * the number of partitions, so every part of a split pass computes the same
 * split.
 */
#include "long/long.h"

#include <stdlib.h>

typedef struct {
    uint64_t cells;
    size_t k;
} by_t;

static int by_cells(const void *x, const void *y) /* cells descending, index ascending */
{
    const by_t *a = x, *b = y;
    if (a->cells != b->cells)
        return a->cells > b->cells ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

int swgpu__lpart_deal(const swgpu__lreg_t *regs, size_t n, int parts, int64_t *owner)
{
    uint64_t *ld;
    by_t *order;
    if (parts == 1) {
        for (size_t k = 0; k < n; k++)
            owner[k] = 0;
        return SWGPU_OK;
    }
    ld = calloc((size_t)parts, sizeof *ld); /* cells dealt to each partition */
    order = malloc((n ? n : 1) * sizeof *order);
    if (!ld || !order) {
        free(ld);
        free(order);
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    }
    for (size_t k = 0; k < n; k++) {
        order[k].cells = (uint64_t)regs[k].h * (uint64_t)regs[k].w;
        order[k].k = k;
    }
    qsort(order, n, sizeof *order, by_cells);
    for (size_t k = 0; k < n; k++) {
        int best = 0;
        for (int p = 1; p < parts; p++)
            if (ld[p] < ld[best])
                best = p;
        owner[order[k].k] = best;
        ld[best] += order[k].cells;
    }
    free(order);
    free(ld);
    return SWGPU_OK;
}

int64_t swgpu__lpart_slices(int64_t w, int64_t want)
{
    const int64_t most = w / SWGPU__LPART_MIN_COLS;
    const int64_t a = want > most ? most : want;
    return a < 1 ? 1 : a;
}

void swgpu__lpart_cols(int64_t w, int64_t a, int64_t k, int64_t *c0, int64_t *c1)
{
    *c0 = w * k / a;
    *c1 = w * (k + 1) / a;
}
