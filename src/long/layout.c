/*
 * layout.c - the memory layout of a long alignment (swgpu_align_long): the
 * budget, the size of the pieces traced back with a full matrix, and the
 * spacing of the rows the reverse passes save with what those rows cost.
 * The layout depends only on the sequence lengths, the scores and the
 * smaller of the two memory budgets, so every backend splits the same way.
 */
#include "long/long.h"

#include <math.h>

#define SH SWGPU__LONG_SH
#define PAD SWGPU__LONG_PAD
#define SLACK ((uint64_t)1 << 20) /* engine bookkeeping beyond rows and rings */

/* largest piece traced back with a full matrix (tests lower it) */
static int64_t BASE_CELLS = (int64_t)1 << 22;

int64_t swgpu__la_base_cells(void)
{
    return BASE_CELLS;
}

void swgpu__long_set_base(int64_t cells)
{
    BASE_CELLS = cells > 0 ? cells : (int64_t)1 << 22;
    if (BASE_CELLS < (int64_t)(SH + 1) * (SH + 1))
        BASE_CELLS = (int64_t)(SH + 1) * (SH + 1);
}

int swgpu__la_budget(swgpu__la_t *C, uint64_t *cap)
{
    const int64_t alen = C->alen, blen = C->blen;
    const uint64_t rowb = (uint64_t)(blen + 1) * 8;
    uint64_t fixed = (uint64_t)(2 * (alen + blen) + 4 * PAD) + (uint64_t)BASE_CELLS * 2 +
                     (uint64_t)((alen + SH - 1) / SH) * 64;
    *cap = C->host_budget < C->dev_budget ? C->host_budget : C->dev_budget;
    fixed += SLACK;
    if (*cap < fixed + 4 * rowb)
        return swgpu__fail(SWGPU_EBUDGET, "long alignment: --max-memory %llu MiB is too small for "
                           "%zu x %zu residues: at least %llu MiB are needed",
                           (unsigned long long)(*cap >> 20), (size_t)alen, (size_t)blen,
                           (unsigned long long)((fixed + 4 * rowb + (1 << 20) - 1) >> 20));
    C->layout_cap = *cap - fixed;
    C->host_fixed = (uint64_t)(2 * (alen + blen) + 4 * PAD);
    C->host_peak = C->host_fixed;
    return SWGPU_OK;
}

/*
 * Saved rows cost (hv/L) * wv * 8 bytes; the pieces they leave, about
 * hv x L along a diagonal path, cost about hv * L / 64 when split again at
 * the strip height.  L near sqrt(512 * wv) balances the two; never below
 * what the memory budget allows (Lmem).  Depends on sizes and budget only.
 */
static int64_t balanced_spacing(int64_t Lmem, int64_t wv)
{
    int64_t L = SH * (int64_t)(sqrt(512.0 * (double)wv) / SH + 0.5);
    return L > Lmem ? L : Lmem;
}

int64_t swgpu__la_rev_spacing(const swgpu__la_t *C, int64_t ie, int64_t je)
{
    const uint64_t rowb = (uint64_t)(je + 1) * 8;
    int64_t P1 = (int64_t)((C->layout_cap - 3 * rowb) / rowb); /* the rest: the engine's ring */
    if (P1 > ie / SH)
        P1 = ie / SH;
    if (P1 < 1)
        P1 = 1;
    return balanced_spacing(SH * ((ie + SH * (P1 + 1) - 1) / (SH * (P1 + 1))), je);
}

int64_t swgpu__la_split_spacing(int64_t hv, int64_t wv, uint64_t cap)
{
    uint64_t row = (uint64_t)(wv + 1) * 8, ring = (uint64_t)(wv + 128) * 16;
    int64_t pmax = cap > ring ? (int64_t)((cap - ring) / row) : 0;
    if (pmax > hv / SH)
        pmax = hv / SH;
    if (pmax < 1)
        pmax = 1;
    return balanced_spacing(SH * ((hv + SH * (pmax + 1) - 1) / (SH * (pmax + 1))), wv);
}

uint64_t swgpu__la_split_bytes(int64_t hv, int64_t wv, int64_t L)
{
    return (uint64_t)((hv - 1) / L) * (uint64_t)(wv + 1) * 8 + (uint64_t)(wv + 128) * 16 +
           (uint64_t)((hv + SH - 1) / SH) * 16 + 256;
}

uint64_t swgpu__la_base_bytes(const swgpu__la_t *C, int64_t n, int64_t w)
{
    return C->sc.wide ? (uint64_t)n * (uint64_t)swgpu__lreg_nbase(w) * 8 : 0;
}
