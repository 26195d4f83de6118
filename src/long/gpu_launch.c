/*
 * gpu_launch.c - one partition's batch on its device: buffers, the regions
 * as the kernel sees them, the launch (resuming from a checkpoint's state
 * when asked), progress polls and the bests handed between partitions, the
 * abort of waiting slices, and the completion (bests, saved rows back).
 */
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu.h"

#include <stdlib.h>
#include <string.h>

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

/* A partition's buffers for its batch (layout L), grown as needed. */
static int launch_buffers(const swgpu__lgpu_t *g, part_t *p, const layout_t *L)
{
    int rc = SWGPU_OK;
    const size_t n = p->n;
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
    if (swgpu__lg_keeps(p->regs, n, g->sc.wide)) { /* the rows of an earlier batch go; room for this one's */
        const uint64_t want = swgpu__lg_kept_bytes(p->regs, n, g->sc.wide);
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
fail:
    return rc;
}

/* A partition's buffers for the batch it was planned (swgpu__lg_plan),
 * allocated now: a part of a split pass allocates before any part
 * launches (cudaFree waits for every kernel of the process on the device,
 * and a kernel of another part there may wait for this one's columns). */
int swgpu__lg_buffers(const swgpu__lgpu_t *g, part_t *p)
{
    int rc = SWGPU_OK;
    layout_t L;
    if (p->n == 0)
        return SWGPU_OK;
    CU(cudaSetDevice(p->dev));
    swgpu__lg_layout(p->regs, p->n, g->sc.wide, &L);
    return launch_buffers(g, p, &L);
fail:
    return rc;
}

/* Region d's boundary column on the left (e: where its receiver holds it),
 * as the kernel reads it */
static void edge_in(swgpu__lkreg_t *d, const char *e)
{
    d->lin = (const int32_t *)(const void *)e;
    d->lflag = (const int32_t *)(const void *)(e + SWGPU__LK_EDGE_PAIRS(d->nstrips));
    d->lin_base = (const long long *)(const void *)(e + SWGPU__LK_EDGE_BASES(d->nstrips));
}

/* Region d's boundary column on the right (e), as the kernel writes it */
static void edge_out(swgpu__lkreg_t *d, char *e)
{
    d->rout = (int32_t *)(void *)e;
    d->rflag = (int32_t *)(void *)(e + SWGPU__LK_EDGE_PAIRS(d->nstrips));
    d->rout_base = (long long *)(void *)(e + SWGPU__LK_EDGE_BASES(d->nstrips));
}

/* A slice's boundary columns (slot sl): the left one from the slice on its
 * left, the right one for the slice on its right, where their receivers
 * hold them (edge_off[edge]). */
static void slice_edges(const swgpu__lgpu_t *g, const part_t *p, const slot_t *sl, const uint64_t *edge_off,
                        swgpu__lkreg_t *d)
{
    if (sl->pp > 0) /* edge pp-1 is received here */
        edge_in(d, (g->host_edges ? g->edge : p->edge) + edge_off[sl->eb + (size_t)sl->pp - 1]);
    if (sl->pp + 1 < sl->a) /* edge pp, received by slice pp+1's partition */
        edge_out(d, (g->host_edges ? g->edge : g->part[swgpu__lg_slice_part(g, sl->pp + 1)].edge) +
                        edge_off[sl->eb + (size_t)sl->pp]);
}

/* A slice of a pass split across processes (g->ext_in, gpu_relay.c): its
 * boundary columns in the relay's host buffers, region k's of the batch. */
static void relay_edges(const swgpu__lgpu_t *g, size_t k, swgpu__lkreg_t *d)
{
    if (g->ext_in[k])
        edge_in(d, g->ext_in[k]);
    if (g->ext_out[k])
        edge_out(d, g->ext_out[k]);
}

/* The batch's regions as the kernel sees them (p->hregs), their places in
 * the buffers; *best0: the best local score known in advance (pruning).
 * Returns 1 when the batch holds column slices. */
static int launch_regions(const swgpu__lgpu_t *g, part_t *p, const uint64_t *edge_off, int rows, int64_t *best0)
{
    uint64_t ring_off = 0, saved_off = 0, rbase_off = 0, sbase_off = 0;
    int64_t first = 0;
    int slice = 0;
    for (size_t k = 0; k < p->n; k++) {
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
        if (r->prune && r->local && r->prune_best > *best0) /* anchored regions: not a local best */
            *best0 = r->prune_best;
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
            slice = 1;
            d->col0 = r->col0;
            d->wrem = r->w_all - r->col0 - r->w;
            slice_edges(g, p, &p->slot[k], edge_off, d);
            if (g->ext_in) /* whole on this partition: tag0 is its index in the batch */
                relay_edges(g, (size_t)r->tag0, d);
        }
        first += d->nstrips;
        ring_off += (uint64_t)2 * (uint64_t)SWGPU__LK_RING(r->w) * 8;
        saved_off += (uint64_t)swgpu__lreg_nsaved(r) * (uint64_t)(r->w + 1) * 8;
        if (g->sc.wide) {
            rbase_off += (uint64_t)2 * (uint64_t)SWGPU__LK_RBASE(r->w);
            sbase_off += (uint64_t)swgpu__lreg_nsaved(r) * (uint64_t)SWGPU__LK_SBASE(r->w);
        }
    }
    return slice;
}

/* The kernel's arguments for a partition's batch (layout L). */
static void launch_args(const swgpu__lgpu_t *g, part_t *p, const layout_t *L, int rows, swgpu__lkargs_t *A)
{
    const size_t n = p->n;
    memset(A, 0, sizeof *A);
    if (p->ck) {
        A->stop = (const int32_t *)(void *)(p->dctr + 6);
        A->stop_at = p->dctr + 7;
    }
    A->regs = p->dregs;
    A->nregs = (int32_t)n;
    A->total = L->strips;
    for (int k = 0; k < 4; k++)
        A->seq[k] = p->dseq[k];
    A->ring = (int32_t *)(void *)(p->dbuf + L->ring);
    A->saved = swgpu__lg_keeps(p->regs, n, g->sc.wide) ? p->kept : (int32_t *)(void *)(p->dbuf + L->saved);
    A->progress = (int32_t *)(void *)(p->dbuf + L->progress);
    A->zrun = (int32_t *)(void *)(p->dbuf + L->zrun);
    A->best = (swgpu__lkbest_t *)(void *)(p->dbuf + L->best);
    A->ticket = p->dctr;
    A->done = p->dctr + 1;
    A->pruned = p->dctr + 2;
    A->gbest = (int32_t *)(void *)(p->dctr + 3);
    A->rbest = (const int32_t *)(void *)(p->dctr + 4);
    A->abort = (const int32_t *)(void *)(p->dctr + 5); /* device memory: read in spin loops */
    A->sysfence = g->host_edges || g->cross || g->ext_in;
    A->smax = g->sc.smax > 0 ? g->sc.smax : 0;
    A->mat = p->dmat;
    A->open = g->sc.open;
    A->ext = g->sc.ext;
    A->dna = p->dna;
    A->match = g->sc.match;
    A->mismatch = g->sc.mismatch;
    A->rows = rows;
    A->wide = g->sc.wide;
    if (A->wide) {
        A->rbase = (long long *)(void *)(p->dbuf + L->rbase);
        /* kept rows: their bases follow them in the kept buffer */
        A->sbase = swgpu__lg_keeps(p->regs, n, 1) ? (long long *)(void *)((char *)p->kept + swgpu__lg_saved_bytes(p->regs, n))
                                                 : (long long *)(void *)(p->dbuf + L->sbase);
        A->gbest64 = (long long *)(void *)(p->dctr + 3);
        A->rbest64 = (const long long *)(void *)(p->dctr + 4);
    }
}

/* Blocks of the launch: as many as fit on the device at once, no more than
 * the strips need. */
static int launch_blocks(const swgpu__lgpu_t *g, const part_t *p, int slice, int rows)
{
    int64_t want = (p->L.strips + p->threads / 32 - 1) / (p->threads / 32);
    /* SWGPU_LONG_BLOCKS=N: at most N blocks (tests and measurements: fewer
     * strips in flight, so an in-pass checkpoint stops sooner) */
    const char *env = getenv("SWGPU_LONG_BLOCKS");
    int blocks = p->bps[swgpu__lg_kernel(slice, rows, g->sc.wide)] * p->sms;
    if (env && atoi(env) > 0 && atoi(env) < blocks)
        blocks = atoi(env);
    /* parts of a split pass in this process on this device (gpu_relay.c):
     * room for each one's kernel, so that a kernel waiting for a column
     * never holds the device while the one making it waits */
    if (g->ext_in && swgpu__lg_sharers(p->dev) > 1)
        blocks = blocks / swgpu__lg_sharers(p->dev) > 0 ? blocks / swgpu__lg_sharers(p->dev) : 1;
    if (want < blocks)
        blocks = (int)want;
    return blocks;
}

/* Launch a partition's batch (p->regs[0 .. n-1]); boundary columns of
 * slices at edge_off[edge] in the receiving partition's buffer. */
int swgpu__lg_launch(swgpu__lgpu_t *g, part_t *p, const uint64_t *edge_off)
{
    swgpu__lkargs_t A;
    int rc = SWGPU_OK, slice;
    unsigned long long ctr[NCTR] = { 0, 0, 0, 0, 0, 0, 0, ~0ULL };
    int64_t best0 = 0;
    const size_t n = p->n;
    const int rows = swgpu__lg_rows(p->regs, n, g->sc.wide);
    layout_t *L = &p->L;

    if (n == 0)
        return SWGPU_OK;
    CU(cudaSetDevice(p->dev));
    swgpu__lg_layout(p->regs, n, g->sc.wide, L);
    if ((rc = launch_buffers(g, p, L)))
        return rc;
    slice = launch_regions(g, p, edge_off, rows, &best0);
    CU(cudaMemcpyAsync(p->dregs, p->hregs, n * sizeof *p->dregs, cudaMemcpyHostToDevice, p->st));
    CU(cudaMemsetAsync(p->dbuf + L->progress, 0, (size_t)(L->best - L->progress), p->st)); /* and zrun */
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
    p->t_end = 0;
    p->best = best0;
    launch_args(g, p, L, rows, &A);
    CU(swgpu__long_launch(&A, slice, launch_blocks(g, p, slice, rows), p->threads, p->st));
    p->running = 1;
    return SWGPU_OK;
fail:
    return rc;
}

/* Wait for a partition's batch; its regions' bests and saved rows. */
int swgpu__lg_finish(const swgpu__lgpu_t *g, part_t *p)
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
        if (swgpu__lg_keeps(p->regs, n, g->sc.wide)) {
            int64_t *in = p->kept_info + KEPT_INFO * p->kept_n++;
            in[0] = d->saved_off; /* int32 units, as in the scratch buffer */
            in[1] = r->w;
            in[2] = ns;
            in[3] = r->tag0;      /* the region's index in the batch */
            in[4] = (int64_t)(swgpu__lg_saved_bytes(p->regs, n) / 8) + d->sbase_off;
            r->saved_kept = 1;
        } else if (ns > 0 && r->saved && r->w_all > 0 && !g->ext_in) {
            /* a slice: its vertex columns 1..w (0..w for the first) into the
             * region's rows, at the region's columns col0 + 1 .. col0 + w */
            const size_t from = r->col0 > 0 ? 1 : 0;
            CU(cudaMemcpy2D(r->saved + ((size_t)r->col0 + from) * 2, (size_t)(r->w_all + 1) * 8,
                            p->dbuf + p->L.saved + (uint64_t)d->saved_off * 4 + from * 8,
                            (size_t)(r->w + 1) * 8, (size_t)(r->w + 1 - from) * 8, (size_t)ns,
                            cudaMemcpyDeviceToHost));
        } else if (ns > p->rows0 && r->saved) {
            /* (the rows before rows0 are on the host already: a resumed pass;
             * a slice of a split pass has rows of its own columns) */
            const size_t from = (size_t)p->rows0 * (size_t)(r->w + 1);
            CU(cudaMemcpy(r->saved + 2 * from, p->dbuf + p->L.saved + (uint64_t)d->saved_off * 4 + from * 8,
                          (size_t)(ns - p->rows0) * (size_t)(r->w + 1) * 8, cudaMemcpyDeviceToHost));
            if (g->sc.wide && (rc = swgpu__lg_wide_rows(p, r, d, p->rows0, ns)))
                return rc;
        }
    }
    return SWGPU_OK;
fail:
    return rc;
}

/* A partition failed: the running ones' slices that wait for a boundary
 * column give up (their abort word, in device memory, written by a copy). */
void swgpu__lg_abort_all(swgpu__lgpu_t *g)
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
int swgpu__lg_poll(swgpu__lgpu_t *g, const swgpu__lprog_t *prog, int *rc)
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
                if (p->t_end == 0)
                    p->t_end = swgpu__now();
                if (q != cudaSuccess)
                    swgpu__lg_abort_all(g);
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

#else
typedef int swgpu__long_gpu_launch_unused; /* ISO C wants a declaration */
#endif
