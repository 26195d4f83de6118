/*
 * long_gpu.c - the CUDA engine of the long aligner: device memory, batches
 * of regions, progress, copies back.  The kernel is in cuda/long_kernels.cu.
 * Built only with CUDA (SWGPU_HAVE_CUDA); without it the aligner uses the
 * CPU engine alone.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu_kernels.cuh"

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

#define MIN_COLS 256     /* narrowest column slice of a split region */
#define AUTO_COLS 65536  /* automatic slices: at least this many columns each */
#define SPREAD_CELLS ((uint64_t)1 << 36) /* automatic: smaller batches stay on one device */
#define NCTR 8           /* part_t.dctr */
#define KEPT_INFO 5      /* part_t.kept_info entries a region */

/* Layout of a batch in a partition's scratch buffer (offsets in bytes). */
typedef struct {
    uint64_t ring, saved, rbase, sbase, progress, best, end;
    int64_t strips;
} layout_t;

/* Where a partition's region stands in its region's split: slice pp of a
 * (a = 1: a whole region), the boundary columns of the region's a - 1 edges
 * from edge eb on (edge e between slices e - eb and e - eb + 1). */
typedef struct {
    int32_t pp, a;
    size_t eb;
} slot_t;

/* One partition: a device, its copy of the sequences, its buffers, and the
 * batch it runs. */
typedef struct {
    int dev;
    int sms, threads, bps[6];    /* multiprocessors, threads per block, blocks per SM
                                    (of the kernels: whole regions with 16 rows per lane,
                                    slices, whole regions with 8 and with 4, wide scores
                                    whole and in slices: kernel_of()) */
    int dna;                     /* 1: the DNA (byte-select) kernel */
    uint8_t *dseq[4];
    int32_t *dmat;
    cudaStream_t st, st2;        /* the pass; progress reads and best hand-over */
    swgpu__lkreg_t *dregs, *hregs;
    size_t regs_cap;
    char *dbuf;                  /* ring | saved | progress | best, grown as needed */
    uint64_t buf_cap;
    unsigned long long *dctr;    /* [0] ticket, [1] cells done, [2] cells pruned, [3] best
                                    (int32; wide scores: int64), [4] the others' best (int32),
                                    [5] abort (int32), [6] stop (int32), [7] stop_at (see
                                    swgpu__lkargs_t) */
    swgpu__lkbest_t *hbest;
    size_t hbest_cap;
    uint64_t fixed, peak;
    /* the batch in flight: its regions (the part's own copies), layout */
    swgpu__lreg_t *regs;
    slot_t *slot;                /* per region: its place in the split */
    size_t n, cap;
    layout_t L;
    int running;
    unsigned long long done, pruned; /* counters read at the last report */
    int64_t best;
    char *edge;                  /* device: the boundary columns this partition receives */
    uint64_t edge_cap;
    int32_t *kept;               /* saved rows kept on the device (keeps()), region after region */
    uint64_t kept_cap;
    size_t kept_n;               /* regions kept: their index in the batch, where their rows */
    int64_t *kept_info;          /* begin (int32 units), width w (rows of w + 1 pairs {H, F}),
                                    rows, index and (wide scores) the rows' bases' begin
                                    (int64 units), KEPT_INFO a region; kept_n 0: none */
    size_t kept_info_cap;
    /* in-pass checkpoints (swgpu__lgpu_run_ck: one region on this partition) */
    int ck;                      /* the launch may be stopped (dctr[6], [7]) */
    const swgpu__lck_state_t *resume; /* the launch starts from this state (NULL: strip 0) */
    int64_t rows0;               /* saved rows already on the host (not copied back) */
} part_t;

struct swgpu__lgpu {
    swgpu__lscore_t sc;
    int P;                       /* partitions: one per device */
    int want;                    /* slices of a split region (0: automatic) */
    int A;                       /* partitions the batch in flight uses (the first A) */
    int single;                  /* the batch in flight: whole regions on the first partition
                                    (spread < 0: checkpointed passes) */
    part_t *part;
    /* Boundary columns of split regions: in the receiving partition's device
     * memory, written by its left neighbour directly (same device) or through
     * peer access; in host memory that every device maps (host_edges) when a
     * pair of neighbouring devices has no peer access. */
    int host_edges, cross;       /* host_edges; neighbours on different devices */
    char *edge;                  /* host_edges: the host-mapped buffer */
    uint64_t edge_cap;
    int64_t *owner;              /* per region of the batch: the part (whole regions) */
    size_t owner_cap;
    size_t nedges;               /* boundary columns of the batch (split regions) */
    uint64_t peak;
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

int swgpu__lgpu_devices(void)
{
    int n = 0;
    if (!swgpu__lgpu_available() || cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}

static void part_free(part_t *p)
{
    if (cudaSetDevice(p->dev) != cudaSuccess)
        (void)cudaGetLastError();
    for (int k = 0; k < 4; k++)
        cudaFree(p->dseq[k]);
    cudaFree(p->dmat);
    cudaFree(p->dregs);
    cudaFree(p->dbuf);
    cudaFree(p->dctr);
    cudaFree(p->edge);
    cudaFree(p->kept);
    free(p->kept_info);
    if (p->st)
        cudaStreamDestroy(p->st);
    if (p->st2)
        cudaStreamDestroy(p->st2);
    free(p->hregs);
    free(p->hbest);
    free(p->regs);
    free(p->slot);
}

void swgpu__lgpu_destroy(swgpu__lgpu_t *g)
{
    if (!g)
        return;
    for (int p = 0; g->part && p < g->P; p++)
        part_free(&g->part[p]);
    free(g->part);
    if (g->edge)
        cudaFreeHost(g->edge);
    free(g->owner);
    free(g);
}

static int part_create(part_t *p, int dev, const swgpu__lseqs_t *q, const swgpu__lscore_t *sc)
{
    int rc = SWGPU_OK;
    int32_t mat[32 * 32];
    p->dev = dev;
    CU(cudaSetDevice(dev));
    CU(cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, dev));
    /* the byte-select DNA kernel needs match + oe and mismatch + oe in 0..255;
     * the grid is sized for the very kernel that is launched */
    p->dna = sc->dna && sc->mismatch + sc->open + sc->ext >= 0 && sc->match + sc->open + sc->ext <= 255;
    CU(swgpu__long_occupancy(p->dna, 0, 16, 0, &p->threads, &p->bps[0]));
    CU(swgpu__long_occupancy(p->dna, 1, 16, 0, &p->threads, &p->bps[1]));
    CU(swgpu__long_occupancy(p->dna, 0, 8, 0, &p->threads, &p->bps[2]));
    CU(swgpu__long_occupancy(p->dna, 0, 4, 0, &p->threads, &p->bps[3]));
    CU(swgpu__long_occupancy(p->dna, 0, 16, 1, &p->threads, &p->bps[4]));
    CU(swgpu__long_occupancy(p->dna, 1, 16, 1, &p->threads, &p->bps[5]));
    if (p->bps[0] < 1 || p->bps[1] < 1 || p->bps[2] < 1 || p->bps[3] < 1 || p->bps[4] < 1 || p->bps[5] < 1) {
        rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: the kernel cannot run on device %d", dev);
        goto fail;
    }
    CU(cudaStreamCreateWithFlags(&p->st, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&p->st2, cudaStreamNonBlocking));
    for (int k = 0; k < 4; k++) {
        size_t n = (size_t)q->len[k] + SWGPU__LONG_PAD;
        CU(cudaMalloc((void **)&p->dseq[k], n));
        CU(cudaMemcpy(p->dseq[k], q->seq[k], n, cudaMemcpyHostToDevice));
        p->fixed += n;
    }
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++)
            mat[c * 32 + r] = sc->s[r][c];
    CU(cudaMalloc((void **)&p->dmat, sizeof mat));
    CU(cudaMemcpy(p->dmat, mat, sizeof mat, cudaMemcpyHostToDevice));
    CU(cudaMalloc((void **)&p->dctr, NCTR * sizeof *p->dctr));
    p->fixed += sizeof mat + NCTR * sizeof *p->dctr;
    p->peak = p->fixed;
fail:
    return rc;
}

int swgpu__lgpu_create(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc, const int *devs, int parts,
                       int want, swgpu__lgpu_t **out)
{
    swgpu__lgpu_t *g;
    int rc = SWGPU_OK;
    *out = NULL;
    if (parts < 1 || parts > SWGPU__LONG_MAX_PARTS)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: %d GPUs", parts);
    if (want < 0 || want > SWGPU__LGPU_MAX_SLICES)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: %d column slices, at most %d", want,
                           SWGPU__LGPU_MAX_SLICES);
    for (int p = 0; devs && p < parts; p++)
        for (int q2 = 0; q2 < p; q2++)
            if (devs[p] == devs[q2])
                return swgpu__fail(SWGPU_EINVAL, "long alignment: device %d given twice", devs[p]);
    if (!devs && parts > 1)
        return swgpu__fail(SWGPU_EINVAL, "long alignment: %d partitions without devices", parts);
    if (!(g = calloc(1, sizeof *g)))
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    g->sc = *sc;
    g->want = want;
    if (!(g->part = calloc((size_t)parts, sizeof *g->part))) {
        free(g);
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
    }
    g->P = parts;
    for (int p = 0; p < parts; p++)
        g->part[p].dev = devs ? devs[p] : 0;
    for (int p = 0; p < parts; p++)
        if ((rc = part_create(&g->part[p], g->part[p].dev, q, sc)))
            goto fail;
    for (int p = 0; parts > 1 && p < parts; p++) { /* part p writes into part p+1's memory */
        int from = g->part[p].dev, to = g->part[(p + 1) % parts].dev, can = 0;
        cudaError_t e;
        if (from == to)
            continue;
        g->cross = 1;
        CU(cudaDeviceCanAccessPeer(&can, from, to));
        if (!can) {
            g->host_edges = 1;
            continue;
        }
        CU(cudaSetDevice(from));
        e = cudaDeviceEnablePeerAccess(to, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
            (void)cudaGetLastError();
        else
            CU(e);
    }
    if (g->host_edges)
        swgpu__log(SWGPU_LOG_INFO, "long alignment: GPUs without peer access; boundary columns go "
                   "through host memory");
    *out = g;
    return SWGPU_OK;
fail:
    swgpu__lgpu_destroy(g);
    return rc;
}

/* Rows per lane of a batch's strips: what all its regions ask for (16, 8
 * or 4), else 16; always 16 for column slices (their boundary columns
 * hold SWGPU__LONG_SH rows a strip). */
static int batch_rows(const swgpu__lreg_t *regs, size_t n, int wide)
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
static int kernel_of(int slice, int rows, int wide)
{
    return wide ? (slice ? 5 : 4) : slice ? 1 : rows == 8 ? 2 : rows == 4 ? 3 : 0;
}

/* Bytes of the saved rows of regions. */
static uint64_t saved_bytes(const swgpu__lreg_t *regs, size_t n)
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
static uint64_t kept_bytes(const swgpu__lreg_t *regs, size_t n, int wide)
{
    uint64_t b = saved_bytes(regs, n);
    for (size_t k = 0; wide && k < n; k++)
        b += (uint64_t)swgpu__lreg_nsaved(&regs[k]) * (uint64_t)SWGPU__LK_SBASE(regs[k].w) * 8;
    return b;
}

static int keeps(const swgpu__lreg_t *regs, size_t n, int wide)
{
    (void)wide; /* wide rows keep their bases beside them (kept_bytes) */
    for (size_t k = 0; k < n; k++)
        if (!regs[k].saved_keep || regs[k].w_all > 0)
            return 0;
    return saved_bytes(regs, n) > 0;
}

static void batch_layout(const swgpu__lreg_t *regs, size_t n, int wide, layout_t *L)
{
    uint64_t ring = 0, saved = 0, rbase = 0, sbase = 0;
    int64_t strips = 0;
    const int64_t sh = 32 * (int64_t)batch_rows(regs, n, wide);
    const int keep = keeps(regs, n, wide);
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
    L->best = L->progress + (((uint64_t)strips * 4 + 15) & ~(uint64_t)15);
    L->best = (L->best + 15) & ~(uint64_t)15;
    L->end = L->best + (uint64_t)strips * sizeof(swgpu__lkbest_t);
    L->strips = strips;
}

/*
 * The split of a batch over the partitions.  Many regions (at least twice
 * the partitions): whole regions, largest first to the partition with the
 * least work so far (owner[k]).  Few: every region cut by columns into
 * slices(w) slices of at least MIN_COLS columns, chained by boundary
 * columns, slice k on partition k mod P.
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
static int whole_regions(const swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n)
{
    /* wide scores: a region that saves rows stays whole (its slices' bases,
     * a row's per 32 columns of the slice, are not the region's) */
    for (size_t k = 0; g->sc.wide && k < n; k++)
        if (swgpu__lreg_nsaved(&regs[k]) > 0)
            return 1;
    return g->single || (g->A == 1 && g->want <= 1) || n >= 2 * (size_t)g->A;
}

/* The partitions a batch uses: all of them, or (automatic slices) the
 * first alone for a batch not worth splitting: one the caller keeps on one
 * device (a pass whose cells lie along the diagonal gains nothing from a
 * column split: E. coli's reverse pass, 2.0 s on one H100, 2.1 s on two)
 * or a small one (the traceback's many short batches, whose hand-over
 * between devices costs more than it saves). */
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
    return cells < SPREAD_CELLS ? 1 : g->P;
}

static int64_t slices(const swgpu__lgpu_t *g, int64_t w)
{
    int64_t a, most = w / MIN_COLS;
    if (g->want > 0) {
        a = g->want;
    } else if (g->A == 1) {
        a = 1;
    } else {
        a = w / ((int64_t)g->A * AUTO_COLS);
        a = g->A * (a < 1 ? 1 : a > SWGPU__LGPU_AUTO_SLICES ? SWGPU__LGPU_AUTO_SLICES : a);
    }
    a = a > most ? most : a;
    return a < 1 ? 1 : a;
}

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

static int deal(swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n)
{
    uint64_t *ld;
    by_t *order;
    if (n > g->owner_cap) {
        int64_t *o = realloc(g->owner, n * sizeof *o);
        if (!o)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        g->owner = o;
        g->owner_cap = n;
    }
    if (g->A == 1) {
        for (size_t k = 0; k < n; k++)
            g->owner[k] = 0;
        return SWGPU_OK;
    }
    ld = calloc((size_t)g->A, sizeof *ld); /* cells dealt to each partition */
    order = malloc(n * sizeof *order);
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
        for (int p = 1; p < g->A; p++)
            if (ld[p] < ld[best])
                best = p;
        g->owner[order[k].k] = best;
        ld[best] += order[k].cells;
    }
    free(order);
    free(ld);
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
static int slice_part(const swgpu__lgpu_t *g, int64_t pp)
{
    return (int)(pp % g->A);
}

/* Slice pp of region r (a slices): its columns. */
static void slice_cols(int64_t w, int64_t a, int64_t pp, int64_t *c0, int64_t *c1)
{
    *c0 = w * pp / a;
    *c1 = w * (pp + 1) / a;
}

/* Every partition's share of the batch in p->regs (and p->slot), each
 * region or slice keeping its region's index in the batch in tag0 (a
 * slice's saved rows are its region's, filled at the slice's columns); a
 * partition's slices in the order of their regions, then of their columns
 * (so a strip waits only for strips of earlier tickets on its device). */
static int plan(swgpu__lgpu_t *g, const swgpu__lreg_t *regs, size_t n, int spread)
{
    int rc;
    size_t total = 0;
    g->single = spread < 0;
    g->A = batch_parts(g, regs, n, spread);
    g->nedges = 0;
    for (int p = 0; p < g->P; p++)
        g->part[p].n = 0;
    if (whole_regions(g, regs, n)) {
        if ((rc = deal(g, regs, n)))
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
            part_t *p = &g->part[slice_part(g, pp)];
            swgpu__lreg_t *s = &p->regs[p->n];
            int64_t c0, c1;
            p->slot[p->n++] = (slot_t){ (int32_t)pp, (int32_t)a, g->nedges };
            slice_cols(r->w, a, pp, &c0, &c1);
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

static uint64_t edge_bytes(int64_t strips);

static uint64_t part_bytes(const swgpu__lgpu_t *g, const part_t *p)
{
    layout_t L;
    uint64_t edges = 0;
    batch_layout(p->regs, p->n, g->sc.wide, &L);
    for (size_t k = 0; k < p->n; k++) /* the boundary columns it receives */
        if (p->regs[k].w_all > 0 && p->regs[k].col0 > 0)
            edges += edge_bytes((p->regs[k].h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH);
    /* rows kept from an earlier batch, or this batch's (which replace them) */
    return p->fixed + L.end + p->n * sizeof(swgpu__lkreg_t) + edges +
           (keeps(p->regs, p->n, g->sc.wide) ? kept_bytes(p->regs, p->n, g->sc.wide) : p->kept_cap);
}

uint64_t swgpu__lgpu_bytes(const swgpu__lgpu_t *gc, const swgpu__lreg_t *regs, size_t n, int spread)
{
    swgpu__lgpu_t *g = (swgpu__lgpu_t *)gc; /* plan() reuses the parts' arrays */
    uint64_t most = 0;
    if (plan(g, regs, n, spread)) {
        layout_t L; /* out of host memory: the whole batch on one device */
        batch_layout(regs, n, g->sc.wide, &L);
        return g->part[0].fixed + L.end + n * sizeof(swgpu__lkreg_t) +
               (keeps(regs, n, g->sc.wide) ? kept_bytes(regs, n, g->sc.wide) : g->part[0].kept_cap);
    }
    for (int p = 0; p < g->P; p++) {
        uint64_t b = part_bytes(g, &g->part[p]);
        most = b > most ? b : most;
    }
    return most;
}

static void part_drop(part_t *p)
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
        part_drop(&g->part[p]);
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

uint64_t swgpu__lgpu_peak(const swgpu__lgpu_t *g)
{
    uint64_t most = 0;
    for (int p = 0; p < g->P; p++)
        most = g->part[p].peak > most ? g->part[p].peak : most;
    return most;
}


/* Edge e's boundary columns (strips pairs per strip, then the flags). */
static uint64_t edge_bytes(int64_t strips)
{
    return (SWGPU__LK_EDGE_BASES(strips) + (uint64_t)strips * 8 + 255) & ~(uint64_t)255;
}

/* Wide scores: a row of w + 1 pairs {H, F} relative to the kernel's bases
 * (gb[q]: group q, SWGPU__LK_GROUP columns) moved to the host's format
 * (hb[c]: chunk c, SWGPU__LONG_CHUNK columns, long.h): each chunk's base
 * is the largest of its groups' (every group's base is its largest H), a
 * value more than SWGPU__LONG_DROP below it minus infinity (long.h: a lower
 * bound; exact values of a row's chunk lie far closer).  Column 0 stays. */
static void wide_row(int32_t *v, int64_t w, const int64_t *gb, int64_t *hb)
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

/* A launch that resumes from state st (one region, p->regs[0]): the bottom
 * row of strip next-1 into its ring slot (a chunk the state marks low
 * holds the lower bounds H = 0 (local) or NEG, F = NEG; wide scores: each
 * group takes its chunk's base), strips 0 .. next-1 published in full,
 * their bests NEG but strip next-1's, the state's best. */
static int put_state(const swgpu__lgpu_t *g, part_t *p, const swgpu__lck_state_t *st, const layout_t *L)
{
    int rc = SWGPU_OK;
    const swgpu__lreg_t *r = &p->regs[0];
    const int64_t w = r->w, next = st->next, nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK;
    const int64_t ng = SWGPU__LK_RBASE(w), slot = (next - 1) & 1;
    const int32_t lowH = r->local ? 0 : SWGPU__LONG_NEG;
    int32_t *row = malloc((size_t)(w + 1) * 8), *prog = malloc((size_t)next * 4);
    int64_t *gb = g->sc.wide ? calloc((size_t)ng, 8) : NULL;
    swgpu__lkbest_t *b = malloc((size_t)next * sizeof *b);
    if (!row || !prog || !b || (g->sc.wide && !gb)) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        goto fail;
    }
    row[0] = row[1] = SWGPU__LONG_NEG; /* column 0: never read */
    for (int64_t j = 1; j <= w; j++) {
        const int low = st->low[(j - 1) / SWGPU__LONG_CHUNK] != 0;
        row[2 * j] = low ? lowH : st->rowH[j];
        row[2 * j + 1] = low ? SWGPU__LONG_NEG : st->rowF[j];
    }
    for (int64_t q = 0; gb && q < ng; q++) {
        const int64_t c = q * SWGPU__LK_GROUP / SWGPU__LONG_CHUNK;
        gb[q] = c < nch && !st->low[c] ? st->base[c] : 0;
    }
    for (int64_t t = 0; t < next; t++) {
        prog[t] = (int32_t)w;
        b[t].best = SWGPU__LONG_NEG64;
        b[t].bi = b[t].bj = 0;
    }
    b[next - 1].best = st->best;
    b[next - 1].bi = (int32_t)st->bi;
    b[next - 1].bj = (int32_t)st->bj;
    {
        const swgpu__lkreg_t *d = &p->hregs[0];
        char *ring = p->dbuf + L->ring + (uint64_t)d->ring_off * 4 + (uint64_t)slot * (uint64_t)SWGPU__LK_RING(w) * 8;
        /* synchronous: the host buffers go when this returns */
        CU(cudaMemcpy(ring, row, (size_t)(w + 1) * 8, cudaMemcpyHostToDevice));
        if (gb)
            CU(cudaMemcpy(p->dbuf + L->rbase + ((uint64_t)d->rbase_off + (uint64_t)slot * (uint64_t)ng) * 8, gb,
                          (size_t)ng * 8, cudaMemcpyHostToDevice));
        CU(cudaStreamSynchronize(p->st)); /* after the progress words are cleared */
        CU(cudaMemcpy(p->dbuf + L->progress, prog, (size_t)next * 4, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(p->dbuf + L->best, b, (size_t)next * sizeof *b, cudaMemcpyHostToDevice));
    }
fail:
    free(row);
    free(prog);
    free(gb);
    free(b);
    return rc;
}

/* Launch a partition's batch (p->regs[0 .. n-1]); boundary columns of
 * slices at edge_off[edge] in the receiving partition's buffer. */
static int part_launch(swgpu__lgpu_t *g, part_t *p, const uint64_t *edge_off)
{
    swgpu__lkargs_t A;
    int rc = SWGPU_OK, blocks, slice = 0;
    uint64_t ring_off = 0, saved_off = 0, rbase_off = 0, sbase_off = 0;
    int64_t first = 0;
    unsigned long long ctr[NCTR] = { 0, 0, 0, 0, 0, 0, 0, ~0ULL };
    int64_t best0 = 0;
    const size_t n = p->n;
    const int rows = batch_rows(p->regs, n, g->sc.wide);
    layout_t *L = &p->L;

    if (n == 0)
        return SWGPU_OK;
    CU(cudaSetDevice(p->dev));
    batch_layout(p->regs, n, g->sc.wide, L);
    if (n > p->regs_cap) {
        swgpu__lkreg_t *h = realloc(p->hregs, n * sizeof *h);
        if (!h)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        p->hregs = h;
        cudaFree(p->dregs);
        p->dregs = NULL;
        p->regs_cap = 0;
        CU(cudaMalloc((void **)&p->dregs, n * sizeof *p->dregs));
        p->regs_cap = n;
    }
    if (L->end > p->buf_cap) {
        cudaFree(p->dbuf);
        p->dbuf = NULL;
        p->buf_cap = 0;
        CU(cudaMalloc((void **)&p->dbuf, L->end));
        p->buf_cap = L->end;
    }
    if (keeps(p->regs, n, g->sc.wide)) { /* the rows of an earlier batch go; room for this one's */
        const uint64_t want = kept_bytes(p->regs, n, g->sc.wide);
        p->kept_n = 0; /* until the batch is done */
        if (n > p->kept_info_cap) {
            int64_t *in = realloc(p->kept_info, n * KEPT_INFO * sizeof *in);
            if (!in)
                return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
            p->kept_info = in;
            p->kept_info_cap = n;
        }
        if (want > p->kept_cap) {
            cudaFree(p->kept);
            p->kept = NULL;
            p->kept_cap = 0;
            CU(cudaMalloc((void **)&p->kept, want));
            p->kept_cap = want;
        }
    }
    if ((size_t)L->strips > p->hbest_cap) {
        swgpu__lkbest_t *b = realloc(p->hbest, (size_t)L->strips * sizeof *b);
        if (!b)
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        p->hbest = b;
        p->hbest_cap = (size_t)L->strips;
    }
    if (p->fixed + p->buf_cap + p->regs_cap * sizeof(swgpu__lkreg_t) + p->kept_cap > p->peak)
        p->peak = p->fixed + p->buf_cap + p->regs_cap * sizeof(swgpu__lkreg_t) + p->kept_cap;

    for (size_t k = 0; k < n; k++) {
        const swgpu__lreg_t *r = &p->regs[k];
        swgpu__lkreg_t *d = &p->hregs[k];
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
        d->nstrips = (int32_t)((r->h + 32 * rows - 1) / (32 * rows));
        d->first = first;
        d->ring_off = (int64_t)(ring_off / 4);   /* int32 units from A.ring */
        d->saved_off = (int64_t)(saved_off / 4); /* int32 units from A.saved */
        d->rbase_off = (int64_t)rbase_off;       /* int64 units from A.rbase, A.sbase */
        d->sbase_off = (int64_t)sbase_off;
        if (r->w_all > 0) { /* a slice: boundary columns from and to its neighbours */
            const int64_t strips = d->nstrips;
            slice = 1;
            d->col0 = r->col0;
            d->wrem = r->w_all - r->col0 - r->w;
            const slot_t *sl = &p->slot[k];
            if (sl->pp > 0) { /* edge pp-1 is received here */
                char *e = (g->host_edges ? g->edge : p->edge) + edge_off[sl->eb + (size_t)sl->pp - 1];
                d->lin = (const int32_t *)(void *)e;
                d->lflag = (const int32_t *)(void *)(e + (uint64_t)strips * SWGPU__LK_EDGE * 8);
                d->lin_base = (const long long *)(void *)(e + SWGPU__LK_EDGE_BASES(strips));
            }
            if (sl->pp + 1 < sl->a) { /* edge pp, received by slice pp+1's partition */
                char *e = (g->host_edges ? g->edge : g->part[slice_part(g, sl->pp + 1)].edge) +
                          edge_off[sl->eb + (size_t)sl->pp];
                d->rout = (int32_t *)(void *)e;
                d->rflag = (int32_t *)(void *)(e + (uint64_t)strips * SWGPU__LK_EDGE * 8);
                d->rout_base = (long long *)(void *)(e + SWGPU__LK_EDGE_BASES(strips));
            }
        }
        first += d->nstrips;
        ring_off += (uint64_t)2 * (uint64_t)SWGPU__LK_RING(r->w) * 8;
        saved_off += (uint64_t)swgpu__lreg_nsaved(r) * (uint64_t)(r->w + 1) * 8;
        if (g->sc.wide) {
            rbase_off += (uint64_t)2 * (uint64_t)SWGPU__LK_RBASE(r->w);
            sbase_off += (uint64_t)swgpu__lreg_nsaved(r) * (uint64_t)SWGPU__LK_SBASE(r->w);
        }
    }
    CU(cudaMemcpyAsync(p->dregs, p->hregs, n * sizeof *p->dregs, cudaMemcpyHostToDevice, p->st));
    CU(cudaMemsetAsync(p->dbuf + L->progress, 0, (size_t)L->strips * 4, p->st));
    if (p->resume) {
        /* strips 0 .. next-1 done: the counters, and the gbest the pass had */
        const swgpu__lck_state_t *st = p->resume;
        ctr[0] = (unsigned long long)st->next;
        ctr[1] = st->cells + st->pruned;
        ctr[2] = st->pruned;
        best0 = st->gbest > best0 ? st->gbest : best0;
        if ((rc = put_state(g, p, st, L)))
            goto fail;
    }
    if (g->sc.wide) {
        memcpy(&ctr[3], &best0, sizeof best0);
    } else {
        const int32_t b32 = (int32_t)best0;
        memcpy(&ctr[3], &b32, sizeof b32);
    }
    CU(cudaMemcpyAsync(p->dctr, ctr, sizeof ctr, cudaMemcpyHostToDevice, p->st));
    p->done = p->pruned = 0;
    p->best = best0;

    memset(&A, 0, sizeof A);
    if (p->ck) {
        A.stop = (const int32_t *)(void *)(p->dctr + 6);
        A.stop_at = p->dctr + 7;
    }
    A.regs = p->dregs;
    A.nregs = (int32_t)n;
    A.total = L->strips;
    for (int k = 0; k < 4; k++)
        A.seq[k] = p->dseq[k];
    A.ring = (int32_t *)(void *)(p->dbuf + L->ring);
    A.saved = keeps(p->regs, n, g->sc.wide) ? p->kept : (int32_t *)(void *)(p->dbuf + L->saved);
    A.progress = (int32_t *)(void *)(p->dbuf + L->progress);
    A.best = (swgpu__lkbest_t *)(void *)(p->dbuf + L->best);
    A.ticket = p->dctr;
    A.done = p->dctr + 1;
    A.pruned = p->dctr + 2;
    A.gbest = (int32_t *)(void *)(p->dctr + 3);
    A.rbest = (const int32_t *)(void *)(p->dctr + 4);
    A.abort = (const int32_t *)(void *)(p->dctr + 5); /* device memory: read in spin loops */
    A.sysfence = g->host_edges || g->cross;
    A.smax = g->sc.smax > 0 ? g->sc.smax : 0;
    A.mat = p->dmat;
    A.open = g->sc.open;
    A.ext = g->sc.ext;
    A.dna = p->dna;
    A.match = g->sc.match;
    A.mismatch = g->sc.mismatch;
    A.rows = rows;
    A.wide = g->sc.wide;
    if (A.wide) {
        A.rbase = (long long *)(void *)(p->dbuf + L->rbase);
        /* kept rows: their bases follow them in the kept buffer */
        A.sbase = keeps(p->regs, n, 1) ? (long long *)(void *)((char *)p->kept + saved_bytes(p->regs, n))
                                       : (long long *)(void *)(p->dbuf + L->sbase);
        A.gbest64 = (long long *)(void *)(p->dctr + 3);
        A.rbest64 = (const long long *)(void *)(p->dctr + 4);
    }
    {
        int64_t want = (L->strips + p->threads / 32 - 1) / (p->threads / 32);
        /* SWGPU_LONG_BLOCKS=N: at most N blocks (tests and measurements: fewer
         * strips in flight, so an in-pass checkpoint stops sooner) */
        const char *env = getenv("SWGPU_LONG_BLOCKS");
        blocks = p->bps[kernel_of(slice, rows, g->sc.wide)] * p->sms;
        if (env && atoi(env) > 0 && atoi(env) < blocks)
            blocks = atoi(env);
        if (want < blocks)
            blocks = (int)want;
    }
    CU(swgpu__long_launch(&A, slice, blocks, p->threads, p->st));
    p->running = 1;
    return SWGPU_OK;
fail:
    return rc;
}

/* Wide scores: saved rows rows0 .. of region r, copied to the host, in the
 * host's format (wide_row). */
static int wide_rows(part_t *p, swgpu__lreg_t *r, const swgpu__lkreg_t *d, int64_t rows0, int64_t rows1)
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
        wide_row(r->saved + (size_t)row * (size_t)(r->w + 1) * 2, r->w, kb + 1, hb + 1);
    }
fail:
    free(kb);
    return rc;
}

/* Wait for a partition's batch; its regions' bests and saved rows. */
static int part_finish(const swgpu__lgpu_t *g, part_t *p)
{
    int rc = SWGPU_OK;
    unsigned long long ctr[NCTR];
    const size_t n = p->n;
    if (!p->running)
        return SWGPU_OK;
    p->running = 0;
    CU(cudaSetDevice(p->dev));
    CU(cudaStreamSynchronize(p->st));
    CU(cudaGetLastError());
    CU(cudaMemcpy(ctr, p->dctr, sizeof ctr, cudaMemcpyDeviceToHost));
    p->done = ctr[1];
    p->pruned = ctr[2];
    CU(cudaMemcpy(p->hbest, p->dbuf + p->L.best, (size_t)p->L.strips * sizeof *p->hbest,
                  cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < n; k++) {
        swgpu__lreg_t *r = &p->regs[k];
        const swgpu__lkreg_t *d = &p->hregs[k];
        int64_t ns = swgpu__lreg_nsaved(r);
        if (r->track) {
            swgpu__lkbest_t b = p->hbest[d->first];
            for (int64_t t = d->first + 1; t < d->first + d->nstrips; t++)
                if (swgpu__lbest_better(p->hbest[t].best, p->hbest[t].bi, p->hbest[t].bj, b.best, b.bi, b.bj))
                    b = p->hbest[t];
            r->best = b.best;
            r->bi = b.bi;
            r->bj = b.bj;
        }
        r->saved_kept = 0;
        if (keeps(p->regs, n, g->sc.wide)) {
            int64_t *in = p->kept_info + KEPT_INFO * p->kept_n++;
            in[0] = d->saved_off; /* int32 units, as in the scratch buffer */
            in[1] = r->w;
            in[2] = ns;
            in[3] = r->tag0;      /* the region's index in the batch */
            in[4] = (int64_t)(saved_bytes(p->regs, n) / 8) + d->sbase_off;
            r->saved_kept = 1;
        } else if (ns > 0 && r->saved && r->w_all > 0) {
            /* a slice: its vertex columns 1..w (0..w for the first) into the
             * region's rows, at the region's columns col0 + 1 .. col0 + w */
            const size_t from = r->col0 > 0 ? 1 : 0;
            CU(cudaMemcpy2D(r->saved + ((size_t)r->col0 + from) * 2, (size_t)(r->w_all + 1) * 8,
                            p->dbuf + p->L.saved + (uint64_t)d->saved_off * 4 + from * 8,
                            (size_t)(r->w + 1) * 8, (size_t)(r->w + 1 - from) * 8, (size_t)ns,
                            cudaMemcpyDeviceToHost));
        } else if (ns > p->rows0 && r->saved) {
            /* (the rows before rows0 are on the host already: a resumed pass) */
            const size_t from = (size_t)p->rows0 * (size_t)(r->w + 1);
            CU(cudaMemcpy(r->saved + 2 * from, p->dbuf + p->L.saved + (uint64_t)d->saved_off * 4 + from * 8,
                          (size_t)(ns - p->rows0) * (size_t)(r->w + 1) * 8, cudaMemcpyDeviceToHost));
            if (g->sc.wide && (rc = wide_rows(p, r, d, p->rows0, ns)))
                return rc;
        }
    }
    return SWGPU_OK;
fail:
    return rc;
}

/* A partition failed: the running ones' slices that wait for a boundary
 * column give up (their abort word, in device memory, written by a copy). */
static void abort_all(swgpu__lgpu_t *g)
{
    static const int32_t one = 1;
    if (g->P < 2)
        return;
    for (int pi = 0; pi < g->P; pi++) {
        part_t *p = &g->part[pi];
        if (p->running && cudaSetDevice(p->dev) == cudaSuccess &&
            cudaMemcpyAsync(p->dctr + 5, &one, sizeof one, cudaMemcpyHostToDevice, p->st2) == cudaSuccess)
            (void)cudaStreamSynchronize(p->st2);
        (void)cudaGetLastError();
    }
}

/* Progress of the running partitions, and each one's best handed to the
 * others (pruning); 0 when every partition is done. */
static int poll_parts(swgpu__lgpu_t *g, const swgpu__lprog_t *prog, int *rc)
{
    int busy = 0;
    int64_t top = 0;
    unsigned long long done = 0, pruned = 0;
    for (int pi = 0; pi < g->P; pi++) {
        part_t *p = &g->part[pi];
        if (p->running) {
            unsigned long long c[3];
            cudaError_t q = cudaErrorUnknown;
            if (cudaSetDevice(p->dev) != cudaSuccess || (q = cudaStreamQuery(p->st)) != cudaErrorNotReady) {
                /* done, or failed (part_finish tells): the slices waiting for it give up */
                if (q != cudaSuccess)
                    abort_all(g);
                (void)cudaGetLastError();
            } else if (cudaMemcpyAsync(c, p->dctr + 1, sizeof c, cudaMemcpyDeviceToHost, p->st2) != cudaSuccess ||
                       cudaStreamSynchronize(p->st2) != cudaSuccess) {
                (void)cudaGetLastError();
                if (!*rc)
                    *rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: device %d stopped answering", p->dev);
            } else {
                busy = 1;
                p->done = c[0];
                p->pruned = c[1];
                if (g->sc.wide) {
                    memcpy(&p->best, &c[2], sizeof p->best);
                } else {
                    int32_t b32;
                    memcpy(&b32, &c[2], sizeof b32);
                    p->best = b32;
                }
            }
        }
        done += p->done;
        pruned += p->pruned;
        top = p->best > top ? p->best : top;
    }
    if (busy && g->A > 1)
        for (int pi = 0; pi < g->P; pi++) {
            /* the others' best: int32, or int64 for wide scores (held in `top`) */
            part_t *p = &g->part[pi];
            const int32_t top32 = (int32_t)top;
            const void *src = g->sc.wide ? (const void *)&top : (const void *)&top32;
            if (p->running && top > p->best && cudaSetDevice(p->dev) == cudaSuccess &&
                cudaMemcpyAsync(p->dctr + 4, src, g->sc.wide ? 8 : 4, cudaMemcpyHostToDevice, p->st2) == cudaSuccess)
                (void)cudaStreamSynchronize(p->st2);
            (void)cudaGetLastError();
        }
    if (prog && prog->report)
        prog->report(prog->user, done, pruned < done ? pruned : done);
    return busy;
}

int swgpu__lgpu_run(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, int spread, const swgpu__lprog_t *prog,
                    uint64_t *pruned)
{
    int rc = SWGPU_OK, whole;
    uint64_t *edge_off = NULL, edges = 0;

    if (pruned)
        *pruned = 0;
    if (n == 0)
        return SWGPU_OK;
    if ((rc = plan(g, regs, n, spread)))
        return rc;
    for (int pi = 0; pi < g->P; pi++) { /* a partition the batch does not use counts nothing */
        g->part[pi].done = g->part[pi].pruned = 0;
        g->part[pi].best = 0;
    }
    whole = whole_regions(g, regs, n);
    if (!whole) {
        /* boundary columns: one per pair of neighbouring slices, in the
         * memory of the right one's partition */
        edge_off = calloc(g->nedges + 1, sizeof *edge_off);
        if (!edge_off) {
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
            goto done;
        }
        uint64_t *need = calloc((size_t)g->P, sizeof *need); /* bytes each receiver holds */
        int64_t *estrips = calloc(g->nedges + 1, sizeof *estrips); /* each column's strips */
        int *erecv = calloc(g->nedges + 1, sizeof *erecv);        /* and receiving partition */
        if (!need || !estrips || !erecv) {
            free(need);
            free(estrips);
            free(erecv);
            rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
            goto done;
        }
        /* the columns from the plan: slice pp's right one is edge eb + pp,
         * received by slice pp + 1's partition */
        for (int pi = 0; pi < g->P; pi++)
            for (size_t x = 0; x < g->part[pi].n; x++) {
                const slot_t *sl = &g->part[pi].slot[x];
                if (sl->pp + 1 < sl->a) {
                    const size_t e = sl->eb + (size_t)sl->pp;
                    estrips[e] = (g->part[pi].regs[x].h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
                    erecv[e] = slice_part(g, sl->pp + 1);
                }
            }
        for (size_t e = 0; e < g->nedges; e++) {
            uint64_t *at = g->host_edges ? &edges : &need[erecv[e]];
            edge_off[e] = *at;
            *at += edge_bytes(estrips[e]);
        }
        free(erecv);
        if (g->host_edges && edges > g->edge_cap) {
            if (g->edge)
                cudaFreeHost(g->edge);
            g->edge = NULL;
            g->edge_cap = 0;
            if (cudaHostAlloc((void **)&g->edge, edges, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
                (void)cudaGetLastError();
                free(need);
                free(estrips);
                rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: cannot pin %llu MiB of host memory for "
                                 "boundary columns", (unsigned long long)(edges >> 20));
                goto done;
            }
            g->edge_cap = edges;
        }
        if (g->host_edges) {
            for (size_t e = 0; e < g->nedges; e++) /* flags cleared */
                memset(g->edge + edge_off[e] + (uint64_t)estrips[e] * SWGPU__LK_EDGE * 8, 0,
                       (size_t)estrips[e] * 4);
        } else {
            /* every receiver's buffer, cleared before any partition starts */
            for (int pi = 0; pi < g->P && !rc; pi++) {
                part_t *p = &g->part[pi];
                if (!need[pi])
                    continue;
                if (cudaSetDevice(p->dev) != cudaSuccess) {
                    (void)cudaGetLastError();
                    rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: device %d cannot be used", p->dev);
                    break;
                }
                if (need[pi] > p->edge_cap) {
                    cudaFree(p->edge);
                    p->edge = NULL;
                    p->edge_cap = 0;
                    if (cudaMalloc((void **)&p->edge, need[pi]) != cudaSuccess) {
                        (void)cudaGetLastError();
                        rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: out of memory on device %d for "
                                         "%llu MiB of boundary columns", p->dev,
                                         (unsigned long long)(need[pi] >> 20));
                        break;
                    }
                    p->edge_cap = need[pi];
                }
                /* on the null stream, finished before any partition's launch
                 * (their streams do not wait for it) */
                if (cudaMemset(p->edge, 0, need[pi]) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
                    (void)cudaGetLastError();
                    rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: device %d: cannot clear boundary "
                                     "columns", p->dev);
                }
                if (p->fixed + p->buf_cap + p->edge_cap > p->peak)
                    p->peak = p->fixed + p->buf_cap + p->edge_cap;
            }
        }
        free(need);
        free(estrips);
        if (rc)
            goto done;
    }

    /* every partition at once (one per device) */
    for (int pi = 0; pi < g->P && !rc; pi++)
        rc = part_launch(g, &g->part[pi], edge_off);
    if (rc)
        abort_all(g); /* slices waiting for a column that will not come give up */
    if ((prog && prog->report) || g->A > 1) {
        /* short batches (the traceback's) end within a few checks; long
         * ones are checked every 50 ms */
        long wait = 50 * 1000;
        while (poll_parts(g, prog, &rc)) {
            struct timespec ts = { 0, wait };
            nanosleep(&ts, NULL);
            wait = wait * 2 > 50 * 1000 * 1000 ? 50 * 1000 * 1000 : wait * 2;
        }
    }
    if (rc)
        abort_all(g);
    for (int pi = 0; pi < g->P; pi++) {
        int frc = part_finish(g, &g->part[pi]);
        if (frc && !rc) {
            rc = frc;
            abort_all(g);
        }
    }
    if (rc)
        goto done;

    /* every partition's outputs into the batch's regions */
    for (int pi = 0; pi < g->P; pi++) {
        if (pruned)
            *pruned += g->part[pi].pruned;
        if (g->part[pi].peak > g->peak)
            g->peak = g->part[pi].peak;
    }
    /* every partition's bests into the batch's regions (a whole region has
     * one contributor, a split one a slice per partition) */
    for (size_t k = 0; k < n; k++) {
        regs[k].saved_kept = 0;
        if (regs[k].track) {
            regs[k].best = SWGPU__LONG_NEG;
            regs[k].bi = regs[k].bj = 0;
        }
    }
    {
        /* the engine keeps one batch's rows: a batch that kept some drops
         * an earlier one's on the partitions it did not keep rows on */
        int now = 0;
        for (int pi = 0; pi < g->P; pi++)
            now |= g->part[pi].n > 0 && keeps(g->part[pi].regs, g->part[pi].n, g->sc.wide);
        for (int pi = 0; now && pi < g->P; pi++)
            if (!(g->part[pi].n > 0 && keeps(g->part[pi].regs, g->part[pi].n, g->sc.wide)))
                part_drop(&g->part[pi]);
    }
    for (int pi = 0; pi < g->P; pi++) {
        const part_t *p = &g->part[pi];
        for (size_t x = 0; x < p->n; x++) {
            const swgpu__lreg_t *s = &p->regs[x];
            swgpu__lreg_t *r = &regs[(size_t)s->tag0];
            r->saved_kept |= s->saved_kept;
            if (r->track && swgpu__lbest_better(s->best, s->bi, s->bj, r->best, r->bi, r->bj)) {
                r->best = s->best;
                r->bi = s->bi;
                r->bj = s->bj;
            }
        }
    }
done:
    free(edge_off);
    return rc;
}

/* A stopped launch's state (strips 0 .. next-1 done) into st and its
 * buffers, and the rows those strips saved onto the host (wide_row). */
static int take_state(const swgpu__lgpu_t *g, part_t *p, int64_t next, const unsigned long long *ctr,
                      swgpu__lck_state_t *st, int32_t *row, int64_t *gb, int64_t *hb)
{
    int rc = SWGPU_OK;
    swgpu__lreg_t *r = &p->regs[0];
    const swgpu__lkreg_t *d = &p->hregs[0];
    const int64_t w = r->w, slot = (next - 1) & 1, ng = SWGPU__LK_RBASE(w);
    const int64_t nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK, rows1 = swgpu__lck_rows(r, next);
    int64_t best = SWGPU__LONG_NEG64, bi = 0, bj = 0;
    CU(cudaMemcpy(p->hbest, p->dbuf + p->L.best, (size_t)next * sizeof *p->hbest, cudaMemcpyDeviceToHost));
    for (int64_t t = 0; t < next; t++)
        if (swgpu__lbest_better(p->hbest[t].best, p->hbest[t].bi, p->hbest[t].bj, best, bi, bj)) {
            best = p->hbest[t].best;
            bi = p->hbest[t].bi;
            bj = p->hbest[t].bj;
        }
    st->next = next;
    st->best = best;
    st->bi = bi;
    st->bj = bj;
    if (g->sc.wide) {
        memcpy(&st->gbest, &ctr[3], sizeof st->gbest);
    } else {
        int32_t b32;
        memcpy(&b32, &ctr[3], sizeof b32);
        st->gbest = b32;
    }
    st->cells = ctr[1] - ctr[2];
    st->pruned = ctr[2];
    CU(cudaMemcpy(row, p->dbuf + p->L.ring + (uint64_t)d->ring_off * 4 + (uint64_t)slot * (uint64_t)SWGPU__LK_RING(w) * 8,
                  (size_t)(w + 1) * 8, cudaMemcpyDeviceToHost));
    if (g->sc.wide) {
        CU(cudaMemcpy(gb, p->dbuf + p->L.rbase + ((uint64_t)d->rbase_off + (uint64_t)slot * (uint64_t)ng) * 8,
                      (size_t)ng * 8, cudaMemcpyDeviceToHost));
        wide_row(row, w, gb, hb);
        memcpy(st->base, hb, (size_t)nch * 8);
    }
    st->rowH[0] = st->rowF[0] = SWGPU__LONG_NEG; /* column 0: never read */
    for (int64_t j = 1; j <= w; j++) {
        st->rowH[j] = row[2 * j];
        st->rowF[j] = row[2 * j + 1];
    }
    memset(st->low, 0, (size_t)nch); /* skipped chunks wrote their lower bounds */
    if (rows1 > p->rows0 && r->saved) {
        const size_t from = (size_t)p->rows0 * (size_t)(w + 1);
        CU(cudaMemcpy(r->saved + 2 * from, p->dbuf + p->L.saved + (uint64_t)d->saved_off * 4 + from * 8,
                      (size_t)(rows1 - p->rows0) * (size_t)(w + 1) * 8, cudaMemcpyDeviceToHost));
        if (g->sc.wide && (rc = wide_rows(p, r, d, p->rows0, rows1)))
            return rc;
        p->rows0 = rows1;
    }
fail:
    return rc;
}

int swgpu__lgpu_run_ck(swgpu__lgpu_t *g, swgpu__lreg_t *r, const swgpu__lprog_t *prog, uint64_t *pruned,
                       const swgpu__lck_t *ck)
{
    int rc;
    part_t *p = &g->part[0];
    const int64_t w = r->w, strips = (r->h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
    const int64_t nch = (w + SWGPU__LONG_CHUNK - 1) / SWGPU__LONG_CHUNK, ng = SWGPU__LK_RBASE(w);
    swgpu__lck_state_t st;
    int32_t *row = NULL;
    int64_t *gb = NULL, *hb = NULL;
    double last = swgpu__now();

    if (pruned)
        *pruned = 0;
    if ((rc = plan(g, r, 1, -1))) /* the region whole, on the first partition */
        return rc;
    for (int pi = 0; pi < g->P; pi++) {
        g->part[pi].done = g->part[pi].pruned = 0;
        g->part[pi].best = 0;
    }
    memset(&st, 0, sizeof st);
    row = malloc((size_t)(w + 1) * 8);
    st.rowH = malloc((size_t)(w + 1) * 4);
    st.rowF = malloc((size_t)(w + 1) * 4);
    st.low = malloc((size_t)nch + 1);
    if (g->sc.wide) {
        gb = malloc((size_t)ng * 8);
        hb = malloc((size_t)ng * 8);
        st.base = malloc((size_t)nch * 8 + 8);
    }
    if (!row || !st.rowH || !st.rowF || !st.low || (g->sc.wide && (!gb || !hb || !st.base))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        goto done;
    }
    p->ck = 1;
    p->resume = ck->resume && ck->resume->next > 0 && ck->resume->next < strips ? ck->resume : NULL;
    p->rows0 = p->resume ? swgpu__lck_rows(r, p->resume->next) : 0;
    for (;;) {
        static const int32_t one = 1;
        unsigned long long ctr[NCTR];
        long wait = 1000 * 1000;
        int asked = 0;
        if ((rc = part_launch(g, p, NULL)))
            break;
        while (poll_parts(g, prog, &rc)) {
            struct timespec ts = { 0, wait };
            nanosleep(&ts, NULL);
            wait = wait * 2 > 50 * 1000 * 1000 ? 50 * 1000 * 1000 : wait * 2;
            if (!asked && ck->save && swgpu__now() - last >= ck->every) {
                /* stop at a strip boundary (swgpu__lkargs_t.stop) */
                CU(cudaMemcpyAsync(p->dctr + 6, &one, sizeof one, cudaMemcpyHostToDevice, p->st2));
                CU(cudaStreamSynchronize(p->st2));
                asked = 1;
            }
        }
        if (rc)
            break;
        CU(cudaSetDevice(p->dev));
        CU(cudaStreamSynchronize(p->st));
        CU(cudaGetLastError());
        CU(cudaMemcpy(ctr, p->dctr, sizeof ctr, cudaMemcpyDeviceToHost));
        if (ctr[7] >= (unsigned long long)strips) { /* the pass is done */
            rc = part_finish(g, p);
            break;
        }
        p->running = 0;
        if (ctr[7] > 0) { /* else no strip was begun: launch again from the same start */
            if ((rc = take_state(g, p, (int64_t)ctr[7], ctr, &st, row, gb, hb)))
                break;
            if ((rc = ck->save(ck->user, &p->regs[0], &st)))
                break;
            swgpu__log(SWGPU_LOG_DEBUG, "long alignment: GPU pass stopped for a checkpoint after strip %lld of "
                       "%lld (%.3f s)", (long long)st.next, (long long)strips, swgpu__now() - last);
            p->resume = &st;
        }
        last = swgpu__now();
    }
    if (!rc) {
        r->best = p->regs[0].best;
        r->bi = p->regs[0].bi;
        r->bj = p->regs[0].bj;
        r->saved_kept = 0;
        if (pruned)
            *pruned = p->pruned;
        if (p->peak > g->peak)
            g->peak = p->peak;
    }
    goto done;
fail:
    p->running = 0;
done:
    if (p->running) { /* a failed poll: let the launch end before its buffers are reused */
        (void)cudaStreamSynchronize(p->st);
        (void)cudaGetLastError();
        p->running = 0;
    }
    p->ck = 0;
    p->resume = NULL;
    p->rows0 = 0;
    free(row);
    free(gb);
    free(hb);
    free(st.rowH);
    free(st.rowF);
    free(st.low);
    free(st.base);
    return rc;
}

#else
typedef int swgpu__long_gpu_unused; /* ISO C wants a declaration */
#endif
