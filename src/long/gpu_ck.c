/*
 * gpu_ck.c - the CUDA engine's one-region pass with in-pass checkpoints:
 * the launch is stopped at a strip boundary every ck->every seconds, its
 * state taken to the host and saved, and launched again from it.
 */
#define _POSIX_C_SOURCE 200809L
#include "long/long.h"

#ifdef SWGPU_HAVE_CUDA

#include "long/gpu.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
        swgpu__lg_wide_row(row, w, gb, hb);
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
        if (g->sc.wide && (rc = swgpu__lg_wide_rows(p, r, d, p->rows0, rows1)))
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
    if ((rc = swgpu__lg_plan(g, r, 1, -1))) /* the region whole, on the first partition */
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
        if ((rc = swgpu__lg_launch(g, p, NULL)))
            break;
        while (swgpu__lg_poll(g, prog, &rc)) {
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
            rc = swgpu__lg_finish(g, p);
            break;
        }
        p->running = 0;
        /* else no strip was begun (the stop came before the launch took its
         * first strip, as on a busy GPU): launch again from the same start,
         * not a second checkpoint at it */
        if (ctr[7] > (unsigned long long)(p->resume ? p->resume->next : 0)) {
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
typedef int swgpu__long_gpu_ck_unused; /* ISO C wants a declaration */
#endif
