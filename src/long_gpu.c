/*
 * long_gpu.c - the CUDA engine of the long aligner: device memory, batches
 * of regions, progress, copies back.  The kernel is in cuda/long_kernels.cu.
 * Built only with CUDA (SWGPU_HAVE_CUDA); without it the aligner uses the
 * CPU engine alone.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "long.h"

#ifdef SWGPU_HAVE_CUDA

#include "cuda/long_kernels.cuh"

#include <string.h>
#include <time.h>

#define CU(call)                                                                         \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            (void)cudaGetLastError(); /* clear it, so later checks do not see it again */ \
            rc = swgpu__fail(SWGPU_EDEVICE, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
                             cudaGetErrorString(e_));                                    \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

struct swgpu__lgpu {
    int sms, threads, bps;       /* multiprocessors, threads per block, blocks per SM */
    int dna;                     /* 1: the DNA (byte-select) kernel */
    uint8_t *dseq[4];
    int32_t *dmat;
    swgpu__lscore_t sc;
    cudaStream_t st, st2;        /* the pass; progress reads */
    swgpu__lkreg_t *dregs, *hregs;
    size_t regs_cap;
    char *dbuf;                  /* ring | saved | progress | best, grown as needed */
    uint64_t buf_cap;
    unsigned long long *dctr;    /* [0] ticket, [1] cells done, [2] cells pruned, [3] best (int32) */
    swgpu__lkbest_t *hbest;
    size_t hbest_cap;
    uint64_t fixed, peak;
};

int swgpu__lgpu_available(void)
{
    int n = 0;
    if (getenv("SWGPU_NO_CUDA"))
        return 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n > 0;
}

void swgpu__lgpu_destroy(swgpu__lgpu_t *g)
{
    if (!g)
        return;
    for (int k = 0; k < 4; k++)
        cudaFree(g->dseq[k]);
    cudaFree(g->dmat);
    cudaFree(g->dregs);
    cudaFree(g->dbuf);
    cudaFree(g->dctr);
    if (g->st)
        cudaStreamDestroy(g->st);
    if (g->st2)
        cudaStreamDestroy(g->st2);
    free(g->hregs);
    free(g->hbest);
    free(g);
}

int swgpu__lgpu_create(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc, swgpu__lgpu_t **out)
{
    swgpu__lgpu_t *g = calloc(1, sizeof *g);
    int rc = SWGPU_OK, dev = 0;
    int32_t mat[32 * 32];
    *out = NULL;
    if (!g)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    g->sc = *sc;
    CU(cudaGetDevice(&dev));
    CU(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, dev));
    /* the byte-select DNA kernel needs match + oe and mismatch + oe in 0..255;
     * the grid is sized for the very kernel that is launched */
    g->dna = sc->dna && sc->mismatch + sc->open + sc->ext >= 0 && sc->match + sc->open + sc->ext <= 255;
    CU(swgpu__long_occupancy(g->dna, &g->threads, &g->bps));
    if (g->bps < 1) {
        rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: the kernel cannot run on this device");
        goto fail;
    }
    CU(cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&g->st2, cudaStreamNonBlocking));
    for (int k = 0; k < 4; k++) {
        size_t n = (size_t)q->len[k] + SWGPU__LONG_PAD;
        CU(cudaMalloc((void **)&g->dseq[k], n));
        CU(cudaMemcpy(g->dseq[k], q->seq[k], n, cudaMemcpyHostToDevice));
        g->fixed += n;
    }
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++)
            mat[c * 32 + r] = sc->s[r][c];
    CU(cudaMalloc((void **)&g->dmat, sizeof mat));
    CU(cudaMemcpy(g->dmat, mat, sizeof mat, cudaMemcpyHostToDevice));
    CU(cudaMalloc((void **)&g->dctr, 4 * sizeof *g->dctr));
    g->fixed += sizeof mat + 4 * sizeof *g->dctr;
    g->peak = g->fixed;
    *out = g;
    return SWGPU_OK;
fail:
    swgpu__lgpu_destroy(g);
    return rc;
}

/* Layout of a batch in the scratch buffer (offsets in bytes). */
typedef struct {
    uint64_t ring, saved, progress, best, end;
    int64_t strips;
} layout_t;

static void batch_layout(const swgpu__lreg_t *regs, size_t n, layout_t *L)
{
    uint64_t ring = 0, saved = 0;
    int64_t strips = 0;
    for (size_t k = 0; k < n; k++) {
        ring += (uint64_t)2 * (uint64_t)SWGPU__LK_RING(regs[k].w) * 8;
        saved += (uint64_t)swgpu__lreg_nsaved(&regs[k]) * (uint64_t)(regs[k].w + 1) * 8;
        strips += (regs[k].h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
    }
    L->ring = 0;
    L->saved = ring;
    L->progress = ring + saved;
    L->best = L->progress + (((uint64_t)strips * 4 + 15) & ~(uint64_t)15);
    L->end = L->best + (uint64_t)strips * sizeof(swgpu__lkbest_t);
    L->strips = strips;
}

uint64_t swgpu__lgpu_bytes(const swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n)
{
    layout_t L;
    batch_layout(regs, n, &L);
    return g->fixed + L.end + n * sizeof(swgpu__lkreg_t);
}

uint64_t swgpu__lgpu_peak(const swgpu__lgpu_t *g)
{
    return g->peak;
}

static int better(const swgpu__lkbest_t *a, const swgpu__lkbest_t *b)
{
    if (a->best != b->best)
        return a->best > b->best;
    if (a->bj != b->bj)
        return a->bj < b->bj;
    return a->bi < b->bi;
}

int swgpu__lgpu_run(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, const swgpu__lprog_t *prog,
                    uint64_t *pruned)
{
    layout_t L;
    swgpu__lkargs_t A;
    int rc = SWGPU_OK, blocks;
    uint64_t ring_off = 0, saved_off = 0;
    int64_t first = 0;
    unsigned long long ctr[4] = { 0, 0, 0, 0 };
    int32_t best0 = 0;

    if (pruned)
        *pruned = 0;
    if (n == 0)
        return SWGPU_OK;
    batch_layout(regs, n, &L);
    if (n > g->regs_cap) {
        swgpu__lkreg_t *h = realloc(g->hregs, n * sizeof *h);
        if (!h)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        g->hregs = h;
        cudaFree(g->dregs);
        g->dregs = NULL;
        g->regs_cap = 0;
        CU(cudaMalloc((void **)&g->dregs, n * sizeof *g->dregs));
        g->regs_cap = n;
    }
    if (L.end > g->buf_cap) {
        cudaFree(g->dbuf);
        g->dbuf = NULL;
        g->buf_cap = 0;
        CU(cudaMalloc((void **)&g->dbuf, L.end));
        g->buf_cap = L.end;
    }
    if ((size_t)L.strips > g->hbest_cap) {
        swgpu__lkbest_t *b = realloc(g->hbest, (size_t)L.strips * sizeof *b);
        if (!b)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        g->hbest = b;
        g->hbest_cap = (size_t)L.strips;
    }
    if (g->fixed + g->buf_cap + g->regs_cap * sizeof(swgpu__lkreg_t) > g->peak)
        g->peak = g->fixed + g->buf_cap + g->regs_cap * sizeof(swgpu__lkreg_t);

    for (size_t k = 0; k < n; k++) {
        const swgpu__lreg_t *r = &regs[k];
        swgpu__lkreg_t *d = &g->hregs[k];
        memset(d, 0, sizeof *d);
        d->h = (int32_t)r->h;
        d->w = (int32_t)r->w;
        d->rseq = r->rseq;
        d->cseq = r->cseq;
        d->roff = r->roff;
        d->coff = r->coff;
        d->local = r->local;
        d->track = r->track;
        d->prune = r->prune;
        if (r->prune && r->local && r->prune_best > best0) /* anchored regions: not a local best */
            best0 = r->prune_best;
        d->h0 = r->h0;
        d->e0 = r->e0;
        d->f0 = r->f0;
        d->save_every = (int32_t)r->save_every;
        d->save_last = r->save_last;
        d->nstrips = (int32_t)((r->h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH);
        d->first = first;
        d->ring_off = (int64_t)(ring_off / 4);   /* int32 units from A.ring */
        d->saved_off = (int64_t)(saved_off / 4); /* int32 units from A.saved */
        first += d->nstrips;
        ring_off += (uint64_t)2 * (uint64_t)SWGPU__LK_RING(r->w) * 8;
        saved_off += (uint64_t)swgpu__lreg_nsaved(r) * (uint64_t)(r->w + 1) * 8;
    }
    CU(cudaMemcpyAsync(g->dregs, g->hregs, n * sizeof *g->dregs, cudaMemcpyHostToDevice, g->st));
    CU(cudaMemsetAsync(g->dbuf + L.progress, 0, (size_t)L.strips * 4, g->st));
    memcpy(&ctr[3], &best0, sizeof best0);
    CU(cudaMemcpyAsync(g->dctr, ctr, sizeof ctr, cudaMemcpyHostToDevice, g->st));

    memset(&A, 0, sizeof A);
    A.regs = g->dregs;
    A.nregs = (int32_t)n;
    A.total = L.strips;
    for (int k = 0; k < 4; k++)
        A.seq[k] = g->dseq[k];
    A.ring = (int32_t *)(void *)(g->dbuf + L.ring);
    A.saved = (int32_t *)(void *)(g->dbuf + L.saved);
    A.progress = (int32_t *)(void *)(g->dbuf + L.progress);
    A.best = (swgpu__lkbest_t *)(void *)(g->dbuf + L.best);
    A.ticket = g->dctr;
    A.done = g->dctr + 1;
    A.pruned = g->dctr + 2;
    A.gbest = (int32_t *)(void *)(g->dctr + 3);
    A.smax = g->sc.smax > 0 ? g->sc.smax : 0;
    A.mat = g->dmat;
    A.open = g->sc.open;
    A.ext = g->sc.ext;
    A.dna = g->dna;
    A.match = g->sc.match;
    A.mismatch = g->sc.mismatch;
    {
        int64_t want = (L.strips + g->threads / 32 - 1) / (g->threads / 32);
        blocks = g->bps * g->sms;
        if (want < blocks)
            blocks = (int)want;
    }
    CU(swgpu__long_launch(&A, blocks, g->threads, g->st));
    if (prog && prog->report) {
        for (;;) {
            cudaError_t q = cudaStreamQuery(g->st);
            unsigned long long done[2] = { 0, 0 }; /* cells done, pruned */
            struct timespec ts = { 0, 50 * 1000 * 1000 };
            if (q == cudaSuccess)
                break;
            if (q != cudaErrorNotReady)
                CU(q);
            nanosleep(&ts, NULL);
            CU(cudaMemcpyAsync(done, g->dctr + 1, sizeof done, cudaMemcpyDeviceToHost, g->st2));
            CU(cudaStreamSynchronize(g->st2));
            prog->report(prog->user, done[0], done[1] < done[0] ? done[1] : done[0]);
        }
    }
    CU(cudaStreamSynchronize(g->st));
    CU(cudaGetLastError());
    CU(cudaMemcpy(ctr, g->dctr, sizeof ctr, cudaMemcpyDeviceToHost));
    if (pruned)
        *pruned = ctr[2];

    CU(cudaMemcpy(g->hbest, A.best, (size_t)L.strips * sizeof *g->hbest, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < n; k++) {
        swgpu__lreg_t *r = &regs[k];
        const swgpu__lkreg_t *d = &g->hregs[k];
        int64_t ns = swgpu__lreg_nsaved(r);
        if (r->track) {
            swgpu__lkbest_t b = g->hbest[d->first];
            for (int64_t t = d->first + 1; t < d->first + d->nstrips; t++)
                if (better(&g->hbest[t], &b))
                    b = g->hbest[t];
            r->best = b.best;
            r->bi = b.bi;
            r->bj = b.bj;
        }
        if (ns > 0)
            CU(cudaMemcpy(r->saved, A.saved + d->saved_off, (size_t)ns * (size_t)(r->w + 1) * 8,
                          cudaMemcpyDeviceToHost));
    }
    return SWGPU_OK;
fail:
    return rc;
}

#else
typedef int swgpu__long_gpu_unused; /* ISO C wants a declaration */
#endif
