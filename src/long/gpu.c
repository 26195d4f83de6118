/*
 * gpu.c - the CUDA engine of the long aligner (gpu.h lists its files): the
 * devices, the engine's setup (sequences and scoring on every device, peer
 * access between neighbours) and teardown, and a batch's run: its split
 * (gpu_plan.c), the boundary columns of split regions, every partition's
 * launch, the wait, the outputs.  Built only with CUDA (SWGPU_HAVE_CUDA);
 * without it the aligner uses the CPU engine alone.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu.h"

#include <string.h>
#include <time.h>

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
    if (g->ext_mem)
        cudaFreeHost(g->ext_mem);
    swgpu__lg_split_part_end(g);
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

/* Where the boundary columns of the batch's split regions go: one per
 * pair of neighbouring slices, in the memory of the right one's partition
 * (host_edges: in the host buffer) at edge_off[e]; estrips[e] their
 * strips, erecv[e] their receiving partition, need[p] the bytes partition p
 * receives, *host the host buffer's. */
static void edge_offsets(const swgpu__lgpu_t *g, uint64_t *edge_off, int64_t *estrips, int *erecv, uint64_t *need,
                         uint64_t *host)
{
    /* the columns from the plan: slice pp's right one is edge eb + pp,
     * received by slice pp + 1's partition */
    for (int pi = 0; pi < g->P; pi++)
        for (size_t x = 0; x < g->part[pi].n; x++) {
            const slot_t *sl = &g->part[pi].slot[x];
            if (sl->pp + 1 < sl->a) {
                const size_t e = sl->eb + (size_t)sl->pp;
                estrips[e] = (g->part[pi].regs[x].h + SWGPU__LONG_SH - 1) / SWGPU__LONG_SH;
                erecv[e] = swgpu__lg_slice_part(g, sl->pp + 1);
            }
        }
    for (size_t e = 0; e < g->nedges; e++) {
        uint64_t *at = g->host_edges ? host : &need[erecv[e]];
        edge_off[e] = *at;
        *at += swgpu__lg_edge_bytes(estrips[e]);
    }
}

int swgpu__lg_pinned(char **mem, uint64_t *cap, uint64_t bytes)
{
    if (bytes <= *cap)
        return SWGPU_OK;
    if (*mem)
        cudaFreeHost(*mem);
    *mem = NULL;
    *cap = 0;
    if (cudaHostAlloc((void **)mem, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        *mem = NULL;
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: cannot pin %llu MiB of host memory for boundary "
                           "columns", (unsigned long long)(bytes >> 20));
    }
    *cap = bytes;
    return SWGPU_OK;
}

/* The host buffer of boundary columns (host_edges): grown to `bytes`,
 * every column's flags cleared. */
static int edge_host(swgpu__lgpu_t *g, uint64_t bytes, const uint64_t *edge_off, const int64_t *estrips)
{
    int rc = swgpu__lg_pinned(&g->edge, &g->edge_cap, bytes);
    if (rc)
        return rc;
    for (size_t e = 0; e < g->nedges; e++) /* flags cleared */
        memset(g->edge + edge_off[e] + SWGPU__LK_EDGE_PAIRS(estrips[e]), 0, (size_t)estrips[e] * 4);
    return SWGPU_OK;
}

/* Partition p's buffer of the boundary columns it receives: grown to
 * `bytes` and cleared before any partition starts. */
static int edge_device(part_t *p, uint64_t bytes)
{
    int rc = SWGPU_OK;
    if (cudaSetDevice(p->dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return swgpu__fail(SWGPU_EDEVICE, "long alignment: device %d cannot be used", p->dev);
    }
    if (bytes > p->edge_cap) {
        cudaFree(p->edge);
        p->edge = NULL;
        p->edge_cap = 0;
        if (cudaMalloc((void **)&p->edge, bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            return swgpu__fail(SWGPU_EDEVICE, "long alignment: out of memory on device %d for "
                               "%llu MiB of boundary columns", p->dev, (unsigned long long)(bytes >> 20));
        }
        p->edge_cap = bytes;
    }
    /* on the null stream, finished before any partition's launch
     * (their streams do not wait for it) */
    if (cudaMemset(p->edge, 0, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        (void)cudaGetLastError();
        rc = swgpu__fail(SWGPU_EDEVICE, "long alignment: device %d: cannot clear boundary columns", p->dev);
    }
    if (p->fixed + p->buf_cap + p->edge_cap > p->peak)
        p->peak = p->fixed + p->buf_cap + p->edge_cap;
    return rc;
}

/* The boundary columns of a batch of split regions, placed and cleared:
 * *edge_off (malloc'ed) their offsets. */
static int edges_place(swgpu__lgpu_t *g, uint64_t **edge_off)
{
    int rc = SWGPU_OK;
    uint64_t host = 0;
    uint64_t *need = calloc((size_t)g->P, sizeof *need);         /* bytes each receiver holds */
    int64_t *estrips = calloc(g->nedges + 1, sizeof *estrips);   /* each column's strips */
    int *erecv = calloc(g->nedges + 1, sizeof *erecv);           /* and receiving partition */
    *edge_off = calloc(g->nedges + 1, sizeof **edge_off);
    if (!need || !estrips || !erecv || !*edge_off) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory");
        goto done;
    }
    edge_offsets(g, *edge_off, estrips, erecv, need, &host);
    if (g->host_edges)
        rc = edge_host(g, host, *edge_off, estrips);
    else
        for (int pi = 0; pi < g->P && !rc; pi++)
            if (need[pi])
                rc = edge_device(&g->part[pi], need[pi]);
done:
    free(need);
    free(estrips);
    free(erecv);
    return rc;
}

/* Where a long batch's time goes (debug log): every second, the cells
 * each partition computed and skipped (pruned) in it, and when each
 * partition's launch ended; a pipeline's fill and drain show as seconds
 * in which a partition computes little. */
#define PROF_PARTS 16 /* partitions profiled, at most */
typedef struct {
    double t0, last;
    unsigned long long done[PROF_PARTS], pruned[PROF_PARTS];
} profile_t;

static void profile_begin(const swgpu__lgpu_t *g, profile_t *pf)
{
    pf->t0 = pf->last = swgpu__now();
    for (int pi = 0; pi < g->P && pi < PROF_PARTS; pi++)
        pf->done[pi] = pf->pruned[pi] = 0;
}

static void profile_step(const swgpu__lgpu_t *g, profile_t *pf, int end)
{
    char line[64 * PROF_PARTS];
    size_t at = 0;
    const double now = swgpu__now();
    if (!swgpu__log_on(SWGPU_LOG_DEBUG) || (now - pf->last < 1.0 && !end) || (end && now - pf->t0 < 1.0))
        return;
    for (int pi = 0; pi < g->P && pi < PROF_PARTS && at < sizeof line - 64; pi++) {
        const part_t *p = &g->part[pi];
        const unsigned long long d = p->done - pf->done[pi], x = p->pruned - pf->pruned[pi];
        at += (size_t)snprintf(line + at, sizeof line - at, " | p%d %.3g+%.3g", pi, (double)(d - (x < d ? x : d)),
                               (double)(x < d ? x : d));
        if (p->t_end > 0)
            at += (size_t)snprintf(line + at, sizeof line - at, " end %.2f", p->t_end - pf->t0);
        pf->done[pi] = p->done;
        pf->pruned[pi] = p->pruned;
    }
    swgpu__log(SWGPU_LOG_DEBUG, "long gpu profile: %.2f-%.2f s, computed+pruned cells%s", pf->last - pf->t0,
               now - pf->t0, line);
    pf->last = now;
}

/* Every partition's batch launched at once (one per device), followed, and
 * finished; a failure makes the others' waiting slices give up. */
static int run_parts(swgpu__lgpu_t *g, const uint64_t *edge_off, const swgpu__lprog_t *prog)
{
    int rc = SWGPU_OK;
    for (int pi = 0; pi < g->P && !rc; pi++)
        rc = swgpu__lg_launch(g, &g->part[pi], edge_off);
    if (rc)
        swgpu__lg_abort_all(g); /* slices waiting for a column that will not come give up */
    if ((prog && prog->report) || g->A > 1 || swgpu__log_on(SWGPU_LOG_DEBUG)) {
        /* short batches (the traceback's) end within a few checks; long
         * ones are checked every 50 ms */
        long wait = 50 * 1000;
        profile_t pf;
        profile_begin(g, &pf);
        while (swgpu__lg_poll(g, prog, &rc)) {
            struct timespec ts = { 0, wait };
            nanosleep(&ts, NULL);
            wait = wait * 2 > 50 * 1000 * 1000 ? 50 * 1000 * 1000 : wait * 2;
            profile_step(g, &pf, 0);
        }
        profile_step(g, &pf, 1);
    }
    if (rc)
        swgpu__lg_abort_all(g);
    for (int pi = 0; pi < g->P; pi++) {
        int frc = swgpu__lg_finish(g, &g->part[pi]);
        if (frc && !rc) {
            rc = frc;
            swgpu__lg_abort_all(g);
        }
    }
    return rc;
}

/* Every partition's outputs into the batch's regions: pruned cells, peak
 * memory, kept rows, bests (a whole region has one contributor, a split
 * one a slice per partition). */
static void run_outputs(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, uint64_t *pruned)
{
    for (int pi = 0; pi < g->P; pi++) {
        if (pruned)
            *pruned += g->part[pi].pruned;
        if (g->part[pi].peak > g->peak)
            g->peak = g->part[pi].peak;
    }
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
            now |= g->part[pi].n > 0 && swgpu__lg_keeps(g->part[pi].regs, g->part[pi].n, g->sc.wide);
        for (int pi = 0; now && pi < g->P; pi++)
            if (!(g->part[pi].n > 0 && swgpu__lg_keeps(g->part[pi].regs, g->part[pi].n, g->sc.wide)))
                swgpu__lg_drop(&g->part[pi]);
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
}

int swgpu__lgpu_run(swgpu__lgpu_t *g, swgpu__lreg_t *regs, size_t n, int spread, const swgpu__lprog_t *prog,
                    uint64_t *pruned)
{
    int rc = SWGPU_OK;
    uint64_t *edge_off = NULL;

    if (pruned)
        *pruned = 0;
    if (n == 0)
        return SWGPU_OK;
    if ((rc = swgpu__lg_plan(g, regs, n, spread)))
        return rc;
    for (int pi = 0; pi < g->P; pi++) { /* a partition the batch does not use counts nothing */
        g->part[pi].done = g->part[pi].pruned = 0;
        g->part[pi].best = 0;
    }
    if (!swgpu__lg_whole(g, regs, n) && (rc = edges_place(g, &edge_off)))
        goto done;
    if ((rc = run_parts(g, edge_off, prog)))
        goto done;
    run_outputs(g, regs, n, pruned);
done:
    free(edge_off);
    return rc;
}

uint64_t swgpu__lgpu_peak(const swgpu__lgpu_t *g)
{
    uint64_t most = 0;
    for (int p = 0; p < g->P; p++)
        most = g->part[p].peak > most ? g->part[p].peak : most;
    return most;
}

#else
typedef int swgpu__long_gpu_unused; /* ISO C wants a declaration */
#endif
