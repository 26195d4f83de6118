/*
 * gpu_plan.c - the CUDA engine's plan of a batch: which partition computes
 * which region or column slice (partition.c's rule, with the engine's own
 * choice of slices and partitions), and the layout and size of a
 * partition's buffers.
 */
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu.h"

#include <stdlib.h>

/* Rows per lane of a batch's strips: what all its regions ask for (16, 8
 * or 4), else 16; always 16 for column slices (their boundary columns
 * hold SWGPU__LONG_SH rows a strip). */
int swgpu__lg_rows(const swgpu__lreg_t *regs, size_t n, int wide)
{
    const int want = n > 0 ? regs[0].lane_rows : 16;
    if (wide || (want != 8 && want != 4))
        return 16;
    for (size_t k = 0; k < n; k++)
        if (regs[k].lane_rows != want || regs[k].w_all > 0)
            return 16;
    return want;
}

/* the index of the kernel in part_t.bps */
int swgpu__lg_kernel(int slice, int rows, int wide)
{
    return wide ? (slice ? 5 : 4) : slice ? 1 : rows == 8 ? 2 : rows == 4 ? 3 : 0;
}

/* Bytes of the saved rows of regions. */
uint64_t swgpu__lg_saved_bytes(const swgpu__lreg_t *regs, size_t n)
{
    uint64_t b = 0;
    for (size_t k = 0; k < n; k++)
        b += (uint64_t)swgpu__lreg_nsaved(&regs[k]) * (uint64_t)(regs[k].w + 1) * 8;
    return b;
}

/* A partition's batch whose saved rows stay on the device, in a buffer of
 * their own (part_t.kept) instead of the scratch buffer: whole regions that
 * all ask for it (swgpu__lreg_t.saved_keep) and save rows.  The traceback
 * then reads the few columns of a row it needs (swgpu__lgpu_saved_read)
 * instead of every row being copied to the host (E. coli: 3.5 GB, 2.5 s). */
/* Bytes a kept batch holds: its saved rows, then (wide scores) their bases. */
uint64_t swgpu__lg_kept_bytes(const swgpu__lreg_t *regs, size_t n, int wide)
{
    uint64_t b = swgpu__lg_saved_bytes(regs, n);
    for (size_t k = 0; wide && k < n; k++)
        b += (uint64_t)swgpu__lreg_nsaved(&regs[k]) * (uint64_t)SWGPU__LK_SBASE(regs[k].w) * 8;
    return b;
}

int swgpu__lg_keeps(const swgpu__lreg_t *regs, size_t n, int wide)
{
    (void)wide; /* wide rows keep their bases beside them (kept_bytes) */
    for (size_t k = 0; k < n; k++)
        if (!regs[k].saved_keep || regs[k].w_all > 0)
            return 0;
    return swgpu__lg_saved_bytes(regs, n) > 0;
}

void swgpu__lg_layout(const swgpu__lreg_t *regs, size_t n, int wide, layout_t *L)
{
    uint64_t ring = 0, saved = 0, rbase = 0, sbase = 0;
    int64_t strips = 0;
    const int64_t sh = 32 * (int64_t)swgpu__lg_rows(regs, n, wide);
    const int keep = swgpu__lg_keeps(regs, n, wide);
    for (size_t k = 0; k < n; k++) {
        ring += (uint64_t)2 * (uint64_t)SWGPU__LK_RING(regs[k].w) * 8;
        if (!keep)
            saved += (uint64_t)swgpu__lreg_nsaved(&regs[k]) * (uint64_t)(regs[k].w + 1) * 8;
        if (wide) {
            rbase += (uint64_t)2 * (uint64_t)SWGPU__LK_RBASE(regs[k].w) * 8;
            if (!keep)
                sbase += (uint64_t)swgpu__lreg_nsaved(&regs[k]) * (uint64_t)SWGPU__LK_SBASE(regs[k].w) * 8;
        }
        strips += (regs[k].h + sh - 1) / sh;
    }
    L->ring = 0;
    L->saved = ring;
    L->rbase = ring + saved;
    L->sbase = L->rbase + rbase;
    L->progress = L->sbase + sbase;
    L->zrun = L->progress + (((uint64_t)strips * 4 + 15) & ~(uint64_t)15);
    L->best = L->zrun + (((uint64_t)strips * 4 + 15) & ~(uint64_t)15);
    L->best = (L->best + 15) & ~(uint64_t)15;
    L->end = L->best + (uint64_t)strips * sizeof(swgpu__lkbest_t);
    L->strips = strips;
}


/* Edge e's boundary columns (strips pairs per strip, then the flags). */
uint64_t swgpu__lg_edge_bytes(int64_t strips)
{
    return (SWGPU__LK_EDGE_BASES(strips) + (uint64_t)strips * 8 + 255) & ~(uint64_t)255;
}

/*
 * The split of a batch over the partitions (partition.c).  Many regions
 * (at least twice the partitions): whole regions, largest first to the
 * partition with the least work so far (owner[k]).  Few: every region cut
 * by columns into slices(w) slices of at least SWGPU__LPART_MIN_COLS
 * columns, chained by boundary columns, slice k on partition k mod P.
 *
 * Why several slices per device: a strip is one warp's, which crosses a
 * slice of w columns in w / (~1.7M columns/s) (E. coli: 2.7 s for 4.6M
 * columns), and slice k's first strip waits for slice k-1's.  With one
 * slice per device, the second device idles for the first one's crossing
 * and the first one idles as long at the end (E. coli on 2 H100s: score
 * pass 5.2 s against 6.1 s on one).  With m slices per device, each device
 * computes its slices one after the other, the wait at either end is a
 * crossing of w / (m P) columns, and by the time a device starts its next
 * slice the boundary columns it needs are long written (a model of the
 * wavefront gives 1.67x for m = 1 and ~2.2x for m = 8 on 2 devices).
 */
int swgpu__lg_whole(const swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n)
{
    /* wide scores: a region that saves rows stays whole (its slices' bases,
     * a row's per 32 columns of the slice, are not the region's) */
    for (size_t k = 0; g->sc.wide && k < n; k++)
        if (swgpu__lreg_nsaved(&regs[k]) > 0)
            return 1;
    return g->single || (g->A == 1 && g->want <= 1) || swgpu__lpart_whole(n, g->A);
}

/* The partitions a batch uses: all of them, or (automatic slices) the
 * first alone for a batch not worth splitting: one the caller keeps on one
 * device (a pass whose cells lie along the diagonal gains nothing from a
 * column split: E. coli's reverse pass, 2.0 s on one H100, 2.1 s on two)
 * or a small one (the traceback's many short batches, whose hand-over
 * between devices costs more than it saves).  One region (a pair's score
 * and reverse passes) is split from SPREAD_REGION_CELLS on: E. coli's pair
 * (2.2e13 cells) takes 5.1 s on one H200 and 5.6 s on four, the 25 Mbp
 * pair (6.3e14) 41.0 s and 39.5 s (score only, issue 31). */
static int batch_parts(const swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n, int spread)
{
    uint64_t cells = 0;
    if (spread < 0)
        return 1;
    if (g->P == 1 || g->want > 0)
        return g->P;
    if (!spread)
        return 1;
    for (size_t k = 0; k < n; k++)
        cells += (uint64_t)regs[k].h * (uint64_t)regs[k].w;
    return cells < (n == 1 ? SPREAD_REGION_CELLS : SPREAD_CELLS) ? 1 : g->P;
}

/* Slices of a region of w columns: as many as asked for, or automatic (up
 * to SWGPU__LGPU_AUTO_SLICES a partition, AUTO_COLS columns each), within
 * the partitioner's bounds. */
static int64_t slices(const swgpu__lgpu_t *g, int64_t w)
{
    int64_t a;
    if (g->want > 0) {
        a = g->want;
    } else if (g->A == 1) {
        a = 1;
    } else {
        a = w / ((int64_t)g->A * AUTO_COLS);
        a = g->A * (a < 1 ? 1 : a > SWGPU__LGPU_AUTO_SLICES ? SWGPU__LGPU_AUTO_SLICES : a);
    }
    return swgpu__lpart_slices(w, a);
}

static int owner_reserve(swgpu__lgpu_t *g, size_t n)
{
    if (n > g->owner_cap) {
        int64_t *o = realloc(g->owner, n * sizeof *o);
        if (!o)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        g->owner = o;
        g->owner_cap = n;
    }
    return SWGPU_OK;
}

static int part_reserve(part_t *p, size_t n)
{
    if (n > p->cap) {
        swgpu__lreg_t *r = realloc(p->regs, n * sizeof *r);
        if (!r)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        p->regs = r;
        slot_t *sl = realloc(p->slot, n * sizeof *sl);
        if (!sl)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        p->slot = sl;
        p->cap = n;
    }
    return SWGPU_OK;
}

/* The partition that computes slice pp of a split region (slices dealt
 * round the A partitions of the batch). */
int swgpu__lg_slice_part(const swgpu__lgpu_t *g, int64_t pp)
{
    return (int)(pp % g->A);
}

/* Every partition's share of the batch in p->regs (and p->slot), each
 * region or slice keeping its region's index in the batch in tag0 (a
 * slice's saved rows are its region's, filled at the slice's columns); a
 * partition's slices in the order of their regions, then of their columns
 * (so a strip waits only for strips of earlier tickets on its device). */
int swgpu__lg_plan(swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n, int spread)
{
    int rc;
    size_t total = 0;
    g->single = spread < 0;
    g->A = batch_parts(g, regs, n, spread);
    g->nedges = 0;
    for (int p = 0; p < g->P; p++)
        g->part[p].n = 0;
    if (swgpu__lg_whole(g, regs, n)) {
        if ((rc = owner_reserve(g, n)) || (rc = swgpu__lpart_deal(regs, n, g->A, g->owner)))
            return rc;
        for (int p = 0; p < g->P; p++)
            if ((rc = part_reserve(&g->part[p], n)))
                return rc;
        for (size_t k = 0; k < n; k++) {
            part_t *p = &g->part[g->owner[k]];
            p->slot[p->n] = (slot_t){ 0, 1, 0 };
            p->regs[p->n] = regs[k];
            p->regs[p->n++].tag0 = (int32_t)k; /* its index in the batch */
        }
        return SWGPU_OK;
    }
    for (size_t k = 0; k < n; k++)
        total += (size_t)slices(g, regs[k].w);
    for (int p = 0; p < g->P; p++)
        if ((rc = part_reserve(&g->part[p], total)))
            return rc;
    for (size_t k = 0; k < n; k++) {
        const swgpu__lreg_t *r = &regs[k];
        int64_t a = slices(g, r->w);
        for (int64_t pp = 0; pp < a; pp++) {
            part_t *p = &g->part[swgpu__lg_slice_part(g, pp)];
            swgpu__lreg_t *s = &p->regs[p->n];
            int64_t c0, c1;
            p->slot[p->n++] = (slot_t){ (int32_t)pp, (int32_t)a, g->nedges };
            swgpu__lpart_cols(r->w, a, pp, &c0, &c1);
            *s = *r;
            s->w = c1 - c0;
            s->coff = r->coff + c0;
            s->col0 = c0;
            s->w_all = r->w;
            s->tag0 = (int32_t)k; /* s->saved: the region's rows, filled at the slice's columns */
        }
        g->nedges += (size_t)a - 1;
    }
    return SWGPU_OK;
}

static uint64_t part_bytes(const swgpu__lgpu_t *g, const part_t *p)
{
    layout_t L;
    uint64_t edges = 0;
    swgpu__lg_layout(p->regs, p->n, g->sc.wide, &L);
    for (size_t k = 0; k < p->n; k++) /* the boundary columns it receives */
        if (p->regs[k].w_all > 0 && p->regs[k].col0 > 0)
            edges += swgpu__lg_edge_bytes((p->regs[k].h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH);
    /* rows kept from an earlier batch, or this batch's (which replace them) */
    return p->fixed + L.end + p->n * sizeof(swgpu__lkreg_t) + edges +
           (swgpu__lg_keeps(p->regs, p->n, g->sc.wide) ? swgpu__lg_kept_bytes(p->regs, p->n, g->sc.wide) : p->kept_cap);
}

uint64_t swgpu__lgpu_bytes(const swgpu__lgpu_t *gc, const swgpu__lreg_t *regs, size_t n, int spread)
{
    swgpu__lgpu_t *g = (swgpu__lgpu_t *)gc; /* swgpu__lg_plan() reuses the parts' arrays */
    uint64_t most = 0;
    if (swgpu__lg_plan(g, regs, n, spread)) {
        layout_t L; /* out of host memory: the whole batch on one device */
        swgpu__lg_layout(regs, n, g->sc.wide, &L);
        return g->part[0].fixed + L.end + n * sizeof(swgpu__lkreg_t) +
               (swgpu__lg_keeps(regs, n, g->sc.wide) ? swgpu__lg_kept_bytes(regs, n, g->sc.wide) : g->part[0].kept_cap);
    }
    for (int p = 0; p < g->P; p++) {
        uint64_t b = part_bytes(g, &g->part[p]);
        most = b > most ? b : most;
    }
    return most;
}

#else
typedef int swgpu__long_gpu_plan_unused; /* ISO C wants a declaration */
#endif
