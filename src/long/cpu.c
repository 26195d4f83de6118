/*
 * cpu.c - the CPU engine of the long aligner: computes a batch of regions
 * (see long.h) with a pool of threads; one strip is cpu_strip.c's.
 *
 * Work is cut into strips of SWGPU__LONG_SH rows, numbered in batch order
 * (region 0's strips first).  Each thread takes the next strip from an
 * atomic ticket and computes it (swgpu__lc_strip); strip s waits, chunk by
 * chunk, for strip s-1 (a two-slot ring of bottom rows, cpu_strip.c).
 * Tickets are taken in order, so a strip only ever waits for a strip that
 * a running thread holds: no deadlock.  Checkpoints park the threads
 * between strips and save the pass's state (long.h, swgpu__lck_t).
 */
#define _POSIX_C_SOURCE 200809L
#include "long/cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static int force_isa = -1;

void swgpu__long_set_isa(int isa)
{
    force_isa = isa;
}

/* The strip kernels: the best this CPU has, or SWGPU_CPU_ISA's choice
 * (scalar|sse41|avx2|avx512), or the test hook's; NULL: the scalar tile. */
static const swgpu__sw_kernels_t *strip_kernels(void)
{
    int isa = force_isa;
    if (isa < 0) {
        swgpu__isa_t e;
        /* a bad SWGPU_CPU_ISA was refused before the run (swgpu_align_long) */
        isa = swgpu__cpu_isa_env(&e) == SWGPU_OK ? (int)e : (int)swgpu__cpu_isa_best();
    }
    if (isa == SWGPU__ISA_SCALAR || !swgpu__cpu_isa_supported((swgpu__isa_t)isa))
        return NULL;
    return swgpu__cpu_kernels((swgpu__isa_t)isa);
}

static void *worker(void *arg)
{
    job_t *J = arg;
    const int64_t total = J->first[J->n];
    wbuf_t *wb = &J->wb[atomic_fetch_add(&J->wnext, 1)];
    for (;;) {
        int64_t t;
        if (atomic_load(&J->pause)) {
            pthread_mutex_lock(&J->plock);
            J->parked++;
            pthread_cond_broadcast(&J->pcv);
            while (atomic_load(&J->pause))
                pthread_cond_wait(&J->pcv, &J->plock);
            J->parked--;
            pthread_mutex_unlock(&J->plock);
            continue;
        }
        t = atomic_fetch_add(&J->ticket, 1);
        size_t lo = 0, hi = J->n - 1;
        if (t >= total)
            break;
        while (lo < hi) { /* last region with first <= t */
            size_t mid = (lo + hi + 1) / 2;
            if (J->first[mid] <= t)
                lo = mid;
            else
                hi = mid - 1;
        }
        swgpu__lc_strip(J, lo, t - J->first[lo], t, wb);
    }
    atomic_fetch_sub(&J->running, 1);
    return NULL;
}

static void wbuf_free(wbuf_t *b)
{
    free(b->colH);
    free(b->prof);
    memset(b, 0, sizeof *b);
}

static int wbuf_alloc(wbuf_t *b, int simd)
{
    memset(b, 0, sizeof *b);
    if (!(b->colH = malloc((2 * (SH + 1) + 2 * CHUNK) * sizeof(int32_t))))
        return -1;
    b->colE = b->colH + SH + 1;
    b->tH = b->colE + SH + 1;
    b->tF = b->tH + CHUNK;
    if (simd) {
        b->prof = aligned_alloc(64, (size_t)(SWGPU_NCODES + 3) * SH * sizeof(int32_t));
        if (!b->prof)
            return -1;
        b->hp = b->prof + (size_t)SWGPU_NCODES * SH;
        b->hc = b->hp + SH;
        b->e = b->hc + SH;
    }
    return 0;
}

/* The pass's state once every worker is parked (checkpoints): strips
 * 0 .. ticket-1 done; 0 when there is nothing to save. */
static int take_state(job_t *J, swgpu__lck_state_t *st)
{
    const swgpu__lreg_t *g = &J->regs[0];
    const int64_t next = atomic_load(&J->ticket), nch = J->nchunks[0], slot = (next - 1) & 1;
    sbest_t b = { NEG64, 0, 0 };
    if (next <= 0 || next >= J->first[1])
        return 0;
    for (int64_t t = 0; t < next; t++)
        if (better(J->sb[t].best, J->sb[t].bi, J->sb[t].bj, &b))
            b = J->sb[t];
    memset(st, 0, sizeof *st);
    st->next = next;
    st->best = b.best;
    st->bi = b.bi;
    st->bj = b.bj;
    st->gbest = atomic_load(&J->gbest);
    st->cells = atomic_load(&J->cells);
    st->pruned = atomic_load(&J->pruned);
    st->rowH = J->ring[0] + (size_t)slot * (size_t)(g->w + 1);
    st->rowF = J->ring[0] + (size_t)(2 + slot) * (size_t)(g->w + 1);
    st->low = J->low[0] + (size_t)slot * (size_t)nch;
    st->base = J->sc->wide ? J->rbase[0] + (size_t)slot * (size_t)nch : NULL;
    return 1;
}

/* Start from a checkpoint's state (one region). */
static void put_state(job_t *J, const swgpu__lck_state_t *st)
{
    const swgpu__lreg_t *g = &J->regs[0];
    const int64_t next = st->next, nch = J->nchunks[0], slot = (next - 1) & 1;
    atomic_store(&J->ticket, next);
    for (int64_t t = 0; t < next; t++) {
        atomic_store(&J->progress[t], g->w);
        J->sb[t].best = NEG64;
        J->sb[t].bi = J->sb[t].bj = 0;
    }
    J->sb[next - 1].best = st->best;
    J->sb[next - 1].bi = st->bi;
    J->sb[next - 1].bj = st->bj;
    if (st->gbest > atomic_load(&J->gbest))
        atomic_store(&J->gbest, st->gbest);
    atomic_store(&J->cells, st->cells);
    atomic_store(&J->pruned, st->pruned);
    memcpy(J->ring[0] + (size_t)slot * (size_t)(g->w + 1), st->rowH, (size_t)(g->w + 1) * sizeof(int32_t));
    memcpy(J->ring[0] + (size_t)(2 + slot) * (size_t)(g->w + 1), st->rowF, (size_t)(g->w + 1) * sizeof(int32_t));
    memcpy(J->low[0] + (size_t)slot * (size_t)nch, st->low, (size_t)nch);
    if (J->sc->wide && st->base)
        memcpy(J->rbase[0] + (size_t)slot * (size_t)nch, st->base, (size_t)nch * sizeof(int64_t));
}

/* Park every worker still running, save, let them go on. */
static int checkpoint(job_t *J, const swgpu__lck_t *ck)
{
    swgpu__lck_state_t st;
    int rc = 0;
    atomic_store(&J->pause, 1);
    pthread_mutex_lock(&J->plock);
    while (J->parked < atomic_load(&J->running)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&J->pcv, &J->plock, &ts);
    }
    if (take_state(J, &st))
        rc = ck->save(ck->user, &J->regs[0], &st);
    atomic_store(&J->pause, 0);
    pthread_cond_broadcast(&J->pcv);
    pthread_mutex_unlock(&J->plock);
    return rc;
}

/* The batch's buffers (rings, skipped-chunk flags, wide-score bases, the
 * columns' codes, tickets' progress and bests) and counters; *bytes: what
 * they hold. */
static int job_alloc(job_t *J, swgpu__lreg_t *regs, size_t n, uint64_t *bytes)
{
    const swgpu__lscore_t *sc = J->sc;
    int64_t total, b0 = 0;
    J->first = malloc((n + 1) * sizeof *J->first);
    J->ring = calloc(n, sizeof *J->ring);
    J->codes = calloc(n, sizeof *J->codes);
    J->low = calloc(n, sizeof *J->low);
    J->nchunks = calloc(n, sizeof *J->nchunks);
    J->rbase = calloc(n, sizeof *J->rbase);
    if (!J->first || !J->ring || !J->codes || !J->low || !J->nchunks || !J->rbase)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %zu regions", n);
    J->first[0] = 0;
    for (size_t r = 0; r < n; r++) {
        const uint8_t *B;
        if (regs[r].h < 1 || regs[r].w < 1)
            return swgpu__fail(SWGPU_EINVAL, "long alignment: empty region %zu", r);
        J->first[r + 1] = J->first[r] + (regs[r].h + SH - 1) / SH;
        J->ring[r] = malloc((size_t)4 * (size_t)(regs[r].w + 1) * sizeof(int32_t));
        if (!J->ring[r])
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                               (long long)regs[r].w);
        *bytes += (uint64_t)4 * (uint64_t)(regs[r].w + 1) * sizeof(int32_t);
        J->nchunks[r] = (regs[r].w + CHUNK - 1) / CHUNK;
        if (!(J->low[r] = calloc(2 * (size_t)J->nchunks[r], 1)))
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                               (long long)regs[r].w);
        *bytes += 2 * (uint64_t)J->nchunks[r];
        if (sc->wide) {
            if ((regs[r].saved && !regs[r].saved_base) ||
                (regs[r].w_all > 0 && regs[r].col0 % CHUNK != 0))
                return swgpu__fail(SWGPU_EINVAL, "long alignment: wide scores without saved bases, or "
                                   "in a split region's part that does not start at a multiple of %d "
                                   "columns", CHUNK);
            if (!(J->rbase[r] = calloc(2 * (size_t)J->nchunks[r], sizeof **J->rbase)))
                return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for a %lld-column region",
                                   (long long)regs[r].w);
            *bytes += 16 * (uint64_t)J->nchunks[r];
        }
        B = J->q->seq[regs[r].cseq] + regs[r].coff;
        for (int64_t j = 0; j < regs[r].w; j++)
            J->codes[r] |= 1u << (B[j] & (SWGPU_NCODES - 1));
    }
    total = J->first[n];
    J->progress = malloc((size_t)total * sizeof *J->progress);
    J->sb = malloc((size_t)total * sizeof *J->sb);
    if (!J->progress || !J->sb)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for %lld strips", (long long)total);
    *bytes += (uint64_t)total * (sizeof *J->progress + sizeof *J->sb);
    for (int64_t t = 0; t < total; t++)
        atomic_init(&J->progress[t], 0);
    atomic_init(&J->ticket, 0);
    atomic_init(&J->cells, 0);
    atomic_init(&J->pruned, 0);
    for (size_t r = 0; r < n; r++)
        if (regs[r].prune && regs[r].local && regs[r].prune_best > b0)
            b0 = regs[r].prune_best;
    atomic_init(&J->gbest, b0);
    return SWGPU_OK;
}

/* The workers' buffers (threads of them; *bytes grows by theirs) and the
 * checkpoints' lock. */
static int job_workers(job_t *J, int threads, uint64_t *bytes)
{
    J->wb = calloc((size_t)threads, sizeof *J->wb);
    if (!J->wb)
        return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
    for (int k = 0; k < threads; k++)
        if (wbuf_alloc(&J->wb[k], J->k != NULL))
            return swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
    *bytes += (uint64_t)threads * ((J->k ? (SWGPU_NCODES + 3) * SH * 4 : 0) + (2 * (SH + 1) + 2 * CHUNK) * 4);
    atomic_init(&J->wnext, 0);
    atomic_init(&J->comm_rc, 0);
    atomic_init(&J->pause, 0);
    pthread_mutex_init(&J->plock, NULL);
    pthread_cond_init(&J->pcv, NULL);
    J->locks = 1;
    return SWGPU_OK;
}

/* The strips computed by `threads` threads (tid: their ids; NULL: by this
 * one), with progress reports and checkpoints every ck->every seconds. */
static int job_run(job_t *J, int threads, pthread_t *tid, const swgpu__lprog_t *prog, const swgpu__lck_t *ck)
{
    int nt, rc = SWGPU_OK;
    if (!tid) {
        atomic_init(&J->running, 1);
        worker(J);
        return SWGPU_OK;
    }
    atomic_init(&J->running, threads);
    for (nt = 0; nt < threads; nt++)
        if (pthread_create(&tid[nt], NULL, worker, J) != 0)
            break;
    atomic_fetch_sub(&J->running, threads - nt);
    if (nt == 0) {
        atomic_init(&J->running, 1);
        worker(J); /* no thread could start: do it here */
    }
    double last = swgpu__now();
    for (int tick = 0; ((prog && prog->report) || (ck && ck->save)) && atomic_load(&J->running) > 0; tick++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        if (tick % 10 == 9 && prog && prog->report) {
            uint64_t pr = atomic_load(&J->pruned);
            prog->report(prog->user, atomic_load(&J->cells) + pr, pr);
        }
        if (ck && ck->save && nt > 0 && swgpu__now() - last >= ck->every) {
            int crc = checkpoint(J, ck);
            last = swgpu__now();
            if (crc && !rc)
                rc = crc;
        }
    }
    for (int k = 0; k < nt; k++)
        pthread_join(tid[k], NULL);
    return rc;
}

/* Every tracked region's best: the best of its strips' under the tie rule. */
static void job_bests(const job_t *J, swgpu__lreg_t *regs, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        sbest_t b = { NEG64, 0, 0 };
        if (!regs[r].track)
            continue;
        for (int64_t t = J->first[r]; t < J->first[r + 1]; t++)
            if (better(J->sb[t].best, J->sb[t].bi, J->sb[t].bj, &b))
                b = J->sb[t];
        regs[r].best = b.best;
        regs[r].bi = b.bi;
        regs[r].bj = b.bj;
    }
}

static void job_free(job_t *J, int threads)
{
    const size_t n = J->n;
    if (J->wb)
        for (int k = 0; k < threads; k++)
            wbuf_free(&J->wb[k]);
    free(J->wb);
    for (size_t r = 0; J->ring && r < n; r++)
        free(J->ring[r]);
    free(J->ring);
    for (size_t r = 0; J->low && r < n; r++)
        free(J->low[r]);
    free(J->low);
    for (size_t r = 0; J->rbase && r < n; r++)
        free(J->rbase[r]);
    free(J->rbase);
    free(J->nchunks);
    free(J->codes);
    if (J->locks) {
        pthread_mutex_destroy(&J->plock);
        pthread_cond_destroy(&J->pcv);
    }
    free(J->first);
    free(J->progress);
    free(J->sb);
}

int swgpu__lcpu_run(const swgpu__lseqs_t *q, const swgpu__lscore_t *sc, swgpu__lreg_t *regs,
                    size_t n, int threads, const swgpu__lprog_t *prog, uint64_t *bytes_used,
                    uint64_t *pruned, const swgpu__lck_t *ck)
{
    job_t J;
    pthread_t *tid = NULL;
    int rc = SWGPU_OK, ran = 0;
    uint64_t bytes = 0;

    if (n == 0)
        return SWGPU_OK;
    memset(&J, 0, sizeof J);
    J.q = q;
    J.sc = sc;
    J.regs = regs;
    J.n = n;
    J.k = strip_kernels();
    if ((rc = job_alloc(&J, regs, n, &bytes)))
        goto fail;
    if (threads < 1)
        threads = swgpu__ncores();
    if (threads > J.first[n])
        threads = (int)J.first[n];
    if ((rc = job_workers(&J, threads, &bytes)))
        goto fail;
    if (bytes_used)
        *bytes_used = bytes;
    if (ck && n != 1)
        ck = NULL;
    if (ck && ck->resume && ck->resume->next > 0 && ck->resume->next < J.first[n])
        put_state(&J, ck->resume);
    if (!(threads == 1 && !(prog && prog->report) && !(ck && ck->save)) &&
        !(tid = malloc((size_t)threads * sizeof *tid))) {
        rc = swgpu__fail(SWGPU_ENOMEM, "long alignment: out of memory for threads");
        goto fail;
    }
    ran = 1;
    if ((rc = job_run(&J, threads, tid, prog, ck)))
        goto fail;
    if (atomic_load(&J.comm_rc)) {
        rc = swgpu__fail(atomic_load(&J.comm_rc), "long alignment: a boundary column could not "
                         "be sent or received");
        goto fail;
    }
    if (pruned)
        *pruned = atomic_load(&J.pruned);
    job_bests(&J, regs, n);
fail:
    if (rc && !ran)
        swgpu__lc_drain(regs, n, sc->wide);
    free(tid);
    job_free(&J, threads);
    return rc;
}
